"""Atari throughput: torchpool next to EnvPool, ale-py's AtariVectorEnv, Gymnasium's vector envs and the raw limit.

Question: how many Pong-v5 steps/s (and frames/s) with the standard
preprocessing (84x84 grey, 4-frame stack, frame_skip 4 with max-pooling,
no-op starts, fire reset) does each system deliver on this machine, and how
close does torchpool get to what the cores can emulate?

    python benchmarks/atari.py             # full run; writes RESULTS.md and atari.png
    python benchmarks/atari.py --quick     # smoke test; prints only

Method (benchmarks/harness). Sync: num_envs=8, all envs step per call. Async: num_envs=16,
batch_size=8, send/recv. Actions are drawn before the timed loop; every system
hands its outputs over as torch tensors (the NumPy systems pay
``torch.from_numpy`` inside the loop). A pilot pass sizes each case to
``--target-seconds``; each repeat runs every case once, alternating direction,
and the table reports medians.

Systems, all with the same preprocessing and sticky actions off:
- torchpool: ``torchpool.make("Pong-v5")`` defaults.
- EnvPool: ``envpool.make("Pong-v5", env_type="gymnasium")`` defaults.
- ale-py: ``ale_py.vector_env.AtariVectorEnv("pong", reward_clipping=False)``.
- Gymnasium: ``ALE/Pong-v5`` (frameskip=1) + ``AtariPreprocessing`` +
  ``FrameStackObservation(4)`` in ``SyncVectorEnv`` and ``AsyncVectorEnv``
  (one process per env).

Raw limit: cores x one thread's frames/s of bare ALE emulation
(``torchpool._atari.emulation_rate``: ``act()`` with random actions and
nothing else, in C++), divided by frame_skip, measured right after every
case; ``of raw limit`` is the median of those adjacent ratios. Also
measured: all cores emulating at once (one thread each), which shows how far
the machine itself falls short of cores x one thread (shared VMs do).

Peak memory: each system builds 32 Pong-v5 envs in a fresh process and steps
them; the table gives that process's peak RSS (with AsyncVectorEnv's worker
processes added), next to a baseline process that only imports torch and NumPy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import harness
import numpy as np
import torch

from torchpool import _family_modules
from torchpool.families import atari as atari_family

GAME, ENV_ID, FRAME_SKIP = "pong", "Pong-v5", 4
SYSTEMS = {  # (system, mode) -> label, in table and legend order
    ("torchpool", "sync"): "torchpool sync",
    ("torchpool", "async"): "torchpool async",
    ("envpool", "sync"): "EnvPool sync",
    ("envpool", "async"): "EnvPool async",
    ("ale-py", "sync"): "ale-py AtariVectorEnv sync",
    ("ale-py", "async"): "ale-py AtariVectorEnv async",
    ("gymnasium-sync", "sync"): "Gymnasium SyncVectorEnv",
    ("gymnasium-async", "sync"): "Gymnasium AsyncVectorEnv",
}
SYNC_ENVS, ASYNC_ENVS, ASYNC_BATCH = 8, 16, 8


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: 1 repeat, ~0.3 s per measurement; prints the table, writes no files")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes over all cases; medians over them")
    parser.add_argument("--target-seconds", type=float, default=2.0, help="wall time of one measurement")
    parser.add_argument("--output-dir", type=Path, default=harness.OUTPUT,
                        help="where RESULTS.md and atari.png are written")
    parser.add_argument("--memory-child", choices=MEMORY_SYSTEMS, help=argparse.SUPPRESS)  # internal
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.target_seconds = 1, 0.3
    return args


# ---- one runner per system: build, then time `calls` step calls ------------------------------


def stepping(envs, moves: list[np.ndarray], batch: int):
    """One timed call: a step of a NumPy vector env, its outputs handed over as torch tensors."""
    def call(i):
        obs, reward, terminated, truncated, _ = envs.step(moves[i % 64])
        torch.from_numpy(obs), torch.from_numpy(reward), torch.from_numpy(terminated), torch.from_numpy(truncated)
        return batch
    return call


def ale_py_envs(num_envs: int, batch: int = 0):
    from ale_py.vector_env import AtariVectorEnv

    return AtariVectorEnv(GAME, num_envs, batch_size=batch, reward_clipping=False)


def run_ale_py(mode: str, calls: int) -> float:
    num_envs, batch = (SYNC_ENVS, SYNC_ENVS) if mode == "sync" else (ASYNC_ENVS, ASYNC_BATCH)
    env = ale_py_envs(num_envs, batch if mode == "async" else 0)
    moves = harness.draw_actions(int(env.single_action_space.n), (), batch, 64, numpy=True)
    env.reset(seed=0)
    try:
        return harness.time_calls(stepping(env, moves, batch), calls, warmup=10)[0]
    finally:
        env.close()


def make_gymnasium_pong():
    import ale_py
    import gymnasium

    gymnasium.register_envs(ale_py)
    env = gymnasium.make("ALE/Pong-v5", frameskip=1, repeat_action_probability=0.0)
    env = gymnasium.wrappers.AtariPreprocessing(env, noop_max=30, frame_skip=FRAME_SKIP)
    return gymnasium.wrappers.FrameStackObservation(env, 4)


def gymnasium_envs(vectorization: str, num_envs: int):
    import gymnasium

    cls = gymnasium.vector.SyncVectorEnv if vectorization == "sync" else gymnasium.vector.AsyncVectorEnv
    return cls([make_gymnasium_pong] * num_envs)


def run_gymnasium(vectorization: str, calls: int) -> float:
    envs = gymnasium_envs(vectorization, SYNC_ENVS)
    moves = harness.draw_actions(int(envs.single_action_space.n), (), SYNC_ENVS, 64, numpy=True)
    envs.reset(seed=0)
    try:
        return harness.time_calls(stepping(envs, moves, SYNC_ENVS), calls, warmup=3)[0]
    finally:
        envs.close()


def concurrent_emulation_rate(rom: str, threads: int, seconds: float) -> float:
    """Frames/s of `threads` bare emulators running at once (the GIL is released inside)."""
    rates: list[float] = []
    emulation_rate = _family_modules.module("Atari").emulation_rate
    workers = [threading.Thread(target=lambda: rates.append(emulation_rate(rom, seconds)))
               for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return sum(rates)


# ---- peak memory: each system's 32 envs in a fresh process ----------------------------------------------

MEMORY_ENVS, MEMORY_STEPS = 32, 50
MEMORY_SYSTEMS = ("baseline", "torchpool", "envpool", "ale-py", "gymnasium-sync", "gymnasium-async")


def peak_rss_kib(pid: int) -> int:
    """The process's peak resident set (VmHWM), in KiB."""
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))


