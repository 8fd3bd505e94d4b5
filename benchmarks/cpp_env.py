"""Is a user's C++ env as fast as a built-in one? MyCartPole-v0 (examples/cpp_env/my_cartpole.h) vs CartPole-v1.

The same CartPole written as a user's header and compiled by
``torchpool.register_cpp_env``, against the built-in family: steps/s of a
sync ``Pool.step`` at 8 and 256 envs and of an async 16/8 pool, interleaved
round by round in one process (the two pools alternate: benchmarks/harness),
medians and the ratio. Also the first build of the header in a fresh cache and a cached load,
each in a fresh process.

    python benchmarks/cpp_env.py --record
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile

import harness
import torch

import torchpool

EXAMPLE = harness.BENCHMARKS.parent / "examples" / "cpp_env" / "my_cartpole.h"
REGISTER = ("import json, time, torchpool\nt = time.perf_counter()\n"
            f"torchpool.register_cpp_env('MyCartPole-v0', {str(EXAMPLE)!r}, env_class='MyCartPole')\n"
            "print(json.dumps({'seconds': time.perf_counter() - t}))")


def timed_register(cache: str) -> float:
    """Seconds register_cpp_env took in a fresh process with this cache."""
    return harness.run_child(["-c", REGISTER], env=dict(os.environ, TORCHPOOL_CACHE_DIR=cache))["seconds"]


def stepper(pool: torchpool.Pool):
    """step(i): a sync step, or an async recv/send pair, with actions all 0; returns the env steps made."""
    action = torch.zeros(pool.batch_size, dtype=torch.int64)
    if pool.is_async:
        pool.async_reset()

        def pair(_: int) -> int:
            td = pool.recv()
            pool.send(action, td["env_id"])
            return pool.batch_size
        return pair
    pool.reset()
    return lambda _: (pool.step(action), pool.num_envs)[1]


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
        steps = {env_id: stepper(pool) for env_id, pool in pools.items()}
        for step in steps.values():
            harness.rate_for(step, 0.2, warmup=0)  # warm up
        rates = harness.measure_rounds(list(steps), args.rounds,
                                       lambda env_id: harness.rate_for(steps[env_id], args.seconds,  # noqa: B023
                                                                       warmup=0).steps_per_s)
        for pool in pools.values():
            pool.close()
        builtin, ours = (statistics.median(rates[env_id]) for env_id in ("CartPole-v1", "MyCartPole-v0"))
        wins = harness.paired(rates["MyCartPole-v0"], rates["CartPole-v1"]).wins
        rows.append((name, builtin, ours, ours / builtin, wins))
        print(f"{name:14s} CartPole-v1 {builtin:12,.0f}  MyCartPole-v0 {ours:12,.0f} steps/s  "
              f"ratio {ours / builtin:.3f}  (ours ahead in {wins}/{args.rounds} rounds)")
    if args.record:
        record(rows, first_build, cached_load, args)


def record(rows, first_build: float, cached_load: float, args: argparse.Namespace) -> None:
    harness.record_section(
        "cpp-env", "Your own C++ env vs the built-in family (`benchmarks/cpp_env.py`)",
        question=__doc__.splitlines()[0],
        settings=[f"- Settings: MyCartPole-v0 is examples/cpp_env/my_cartpole.h built by `register_cpp_env` (the "
                  "system's c++, torchpool's flags); CartPole-v1 the built-in family. Default threads; actions all "
                  f"0; {args.rounds} interleaved rounds (alternating order) of {args.seconds} s per pool; medians."],
        body=[f"First build of the header in a fresh cache: **{first_build:.1f} s**; a cached load in a fresh "
              f"process: **{cached_load:.3f} s** (median of 3).", "",
              "| case | CartPole-v1 steps/s (= frames/s) | MyCartPole-v0 steps/s | ratio | rounds ours ahead |",
              "|---|---:|---:|---:|---:|",
              *[f"| {name} | {b:,.0f} | {o:,.0f} | {ratio:.3f} | {wins}/{args.rounds} |"
                for name, b, o, ratio, wins in rows],
              "", "![cpp_env](cpp_env.png)"])
    figure, (ax,) = harness.panels(1, (6, 3.2))
    harness.grouped_bars(ax, [row[0] for row in rows], {"CartPole-v1 (built-in)": [row[1] for row in rows],
                                                        "MyCartPole-v0 (your header)": [row[2] for row in rows]})
    ax.set_ylabel("env steps/s")
    harness.save(figure, harness.OUTPUT / "cpp_env.png", title="A user's C++ env vs the built-in family")


if __name__ == "__main__":
    main()
