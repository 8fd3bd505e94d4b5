"""Classic control throughput: torchpool next to Gymnasium and EnvPool.

Question: how many env steps/s does torchpool deliver on classic control, next
to Gymnasium's SyncVectorEnv and AsyncVectorEnv and EnvPool, and what is the
fixed cost of one ``step()`` call?

    python benchmarks/classic.py               # full run; writes RESULTS.md and classic.png
    python benchmarks/classic.py --quick       # smoke test; prints only
    python benchmarks/classic.py --repeats 5   # more repeats, tighter medians

Method (benchmarks/harness). Every case (env, system, mode, num_envs) is
timed by a runner of ``torchpool._side_by_side``: it builds the system, draws
its actions before the timed loop, warms up, times ``calls`` step calls, and
hands every output over as a torch tensor (the NumPy systems pay
``torch.from_numpy`` in the loop). A pilot pass first times each case briefly
to pick ``calls`` so that one measurement lasts about ``--target-seconds``.
Then each repeat runs every case once, in turn (alternating direction), so a
noisy period hits all systems alike; the table gives medians over repeats. Sync modes step all ``num_envs``
per call; async modes send/recv ``batch_size = num_envs // 2`` envs per call.
The fixed cost of one ``step()`` call is torchpool's us/call for CartPole at
num_envs=1. Classic control has no frame skip, so frames/s equals steps/s.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import harness

ENV_IDS = ("CartPole-v1", "Pendulum-v1")
NUM_ENVS = (1, 8, 64, 256)
FRAME_SKIP = {"CartPole-v1": 1, "Pendulum-v1": 1}  # emulator frames per env step
SYSTEMS = {  # (system, mode) -> label, in table and legend order
    ("torchpool", "sync"): "torchpool sync",
    ("torchpool", "async"): "torchpool async",
    ("envpool", "sync"): "EnvPool sync",
    ("envpool", "async"): "EnvPool async",
    ("gymnasium-sync", "sync"): "Gymnasium SyncVectorEnv",
    ("gymnasium-async", "sync"): "Gymnasium AsyncVectorEnv",
}
# Gymnasium's AsyncVectorEnv forks one worker per env. On the 2-core, 24 GiB
# dev box 256 workers took 1.4 GiB (~6 MiB each) and 5.6 s to start; budget
# a few times that per worker before trying, and drop a size whose pilot is slower.
GYM_ASYNC_MIB_PER_WORKER = 16
GYM_ASYNC_PILOT_LIMIT_S = 60.0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: 1 repeat, num_envs 8 (plus the CartPole num_envs=1 fixed-cost case), "
                             "~0.05 s per measurement; prints the table but writes no files")
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed passes over all cases; the table reports medians over them")
    parser.add_argument("--target-seconds", type=float, default=0.5,
                        help="wall time one measurement should take; sets the calls per measurement")
    parser.add_argument("--env-ids", nargs="+", default=list(ENV_IDS), help="envs to benchmark")
    parser.add_argument("--num-envs", nargs="+", type=int, default=list(NUM_ENVS), help="pool sizes to benchmark")
    parser.add_argument("--gym-async-max-envs", type=int, default=256,
                        help="largest num_envs tried with Gymnasium's AsyncVectorEnv (one process per env)")
    parser.add_argument("--output-dir", type=Path, default=harness.OUTPUT,
                        help="where RESULTS.md and classic.png are written")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.num_envs, args.target_seconds = 1, [8], 0.05
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    return args


class Case(harness.SystemCase):
    """One system at one size: what a measurement builds and times."""

    LABELS = SYSTEMS


# The fixed cost of one step() call: everything but the env's own work, which is tiny for one CartPole.
FIXED_COST_CASE = Case("CartPole-v1", "torchpool", "sync", 1)


@dataclass(frozen=True)
class Row:
    """A case's medians over repeats."""

    case: Case
    threads: int
    calls: int
    steps_per_s: float
    us_per_call: float
    spread: float                       # (max - min) / median of steps/s over repeats
    vs_envpool: float | None = None     # torchpool / EnvPool steps/s, same env, num_envs and mode
    vs_gym_sync: float | None = None    # torchpool / Gymnasium SyncVectorEnv steps/s, same env, num_envs and mode

    @property
    def frames_per_s(self) -> float:
        return self.steps_per_s * FRAME_SKIP.get(self.case.env_id, 1)