def memory_child(system: str) -> None:
    """Builds MEMORY_ENVS Pong envs of `system`, steps them, prints the peak RSS of its processes in MiB."""
    n = MEMORY_ENVS
    moves = np.zeros(n, dtype=np.int64)
    envs = None
    if system == "torchpool":
        import torchpool

        envs = torchpool.make(ENV_ID, num_envs=n)
        envs.reset()
        for _ in range(MEMORY_STEPS):
            envs.step(torch.from_numpy(moves))
    elif system != "baseline":
        if system == "envpool":
            import envpool

            envs = envpool.make(ENV_ID, env_type="gymnasium", num_envs=n)
        elif system == "ale-py":
            envs = ale_py_envs(n)
        else:
            envs = gymnasium_envs(system.removeprefix("gymnasium-"), n)
        envs.reset(seed=0)
        for _ in range(MEMORY_STEPS):
            envs.step(moves)
    # AsyncVectorEnv's workers are processes of their own: their peaks add up.
    pids = [os.getpid(), *(process.pid for process in getattr(envs, "processes", []))]
    print(json.dumps({"peak_mib": sum(peak_rss_kib(pid) for pid in pids) / 1024}))
    if envs is not None:
        envs.close()


def measure_memory() -> dict[str, float]:
    """Peak RSS in MiB per system ("baseline": Python with torch and NumPy, no envs)."""
    peaks = {}
    for system in MEMORY_SYSTEMS:
        if system == "envpool" and not harness.envpool_available():
            continue
        try:
            peaks[system] = harness.run_child([__file__, "--memory-child", system])["peak_mib"]
        except harness.ChildFailed as error:
            print(f"memory of {system} not measured: {error}")
    return peaks


