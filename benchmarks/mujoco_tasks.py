"""MuJoCo throughput: torchpool next to EnvPool, Gymnasium's vector envs and the machine's raw limit.

Question: how many env steps/s (and MuJoCo frames/s) does torchpool deliver on
Ant-v5, HalfCheetah-v5 and Humanoid-v5, next to EnvPool and Gymnasium's
SyncVectorEnv/AsyncVectorEnv, and how close is it to what the cores can do?
With ``--suite dmc``: the same for the Control Suite's CheetahRun-v1,
WalkerWalk-v1, HumanoidRun-v1 and QuadrupedRun-v1, next to EnvPool and dm_control's own
Python loop (one env, in the reference environment of tests/test_dmc_parity.py).

    python benchmarks/mujoco_tasks.py             # full run; writes RESULTS.md and mujoco.png
    python benchmarks/mujoco_tasks.py --suite dmc # writes its own RESULTS.md section and dmc.png
    python benchmarks/mujoco_tasks.py --quick     # smoke test; prints only
    python benchmarks/mujoco_tasks.py --repeats 5

Method (benchmarks/harness). Every (env, system, mode, num_envs) case is
timed by a runner of ``torchpool._side_by_side`` (as in classic.py): actions
uniform in [-1, 1] generated before the timed loop, a warm-up, then ``calls``
step calls, every output handed over as a torch tensor (the NumPy systems pay
``torch.from_numpy`` inside the loop). Sync modes step all ``num_envs`` per
call; async modes send/recv ``batch_size = num_envs // 2``. A pilot pass sizes
``calls`` to ~``--target-seconds`` per measurement; each repeat then runs every
case once, alternating direction, and the table reports medians.

The raw limit is ``cores x`` one thread's rate of bare ``mj_step`` calls on the
same model, as env steps (divided by frame_skip): a tiny C++ program (below,
compiled at run time against the mujoco wheel's headers and libmujoco, like
torchpool) runs episodes like the benchmark's — uniform random controls in
[-1, 1] held for frame_skip steps, the task's reset noise, a reset where the
task terminates or after 1000 steps — and times only the ``mj_step`` calls,
including those a task's reset runs (the Control Suite's cheetah lets its
body settle for 200 physics steps with zero controls at every reset: every
system runs them, so the limit times them too, without counting them as
steps). Everything else an env does (observations, rewards, the rest of a
reset, ``mj_rnePostConstraint``) and everything a pool does counts against
the systems, not the limit. It is measured right after every case, and ``of raw
limit`` is the median over repeats of each run over its adjacent limit: this
VM's speed drifts by tens of % within minutes.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import harness

from torchpool.families.dmc import dm_control_suite_dir
from torchpool.families.mujoco import mujoco_assets_dir

ENV_IDS = {"gymnasium": ("Ant-v5", "HalfCheetah-v5", "Humanoid-v5"),
           "dmc": ("CheetahRun-v1", "WalkerWalk-v1", "HumanoidRun-v1", "QuadrupedRun-v1")}
NUM_ENVS = (8, 64)
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Task:
    """What the raw-limit program needs to run a task's episodes (gymnasium/envs/mujoco/*_v5.py)."""

    xml_file: str
    frame_skip: int
    noise_scale: float
    qvel_noise_gaussian: bool      # standard_normal * scale; else uniform(-scale, scale)
    healthy_z: tuple[float, float] | None  # terminate when qpos[2] leaves it; None: never terminates
    dm_control: tuple[str, str] | None = None  # a Control Suite (domain, task): the XML is dm_control's
    # A domain whose task edits its XML in Python: the expression (in dm_control.suite.<domain>) that makes
    # the task's XML; the raw limit then steps that model (made by the reference environment's dm_control).
    make_xml: str | None = None
    # Physics steps a reset runs (with zero controls) before the episode's first step: cheetah's
    # initialize_episode lets the body settle for 200. The raw limit times them as part of the episodes
    # (every system runs them), without counting them as steps.
    reset_steps: int = 0

    @property
    def xml_path(self) -> str:
        if self.make_xml:
            return edited_xml(self)
        return os.path.join(dm_control_suite_dir() if self.dm_control else mujoco_assets_dir(), self.xml_file)


