"""Share of the raw limit, paired finely: how close torchpool gets to what the cores can do.

Question: what fraction of the machine's raw limit (cores x one thread's rate
of bare emulation or physics) does torchpool deliver on Pong-v5 and on the
MuJoCo tasks, measured so that the VM's drifting speed cancels?

    python benchmarks/raw_share.py             # full run; writes RESULTS.md and raw_share.png
    python benchmarks/raw_share.py --quick     # smoke test; prints only

Why a second measurement. atari.py and mujoco_tasks.py time each system for
1-2 s and measure the raw limit once after it; their `of raw limit` column is
the median over 5 such ratios. This VM's speed swings by tens of % within
seconds (two runs of atari.py 10 minutes apart: 87% and 72% for the same
code), so those ratios scatter. Here one long-lived pool per case alternates
with the raw measurement in short slices (--slice-seconds), --rounds times,
the order flipping every round; each round is one ratio, and the table gives
their median and quartiles. The cases take turns within each round, so a slow
stretch of the VM (minutes long at times) spreads over every case. Each pool is
warmed up first (--warmup-seconds), so episodes are desynchronised as in a
long training run.

Raw limit, as in those benchmarks: Pong-v5, cores x one thread's frames/s of
bare ALE emulation (``torchpool._atari.emulation_rate``) / frame_skip; MuJoCo,
cores x one thread's rate of bare ``mj_step`` on the task's episodes (the
C++ program of mujoco_tasks.py) / frame_skip. Targets: 85% (Atari issue),
90% (MuJoCo issue).

Where the rest goes. Every round also times the same case on a one-thread
pool, and all cores' raw emulation or physics at once (threads for ALE, one
process per core for mj_step), so each ratio splits into three medians:
- one thread: a one-thread pool over one thread's raw rate, i.e. what the
  env's own work (preprocessing, observations, rewards) and the pool cost;
- the VM's scaling: all cores' raw at once over cores x one thread's, i.e.
  what this VM's cores lose by running together (shared caches, the host);
- the pool's scaling: the pool (threads = cores) over all cores' raw at once.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import atari
import harness
import mujoco_tasks
from tqdm import tqdm

import torchpool
from torchpool.families import atari as atari_family

TARGETS = {"atari": 0.85, "mujoco": 0.90}


@dataclass(frozen=True)
class Case:
    env_id: str
    num_envs: int
    batch_size: int

    @property
    def family(self) -> str:
        return "atari" if self.env_id == atari.ENV_ID else "mujoco"

    @property
    def mode(self) -> str:
        return "sync" if self.batch_size == self.num_envs else "async"

    @property
    def label(self) -> str:
        batch = "" if self.mode == "sync" else f"/{self.batch_size}"
        return f"{self.env_id} {self.mode} {self.num_envs}{batch}"


def make_cases(env_ids: list[str]) -> list[Case]:
    cases = []
    for env_id in env_ids:
        if env_id == atari.ENV_ID:
            cases += [Case(env_id, atari.SYNC_ENVS, atari.SYNC_ENVS),
                      Case(env_id, atari.ASYNC_ENVS, atari.ASYNC_BATCH)]
        else:
            for n in mujoco_tasks.NUM_ENVS:
                cases += [Case(env_id, n, n), Case(env_id, n, n // 2)]
    return cases


class Stepper:
    """One long-lived pool, stepped in time slices (harness.torchpool_calls); async keeps a batch in flight."""

    def __init__(self, case: Case, num_threads: int | None = None):
        self.pool = torchpool.make(case.env_id, num_envs=case.num_envs, batch_size=case.batch_size,
                                   num_threads=num_threads)
        call, calls = harness.torchpool_calls(self.pool), itertools.count()
        self.step = lambda _: call(next(calls))  # the action batches go on where the last slice stopped

    def steps_per_s(self, seconds: float) -> float:
        return harness.rate_for(self.step, seconds, warmup=0).steps_per_s

    def close(self) -> None:
        self.pool.close()


class RawLimit:
    """Raw env steps/s for a task: one thread's (`one`) or all cores' at once (`together`)."""

    def __init__(self, scratch: Path):
        self.cores = os.cpu_count() or 1
        self.scratch = scratch
        self.binary: Path | None = None

    def one(self, env_id: str, seconds: float) -> float:
        return self._rate(env_id, seconds, 1)

    def together(self, env_id: str, seconds: float) -> float:
        return self._rate(env_id, seconds, self.cores)

    def _rate(self, env_id: str, seconds: float, at_once: int) -> float:
        if env_id == atari.ENV_ID:
            rom = os.path.join(atari_family.ale_roms_dir(), f"{atari.GAME}.bin")
            return atari.concurrent_emulation_rate(rom, at_once, seconds) / atari.FRAME_SKIP
        if self.binary is None:
            self.binary = mujoco_tasks.build_raw_step(self.scratch)
        rate = mujoco_tasks.raw_mj_steps_per_s(self.binary, env_id, seconds, processes=at_once)
        return rate / mujoco_tasks.TASKS[env_id].frame_skip


@dataclass(frozen=True)
class Round:
    """Steps/s of one round's four slices."""

    pool: float
    pool_one_thread: float
    raw_one: float
    raw_together: float
    cores: int

    @property
    def share(self) -> float:
        """The target's measure: the pool over cores x one thread's raw rate."""
        return self.pool / (self.cores * self.raw_one)

    @property
    def one_thread(self) -> float:
        return self.pool_one_thread / self.raw_one

    @property
    def vm_scaling(self) -> float:
        return self.raw_together / (self.cores * self.raw_one)

    @property
    def pool_scaling(self) -> float:
        return self.pool / self.raw_together


