"""MiniGrid throughput: torchpool's native MiniGrid next to EnvPool's, the Python env and Gymnasium.

Question: how many env steps/s does torchpool's C++ MiniGrid family deliver,
next to EnvPool's native MiniGrid (sync and async, in the same run), next to
minigrid's own Python env run by torchpool's Python-env path (worker
processes) and next to Gymnasium's SyncVectorEnv of it? The goals (the
MiniGrid issue): >= 1.2x EnvPool, sync at 8 and 64 envs and async (3x hoped
for), and >= 20x torchpool's Python-env path. The issue's baseline,
DoorKey-8x8 at 8 envs: EnvPool 62.9k steps/s, Python-env path 8.9k,
SyncVectorEnv 2.8k.

    python benchmarks/minigrid_tasks.py               # full run; writes RESULTS.md and minigrid.png
    python benchmarks/minigrid_tasks.py --quick       # smoke test; prints only
    python benchmarks/minigrid_tasks.py --repeats 9   # more repeats, tighter medians

(The file is not ``minigrid.py``: this folder is first on ``sys.path`` when a
script here runs, and tests/test_bench_sections.py puts it there too, so a
``minigrid.py`` here would be what ``import minigrid`` finds, in
python_envs.py, in the tests and in torchpool's workers, as mujoco_tasks.py
is not ``mujoco.py``.)

Method (benchmarks/harness), as in classic.py. Every (env, system, mode,
num_envs) case is timed by a runner of ``torchpool._side_by_side``: it builds
the system, draws uniform random actions (of minigrid's 7) before the timed
loop, warms up, times ``calls`` step calls, and hands every output over as
torch tensors (the NumPy systems pay ``torch.from_numpy`` in the loop, field by
field for EnvPool's Dict observation). A pilot pass sizes ``calls`` to about
``--target-seconds`` per measurement; each repeat then runs every case once,
alternating direction, so a noisy stretch of the machine hits all systems
alike. The table gives medians over repeats; the ratios are paired: the
median over repeats of torchpool's rate over the other system's in the same
repeat (with how many repeats torchpool won), which a drift between repeats
does not move. Sync modes step all ``num_envs`` per call; async modes
send/recv ``batch_size = num_envs // 2``.

The systems' observations: torchpool and EnvPool hand over minigrid's Dict
(``image`` 7x7x3, ``direction``, ``mission``: torchpool's default encodes it
as 24 word tokens, EnvPool as 96 text bytes; ``--mission-bytes 96`` gives
torchpool EnvPool's encoding). The Python env, in torchpool's Python-env path
and in SyncVectorEnv, is wrapped in minigrid's ``ImgObsWrapper`` (the image
alone), as the issue measured it: the mission's ``Text`` space has no tensor
(torchpool's Python-env path would pickle each env's string every step, for
``pool.objects``; SyncVectorEnv hands over a tuple of them). The wrapped env
does less per step than the native systems, so ratios to it err in its favour.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import gymnasium
import harness
from minigrid.wrappers import ImgObsWrapper  # importing minigrid registers its ids

from torchpool._cpus import available_cpus

ENV_IDS = ("MiniGrid-DoorKey-8x8-v0", "MiniGrid-Empty-16x16-v0")
NUM_ENVS = (8, 64)
SYSTEMS = {  # (system, mode) -> label, in table and legend order
    ("torchpool", "sync"): "torchpool sync",
    ("torchpool", "async"): "torchpool async",
    ("envpool", "sync"): "EnvPool sync",
    ("envpool", "async"): "EnvPool async",
    ("python-env", "sync"): "torchpool Python env (workers)",
    ("gymnasium-sync", "sync"): "Gymnasium SyncVectorEnv",
}
PYTHON_SYSTEMS = ("python-env", "gymnasium-sync")  # minigrid's own Python env, wrapped in ImgObsWrapper
GOAL_VS_ENVPOOL, HOPE_ASYNC_VS_ENVPOOL, GOAL_VS_PYTHON = 1.2, 3.0, 20.0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: 1 repeat, ~0.05 s per measurement, both envs and sizes; prints the "
                             "table but writes no files")
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed passes over all cases; the table reports medians over them")
    parser.add_argument("--target-seconds", type=float, default=0.5,
                        help="wall time one measurement should take; sets the calls per measurement")
    parser.add_argument("--env-ids", nargs="+", default=list(ENV_IDS), help="envs to benchmark")
    parser.add_argument("--num-envs", nargs="+", type=int, default=list(NUM_ENVS), help="pool sizes to benchmark")
    parser.add_argument("--python-max-envs", type=int, default=64,
                        help="largest num_envs for the Python env's systems (torchpool's Python-env path, "
                             "SyncVectorEnv), the slow ones")
    parser.add_argument("--mission-bytes", type=int, default=0,
                        help="torchpool's mission encoding: 0 its word tokens, 96 EnvPool's text bytes")
    parser.add_argument("--output-dir", type=Path, default=harness.OUTPUT,
                        help="where RESULTS.md and minigrid.png are written")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.target_seconds = 1, 0.05
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    return args


def image_only_minigrid(env_id: str) -> gymnasium.Env:
    """minigrid's env as its ImgObsWrapper shows it: the image alone (defined in __main__, so cloudpickle
    sends it to the workers by value and they import minigrid and gymnasium, not this script or torch)."""
    return ImgObsWrapper(gymnasium.make(env_id))


class Case(harness.SystemCase):
    """One system at one size: what a measurement builds and times."""

    LABELS = SYSTEMS
    TORCHPOOL_KWARGS: ClassVar[dict] = {}  # make() kwargs of the native torchpool pools (mission_bytes)

    def run(self, calls: int, warmup: int | None = None) -> harness.Result:
        kwargs = {} if warmup is None else {"warmup": warmup}
        if self.system == "torchpool":
            return harness.run_torchpool(self.env_id, self.num_envs, calls, batch_size=None if self.mode == "sync"
                                         else self.batch_size, **self.TORCHPOOL_KWARGS, **kwargs)
        if self.system == "python-env":
            # In worker processes, whatever "auto" would pick on a busy host: the path the goal is set against.
            # num_workers as its default would be (the cores, at most num_envs), given so the table can say it.
            workers = min(available_cpus(), self.num_envs)
            result = harness.run_torchpool(functools.partial(image_only_minigrid, self.env_id), self.num_envs,
                                           calls, steps_in="workers", num_workers=workers, **kwargs)
            return dataclasses.replace(result, system=self.system, env_id=self.env_id, num_threads=workers)
        if self.system == "gymnasium-sync":
            return harness.run_gymnasium(self.env_id, self.num_envs, calls, "sync", wrappers=[ImgObsWrapper],
                                         **kwargs)
        return super().run(calls, warmup)


@dataclass(frozen=True)
class Row:
    """A case's medians over repeats, and torchpool's paired ratios to the others."""

    case: Case
    threads: int
    calls: int
    steps_per_s: float
    us_per_call: float
    spread: float                                # (max - min) / median of steps/s over repeats
    vs_envpool: harness.Paired | None = None     # torchpool / EnvPool, same env, num_envs and mode
    vs_python: harness.Paired | None = None      # torchpool sync / the Python-env path, same env and num_envs
    vs_gym_sync: harness.Paired | None = None    # torchpool sync / Gymnasium SyncVectorEnv, same env and num_envs


COLUMNS = ("env", "system", "mode", "num_envs", "batch_size", "threads", "calls", "steps/s", "us/call", "spread",
           "torchpool/EnvPool", "torchpool/Python-env", "torchpool/Gym-sync")


def ratio(paired: harness.Paired | None) -> str:
    return "-" if paired is None else f"{paired.ratio:.2f}x ({paired.wins}/{paired.rounds})"


def cells(row: Row) -> tuple[str, ...]:
    system = row.case.label.removesuffix(f" {row.case.mode}")
    threads = f"{row.threads} proc" if row.case.system == "python-env" else str(row.threads)
    return (row.case.env_id, system, row.case.mode, str(row.case.num_envs), str(row.case.batch_size), threads,
            str(row.calls), f"{row.steps_per_s:,.0f}", f"{row.us_per_call:,.1f}", f"{row.spread:.0%}",
            ratio(row.vs_envpool), ratio(row.vs_python), ratio(row.vs_gym_sync))


def make_cases(env_ids: list[str], sizes: list[int], python_max_envs: int) -> list[Case]:
    systems = [key for key in SYSTEMS if key[0] != "envpool" or harness.envpool_available()]
    # Ordered by env and size, the systems of a size side by side: the paired cases run close together.
    return [Case(env_id, system, mode, n) for env_id in env_ids for n in sizes for system, mode in systems
            if not (system in PYTHON_SYSTEMS and n > python_max_envs)]


def pilot_us_per_call(case: Case) -> float:
    """us/call from a brief run: ~500 calls of a native system, ~2,000 env steps of a Python one."""
    return case.run(max(5, 2000 // case.num_envs) if case.system in PYTHON_SYSTEMS else 500).us_per_call


def goal_lines(rows: dict[Case, Row]) -> list[str]:
    """The issue's goals, one line each: the paired ratio measured, and whether it meets the goal."""
    lines = []
    for case, row in rows.items():
        if case.system != "torchpool":
            continue
        where = f"{case.env_id}, {case.mode}, num_envs={case.num_envs}"
        if row.vs_envpool:
            goal = f">= {GOAL_VS_ENVPOOL}x" + (f", {HOPE_ASYNC_VS_ENVPOOL:.0f}x hoped for" if case.mode == "async"
                                               else "")
            met = "met" if row.vs_envpool.ratio >= GOAL_VS_ENVPOOL else "NOT met"
            lines.append(f"- torchpool / EnvPool, {where}: {ratio(row.vs_envpool)} (goal {goal}): {met}")
        if row.vs_python:
            met = "met" if row.vs_python.ratio >= GOAL_VS_PYTHON else "NOT met"
            lines.append(f"- torchpool / its Python-env path, {where}: {ratio(row.vs_python)} "
                         f"(goal >= {GOAL_VS_PYTHON:.0f}x): {met}")
    return lines


