"""torchrl Collector throughput: TorchPoolEnv next to ParallelEnv and SerialEnv of GymEnv.

Question: how many frames/s does torchrl's ``Collector`` deliver when its env
is a ``TorchPoolEnv``, next to the same collector over torchrl's own batched
envs (``ParallelEnv`` and ``SerialEnv`` of ``GymEnv``), with the same env and
the same policy? (Target: at least 5x ``ParallelEnv``.)

    python benchmarks/torchrl_collector.py              # full run; writes RESULTS.md and torchrl_collector.png
    python benchmarks/torchrl_collector.py --quick      # smoke test; prints only
    python benchmarks/torchrl_collector.py --repeats 5  # more repeats, tighter medians

Method (benchmarks/harness). A case is (env, system, num_envs). A
measurement builds the batched env and a ``Collector`` (``frames_per_batch =
num_envs * --steps-per-batch``, an endless iterator), warms up with
``--warmup-batches`` batches, times two batches to pick how many batches last
``--target-seconds``, then times that many, and shuts everything down;
building is timed separately (``startup s``). Each repeat runs every case
once, in turn, alternating direction, so a noisy period hits all systems
alike; the table gives medians over repeats. The policy is the same for every system: an MLP
(2 x 64, tanh) sampling from a Categorical (discrete actions) or a TanhNormal
(continuous), with fixed weights, run on the CPU in the collector's process.
torchrl counts one env step as one frame; frames/s here multiplies by the
env's frame skip (1 for classic control), steps/s does not.

Adding an env: add its torchpool id to ``ENVS`` with the Gymnasium id that
``GymEnv`` builds for the reference systems and its frame skip.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import harness
import torch
from torch import nn

import torchpool

# torchpool id -> (Gymnasium id for GymEnv, emulator frames per env step). Pong-v5 and
# Ant-v5 join here once torchpool has them, e.g. "Pong-v5": ("ALE/Pong-v5", 4).
ENVS = {
    "CartPole-v1": ("CartPole-v1", 1),
}
NUM_ENVS = (4, 16, 64)
SYSTEMS = ("TorchPoolEnv", "ParallelEnv", "SerialEnv")  # table and legend order


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: 1 repeat, num_envs 4, ~0.3 s per measurement; prints the table, "
                             "writes nothing")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes over all cases; the table gives medians")
    parser.add_argument("--target-seconds", type=float, default=2.0,
                        help="wall time of one measurement's timed batches")
    parser.add_argument("--steps-per-batch", type=int, default=64,
                        help="collector steps per batch: frames_per_batch = num_envs * this")
    parser.add_argument("--warmup-batches", type=int, default=2, help="batches collected before timing")
    parser.add_argument("--env-ids", nargs="+", default=list(ENVS), choices=list(ENVS), help="envs to benchmark")
    parser.add_argument("--num-envs", nargs="+", type=int, default=list(NUM_ENVS), help="batched env sizes")
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS, help="systems to compare")
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="torch intra-op threads in the collector's process (torch.set_num_threads); on a "
                             "2-core VM two threads made one softmax of a [8, 2] tensor take ~1 ms instead of ~2 us")
    parser.add_argument("--parallel-max-envs", type=int, default=16,
                        help="largest num_envs tried with ParallelEnv: one process per env, each importing torchrl "
                             "(on the 2-core VM ParallelEnv(32) took 90 s to start)")
    parser.add_argument("--output-dir", type=Path, default=harness.OUTPUT,
                        help="where RESULTS.md and torchrl_collector.png are written")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.num_envs, args.target_seconds, args.warmup_batches = 1, [4], 0.3, 1
    if args.repeats < 1 or args.steps_per_batch < 1 or args.warmup_batches < 0 or args.torch_threads < 1:
        parser.error("--repeats, --steps-per-batch and --torch-threads must be at least 1, --warmup-batches at least 0")
    return args


def make_env(system: str, env_id: str, num_envs: int):
    """The batched env of a case: batch size [num_envs], CPU."""
    from torchrl.envs import GymEnv, ParallelEnv, SerialEnv

    if system == "TorchPoolEnv":
        return torchpool.TorchPoolEnv(env_id, num_envs, seed=0)
    # Integer actions, as TorchPoolEnv takes (GymEnv defaults to one-hot), so one policy serves all.
    make_gym = functools.partial(GymEnv, ENVS[env_id][0], device="cpu", categorical_action_encoding=True)
    if system == "ParallelEnv":
        return ParallelEnv(num_envs, make_gym)
    return SerialEnv(num_envs, make_gym)


def make_policy(env) -> nn.Module:
    """The same MLP policy for every system, built from the env's specs with fixed weights."""
    from tensordict.nn import NormalParamExtractor, TensorDictModule
    from torchrl.data import Categorical
    from torchrl.modules import ProbabilisticActor, TanhNormal

    torch.manual_seed(0)
    obs_dim = env.observation_spec["observation"].shape[-1]
    action_spec = env.action_spec_unbatched
    if isinstance(action_spec, Categorical):
        body = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                             nn.Linear(64, action_spec.space.n))
        module = TensorDictModule(body, in_keys=["observation"], out_keys=["logits"])
        return ProbabilisticActor(module, in_keys=["logits"], distribution_class=torch.distributions.Categorical,
                                  spec=action_spec)
    action_dim = action_spec.shape[-1]
    body = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                         nn.Linear(64, 2 * action_dim), NormalParamExtractor())
    module = TensorDictModule(body, in_keys=["observation"], out_keys=["loc", "scale"])
    return ProbabilisticActor(module, in_keys=["loc", "scale"], distribution_class=TanhNormal,
                              distribution_kwargs={"low": action_spec.space.low, "high": action_spec.space.high},
                              spec=action_spec)


