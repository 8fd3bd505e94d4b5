"""What does keeping each step's outputs cost? Per-step time of a loop that drops them vs one that keeps them.

A loop that keeps outputs (a rollout list, torchrl's `rollout`, CleanRL-style
code holding last step's arrays) forces the pool to hand out fresh memory
instead of reusing its output ring (NOTE [Output ring reuse]). Each case times
the same steps both ways, interleaved round by round in one process:

* dropped: `out = step(action)`, nothing kept past the next step;
* kept: every output appended to a list, the list started anew every
  `--horizon` steps (a rollout buffer's pattern, so memory stays bounded and
  Python's garbage collector sees what a real loop gives it).

Cases: `Pool.step`, `envpool_compat` (EnvPool's gymnasium API: the observation
array kept), torchrl's `TorchPoolEnv` (kept: `rollout(horizon)`; dropped: the
collector's `step_and_maybe_reset` loop), and EnvPool itself where installed.

    python benchmarks/keep_outputs.py --record
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

import torchpool
from torchpool import bench

HERE = Path(__file__).resolve().parent
TASKS = (("CartPole-v1", 4), ("Pong-v5", 4))


def timed(loop: Callable[[int], None], steps: int) -> float:
    """Microseconds per step of loop(steps)."""
    start = time.perf_counter()
    loop(steps)
    return (time.perf_counter() - start) / steps * 1e6


def pool_loops(env_id: str, num_envs: int, horizon: int):
    pool = torchpool.make(env_id, num_envs=num_envs, seed=0)
    pool.reset()
    action = torch.zeros(num_envs, dtype=torch.int64)

    def dropped(steps: int) -> None:
        for _ in range(steps):
            pool.step(action)

    def kept(steps: int) -> None:
        rollout = []
        for i in range(steps):
            if i % horizon == 0:
                rollout = []
            rollout.append(pool.step(action))

    return dropped, kept, pool.close


def compat_loops(module, env_id: str, num_envs: int, horizon: int):
    envs = module.make(env_id, env_type="gymnasium", num_envs=num_envs, seed=0)
    envs.reset()
    action = np.zeros(num_envs, dtype=np.int64)

    def dropped(steps: int) -> None:
        for _ in range(steps):
            envs.step(action)

    def kept(steps: int) -> None:
        rollout = []
        for i in range(steps):
            if i % horizon == 0:
                rollout = []
            obs, reward, terminated, truncated, info = envs.step(action)
            rollout.append((obs, reward, terminated, truncated))

    return dropped, kept, getattr(envs, "close", lambda: None)


def torchrl_loops(env_id: str, num_envs: int, horizon: int):
    from torchpool.torchrl import TorchPoolEnv

    env = TorchPoolEnv(env_id, num_envs=num_envs, seed=0)
    td = env.reset()
    action = torch.zeros(env.action_spec.shape, dtype=env.action_spec.dtype)
    state = {"td": td}

    def dropped(steps: int) -> None:
        td = state["td"]
        for _ in range(steps):
            td["action"] = action
            _, td = env.step_and_maybe_reset(td)
        state["td"] = td

    def kept(steps: int) -> None:
        for _ in range(steps // horizon):
            env.rollout(horizon, break_when_any_done=False)  # one reset per rollout

    return dropped, kept, env.close


def measure(name: str, make_loops, steps: int, horizon: int, rounds: int) -> dict:
    dropped, kept, close = make_loops()
    dropped(horizon), kept(horizon)  # warm-up
    drop_us, keep_us = [], []
    for i in range(rounds):
        for which in ((0, 1) if i % 2 == 0 else (1, 0)):
            gc.collect()
            (drop_us if which == 0 else keep_us).append(timed(dropped if which == 0 else kept, steps))
    close()
    ratios = [k / d for d, k in zip(drop_us, keep_us)]
    return {"case": name, "dropped_us": statistics.median(drop_us), "kept_us": statistics.median(keep_us),
            "ratio": statistics.median(ratios), "rounds": rounds}


def cases(args) -> list[tuple[str, Callable, int]]:
    import torchpool.envpool_compat as compat

    out = []
    for env_id, num_envs in TASKS:
        steps = args.steps if env_id.startswith("CartPole") else max(args.steps // 20, args.horizon)
        label = f"{env_id} x{num_envs}"
        out.append((f"Pool.step, {label}", lambda e=env_id, n=num_envs: pool_loops(e, n, args.horizon), steps))
        out.append((f"envpool_compat, {label}",
                    lambda e=env_id, n=num_envs: compat_loops(compat, e, n, args.horizon), steps))
        out.append((f"TorchPoolEnv, {label}", lambda e=env_id, n=num_envs: torchrl_loops(e, n, args.horizon),
                    steps))
        if bench.envpool_available():
            import envpool

            out.append((f"EnvPool {envpool.__version__}, {label}",
                        lambda e=env_id, n=num_envs: compat_loops(envpool, e, n, args.horizon), steps))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=4096, help="CartPole steps per measurement (Pong: 1/20)")
    parser.add_argument("--horizon", type=int, default=128, help="steps per kept rollout (default 128)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per case (default 5)")
    parser.add_argument("--record", action="store_true", help="write the RESULTS.md section and keep_outputs.png")
    args = parser.parse_args()
    torch.set_num_threads(1)
    results = []
    for name, make_loops, steps in cases(args):
        result = measure(name, make_loops, steps, args.horizon, args.rounds)
        results.append(result)
        print(f"{name:38s} dropped {result['dropped_us']:8.1f} us/step  kept {result['kept_us']:8.1f}  "
              f"kept/dropped {result['ratio']:5.2f}x", flush=True)
    if args.record:
        record(results, args)


def record(results: list[dict], args) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    info = bench.machine(("envpool", "torchrl", "tensordict"))
    lines = ["<!-- keep-outputs:begin -->", "## Keeping each step's outputs (benchmarks/keep_outputs.py)", "",
             f"Machine: {info['cpu']}, {info['cores']} cores, {info['ram']}; {info['os']}; {info['versions']}.",
             f"Microseconds per step (steps of all envs; the default num_threads), medians of {args.rounds} "
             f"interleaved rounds. Kept: every output appended to a list started anew every {args.horizon} "
             "steps (TorchPoolEnv: `rollout(128)`); dropped: nothing kept past the next step (TorchPoolEnv: "
             "`step_and_maybe_reset`). Target: kept <= 2x dropped.", "",
             "| case | dropped (us/step) | kept (us/step) | kept / dropped |", "|---|---:|---:|---:|"]
    for r in results:
        lines.append(f"| {r['case']} | {r['dropped_us']:.1f} | {r['kept_us']:.1f} | {r['ratio']:.2f}x |")
    lines.append("<!-- keep-outputs:end -->")
    bench.write_section(HERE / "RESULTS.md", "\n".join(lines), "<!-- keep-outputs:begin -->",
                        "<!-- keep-outputs:end -->")
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(results) + 1.2))
    names = [r["case"] for r in results]
    ax.barh(names, [r["ratio"] for r in results], color="tab:blue")
    ax.axvline(2.0, color="gray", linestyle="--", label="target (2x)")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.invert_yaxis()
    ax.set_xlabel("per-step time kept / dropped")
    ax.legend()
    fig.tight_layout()
    fig.savefig(HERE / "keep_outputs.png", dpi=120)
    print("wrote RESULTS.md and keep_outputs.png")


if __name__ == "__main__":
    main()