@dataclass(frozen=True)
class Case:
    system: str
    mode: str

    @property
    def num_envs(self) -> int:
        return SYNC_ENVS if self.mode == "sync" else ASYNC_ENVS

    @property
    def batch_size(self) -> int:
        return SYNC_ENVS if self.mode == "sync" else ASYNC_BATCH

    def run(self, calls: int) -> float:
        batch = ASYNC_BATCH if self.mode == "async" else None
        if self.system == "torchpool":
            return harness.run_torchpool(ENV_ID, self.num_envs, calls, batch_size=batch, warmup=10).steps_per_s
        if self.system == "envpool":
            return harness.run_envpool(ENV_ID, self.num_envs, calls, batch_size=batch, warmup=10).steps_per_s
        if self.system == "ale-py":
            return run_ale_py(self.mode, calls)
        return run_gymnasium(self.system.removeprefix("gymnasium-"), calls)


def draw_plot(rows: list[tuple[Case, float, float]], raw: float, info: dict[str, str], repeats: int,
              path: Path) -> None:
    colors = {"torchpool": "tab:blue", "envpool": "tab:orange", "ale-py": "tab:purple",
              "gymnasium-sync": "tab:green", "gymnasium-async": "tab:red"}
    figure, (axis,) = harness.panels(1, (10, 5))
    harness.hbars(axis, [SYSTEMS[case.system, case.mode] for case, _, _ in rows],
                  [rate * FRAME_SKIP for _, rate, _ in rows], colors=[colors[case.system] for case, _, _ in rows],
                  hatches=["//" if case.mode == "async" else None for case, _, _ in rows], annotate="{:,.0f}")
    axis.axvline(raw * FRAME_SKIP, color="black", linestyle="--", label="raw limit (cores x 1-thread ALE emulation)")
    axis.set(xlabel="frames/s (= 4 x env steps/s)")
    axis.legend(loc="lower right", fontsize=8)
    harness.save(figure, path, info=info,
                 title=f"Pong-v5, sync num_envs={SYNC_ENVS}; async num_envs={ASYNC_ENVS}, batch {ASYNC_BATCH}; "
                       f"median of {repeats}")