@dataclass(frozen=True)
class Case:
    env_id: str
    system: str
    num_envs: int

    def __str__(self) -> str:
        return f"{self.env_id} {self.system} num_envs={self.num_envs}"


@dataclass(frozen=True)
class Measurement:
    steps_per_s: float     # env steps (one env advancing once) per second = torchrl frames/s
    us_per_step: float     # wall time of one collector step of the whole batch
    startup_s: float       # building the batched env and the collector
    batches: int
    workers: int           # TorchPoolEnv: pool threads; ParallelEnv: processes; SerialEnv: 1


def measure(case: Case, args: argparse.Namespace) -> Measurement:
    from torchrl.collectors import Collector

    frames_per_batch = case.num_envs * args.steps_per_batch
    started = time.perf_counter()
    env = make_env(case.system, case.env_id, case.num_envs)
    collector = Collector(env, make_policy(env), frames_per_batch=frames_per_batch, total_frames=-1,
                          auto_register_policy_transforms=False)
    batches = iter(collector)
    startup_s = time.perf_counter() - started
    workers = {"TorchPoolEnv": getattr(getattr(env, "pool", None), "num_threads", 0),
               "ParallelEnv": case.num_envs, "SerialEnv": 1}[case.system]
    try:
        def call(_: int) -> int:
            return next(batches).numel()

        _, pilot_us = harness.time_calls(call, calls=2, warmup=args.warmup_batches)
        calls = max(3, round(args.target_seconds * 1e6 / pilot_us))
        steps_per_s, us_per_batch = harness.time_calls(call, calls=calls, warmup=0)
    finally:
        collector.shutdown()
        if not env.is_closed:
            env.close()
    return Measurement(steps_per_s, us_per_batch / args.steps_per_batch, startup_s, calls, workers)


@dataclass(frozen=True)
class Row:
    """A case's medians over repeats."""

    case: Case
    workers: int
    batches: int
    steps_per_s: float
    us_per_step: float
    startup_s: float
    spread: float                   # (max - min) / median of steps/s over repeats
    vs_this: float | None = None    # TorchPoolEnv steps/s over this row's, same env and num_envs

    @property
    def frames_per_s(self) -> float:
        return self.steps_per_s * ENVS[self.case.env_id][1]


COLUMNS = ("env", "system", "num_envs", "frames_per_batch", "workers", "batches", "steps/s", "frames/s",
           "us/step", "startup s", "spread", "TorchPoolEnv / this")


def cells(row: Row, steps_per_batch: int) -> tuple[str, ...]:
    ratio = "-" if row.vs_this is None else f"{row.vs_this:.1f}x"
    return (row.case.env_id, row.case.system, str(row.case.num_envs), str(row.case.num_envs * steps_per_batch),
            str(row.workers), str(row.batches), f"{row.steps_per_s:,.0f}", f"{row.frames_per_s:,.0f}",
            f"{row.us_per_step:,.0f}", f"{row.startup_s:.1f}", f"{row.spread:.0%}", ratio)


def summarize(measurements: dict[Case, list[Measurement]]) -> list[Row]:
    rows = {}
    for case, results in measurements.items():
        rates = [m.steps_per_s for m in results]
        median = statistics.median(rates)
        rows[case] = Row(case, results[0].workers, results[0].batches, median,
                         statistics.median(m.us_per_step for m in results),
                         statistics.median(m.startup_s for m in results), harness.spread(rates))
    for case, row in list(rows.items()):
        ours = rows.get(Case(case.env_id, "TorchPoolEnv", case.num_envs))
        if ours is not None and case.system != "TorchPoolEnv":
            rows[case] = Row(**{**row.__dict__, "vs_this": ours.steps_per_s / row.steps_per_s})
    return sorted(rows.values(), key=lambda r: (r.case.env_id, r.case.num_envs, SYSTEMS.index(r.case.system)))