COLUMNS = ("env", "system", "mode", "num_envs", "batch_size", "threads", "calls", "steps/s", "frames/s",
           "us/call", "spread", "torchpool/EnvPool", "torchpool/Gym-sync")


def cells(row: Row) -> tuple[str, ...]:
    system = row.case.label.removesuffix(f" {row.case.mode}")
    ratio = lambda value: "-" if value is None else f"{value:.2f}x"  # noqa: E731
    return (row.case.env_id, system, row.case.mode, str(row.case.num_envs), str(row.case.batch_size),
            str(row.threads), str(row.calls), f"{row.steps_per_s:,.0f}", f"{row.frames_per_s:,.0f}",
            f"{row.us_per_call:,.1f}", f"{row.spread:.0%}", ratio(row.vs_envpool), ratio(row.vs_gym_sync))


def make_cases(env_ids: list[str], sizes: list[int]) -> list[Case]:
    systems = [key for key in SYSTEMS if key[0] != "envpool" or harness.envpool_available()]
    cases = [Case(env_id, system, mode, n) for env_id in env_ids for n in sizes for system, mode in systems
             if not (mode == "async" and n == 1)]  # an async pool of one env is a sync pool
    return cases if FIXED_COST_CASE in cases else [FIXED_COST_CASE, *cases]