@functools.cache
def edited_xml(task: Task) -> str:
    """The task's XML as dm_control makes it, saved beside a copy of the suite's common/ includes."""
    domain = task.dm_control[0]
    code = f"from dm_control.suite import {domain}; import sys; sys.stdout.write({domain}.{task.make_xml}.decode())"
    xml = subprocess.run([DM_CONTROL_PYTHON, "-c", code], capture_output=True, text=True, check=True).stdout
    folder = Path(tempfile.mkdtemp(prefix="torchpool_dmc_"))
    shutil.copytree(Path(dm_control_suite_dir()) / "common", folder / "common")
    path = folder / task.xml_file
    path.write_text(xml)
    return str(path)


TASKS = {
    "Ant-v5": Task("ant.xml", 5, 0.1, True, (0.2, 1.0)),
    "HalfCheetah-v5": Task("half_cheetah.xml", 5, 0.1, True, None),
    "Humanoid-v5": Task("humanoid.xml", 5, 1e-2, False, (1.0, 2.0)),
    # The Control Suite's episodes for the raw limit: random joints stand in for the suite's initial
    # states (a 0.1 uniform noise around qpos0), 1000 steps, no termination.
    "CheetahRun-v1": Task("cheetah.xml", 1, 0.1, False, None, ("cheetah", "run"), reset_steps=200),
    "WalkerWalk-v1": Task("walker.xml", 10, 0.1, False, None, ("walker", "walk")),
    "HumanoidRun-v1": Task("humanoid.xml", 5, 0.1, False, None, ("humanoid", "run")),
    "QuadrupedRun-v1": Task("quadruped.xml", 4, 0.1, False, None, ("quadruped", "run"),
                            make_xml="make_model(floor_size=100)"),
}
SYSTEMS = {  # (system, mode) -> label, in table and legend order
    ("torchpool", "sync"): "torchpool sync",
    ("torchpool", "async"): "torchpool async",
    ("envpool", "sync"): "EnvPool sync",
    ("envpool", "async"): "EnvPool async",
    ("gymnasium-sync", "sync"): "Gymnasium SyncVectorEnv",
    ("gymnasium-async", "sync"): "Gymnasium AsyncVectorEnv",
    ("dm_control", "sync"): "dm_control's Python loop (1 env)",
}
SUITE_SYSTEMS = {"gymnasium": {"torchpool", "envpool", "gymnasium-sync", "gymnasium-async"},
                 "dmc": {"torchpool", "envpool", "dm_control"}}

# One dm_control env stepped in its own Python loop (run by the reference environment's Python): steps/s.
DM_CONTROL_LOOP = """
import sys, time
import numpy as np
from dm_control import suite
domain, task, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
env = suite.load(domain, task, task_kwargs={"random": 0})
spec = env.action_spec()
actions = np.random.default_rng(0).uniform(spec.minimum, spec.maximum, size=(64, *spec.shape))
env.reset()
for i in range(20):
    env.step(actions[i % 64])
start = time.perf_counter()
for i in range(calls):
    if env.step(actions[i % 64]).last():
        env.reset()
elapsed = time.perf_counter() - start
print(calls / elapsed, elapsed / calls * 1e6)
"""
# An AsyncVectorEnv worker imports gymnasium, mujoco and numpy: budget this much per worker.
GYM_ASYNC_MIB_PER_WORKER = 200
DM_CONTROL_PYTHON = ""  # --dm-control-python