def draw_plot(table: list[Row], info: dict[str, str], repeats: int, path: Path) -> None:
    """One panel per env: frames/s against num_envs, log-log, one line per system."""
    styles = {"TorchPoolEnv": ("tab:blue", "o"), "ParallelEnv": ("tab:red", "v"), "SerialEnv": ("tab:green", "^")}
    env_ids = sorted({row.case.env_id for row in table})
    figure, axes = harness.panels(len(env_ids), (6.5, 5.0))
    for axis, env_id in zip(axes, env_ids):
        label = {system: system if system == "TorchPoolEnv" else f"{system} of GymEnv" for system in SYSTEMS}
        harness.size_lines(axis, {label[system]: [(row.case.num_envs, row.frames_per_s) for row in table
                                                  if (row.case.env_id, row.case.system) == (env_id, system)]
                                  for system in SYSTEMS},
                           {label[system]: dict(color=color, marker=marker)
                            for system, (color, marker) in styles.items()})
        axis.set(ylabel="frames/s (torchrl Collector)", title=env_id)
        axis.legend(fontsize=9)
    harness.save(figure, path, info=info,
                 title=f"torchrl Collector throughput, median of {repeats} repeat{'s' * (repeats > 1)}")


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.torch_threads)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    started = time.perf_counter()
    cases, skipped = [], {}
    for env_id in args.env_ids:
        for num_envs in args.num_envs:
            for system in args.systems:
                case = Case(env_id, system, num_envs)
                if system == "ParallelEnv" and num_envs > args.parallel_max_envs:
                    skipped[case] = f"num_envs > --parallel-max-envs={args.parallel_max_envs}"
                else:
                    cases.append(case)

    measurements = harness.measure_rounds(cases, args.repeats, lambda case: measure(case, args),
                                          progress="torchrl Collector")
    elapsed_min = (time.perf_counter() - started) / 60
    table = summarize(measurements)

    print(f"\nMedians of {args.repeats} repeat(s), ~{args.target_seconds} s of timed batches per measurement, "
          f"{elapsed_min:.1f} min in all.")
    harness.print_table(COLUMNS, [cells(row, args.steps_per_batch) for row in table])
    for case, reason in skipped.items():
        print(f"skipped {case}: {reason}")

    if args.quick:
        print("\n--quick: RESULTS.md and torchrl_collector.png left untouched.")
        return

    packages = ("envpool", "gymnasium", "torchrl", "tensordict")
    args.output_dir.mkdir(parents=True, exist_ok=True)
    draw_plot(table, harness.machine(packages), args.repeats, args.output_dir / "torchrl_collector.png")
    harness.record_section(
        "torchrl", "torchrl Collector: frames/s (`benchmarks/torchrl_collector.py`)",
        path=args.output_dir / "RESULTS.md", packages=packages,
        question="How many frames/s does torchrl's `Collector` deliver with a `TorchPoolEnv`, next to the same "
        "collector over `ParallelEnv` and `SerialEnv` of `GymEnv`, with the same env and policy? (Target: 5x "
        "`ParallelEnv`.)",
        settings=[
            f"- Settings: {args.repeats} repeat{'s' * (args.repeats > 1)}, each running every case once in turn "
            "(alternating direction); per "
            f"measurement a fresh env and `Collector` (`frames_per_batch = num_envs * {args.steps_per_batch}`, "
            f"`total_frames=-1`), {args.warmup_batches} warm-up batches, then ~{args.target_seconds} s of batches "
            f"(`batches`). Policy: the same MLP (2 x 64, tanh) sampling a Categorical, fixed weights, CPU, "
            f"{args.torch_threads} torch thread(s) in the collector's process (`--torch-threads`). "
            "`workers`: TorchPoolEnv's pool threads, ParallelEnv's processes (one per env), SerialEnv's 1. "
            "steps/s = env steps/s = torchrl frames/s; frames/s multiplies by the frame skip (1 here). us/step: "
            "one collector step of all num_envs (policy + env + bookkeeping). startup s: building env and "
            "collector. spread = (max - min) / median of steps/s over repeats."],
        body=[
            *harness.markdown_table(COLUMNS, [cells(row, args.steps_per_batch) for row in table], text_columns=2),
            "",
            *[f"Skipped {case}: {reason}.\n" for case, reason in skipped.items()],
            "![torchrl Collector frames/s against num_envs](torchrl_collector.png)",
        ])


if __name__ == "__main__":
    main()