if __name__ == "__main__":
    args = parse_args()
    warnings.filterwarnings("ignore")
    if args.memory_child:
        memory_child(args.memory_child)
        sys.exit(0)
    started = time.perf_counter()
    cores = os.cpu_count() or 1
    rom = os.path.join(atari_family.ale_roms_dir(), f"{GAME}.bin")
    cases = [Case(system, mode) for system, mode in SYSTEMS if system != "envpool" or harness.envpool_available()]

    print(f"Pilot pass over {len(cases)} cases, then {args.repeats} repeat(s) ...", flush=True)
    calls, skipped = harness.pilot(cases, lambda case: case.batch_size * 1e6 / case.run(10), args.target_seconds)
    cases = [case for case in cases if case in calls]
    emulation_rate = _family_modules.module("Atari").emulation_rate

    def measure(case: Case) -> tuple[float, float]:
        """The case's steps/s, then one thread's raw emulation right after it: this VM's speed drifts by tens
        of % within minutes, and a ratio of two adjacent runs cancels most of it."""
        return case.run(calls[case]), emulation_rate(rom, min(1.0, args.target_seconds))

    together_rates: list[float] = []  # all cores emulating at once, at the end of every repeat
    runs = harness.measure_rounds(
        cases, args.repeats, measure, progress="Pong-v5",
        after_round=lambda _: together_rates.append(concurrent_emulation_rate(rom, cores,
                                                                              min(2.0, args.target_seconds))))
    rates = {case: [rate for rate, _ in pairs] for case, pairs in runs.items()}
    raw_rates = [raw for pairs in runs.values() for _, raw in pairs]
    of_raw = {case: [rate / (cores * raw / FRAME_SKIP) for rate, raw in pairs] for case, pairs in runs.items()}
    print(f"Peak memory of {MEMORY_ENVS} envs per system ...", flush=True)
    memory = measure_memory()
    elapsed_min = (time.perf_counter() - started) / 60

    raw_frames = cores * statistics.median(raw_rates)
    raw_steps = raw_frames / FRAME_SKIP
    together_steps = statistics.median(together_rates) / FRAME_SKIP
    medians = {case: statistics.median(values) for case, values in rates.items()}
    rows = [(case, medians[case], harness.spread(rates[case])) for case in cases]

    def ratio(case: Case, other: str) -> str:
        mine, theirs = medians.get(case), medians.get(Case(other, case.mode))
        return f"{mine / theirs:.2f}x" if case.system == "torchpool" and mine and theirs else "-"

    columns = ("system", "mode", "num_envs", "batch", "steps/s", "frames/s", "spread", "torchpool/EnvPool",
               "torchpool/ale-py", "of raw limit", "of all-cores emulation")
    table = [(SYSTEMS[c.system, c.mode].removesuffix(f" {c.mode}"), c.mode, str(c.num_envs), str(c.batch_size),
              f"{rate:,.0f}", f"{rate * FRAME_SKIP:,.0f}", f"{spread:.0%}", ratio(c, "envpool"), ratio(c, "ale-py"),
              f"{statistics.median(of_raw[c]):.0%}", f"{rate / together_steps:.0%}") for c, rate, spread in rows]
    print(f"\nMedians of {args.repeats} repeat(s), ~{args.target_seconds} s per measurement, {elapsed_min:.1f} min.")
    harness.print_table(columns, table)
    raw_line = (f"{cores} x {statistics.median(raw_rates):,.0f} frames/s (one thread, bare ALE emulation) = "
                f"{raw_frames:,.0f} frames/s = {raw_steps:,.0f} steps/s")
    together_line = (f"{cores} threads emulating at once: {statistics.median(together_rates):,.0f} frames/s = "
                     f"{together_steps:,.0f} steps/s ({together_steps / raw_steps:.0%} of the raw limit)")
    print("Raw limit: " + raw_line)
    print("All cores at once: " + together_line)
    memory_names = {"baseline": "Python + torch + NumPy, no envs", "ale-py": "ale-py AtariVectorEnv",
                    **{system: SYSTEMS[system, "sync"] for system in ("torchpool", "envpool", "gymnasium-sync",
                                                                       "gymnasium-async")}}
    memory_rows = [f"| {memory_names[system].removesuffix(' sync')} | {peak:,.0f} | "
                   f"{peak - memory.get('baseline', 0.0):,.0f} |" for system, peak in memory.items()]
    memory_table = ["| system | peak RSS (MiB) | above the baseline (MiB) |", "|---|---:|---:|", *memory_rows]
    print("\n".join(memory_table))
    for case, reason in skipped.items():
        print(f"skipped {case}: {reason}")
    if args.quick:
        print("\n--quick: RESULTS.md and atari.png left untouched.")
        sys.exit(0)

    packages = ("envpool", "gymnasium", "ale_py")
    draw_plot(rows, raw_steps, harness.machine(packages), args.repeats, args.output_dir / "atari.png")
    harness.record_section(
        "atari", "Atari: Pong-v5 steps/s and frames/s (`benchmarks/atari.py`)", path=args.output_dir / "RESULTS.md",
        packages=packages,
        question="How fast does each system run Pong-v5 with the standard preprocessing (84x84 grey, stack 4, "
        "frame_skip 4 with max-pooling, up to 30 no-ops, fire reset, no sticky actions), and how close is "
        "torchpool to the machine's raw limit? Targets: at least 1.25x EnvPool, 1.1x ale-py's AtariVectorEnv "
        "and 85% of the raw limit.",
        settings=[
            f"- Settings: sync num_envs={SYNC_ENVS}; async num_envs={ASYNC_ENVS}, batch_size={ASYNC_BATCH} "
            f"(send/recv); {args.repeats} repeats, each timing every case once (alternating direction), "
            f"~{args.target_seconds} s per measurement after a warm-up; random actions drawn before the timed "
            "loop; outputs handed over as torch tensors by every system. Threads: each system's default. "
            "Gymnasium: `ALE/Pong-v5` (frameskip=1) + `AtariPreprocessing` + `FrameStackObservation(4)`, "
            "AsyncVectorEnv with one process per env. spread = (max - min) / median over repeats.",
            f"- Raw limit: {raw_line} (median of one measurement after every case); `of raw limit` = the median "
            "over repeats of steps/s over the raw limit measured right after that run (the VM's speed drifts).",
            f"- All cores emulating at once: {together_line}; `of all-cores emulation` = steps/s over it "
            "(what this VM's cores deliver together, with no preprocessing and no pool)."],
        body=[
            *harness.markdown_table(columns, table, text_columns=2),
            "",
            *[f"Skipped {case}: {reason}.\n" for case, reason in skipped.items()],
            f"Peak memory of {MEMORY_ENVS} Pong-v5 envs (sync), each system in a fresh process that builds them "
            f"and steps {MEMORY_STEPS} times: the peak RSS (VmHWM) of that process, plus its worker processes' for "
            "AsyncVectorEnv. Every process imports torch and NumPy; the baseline row is that alone.",
            "",
            *memory_table,
            "",
            "![Pong-v5 frames/s per system](atari.png)",
        ])