RAW_STEP_SOURCE = r"""
// One thread's rate of bare mj_step on a task's episodes; prints mj_steps per second.
// usage: raw_step XML FRAME_SKIP SECONDS NOISE QVEL_GAUSSIAN Z_LOW Z_HIGH RESET_STEPS
// (Z_LOW > Z_HIGH: never terminates; RESET_STEPS mj_steps with zero controls after each reset are timed, not
// counted)
#include <mujoco/mujoco.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

int main(int argc, char** argv) {
  if (argc != 9) return 2;
  char error[1000] = "";
  mjModel* m = mj_loadXML(argv[1], nullptr, error, sizeof error);
  if (!m) { std::fprintf(stderr, "%s\n", error); return 1; }
  mjData* d = mj_makeData(m);
  const int frame_skip = std::atoi(argv[2]);
  const double seconds = std::atof(argv[3]), noise = std::atof(argv[4]);
  const bool qvel_gaussian = std::atoi(argv[5]) != 0;
  const double z_low = std::atof(argv[6]), z_high = std::atof(argv[7]);
  const int reset_steps = std::atoi(argv[8]);
  std::mt19937_64 rng(0);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  double resetting = 0.0;
  auto reset = [&] {
    mj_resetData(m, d);
    for (int i = 0; i < m->nq; ++i) d->qpos[i] = m->qpos0[i] + noise * unit(rng);
    for (int i = 0; i < m->nv; ++i) d->qvel[i] = noise * (qvel_gaussian ? normal(rng) : unit(rng));
    mj_forward(m, d);
    const auto before = std::chrono::steady_clock::now();
    for (int k = 0; k < reset_steps; ++k) mj_step(m, d);
    resetting += std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
  };
  reset();
  resetting = 0.0;
  long long steps = 0, episode_steps = 0;
  double stepping = 0.0;
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    for (int i = 0; i < m->nu; ++i) d->ctrl[i] = unit(rng);
    const auto before = std::chrono::steady_clock::now();
    for (int k = 0; k < frame_skip; ++k) mj_step(m, d);
    stepping += std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
    steps += frame_skip;
    const double z = d->qpos[2];
    const bool terminated = z_low <= z_high && !(z_low <= z && z <= z_high);
    if (terminated || ++episode_steps == 1000) reset(), episode_steps = 0;
  }
  std::printf("%.1f\n", steps / (stepping + resetting));
  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}
"""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: 1 repeat, num_envs 8, ~0.1 s per measurement, no AsyncVectorEnv; "
                             "prints the table but writes no files")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes over all cases; medians over them")
    parser.add_argument("--target-seconds", type=float, default=1.0, help="wall time of one measurement")
    parser.add_argument("--suite", choices=list(ENV_IDS), default="gymnasium",
                        help="Gymnasium's MuJoCo tasks, or the Control Suite's (dmc)")
    parser.add_argument("--env-ids", nargs="+", choices=list(TASKS), help="envs to run (default: the suite's)")
    parser.add_argument("--dm-control-python", default=os.environ.get(
        "TORCHPOOL_DMC_REFERENCE", str(ROOT / ".venv-dmc-reference" / "bin" / "python")),
        help="--suite dmc: a Python with dm_control (tests/test_dmc_parity.py makes .venv-dmc-reference)")
    parser.add_argument("--num-envs", nargs="+", type=int, default=list(NUM_ENVS), help="pool sizes")
    parser.add_argument("--gym-async-max-envs", type=int, default=64,
                        help="largest num_envs tried with Gymnasium's AsyncVectorEnv (one process per env)")
    parser.add_argument("--output-dir", type=Path, default=harness.OUTPUT,
                        help="where RESULTS.md and mujoco.png are written")
    args = parser.parse_args()
    args.env_ids = args.env_ids or list(ENV_IDS[args.suite])
    if args.quick:
        args.repeats, args.num_envs, args.target_seconds, args.gym_async_max_envs = 1, [8], 0.1, 0
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    return args


# ---- the raw limit ------------------------------------------------------------------------


def build_raw_step(directory: Path) -> Path:
    """Compiles RAW_STEP_SOURCE against the mujoco wheel torchpool links (CMakeLists.txt finds it the same way)."""
    mujoco_dir = Path(importlib.util.find_spec("mujoco").submodule_search_locations[0])
    library = next(mujoco_dir.glob("libmujoco.so.*"))
    source, binary = directory / "raw_step.cpp", directory / "raw_step"
    source.write_text(RAW_STEP_SOURCE)
    compiler = os.environ.get("CXX", "c++")
    subprocess.run([compiler, "-O2", "-std=c++17", str(source), f"-I{mujoco_dir / 'include'}", str(library),
                    f"-Wl,-rpath,{mujoco_dir}", "-o", str(binary)], check=True)
    return binary


