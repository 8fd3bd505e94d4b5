"""How do a pool's steps/s grow with its worker threads? The 16-core table of the GPU check.

For CartPole-v1, Ant-v4 and Pong-v5, a sync pool of a fixed num_envs (enough envs for the most
threads asked) is stepped with num_threads = 1, 2, 4, 8, 16 in turn, random actions drawn before
the timed loop (the runners' calls, timed by benchmarks/harness), for --seconds after 0.2 s of
warm-up; each thread count gets a fresh pool. Prints steps/s, frames/s (Atari: emulator frames,
frame_skip per step), the speed-up over one thread and the parallel efficiency (speed-up /
threads); --out writes the same as JSON with the machine. Thread counts above the CPUs this
process may use still run and are flagged: what oversubscription costs is part of the answer. A
step of 256 CartPoles is so cheap that the calling thread takes it itself (column "workers": no),
so that row shows the per-call floor, not worker scaling.

    python benchmarks/thread_scaling.py [--threads 1 2 4 8 16] [--seconds 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import json

import harness
import torch

from torchpool import Pool, registry
from torchpool._cpus import available_cpus

# env id -> num_envs: 4+ envs per thread at 16 threads for the costly envs, many more for CartPole,
# whose steps cost nanoseconds and would otherwise measure only the call.
ENVS = {"CartPole-v1": 256, "Ant-v4": 64, "Pong-v5": 64}


def measure(env_id: str, num_envs: int, threads: int, seconds: float) -> dict:
    """Steps/s of one sync pool with ``threads`` workers, over at least ``seconds`` of step calls."""
    pool = Pool(env_id, num_envs=num_envs, num_threads=threads, seed=0)
    try:
        call = harness.torchpool_calls(pool)
        in_workers = pool.steps_in_background()
        # MuJoCo's frame_skip counts physics steps, not frames: only Atari's counts frames.
        frame_skip = pool.task_kwargs["frame_skip"] if registry.lookup(env_id).family == "Atari" else 1
        # The warm-up: first-touch of the buffers, the workers' first wake-ups.
        rate = harness.rate_for(call, seconds, warmup=0.2)
    finally:
        pool.close()
    return {"env_id": env_id, "num_envs": num_envs, "num_threads": threads, "in_workers": in_workers,
            "calls": rate.calls, "steps_per_s": rate.steps_per_s, "frames_per_s": rate.steps_per_s * frame_skip,
            "us_per_call": rate.us_per_call}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2, 4, 8, 16], help="thread counts")
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per measurement")
    parser.add_argument("--envs", nargs="+", default=list(ENVS), help=f"env ids (known sizes: {ENVS})")
    parser.add_argument("--out", default=None, help="also write the results as JSON here")
    args = parser.parse_args()

    cpus = available_cpus()
    rows = []
    for env_id in args.envs:
        for threads in args.threads:
            rows.append(measure(env_id, ENVS.get(env_id, 64), threads, args.seconds))
            print(f"  {env_id} threads={threads}: {rows[-1]['steps_per_s']:,.0f} steps/s", flush=True)
    for row in rows:
        base = next((r for r in rows if r["env_id"] == row["env_id"] and r["num_threads"] == min(args.threads)), row)
        row["speedup"] = row["steps_per_s"] / base["steps_per_s"]
        row["efficiency"] = row["speedup"] * base["num_threads"] / row["num_threads"]
        row["oversubscribed"] = row["num_threads"] > cpus

    machine = harness.machine()
    print(f"\n{machine['cpu']}, {machine['cores']} cores ({cpus} usable), {machine['versions']}")
    print(f"sync pools, {args.seconds:g} s per measurement; speed-up and efficiency against "
          f"{min(args.threads)} thread(s); * = more threads than usable CPUs\n")
    print(f"{'env':12s} {'num_envs':>8s} {'threads':>7s} {'steps/s':>12s} {'frames/s':>12s} "
          f"{'us/call':>9s} {'speed-up':>8s} {'eff.':>6s} {'workers':>7s}")
    for row in rows:
        flag = "*" if row["oversubscribed"] else " "
        print(f"{row['env_id']:12s} {row['num_envs']:8d} {row['num_threads']:6d}{flag} {row['steps_per_s']:12,.0f} "
              f"{row['frames_per_s']:12,.0f} {row['us_per_call']:9.1f} {row['speedup']:7.2f}x "
              f"{row['efficiency']:6.0%} {'yes' if row['in_workers'] else 'no':>7s}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"machine": machine, "usable_cpus": cpus, "seconds": args.seconds,
                       "torch_threads": torch.get_num_threads(), "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
