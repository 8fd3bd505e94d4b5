"""Do the scheduling modes of small gain still pay? Interleaved A/B in one process.

The modes that can be switched off (csrc/core/schedule.h, ScheduleOff): the
split tail. (At commit 010476a this also A/B'd the caller's own queue and the
workers waiting out the caller's items; they did not win beyond the noise and
were removed, docs/performance.md.) A mode exists only where the caller is a
worker, so every case is a sync pool of costly envs. For each mode
and task, pool A runs the full plan and pool B the same plan with that mode
switched off; both live in this process and alternate (A B, then B A, ...:
benchmarks/harness) for --rounds pairs of --seconds each, stepping with fixed
random actions. The gain is A's steps/s over B's, the median of the pairs,
with how many pairs A won.

    python benchmarks/schedule_ab.py --rounds 12 --record
"""

from __future__ import annotations

import argparse
import statistics

import harness
import torch

import torchpool

# ScheduleOff bits (csrc/core/schedule.h).
MODES = {"split tail": 1}
TASKS = ("HalfCheetah-v5", "Humanoid-v5", "Ant-v5", "Pong-v5")


def stepper(pool: torchpool.Pool, actions: list[torch.Tensor]):
    """step(i): one sync step with the i-th action batch (cycling); returns the env steps made."""
    def step(i: int) -> int:
        pool.step(actions[i % len(actions)])
        return pool.num_envs
    return step


def actions_for(pool: torchpool.Pool, count: int = 64) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    spec = pool.action_spec
    if hasattr(spec, "n"):
        return [torch.randint(0, spec.n, (pool.num_envs,), generator=generator) for _ in range(count)]
    low, high = spec.low, spec.high
    return [low + (high - low) * torch.rand((pool.num_envs, *spec.shape), generator=generator, dtype=low.dtype)
            for _ in range(count)]


def measure(task: str, off: int, num_envs: int, threads: int, rounds: int, seconds: float) -> dict:
    pools = [torchpool.make(task, num_envs=num_envs, num_threads=threads, seed=0, _schedule_off=bits)
             for bits in (0, off)]
    for pool in pools:
        pool.reset()
    actions = actions_for(pools[0])
    steps = [stepper(pool, actions) for pool in pools]
    for step in steps:  # warm-up: caches, branch predictors, the first episodes
        harness.rate_for(step, seconds / 2, warmup=0)
    rates = harness.measure_rounds([0, 1], rounds, lambda which: harness.rate_for(steps[which], seconds,
                                                                                  warmup=0).steps_per_s)
    full, without = rates[0], rates[1]
    schedules = [pool.schedule for pool in pools]
    for pool in pools:
        pool.close()
    gain = harness.paired(full, without)
    return {"task": task, "full_steps_s": statistics.median(full), "off_steps_s": statistics.median(without),
            "gain": gain.ratio, "wins": gain.wins, "rounds": rounds,
            "mode": schedules[0]["mode"], "applies": schedules[0] != schedules[1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=12, help="A/B pairs per case (default 12)")
    parser.add_argument("--seconds", type=float, default=0.5, help="seconds per measurement (default 0.5)")
    parser.add_argument("--num-envs", type=int, default=8, help="envs per pool (default 8)")
    parser.add_argument("--threads", type=int, default=torchpool.available_cpus(),
                        help="num_threads of each pool (default: the usable CPUs)")
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), help="env ids (default: %(default)s)")
    parser.add_argument("--record", action="store_true", help="write the RESULTS.md section and schedule_ab.png")
    args = parser.parse_args()
    torch.set_num_threads(1)
    results = []
    for name, bits in MODES.items():
        for task in args.tasks:
            result = measure(task, bits, args.num_envs, args.threads, args.rounds, args.seconds)
            result["switched_off"] = name
            results.append(result)
            print(f"{name:28s} {task:15s} full {result['full_steps_s']:9,.0f} steps/s  off "
                  f"{result['off_steps_s']:9,.0f}  gain {result['gain']:.3f} ({result['wins']}/{args.rounds})"
                  + ("" if result["applies"] else "  (the mode does not apply here)"), flush=True)
    if args.record:
        record(results, args)


def record(results: list[dict], args: argparse.Namespace) -> None:
    lines = []
    for r in results:
        gain = f"{r['gain']:.3f}" if r["applies"] else "n/a"
        lines.append(f"| {r['switched_off']} | {r['task']} | {r['mode']} | {r['full_steps_s']:,.0f} | "
                     f"{r['off_steps_s']:,.0f} | {gain} | {r['wins']}/{r['rounds']} |")
    harness.record_section(
        "schedule-ab", "Scheduling modes of small gain (`benchmarks/schedule_ab.py`)",
        question="Do the scheduling modes that can be switched off still pay?",
        settings=[f"- Settings: sync pools of {args.num_envs} envs, num_threads={args.threads}, random actions, one "
                  "process: the full plan (A) and the plan with one mode switched off (B) alternate for "
                  f"{args.rounds} pairs of {args.seconds} s. Gain: median of A/B steps/s over the pairs; wins: "
                  "pairs A was faster. Frames/s are steps/s x the task's frame skip (MuJoCo 5, Atari 4)."],
        body=["| mode switched off | task | plan | A steps/s | B steps/s | gain A/B | A won |",
              "|---|---|---|---:|---:|---:|---:|", *lines, "", "![gain of each mode](schedule_ab.png)"])
    figure, (ax,) = harness.panels(1, (8, 3.6))
    gain = {(r["switched_off"], r["task"]): (r["gain"] - 1) * 100 if r["applies"] else 0 for r in results}
    harness.grouped_bars(ax, args.tasks, {name: [gain[(name, task)] for task in args.tasks] for name in MODES})
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylabel("steps/s gained by the mode (%)")
    harness.save(figure, harness.OUTPUT / "schedule_ab.png",
                 title=f"Sync {args.num_envs} envs, {args.threads} threads: interleaved A/B, median of {args.rounds}")


if __name__ == "__main__":
    main()