def raw_mj_steps_per_s(binary: Path, env_id: str, seconds: float, processes: int = 1) -> float:
    """mj_step calls per second on env_id's episodes: one thread's, or the sum of `processes` run at once."""
    task = TASKS[env_id]
    z_low, z_high = task.healthy_z if task.healthy_z else (1.0, 0.0)
    command = [str(binary), task.xml_path, str(task.frame_skip), str(seconds),
               str(task.noise_scale), str(int(task.qvel_noise_gaussian)), str(z_low), str(z_high),
               str(task.reset_steps)]
    running = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for _ in range(processes)]
    outputs = [process.communicate()[0] for process in running]
    for process in running:
        if process.returncode != 0:
            raise subprocess.CalledProcessError(process.returncode, command)
    return sum(float(output.split()[-1]) for output in outputs)


# ---- cases -------------------------------------------------------------------------------------


class Case(harness.SystemCase):
    """One system at one size (system: also "dm_control", its own Python loop of one env)."""

    LABELS = SYSTEMS

    def run(self, calls: int) -> harness.Result:
        if self.system == "dm_control":
            domain, task = TASKS[self.env_id].dm_control
            done = subprocess.run([DM_CONTROL_PYTHON, "-c", DM_CONTROL_LOOP, domain, task, str(calls)],
                                  capture_output=True, text=True, check=True)
            steps_per_s, us = map(float, done.stdout.split())
            return harness.Result("dm_control", "sync", self.env_id, 1, 1, 1, steps_per_s, us)
        return super().run(calls, warmup=5 if self.system.startswith("gymnasium") else 20)


@dataclass(frozen=True)
class Row:
    case: Case
    threads: int
    calls: int
    steps_per_s: float
    us_per_call: float
    spread: float                    # (max - min) / median of steps/s over repeats
    vs_envpool: float | None = None  # torchpool / EnvPool, same env, num_envs and mode
    of_raw: float | None = None      # steps/s / the raw limit

    @property
    def frames_per_s(self) -> float:
        return self.steps_per_s * TASKS[self.case.env_id].frame_skip


COLUMNS = ("env", "system", "mode", "num_envs", "batch_size", "threads", "steps/s", "frames/s", "us/call",
           "spread", "torchpool/EnvPool", "of raw limit")


def cells(row: Row) -> tuple[str, ...]:
    ratio = lambda value: "-" if value is None else f"{value:.2f}x"  # noqa: E731
    share = "-" if row.of_raw is None else f"{row.of_raw:.0%}"
    return (row.case.env_id, row.case.label.removesuffix(f" {row.case.mode}"), row.case.mode, str(row.case.num_envs),
            str(row.case.batch_size), str(row.threads), f"{row.steps_per_s:,.0f}", f"{row.frames_per_s:,.0f}",
            f"{row.us_per_call:,.0f}", f"{row.spread:.0%}", ratio(row.vs_envpool), share)


def make_cases(suite: str, env_ids: list[str], sizes: list[int]) -> list[Case]:
    systems = [key for key in SYSTEMS if key[0] in SUITE_SYSTEMS[suite]
               and (key[0] != "envpool" or harness.envpool_available())]
    cases = [Case(env_id, system, mode, n) for env_id in env_ids for n in sizes for system, mode in systems
             if system != "dm_control"]
    if ("dm_control", "sync") in systems:  # one env, whatever the pool sizes
        cases += [Case(env_id, "dm_control", "sync", 1) for env_id in env_ids]
    return cases