def draw_plot(table: list[Row], info: dict[str, str], repeats: int, path: Path) -> None:
    """One panel per env: steps/s against num_envs, both log scale, one line per system and mode."""
    colors = {"torchpool": ("tab:blue", "o"), "envpool": ("tab:orange", "s"),
              "python-env": ("tab:purple", "D"), "gymnasium-sync": ("tab:green", "^")}
    env_ids = sorted({row.case.env_id for row in table})
    figure, axes = harness.panels(len(env_ids), (6.5, 5.5))
    for axis, env_id in zip(axes, env_ids):
        series, styles = {}, {}
        for (system, mode), label in SYSTEMS.items():
            label += " (batch = num_envs / 2)" if mode == "async" else ""
            label += " (ImgObsWrapper)" if system in PYTHON_SYSTEMS else ""
            series[label] = [(row.case.num_envs, row.steps_per_s) for row in table
                             if (row.case.env_id, row.case.system, row.case.mode) == (env_id, system, mode)]
            color, marker = colors[system]
            styles[label] = dict(color=color, marker=marker, linestyle="--" if mode == "async" else "-")
        harness.size_lines(axis, series, styles)
        axis.set(ylabel="env steps/s", title=env_id)
    harness.save(figure, path, title=f"MiniGrid throughput, median of {repeats} repeat{'s' * (repeats > 1)}",
                 info=info, legend_below=3)