def measure_all(cases: list[Case], raw: RawLimit, rounds: int, slice_seconds: float,
                warmup_seconds: float) -> dict[Case, list[Round]]:
    """Rounds over every case: each round times every case's four slices (pool, one-thread pool, raw one
    thread, raw all cores), the order of the slices reversed every round.

    The cases take turns within each round instead of running one after another, so a stretch where this VM
    runs slow (it comes for minutes at a time) spreads over every case's rounds instead of landing on one case
    (three runs one after another put all of HalfCheetah-v5's rounds in such a stretch)."""
    steppers: dict[Case, tuple[Stepper, Stepper]] = {}
    try:
        for case in cases:  # every pool lives through the run; idle ones' workers sleep
            steppers[case] = (Stepper(case), Stepper(case, num_threads=1))
            for stepper in steppers[case]:
                stepper.steps_per_s(warmup_seconds)
        results: dict[Case, list[Round]] = {case: [] for case in cases}
        with tqdm(total=rounds * len(cases), desc="rounds x cases", unit="case") as progress:
            for index, case in harness.interleaved(cases, rounds, order="same"):
                stepper, one_thread = steppers[case]
                # Called within this iteration, so the loop variables they read are this case's.
                slices = {"pool": lambda: stepper.steps_per_s(slice_seconds),  # noqa: B023
                          "pool_one_thread": lambda: one_thread.steps_per_s(slice_seconds),  # noqa: B023
                          "raw_one": lambda: raw.one(case.env_id, slice_seconds),  # noqa: B023
                          "raw_together": lambda: raw.together(case.env_id, slice_seconds)}  # noqa: B023
                rates = {name: slices[name]() for name in harness.round_order(list(slices), index)}
                results[case].append(Round(**rates, cores=raw.cores))
                progress.update()
        return results
    finally:
        for pair in steppers.values():
            for stepper in pair:
                stepper.close()


def median_of(rounds: list[Round], measure_name: str) -> float:
    return statistics.median(getattr(r, measure_name) for r in rounds)