def pilot_us_per_call(case: Case) -> float:
    """us/call from a brief run (enough calls to estimate it in ~0.1 s or less); an AsyncVectorEnv whose
    workers took too long to start is left out."""
    started = time.perf_counter()
    result = case.run(max(5, 2000 // case.num_envs) if case.system.startswith("gymnasium") else 500)
    pilot_s = time.perf_counter() - started
    if case.system == "gymnasium-async" and pilot_s > GYM_ASYNC_PILOT_LIMIT_S:
        raise harness.Skip(f"its pilot took {pilot_s:.0f} s (limit {GYM_ASYNC_PILOT_LIMIT_S:.0f} s)")
    return result.us_per_call


def draw_plot(table: list[Row], info: dict[str, str], repeats: int, path: Path) -> None:
    """One panel per env: steps/s against num_envs, both log scale, one line per system and mode."""
    colors = {"torchpool": ("tab:blue", "o"), "envpool": ("tab:orange", "s"),
              "gymnasium-sync": ("tab:green", "^"), "gymnasium-async": ("tab:red", "v")}
    env_ids = sorted({row.case.env_id for row in table})
    figure, axes = harness.panels(len(env_ids), (6.5, 5.5))
    for axis, env_id in zip(axes, env_ids):
        series, styles = {}, {}
        for (system, mode), label in SYSTEMS.items():
            label += " (batch = num_envs / 2)" if mode == "async" else ""
            series[label] = [(row.case.num_envs, row.steps_per_s) for row in table
                             if (row.case.env_id, row.case.system, row.case.mode) == (env_id, system, mode)]
            color, marker = colors[system]
            styles[label] = dict(color=color, marker=marker, linestyle="--" if mode == "async" else "-")
        harness.size_lines(axis, series, styles)
        axis.set(ylabel="env steps/s (= frames/s)", title=env_id)
    harness.save(figure, path, title=f"Classic control throughput, median of {repeats} repeat{'s' * (repeats > 1)}",
                 info=info, legend_below=3)


if __name__ == "__main__":
    args = parse_args()
    # EnvPool's Pendulum builds a float64-bounded Box that Gymnasium warns about on every make().
    warnings.filterwarnings("ignore", message=".*precision lowered by casting to float32")
    started = time.perf_counter()
    skipped: dict[Case, str] = {}
    cases = []
    for case in make_cases(args.env_ids, args.num_envs):
        reason = case.system == "gymnasium-async" and harness.gym_async_skip_reason(
            case.num_envs, args.gym_async_max_envs, GYM_ASYNC_MIB_PER_WORKER)
        if reason:
            skipped[case] = reason
        else:
            cases.append(case)

    # Pilot pass: time each case briefly and pick its calls for ~target_seconds per measurement.
    calls, failed = harness.pilot(cases, pilot_us_per_call, args.target_seconds)
    skipped.update(failed)
    cases = [case for case in cases if case in calls]
    for case, reason in skipped.items():
        print(f"skipped {case}: {reason}")

    # Timed repeats: every case once per repeat, alternating direction, so drift hits all alike.
    measurements = harness.measure_rounds(cases, args.repeats, lambda case: case.run(calls[case]),
                                          progress="classic control")
    elapsed_min = (time.perf_counter() - started) / 60

    # Medians over repeats, then torchpool's ratios to EnvPool and Gymnasium sync.
    rows: dict[Case, Row] = {}
    for case, results in measurements.items():
        rates = [result.steps_per_s for result in results]
        median = statistics.median(rates)
        rows[case] = Row(case, results[0].num_threads, calls[case], median,
                         statistics.median(result.us_per_call for result in results), harness.spread(rates))
    for case, row in rows.items():
        if case.system == "torchpool":
            envpool = rows.get(dataclasses.replace(case, system="envpool"))
            gym_sync = rows.get(dataclasses.replace(case, system="gymnasium-sync"))  # none for async
            rows[case] = dataclasses.replace(
                row, vs_envpool=envpool and row.steps_per_s / envpool.steps_per_s,
                vs_gym_sync=gym_sync and row.steps_per_s / gym_sync.steps_per_s)
    order = list(SYSTEMS)
    table = sorted(rows.values(), key=lambda row: (row.case.env_id, row.case.num_envs,
                                                   order.index((row.case.system, row.case.mode))))

    print(f"\nMedians of {args.repeats} repeat(s), ~{args.target_seconds} s per measurement, "
          f"{elapsed_min:.1f} min in all.")
    harness.print_table(COLUMNS, [cells(row) for row in table])
    for case, reason in skipped.items():
        print(f"skipped {case}: {reason}")
    fixed = rows[FIXED_COST_CASE]
    others = [row for case, row in rows.items() if case.system != "torchpool"
              and (case.env_id, case.num_envs) == (FIXED_COST_CASE.env_id, FIXED_COST_CASE.num_envs)]
    fixed_cost = (f"Fixed cost of one torchpool `step()` call (CartPole-v1, num_envs=1, {fixed.threads} thread): "
                  f"**{fixed.us_per_call:.2f} us**"
                  + "".join(f"; {row.case.label} {row.us_per_call:.2f} us" for row in others) + ".")
    print("\n" + fixed_cost.replace("**", "").replace("`", ""))

    if args.quick:
        print("\n--quick: RESULTS.md and classic.png left untouched.")
        sys.exit(0)

    args.output_dir.mkdir(parents=True, exist_ok=True)
    draw_plot(table, harness.machine(), args.repeats, args.output_dir / "classic.png")
    harness.record_section(
        "classic", "Classic control: steps/s (`benchmarks/classic.py`)", path=args.output_dir / "RESULTS.md",
        packages=("envpool", "gymnasium"),
        question="How many env steps/s does torchpool deliver on classic control, next to Gymnasium's "
        "SyncVectorEnv and AsyncVectorEnv and EnvPool, and what is the fixed cost of one `step()` call?",
        settings=[
            f"- Settings: {args.repeats} repeats, each timing every case once in turn (alternating direction); "
            f"~{args.target_seconds} s per measurement (`calls` step calls, after a warm-up); actions generated "
            "before the timed loop; outputs handed over as torch tensors by every system. Sync: all `num_envs` "
            "step per call; async: send/recv of `batch_size = num_envs // 2`. Threads: torchpool's and EnvPool's "
            "defaults (min(cores, num_envs) and min(cores, batch_size)); Gymnasium AsyncVectorEnv runs one "
            "process per env. frames/s = steps/s (no frame skip). spread = (max - min) / median of steps/s over "
            "repeats. Ratios: torchpool steps/s over the named system's at the same env, num_envs and mode."],
        body=[
            *harness.markdown_table(COLUMNS, [cells(row) for row in table], text_columns=3),
            "",
            fixed_cost,
            "",
            *[f"Skipped {case}: {reason}.\n" for case, reason in skipped.items()],
            "![classic control steps/s against num_envs](classic.png)",
        ])