if __name__ == "__main__":
    args = parse_args()
    if args.mission_bytes:
        Case.TORCHPOOL_KWARGS = {"mission_bytes": args.mission_bytes}
    started = time.perf_counter()
    cases = make_cases(args.env_ids, args.num_envs, args.python_max_envs)

    # Pilot pass: time each case briefly and pick its calls for ~target_seconds per measurement.
    calls, skipped = harness.pilot(cases, pilot_us_per_call, args.target_seconds)
    cases = [case for case in cases if case in calls]
    for case, reason in skipped.items():
        print(f"skipped {case}: {reason}")

    # Timed repeats: every case once per repeat, alternating direction, so drift hits all alike.
    measurements = harness.measure_rounds(cases, args.repeats, lambda case: case.run(calls[case]),
                                          progress="minigrid")
    elapsed_min = (time.perf_counter() - started) / 60

    # Medians over repeats, then torchpool's paired ratios (same repeats) to EnvPool and the Python env.
    rates = {case: [result.steps_per_s for result in results] for case, results in measurements.items()}
    rows: dict[Case, Row] = {}
    for case, results in measurements.items():
        rows[case] = Row(case, results[0].num_threads, calls[case], statistics.median(rates[case]),
                         statistics.median(result.us_per_call for result in results), harness.spread(rates[case]))

    def versus(case: Case, system: str) -> harness.Paired | None:
        other = dataclasses.replace(case, system=system)
        return harness.paired(rates[case], rates[other]) if other in rates else None

    for case, row in rows.items():
        if case.system == "torchpool":  # the Python systems are sync only: no ratio to them for async
            rows[case] = dataclasses.replace(row, vs_envpool=versus(case, "envpool"),
                                             vs_python=versus(case, "python-env"),
                                             vs_gym_sync=versus(case, "gymnasium-sync"))
    order = list(SYSTEMS)
    table = sorted(rows.values(), key=lambda row: (row.case.env_id, row.case.num_envs,
                                                   order.index((row.case.system, row.case.mode))))
    goals = goal_lines({row.case: row for row in table})

    print(f"\nMedians of {args.repeats} repeat(s), ~{args.target_seconds} s per measurement, "
          f"{elapsed_min:.1f} min in all.")
    harness.print_table(COLUMNS, [cells(row) for row in table])
    for case, reason in skipped.items():
        print(f"skipped {case}: {reason}")
    print("\n" + "\n".join(goals))

    if args.quick:
        print("\n--quick: RESULTS.md and minigrid.png left untouched.")
        sys.exit(0)

    args.output_dir.mkdir(parents=True, exist_ok=True)
    draw_plot(table, harness.machine(), args.repeats, args.output_dir / "minigrid.png")
    mission = (f"the mission as {args.mission_bytes} text bytes in both (torchpool's `mission_bytes`)"
               if args.mission_bytes else "the mission as torchpool's 24 word tokens and EnvPool's 96 text bytes")
    harness.record_section(
        "minigrid", "MiniGrid: steps/s (`benchmarks/minigrid_tasks.py`)", path=args.output_dir / "RESULTS.md",
        packages=("envpool", "minigrid", "gymnasium"),
        question="How many env steps/s does torchpool's native MiniGrid deliver, next to EnvPool's native MiniGrid, "
        "to minigrid's Python env run by torchpool's Python-env path (worker processes) and to Gymnasium's "
        f"SyncVectorEnv? Goals: >= {GOAL_VS_ENVPOOL}x EnvPool, sync at 8 and 64 envs and async "
        f"({HOPE_ASYNC_VS_ENVPOOL:.0f}x hoped for), and >= {GOAL_VS_PYTHON:.0f}x the Python-env path.",
        settings=[
            f"- Settings: {args.repeats} repeats, each timing every case once in turn (alternating direction); "
            f"~{args.target_seconds} s per measurement (`calls` step calls, after a warm-up); random actions "
            "drawn before the timed loop; outputs handed over as torch tensors by every system. Sync: all "
            "`num_envs` step per call; async: send/recv of `batch_size = num_envs // 2`. Threads: torchpool's and "
            "EnvPool's defaults (min(cores, num_envs) and min(cores, batch_size)); the Python-env path runs "
            "min(cores, num_envs) worker processes (`steps_in=\"workers\"`). spread = (max - min) / median of "
            "steps/s over repeats. Ratios: the median over repeats of torchpool's steps/s over the named "
            "system's in the same repeat, at the same env and num_envs (and mode, for EnvPool), with the "
            "repeats torchpool won.",
            f"- Observations: torchpool and EnvPool minigrid's Dict (image, direction, mission; {mission}); "
            "the Python env (Python-env path, SyncVectorEnv) wrapped in minigrid's `ImgObsWrapper`, the image "
            "alone: less work per step than the native systems do, so ratios to it err in its favour."],
        body=[
            *harness.markdown_table(COLUMNS, [cells(row) for row in table], text_columns=3),
            "",
            "Goals (the MiniGrid issue):",
            "",
            *goals,
            "",
            *[f"Skipped {case}: {reason}.\n" for case, reason in skipped.items()],
            "![MiniGrid steps/s against num_envs](minigrid.png)",
        ])