def draw_plot(table: list[Row], raw: dict[str, float], info: dict[str, str], repeats: int, path: Path) -> None:
    """One panel per env: steps/s per system and num_envs as grouped bars, the raw limit as a line."""
    colors = {"torchpool": "tab:blue", "envpool": "tab:orange", "gymnasium-sync": "tab:green",
              "gymnasium-async": "tab:red", "dm_control": "tab:purple"}
    env_ids = sorted({row.case.env_id for row in table})
    sizes = sorted({row.case.num_envs for row in table})
    figure, axes = harness.panels(len(env_ids), (6, 5.5))
    for axis, env_id in zip(axes, env_ids):
        series, styles = {}, {}
        for (system, mode), label in SYSTEMS.items():
            values = {row.case.num_envs: row.steps_per_s for row in table
                      if (row.case.env_id, row.case.system, row.case.mode) == (env_id, system, mode)}
            if values:
                label += " (batch = num_envs / 2)" if mode == "async" else ""
                series[label] = [values.get(n, 0.0) for n in sizes]
                styles[label] = dict(color=colors[system], hatch="//" if mode == "async" else None,
                                     edgecolor="white")
        harness.grouped_bars(axis, [f"num_envs={n}" for n in sizes], series, styles)
        axis.axhline(raw[env_id], color="black", linestyle="--", label="raw limit (cores x 1-thread mj_step)")
        axis.get_legend().remove()
        axis.set(ylabel="env steps/s", title=f"{env_id} (frames/s = {TASKS[env_id].frame_skip} x steps/s)")
    harness.save(figure, path, title=f"MuJoCo throughput, median of {repeats} repeat{'s' * (repeats > 1)}",
                 info=info, legend_below=4)


