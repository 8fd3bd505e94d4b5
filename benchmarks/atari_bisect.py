"""Which conditions make a Pong pool crash? Each case runs in a fresh process, with the native crash report on.

The CUDA machine's first run segfaulted inside every Atari pool's make (and not here). This runs Pong-v5
made first thing, after torch.cuda.init(), after ale_py's extension and libtorch were loaded into the global
scope, after a MuJoCo pool, with 1 and 16 threads, and one pool of every other family, each in its own
interpreter, and prints a table of how each ended (ok, the signal, or the error) with the first native frames
of any crash. Run by benchmarks/gpu_check.sh; here it answers "ok" everywhere.

    python benchmarks/atari_bisect.py [--out bisect.json] [--steps 200]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

_PLAY = """
def play(env_id, num_envs=2, steps={steps}, **kwargs):
    import torch, torchpool
    pool = torchpool.make(env_id, num_envs=num_envs, seed=0, **kwargs)
    pool.reset()
    space = pool.action_spec.to_gymnasium()
    for _ in range(steps):
        pool.step(torch.stack([torch.as_tensor(space.sample()) for _ in range(num_envs)]))
    pool.close()
"""

# name -> the code that runs before (and including) the pool that is played.
CASES = {
    "pong_first": "play('Pong-v5')",
    "pong_after_cuda_init": "import torch\nif torch.cuda.is_available(): torch.cuda.init()\nplay('Pong-v5')",
    "pong_after_ale_py": "import ale_py\nplay('Pong-v5')",
    "pong_after_global_ale_py_and_torch": "import os, sys\nsys.setdlopenflags(os.RTLD_GLOBAL | os.RTLD_NOW)\n"
                                          "import ale_py, torch\nplay('Pong-v5')",
    "pong_after_mujoco_pool": "play('HalfCheetah-v5')\nplay('Pong-v5')",
    "pong_1_thread": "play('Pong-v5', num_envs=2, num_threads=1)",
    "pong_16_threads": "play('Pong-v5', num_envs=16, num_threads=16)",
    "pong_sticky": "play('Pong-v5', repeat_action_probability=0.25)",
    "classic_cartpole": "play('CartPole-v1')",
    "mujoco_halfcheetah": "play('HalfCheetah-v5')",
    "dmc_cheetah_run": "play('CheetahRun-v1')",
    "probe": "play('_Probe-v0')",
    "python_env": "play('gymnasium:CartPole-v1', num_workers=1)",
}


def run_case(name: str, code: str, steps: int, timeout: float) -> dict:
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as report:
        env = dict(os.environ, TORCHPOOL_CRASH_REPORT=report.name, PYTHONFAULTHANDLER="1")
        started = time.perf_counter()
        try:
            done = subprocess.run([sys.executable, "-c", _PLAY.format(steps=steps) + code], capture_output=True,
                                  text=True, timeout=timeout, env=env)
            rc, stderr = done.returncode, done.stderr
        except subprocess.TimeoutExpired as expired:
            rc, stderr = None, (expired.stderr or b"").decode(errors="replace")
        seconds = time.perf_counter() - started
        native = report.read()
    if rc == 0:
        outcome = "ok"
    elif rc is None:
        outcome = f"timeout after {timeout:.0f} s"
    elif rc < 0:
        outcome = signal.Signals(-rc).name
    else:
        outcome = "error: " + (stderr.strip().splitlines() or ["(nothing printed)"])[-1][:160]
    frames = [line for line in native.splitlines() if "(" in line and "[0x" in line][:12]
    return {"case": name, "outcome": outcome, "rc": rc, "seconds": round(seconds, 2), "native_frames": frames,
            "stderr_tail": stderr[-3000:] if rc else ""}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write every case's result here (JSON)")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds each case may take")
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    parser.add_argument("--jobs", type=int, default=1, help="cases run at once (each in its own process)")
    args = parser.parse_args()
    results = []
    print(f"{'case':38} {'outcome':24} seconds")
    with ThreadPoolExecutor(args.jobs) as cases:
        running = [cases.submit(run_case, name, CASES[name], args.steps, args.timeout) for name in args.cases]
        for future in running:  # in the table's order
            result = future.result()
            results.append(result)
            print(f"{result['case']:38} {result['outcome']:24} {result['seconds']:.1f}", flush=True)
            for frame in result["native_frames"]:
                print(f"    {frame}")
            if args.out:
                args.out.write_text(json.dumps(results, indent=1))
    crashed = [r["case"] for r in results if r["outcome"] != "ok"]
    print("every case ran" if not crashed else f"not ok: {', '.join(crashed)}")
    sys.exit(1 if crashed else 0)


if __name__ == "__main__":
    main()