def table(results: dict[Case, list[Round]]) -> list[str]:
    lines = ["| env | mode | num_envs | batch | rounds | of raw limit (median) | quartiles | min - max | target "
             "| one thread: of one raw thread | VM: all cores' raw at once | pool: of all cores' raw at once |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for case, rounds in results.items():
        shares = [r.share for r in rounds]
        q1, median, q3 = harness.quartiles(shares)
        target = TARGETS[case.family]
        lines.append(f"| {case.env_id} | {case.mode} | {case.num_envs} | {case.batch_size} | {len(shares)} | "
                     f"{median:.1%}{'' if median >= target else ' (below)'} | {q1:.0%} - {q3:.0%} | "
                     f"{min(shares):.0%} - {max(shares):.0%} | {target:.0%} | "
                     f"{median_of(rounds, 'one_thread'):.0%} | {median_of(rounds, 'vm_scaling'):.0%} | "
                     f"{median_of(rounds, 'pool_scaling'):.0%} |")
    return lines


def draw_plot(results: dict[Case, list[Round]], info: dict[str, str], path: Path) -> None:
    """One box per case (round ratios), the family's target as a dashed line, and the VM's own scaling as a dot."""
    cases = list(results)
    figure, (axis,) = harness.panels(1, (9, 0.45 * len(cases) + 2))
    positions = list(range(len(cases), 0, -1))
    axis.boxplot([[100 * r.share for r in results[c]] for c in cases], positions=positions, vert=False, widths=0.6)
    axis.scatter([100 * median_of(results[c], "vm_scaling") for c in cases], positions, marker="D", s=18,
                 color="tab:gray", zorder=3,
                 label="all cores' bare raw at once (median): what the VM's cores deliver together")
    for family, target in TARGETS.items():
        rows = [p for p, c in zip(positions, cases) if c.family == family]
        if rows:
            axis.vlines(100 * target, min(rows) - 0.4, max(rows) + 0.4, colors="tab:red", linestyles="--",
                        label=f"target {target:.0%} ({'Atari' if family == 'atari' else 'MuJoCo'})")
    axis.set_yticks(positions, [c.label for c in cases])
    axis.set_xlabel("% of the raw limit, cores x one thread (box: torchpool, one point per round)")
    axis.grid(True, axis="x", alpha=0.3)
    axis.legend(loc="lower left", fontsize=8)
    harness.save(figure, path, title="Share of the raw limit, finely paired", info=info)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--env-ids", nargs="+", default=[atari.ENV_ID, *mujoco_tasks.ENV_IDS],
                        choices=[atari.ENV_ID, *mujoco_tasks.TASKS], help="envs to measure")
    parser.add_argument("--rounds", type=int, default=15,
                        help="rounds per case, each of four slices: pool, one-thread pool, raw one thread, "
                             "raw all cores")
    parser.add_argument("--slice-seconds", type=float, default=0.4, help="length of one slice")
    parser.add_argument("--warmup-seconds", type=float, default=1.0, help="pool stepping before the first round")
    parser.add_argument("--quick", action="store_true", help="smoke test: 2 rounds of 0.1 s slices, no files written")
    parser.add_argument("--output-dir", type=Path, default=harness.OUTPUT,
                        help="where RESULTS.md and raw_share.png are written")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.slice_seconds, args.warmup_seconds = 2, 0.1, 0.1
    if args.rounds < 1 or args.slice_seconds <= 0:
        parser.error("--rounds must be at least 1 and --slice-seconds positive")
    warnings.filterwarnings("ignore")

    cases = make_cases(args.env_ids)
    with tempfile.TemporaryDirectory() as scratch:
        results = measure_all(cases, RawLimit(Path(scratch)), args.rounds, args.slice_seconds, args.warmup_seconds)
    lines = table(results)
    print("\n".join(lines))
    if args.quick:
        return

    packages = ("gymnasium", "mujoco", "ale_py")
    draw_plot(results, harness.machine(packages), args.output_dir / "raw_share.png")
    harness.record_section(
        "raw_share", "Share of the raw limit, finely paired (`benchmarks/raw_share.py`)",
        path=args.output_dir / "RESULTS.md", packages=packages,
        question="What fraction of the raw limit does torchpool deliver, measured so that this VM's drifting speed "
        "cancels? `atari.py` and `mujoco_tasks.py` pair each 1-2 s run with one raw measurement; here one "
        "long-lived pool per case alternates with the raw measurement in short slices, and every round of slices "
        "gives one ratio. Each round also times a one-thread pool and all cores' raw at once, which splits the "
        "ratio into what the env and pool cost on one thread, what this VM's cores lose by running together, and "
        "what the pool loses spreading one batch over the cores (the last three columns, medians).",
        settings=[
            f"- Settings: {args.rounds} rounds per case of four {args.slice_seconds:g} s slices (pool, one-thread "
            "pool, raw one thread, raw all cores at once; order reversed every round; the cases take turns within "
            f"each round), after {args.warmup_seconds:g} s of warm-up; pool defaults (threads = cores); actions "
            "drawn before the loop (uniform in [-1, 1], or random action indices); sync steps all envs per call, "
            "async sends/receives `batch`. Raw limit as in `atari.py` (ALE emulation) and `mujoco_tasks.py` "
            "(`mj_step` on the task's episodes): cores x one thread's rate / frame_skip; all cores at once: one "
            "emulator thread or one `mj_step` process per core, summed."],
        body=[*lines, "", "![share of the raw limit](raw_share.png)"])


if __name__ == "__main__":
    main()