if __name__ == "__main__":
    args = parse_args()
    warnings.filterwarnings("ignore")
    started = time.perf_counter()
    cores = os.cpu_count() or 1
    skipped: dict[Case, str] = {}
    cases = []
    DM_CONTROL_PYTHON = args.dm_control_python
    for case in make_cases(args.suite, args.env_ids, args.num_envs):
        reason = case.system == "gymnasium-async" and harness.gym_async_skip_reason(
            case.num_envs, args.gym_async_max_envs, GYM_ASYNC_MIB_PER_WORKER)
        if reason:
            skipped[case] = reason
        else:
            cases.append(case)

    with tempfile.TemporaryDirectory() as scratch:
        raw_binary = build_raw_step(Path(scratch))
        raw_seconds = min(1.0, args.target_seconds)
        print(f"Pilot pass over {len(cases)} cases, then {args.repeats} repeat(s) ...", flush=True)
        calls, failed = harness.pilot(
            cases, lambda case: case.run(5 if case.system.startswith("gymnasium") else 20).us_per_call,
            args.target_seconds)
        skipped.update(failed)
        cases = [case for case in cases if case in calls]

        def measure(case: Case) -> tuple[harness.Result, float]:
            """The case, then a raw-limit measurement right after it: this VM's speed drifts by tens of % within
            minutes, and the ratio of two adjacent runs cancels most of it."""
            return case.run(calls[case]), raw_mj_steps_per_s(raw_binary, case.env_id, raw_seconds)

        # Timed repeats: every case once per repeat, alternating direction.
        runs = harness.measure_rounds(cases, args.repeats, measure, progress="MuJoCo")
    elapsed_min = (time.perf_counter() - started) / 60
    measurements = {case: [result for result, _ in pairs] for case, pairs in runs.items()}
    raw_rates: dict[str, list[float]] = {env_id: [] for env_id in args.env_ids}
    of_raw: dict[Case, list[float]] = {}
    for case, pairs in runs.items():
        raw_rates[case.env_id] += [raw for _, raw in pairs]
        of_raw[case] = [result.steps_per_s / (cores * raw / TASKS[case.env_id].frame_skip) for result, raw in pairs]

    # The raw limit in env steps/s: cores x one thread's mj_step rate / frame_skip.
    raw_limit = {env_id: cores * statistics.median(rates) / TASKS[env_id].frame_skip
                 for env_id, rates in raw_rates.items()}
    rows: dict[Case, Row] = {}
    for case, results in measurements.items():
        rates = [result.steps_per_s for result in results]
        median = statistics.median(rates)
        rows[case] = Row(case, results[0].num_threads, calls[case], median,
                         statistics.median(result.us_per_call for result in results), harness.spread(rates),
                         of_raw=statistics.median(of_raw[case]))
    for case, row in rows.items():
        envpool = rows.get(dataclasses.replace(case, system="envpool"))
        if case.system == "torchpool" and envpool:
            rows[case] = dataclasses.replace(row, vs_envpool=row.steps_per_s / envpool.steps_per_s)
    order = list(SYSTEMS)
    table = sorted(rows.values(), key=lambda row: (row.case.env_id, row.case.num_envs,
                                                   order.index((row.case.system, row.case.mode))))

    print(f"\nMedians of {args.repeats} repeat(s), ~{args.target_seconds} s per measurement, {elapsed_min:.1f} min.")
    harness.print_table(COLUMNS, [cells(row) for row in table])
    raw_lines = [f"{env_id}: {cores} x {statistics.median(raw_rates[env_id]):,.0f} mj_step/s / frame_skip "
                 f"{TASKS[env_id].frame_skip} = {raw_limit[env_id]:,.0f} env steps/s "
                 f"({cores * statistics.median(raw_rates[env_id]):,.0f} frames/s)" for env_id in args.env_ids]
    print("Raw limit (cores x one thread's bare mj_step rate, C++):\n  " + "\n  ".join(raw_lines))
    for case, reason in skipped.items():
        print(f"skipped {case}: {reason}")

    if args.quick:
        print("\n--quick: RESULTS.md and mujoco.png left untouched.")
        sys.exit(0)

    packages = ("envpool", "gymnasium", "mujoco")
    args.output_dir.mkdir(parents=True, exist_ok=True)
    dmc = args.suite == "dmc"
    png = "dmc.png" if dmc else "mujoco.png"
    frame_skips = ", ".join(f"{env_id} {TASKS[env_id].frame_skip}" for env_id in args.env_ids)
    draw_plot(table, raw_limit, harness.machine(packages), args.repeats, args.output_dir / png)
    harness.record_section(
        "dmc" if dmc else "mujoco",
        "The Control Suite: steps/s and frames/s (`benchmarks/mujoco_tasks.py --suite dmc`)" if dmc else
        "MuJoCo: steps/s and frames/s (`benchmarks/mujoco_tasks.py`)", path=args.output_dir / "RESULTS.md",
        packages=packages,
        question=(f"How many env steps/s does torchpool deliver on {', '.join(args.env_ids)}, next to EnvPool and "
                  "dm_control's own Python loop (one env, mujoco 3.17 in its own environment), and how close is it "
                  "to the machine's raw limit? Targets: at least 1.2x EnvPool and 90% of the raw limit." if dmc else
                  "How many env steps/s does torchpool deliver on Ant-v5, HalfCheetah-v5 and Humanoid-v5, next to "
                  "EnvPool and Gymnasium's vector envs, and how close is it to the machine's raw limit? "
                  "Targets: at least 1.2x EnvPool and 90% of the raw limit."),
        settings=[
            f"- Settings: {args.repeats} repeats, each timing every case once in turn (alternating direction); "
            f"~{args.target_seconds} s per measurement after a warm-up; actions uniform in [-1, 1] generated before "
            "the timed loop; outputs handed over as torch tensors by every system. Sync: all `num_envs` step per "
            "call; async: send/recv of `batch_size = num_envs // 2`. Threads: torchpool's and EnvPool's defaults "
            "(min(cores, num_envs) and min(cores, batch_size)); AsyncVectorEnv runs one process per env. "
            f"frames/s = steps/s x frame_skip ({frame_skips}). spread = (max - min) / median over repeats.",
            "- Raw limit: cores x one thread's rate of bare `mj_step` calls on the same model and episodes "
            "(random controls held for frame_skip steps, the task's reset noise and termination, and the physics "
            "steps a reset runs, timed but not counted as steps: CheetahRun-v1's 200), timed by a tiny "
            "C++ program against the same libmujoco, in env steps/s (÷ frame_skip). "
            "Measured right after every case; `of raw limit` = the median over repeats of steps/s over the limit "
            "measured right after that run (the VM's speed drifts by tens of % within minutes)."],
        body=[
            *harness.markdown_table(COLUMNS, [cells(row) for row in table], text_columns=3),
            "",
            "Raw limits: " + "; ".join(raw_lines) + ".",
            "",
            *[f"Skipped {case}: {reason}.\n" for case, reason in skipped.items()],
            f"![MuJoCo steps/s per system and num_envs]({png})",
        ])
