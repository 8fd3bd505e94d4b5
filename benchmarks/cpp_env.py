"""Is a user's C++ env as fast as a built-in one? MyCartPole-v0 (examples/cpp_env/my_cartpole.h) vs CartPole-v1.

The same CartPole written as a user's header and compiled by
``torchpool.register_cpp_env``, against the built-in family: steps/s of a
sync ``Pool.step`` at 8 and 256 envs and of an async 16/8 pool, interleaved
round by round in one process (the two pools alternate), medians and the
ratio. Also the first build of the header in a fresh cache and a cached load,
each in a fresh process.

    python benchmarks/cpp_env.py --record
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

import torchpool
from torchpool import bench

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "cpp_env" / "my_cartpole.h"
REGISTER = ("import time, torchpool\nt = time.perf_counter()\n"
            f"torchpool.register_cpp_env('MyCartPole-v0', {str(EXAMPLE)!r}, env_class='MyCartPole')\n"
            "print(time.perf_counter() - t)")


def timed_register(cache: str) -> float:
    """Seconds register_cpp_env took in a fresh process with this cache."""
    done = subprocess.run([sys.executable, "-c", REGISTER], capture_output=True, text=True, check=True,
                          env=dict(os.environ, TORCHPOOL_CACHE_DIR=cache))
    return float(done.stdout.strip().splitlines()[-1])


def steps_per_s(pool: torchpool.Pool, seconds: float) -> float:
    """Env steps/s of sync steps, or of async recv/send pairs, for about ``seconds``."""
    action = torch.zeros(pool.batch_size, dtype=torch.int64)
    steps, start = 0, time.perf_counter()
    if pool.is_async:
        while time.perf_counter() - start < seconds:
            for _ in range(200):
                td = pool.recv()
                pool.send(action, td["env_id"])
            steps += 200 * pool.batch_size
    else:
        while time.perf_counter() - start < seconds:
            for _ in range(200):
                pool.step(action)
            steps += 200 * pool.num_envs
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=12, help="interleaved rounds per case (default 12)")
    parser.add_argument("--seconds", type=float, default=0.5, help="seconds per pool per round (default 0.5)")
    parser.add_argument("--record", action="store_true", help="write RESULTS.md's section")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as cache:
        first_build = timed_register(cache)
        cached_load = statistics.median(timed_register(cache) for _ in range(3))
        os.environ["TORCHPOOL_CACHE_DIR"] = cache
        torchpool.register_cpp_env("MyCartPole-v0", EXAMPLE, env_class="MyCartPole")
    print(f"first build {first_build:.1f} s, cached load {cached_load:.3f} s (fresh processes)")

    cases = [("sync 8 envs", dict(num_envs=8)), ("sync 256 envs", dict(num_envs=256)),
             ("async 16 / 8", dict(num_envs=16, batch_size=8))]
    rows = []
    for name, kwargs in cases:
        pools = {env_id: torchpool.make(env_id, **kwargs) for env_id in ("CartPole-v1", "MyCartPole-v0")}
        for pool in pools.values():
            pool.async_reset() if pool.is_async else pool.reset()
            steps_per_s(pool, 0.2)  # warm up
        rates = {env_id: [] for env_id in pools}
        for _ in range(args.rounds):
            for env_id, pool in pools.items():
                rates[env_id].append(steps_per_s(pool, args.seconds))
        for pool in pools.values():
            pool.close()
        builtin, ours = (statistics.median(rates[env_id]) for env_id in ("CartPole-v1", "MyCartPole-v0"))
        wins = sum(o >= b for o, b in zip(rates["MyCartPole-v0"], rates["CartPole-v1"]))
        rows.append((name, builtin, ours, ours / builtin, wins))
        print(f"{name:14s} CartPole-v1 {builtin:12,.0f}  MyCartPole-v0 {ours:12,.0f} steps/s  "
              f"ratio {ours / builtin:.3f}  (ours ahead in {wins}/{args.rounds} rounds)")
    if args.record:
        record(rows, first_build, cached_load, args)


def record(rows, first_build: float, cached_load: float, args: argparse.Namespace) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    info = bench.machine(())
    begin, end = "<!-- cpp-env:begin -->", "<!-- cpp-env:end -->"
    lines = [begin, "## Your own C++ env vs the built-in family (benchmarks/cpp_env.py)", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {info['cpu']}, {info['cores']} cores, "
             f"{info['ram']}; {info['os']}; {info['versions']}.",
             f"MyCartPole-v0 is examples/cpp_env/my_cartpole.h built by `register_cpp_env` (the system's c++, "
             f"torchpool's flags); CartPole-v1 the built-in family. Default threads; actions all 0; "
             f"{args.rounds} interleaved rounds of {args.seconds} s per pool; medians.", "",
             f"First build of the header in a fresh cache: **{first_build:.1f} s**; a cached load in a fresh "
             f"process: **{cached_load:.3f} s** (median of 3).", "",
             "| case | CartPole-v1 steps/s (= frames/s) | MyCartPole-v0 steps/s | ratio | rounds ours ahead |",
             "|---|---:|---:|---:|---:|"]
    lines += [f"| {name} | {b:,.0f} | {o:,.0f} | {ratio:.3f} | {wins}/{args.rounds} |"
              for name, b, o, ratio, wins in rows]
    lines += ["", "![cpp_env](cpp_env.png)", end]
    bench.write_section(HERE / "RESULTS.md", "\n".join(lines), begin, end)
    fig, ax = plt.subplots(figsize=(6, 3.2))
    bench.grouped_bars(ax, [row[0] for row in rows], {"CartPole-v1 (built-in)": [row[1] for row in rows],
                                                      "MyCartPole-v0 (your header)": [row[2] for row in rows]})
    ax.set_ylabel("env steps/s")
    ax.set_title("A user's C++ env vs the built-in family")
    fig.tight_layout()
    fig.savefig(HERE / "cpp_env.png", dpi=120)


if __name__ == "__main__":
    main()
