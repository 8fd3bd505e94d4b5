"""How much faster does Stable-Baselines3 step, and train, on torchpool than on its own vectorized envs?

Two measurements, each system against the same task in one process, in
interleaved rounds (the systems' order rotates each round: benchmarks/harness):

* raw ``VecEnv.step`` rate (steps/s: one env advancing once) of
  ``torchpool.sb3.make_vec_env`` vs SB3's ``make_vec_env`` with
  ``DummyVecEnv`` (Python loop over Monitor-wrapped Gymnasium envs, the
  default) and with ``SubprocVecEnv`` (one process per env), for
  CartPole-v1 and HalfCheetah-v5, random actions made before the timed loop;
* SB3 PPO ``learn()`` steps/s with each, with RL Zoo's tuned hyper-parameters
  (its updates included: what a user sees), and the share of that time spent
  in the VecEnv's step (``--ppo-tasks``): CartPole-v1 (MlpPolicy),
  HalfCheetah-v5 (MlpPolicy, VecNormalize) and Pong-v5 (CnnPolicy; SB3's
  side is ``make_atari_env`` + ``VecFrameStack(4)``, torchpool's the same
  preprocessing inside the env: 84x84 grey, max-pooled frame skip 4, 30
  no-ops, fire reset, ``stack_num=4``, ``episodic_life``, ``reward_clip``).

frames/s = steps/s but for Pong, whose agent step is 4 emulator frames.

``--python-envs`` asks one narrower question (issue 47): does SB3 step a
Python env (``"gymnasium:<id>"``, the process family, which chooses where the
envs step) at least as fast through ``torchpool.sb3.make_vec_env`` as through
its own ``DummyVecEnv``? Both sides alternate in each round, at 4, 8 and 16
envs, and the CPU time per env step (which a shared host disturbs least) is
shown beside the wall rate.

    python benchmarks/sb3.py --record
    python benchmarks/sb3.py --ppo-tasks CartPole-v1          # the quick one
    python benchmarks/sb3.py --python-envs --record           # SB3 over gymnasium: ids
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium
import harness
import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_atari_env
from stable_baselines3.common.env_util import make_vec_env as sb3_make_vec_env
from stable_baselines3.common.vec_env import (
    DummyVecEnv,
    SubprocVecEnv,
    VecEnv,
    VecEnvWrapper,
    VecFrameStack,
    VecNormalize,
    VecTransposeImage,
)

import torchpool.sb3

SYSTEMS = ("torchpool", "DummyVecEnv", "SubprocVecEnv")
STEP_TASKS = ("CartPole-v1", "HalfCheetah-v5")


def linear(initial: float) -> Callable[[float], float]:
    """RL Zoo's ``lin_<initial>``: ``initial`` times the progress remaining (1 -> 0)."""
    return lambda progress_remaining: progress_remaining * initial


@dataclass(frozen=True)
class PpoTask:
    """One PPO ``learn()`` measurement: RL Zoo's hyper-parameters (rl_zoo3 2.9.2 hyperparams/ppo.yml) for a task."""
    env_id: str
    """the torchpool id (SB3's side: the same Gymnasium id, or ``sb3_atari_id`` for Atari)"""
    policy: str
    hyperparameters: Callable[[], dict[str, Any]]
    """PPO's keyword arguments (a function: the schedules are closures)"""
    timesteps: int
    """agent steps timed per round, after one untimed rollout and update"""
    zoo: str
    """the settings, as RESULTS.md words them"""
    normalize_gamma: float | None = None
    """wrap in VecNormalize(gamma=...) as the Zoo's ``normalize: true`` does, or not"""
    frame_skip: int = 1
    sb3_atari_id: str | None = None
    torchpool_kwargs: dict[str, Any] = field(default_factory=dict)


PPO_TASKS = {task.env_id: task for task in (
    PpoTask("CartPole-v1", "MlpPolicy", lambda: dict(
        n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20, ent_coef=0.0,
        learning_rate=linear(1e-3), clip_range=linear(0.2)),
        timesteps=16384, zoo="RL Zoo's CartPole-v1 (n_steps 32, batch 256, 20 epochs, lin_0.001 learning rate, "
                             "lin_0.2 clip; 64x64 MLP)"),
    PpoTask("HalfCheetah-v5", "MlpPolicy", lambda: dict(
        n_steps=512, batch_size=64, gamma=0.98, learning_rate=2.0633e-05, ent_coef=0.000401762, clip_range=0.1,
        n_epochs=20, gae_lambda=0.92, max_grad_norm=0.8, vf_coef=0.58096,
        policy_kwargs=dict(log_std_init=-2, ortho_init=False, activation_fn=torch.nn.ReLU,
                           net_arch=dict(pi=[256, 256], vf=[256, 256]))),
        timesteps=8192, normalize_gamma=0.98,
        zoo="RL Zoo's HalfCheetah-v4 (n_steps 512, batch 64, 20 epochs, 256x256 ReLU MLPs, VecNormalize) but "
            "8 envs, not 1"),
    PpoTask("Pong-v5", "CnnPolicy", lambda: dict(
        n_steps=128, n_epochs=4, batch_size=256, learning_rate=linear(2.5e-4), clip_range=linear(0.1),
        vf_coef=0.5, ent_coef=0.01),
        timesteps=1024, frame_skip=4, sb3_atari_id="ale_py:PongNoFrameskip-v4",  # "ale_py:" registers it
        torchpool_kwargs=dict(episodic_life=True, reward_clip=True),
        zoo="RL Zoo's atari (8 envs, n_steps 128, batch 256, 4 epochs, lin_2.5e-4 learning rate, lin_0.1 clip; "
            "Nature CNN)"),
)}


class StepTimer(VecEnvWrapper):
    """Adds up the seconds spent in the wrapped VecEnv's step_async and step_wait: the env's share of learn()."""

    def __init__(self, venv: VecEnv):
        super().__init__(venv)
        self.seconds = 0.0

    def reset(self):
        return self.venv.reset()

    def step_async(self, actions: np.ndarray) -> None:
        start = time.perf_counter()
        self.venv.step_async(actions)
        self.seconds += time.perf_counter() - start

    def step_wait(self):
        start = time.perf_counter()
        result = self.venv.step_wait()
        self.seconds += time.perf_counter() - start
        return result


def make_envs(system: str, env_id: str, num_envs: int, seed: int = 0) -> VecEnv:
    """``num_envs`` envs of ``env_id`` on ``system``; for Atari, frames stacked and channel-first on every system."""
    task = PPO_TASKS.get(env_id)
    if system == "torchpool":
        kwargs = task.torchpool_kwargs if task else {}
        return torchpool.sb3.make_vec_env(env_id, n_envs=num_envs, seed=seed, **kwargs)
    vec_env_cls = DummyVecEnv if system == "DummyVecEnv" else SubprocVecEnv
    if task and task.sb3_atari_id:
        envs = make_atari_env(task.sb3_atari_id, n_envs=num_envs, seed=seed, vec_env_cls=vec_env_cls)
        # VecTransposeImage here rather than inside PPO, so that the timer counts it as env time.
        return VecTransposeImage(VecFrameStack(envs, n_stack=4))
    return sb3_make_vec_env(env_id, n_envs=num_envs, seed=seed, vec_env_cls=vec_env_cls)


def step_rate(envs: VecEnv, actions: list[np.ndarray], seconds: float) -> float:
    """Env steps per second of ``envs.step`` over ``seconds`` (after 20 warm-up calls)."""
    step = stepper(envs, actions)
    for i in range(20):
        step(i)
    return harness.rate_for(step, seconds, warmup=0).steps_per_s


def warm_ppo(system: str, task: PpoTask, num_envs: int, seed: int) -> tuple[PPO, StepTimer]:
    """A PPO model on ``system``'s envs, after one untimed rollout and update; its env behind a ``StepTimer``."""
    envs = make_envs(system, task.env_id, num_envs, seed=seed)
    if task.normalize_gamma is not None:
        envs = VecNormalize(envs, gamma=task.normalize_gamma)
    timer = StepTimer(envs)
    model = PPO(task.policy, timer, seed=seed, device="cpu", **task.hyperparameters())
    model.learn(model.n_steps * num_envs)
    return model, timer


def ppo_rate(model: PPO, timer: StepTimer, timesteps: int) -> tuple[float, float]:
    """Agent steps per second of ``learn(timesteps)`` continuing ``model``, and the share of it in the VecEnv's step."""
    timer.seconds, before = 0.0, model.num_timesteps
    start = time.perf_counter()
    model.learn(timesteps, reset_num_timesteps=False)
    elapsed = time.perf_counter() - start
    return (model.num_timesteps - before) / elapsed, timer.seconds / elapsed


PYTHON_ENVS = ("CartPole-v1", "LunarLander-v3")
PYTHON_SECONDS = 1.5  # per system and turn


def stepper(envs: VecEnv, actions: list[np.ndarray]) -> Callable[[int], int]:
    """``step(i)``: ``envs.step`` with the i-th of ``actions`` (cycling); returns the env steps made."""
    def step(i: int) -> int:
        envs.step(actions[i % len(actions)])
        return envs.num_envs
    return step


def python_envs(sizes: list[int], rounds: int) -> dict:
    """{(env, num_envs): {"torchpool": [(rate, cpu)], "DummyVecEnv": [...], "steps_in": str}}; each VecEnv made
    anew each turn (the pool chooses where its envs step when it is made)."""
    results = {}
    for env_id in PYTHON_ENVS:
        for n in sizes:
            row: dict[str, Any] = {}
            space = gymnasium.make(env_id).action_space
            space.seed(0)
            actions = [np.stack([space.sample() for _ in range(n)]) for _ in range(64)]

            def measure(system: str, env_id: str = env_id, n: int = n, actions=actions, row=row) -> tuple:
                """(env steps/s, CPU seconds per env step) of one turn, its VecEnv made anew."""
                if system == "torchpool":
                    envs = torchpool.sb3.make_vec_env(f"gymnasium:{env_id}", n_envs=n, seed=0)
                    row["steps_in"] = envs.pool.schedule["steps_in"]
                else:
                    # The same env on both sides: SB3 makes its envs with render_mode="rgb_array" (for
                    # VecVideoRecorder), with which LunarLander steps 2.5x slower (it keeps its particles).
                    envs = sb3_make_vec_env(env_id, n_envs=n, seed=0, vec_env_cls=DummyVecEnv,
                                            env_kwargs={"render_mode": None})
                envs.reset()
                try:
                    rate = harness.rate_for(stepper(envs, actions), PYTHON_SECONDS)
                finally:
                    envs.close()
                return rate.steps_per_s, rate.cpu_s_per_step

            row.update(harness.measure_rounds(["torchpool", "DummyVecEnv"], rounds, measure))
            results[(env_id, n)] = row
            ours, theirs = (statistics.median(rate for rate, _ in row[s]) for s in ("torchpool", "DummyVecEnv"))
            print(f"{env_id:15s} {n:3d} envs  torchpool {ours:10,.0f}  DummyVecEnv {theirs:10,.0f}  "
                  f"{ours / theirs:5.2f}x  steps in: {row['steps_in']}", flush=True)
    return results


def record_python_envs(results: dict, rounds: int) -> None:
    packages = ("stable_baselines3", "gymnasium", "Box2D")
    lines = ["| env | num_envs | torchpool steps/s | DummyVecEnv steps/s | ratio | steps in | CPU µs/step, "
             "torchpool | CPU µs/step, DummyVecEnv | CPU ratio |",
             "|---|---:|---:|---:|---:|---|---:|---:|---:|"]
    ratio = {}  # (env, num_envs) -> torchpool's rate / DummyVecEnv's, medians
    for (env_id, n), row in results.items():
        ours, theirs = (statistics.median(rate for rate, _ in row[s]) for s in ("torchpool", "DummyVecEnv"))
        our_cpu, their_cpu = (statistics.median(cpu for _, cpu in row[s]) for s in ("torchpool", "DummyVecEnv"))
        ratio[(env_id, n)] = ours / theirs
        cpu = (f"{our_cpu * 1e6:.1f} | {their_cpu * 1e6:.1f} | {their_cpu / our_cpu:.2f}x"
               if row["steps_in"] == "caller" else "- | - | -")
        lines.append(f"| {env_id} | {n} | {ours:,.0f} | {theirs:,.0f} | {ratio[(env_id, n)]:.2f}x | {row['steps_in']} "
                     f"| {cpu} |")
    harness.record_section(
        "sb3-python-envs", "Stable-Baselines3 over Python envs: `VecEnv.step` against DummyVecEnv "
        "(`benchmarks/sb3.py --python-envs`)", packages=packages,
        settings=["- Settings: `torchpool.sb3.make_vec_env(\"gymnasium:<id>\")` (the process family; it chooses "
                  "where the envs step) against SB3's `make_vec_env(<id>, vec_env_cls=DummyVecEnv, env_kwargs="
                  "{\"render_mode\": None})` (the same env: SB3's default render_mode \"rgb_array\" slows "
                  "LunarLander 2.5x), both Monitor-wrapped, seed 0, random actions drawn before the timed loop; the "
                  f"two alternate in {rounds} rounds of {PYTHON_SECONDS:g} s each, made anew each turn; medians, env "
                  "steps/s. CPU: this process's CPU time per env step (both sides step in it when torchpool steps in "
                  "the caller)."],
        body=[*lines, "", "![sb3_python_envs](sb3_python_envs.png)"])
    figure, (ax,) = harness.panels(1, (7, 3.8))
    sizes = sorted({n for _, n in ratio})
    harness.grouped_bars(ax, [f"{n} envs" for n in sizes],
                         {env_id: [ratio[(env_id, n)] for n in sizes] for env_id in PYTHON_ENVS})
    ax.axhline(1.0, color="k", lw=1, ls="--")
    ax.set_ylabel("VecEnv.step rate: torchpool / DummyVecEnv")
    harness.save(figure, harness.OUTPUT / "sb3_python_envs.png", title="SB3 over gymnasium: ids",
                 info=harness.machine(packages))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per raw-step measurement")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--ppo-tasks", default=",".join(PPO_TASKS),
                        help=f"comma-separated PPO learn() tasks among {', '.join(PPO_TASKS)} (default all)")
    parser.add_argument("--record", action="store_true", help="write the RESULTS.md section and sb3.png")
    parser.add_argument("--python-envs", action="store_true",
                        help="only VecEnv.step over gymnasium: ids against DummyVecEnv (its own section)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[4, 8, 16], help="num_envs for --python-envs")
    args = parser.parse_args()
    if args.python_envs:
        torch.set_num_threads(1)
        results = python_envs(args.sizes, args.rounds)
        if args.record:
            record_python_envs(results, args.rounds)
        return
    args.ppo_tasks = [PPO_TASKS[name] for name in args.ppo_tasks.split(",")]
    torch.set_num_threads(1)  # small networks: a second thread only contends with the envs
    n = args.num_envs
    load_before = os.getloadavg()[0]
    start = time.perf_counter()

    steps: dict[tuple[str, str], list[float]] = {}
    for env_id in STEP_TASKS:
        systems = {system: make_envs(system, env_id, n) for system in SYSTEMS}
        space = systems["torchpool"].action_space
        space.seed(0)
        actions = [np.stack([space.sample() for _ in range(n)]) for _ in range(64)]
        for envs in systems.values():
            envs.reset()
        for r, system in harness.interleaved(SYSTEMS, args.rounds, "rotate"):
            rate = step_rate(systems[system], actions, args.seconds)
            steps.setdefault((env_id, system), []).append(rate)
            print(f"{env_id:15s} round {r}  {system:14s} {rate:12,.0f} steps/s", flush=True)
        for envs in systems.values():
            envs.close()

    ppo: dict[tuple[str, str], list[float]] = {}
    env_share: dict[tuple[str, str], list[float]] = {}
    for task in args.ppo_tasks:
        models = {system: warm_ppo(system, task, n, seed=0) for system in SYSTEMS}
        for r, system in harness.interleaved(SYSTEMS, args.rounds, "rotate"):
            rate, share = ppo_rate(*models[system], task.timesteps)
            ppo.setdefault((task.env_id, system), []).append(rate)
            env_share.setdefault((task.env_id, system), []).append(share)
            print(f"PPO {task.env_id:15s} round {r}  {system:14s} {rate:10,.0f} steps/s, "
                  f"{share:4.0%} in VecEnv.step", flush=True)
        for _, timer in models.values():
            timer.close()

    results = {"steps": steps, "ppo": ppo, "env_share": env_share, "load": (load_before, os.getloadavg()[0]),
               "minutes": (time.perf_counter() - start) / 60}
    print_table(results, args)
    if args.record:
        record(results, args)


def ratios(values: dict, base: str, other: str) -> float:
    """Median over rounds of values[base][r] / values[other][r] (paired by round)."""
    return harness.paired(values[base], values[other]).ratio


def cell(values: list[float]) -> str:
    """The median, and the rounds' range."""
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f})"


def share_cell(values: list[float]) -> str:
    return f"{statistics.median(values):.0%} ({min(values):.0%}-{max(values):.0%})"


def table_lines(results: dict, args) -> list[str]:
    steps, ppo, env_share = results["steps"], results["ppo"], results["env_share"]
    lines = ["| measurement | torchpool | DummyVecEnv | SubprocVecEnv | torchpool / Dummy | torchpool / Subproc |",
             "|---|---:|---:|---:|---:|---:|"]
    for env_id in STEP_TASKS:
        row = {system: steps[(env_id, system)] for system in SYSTEMS}
        lines.append(f"| `VecEnv.step`, {env_id} (steps/s = frames/s) | "
                     + " | ".join(cell(row[s]) for s in SYSTEMS)
                     + f" | {ratios(row, 'torchpool', 'DummyVecEnv'):.1f}x"
                     + f" | {ratios(row, 'torchpool', 'SubprocVecEnv'):.1f}x |")
    for task in args.ppo_tasks:
        row = {system: ppo[(task.env_id, system)] for system in SYSTEMS}
        unit = "steps/s = frames/s" if task.frame_skip == 1 else f"steps/s; frames/s = {task.frame_skip}x"
        lines.append(f"| PPO `learn()`, {task.env_id}, {task.policy} ({unit}) | "
                     + " | ".join(cell(row[s]) for s in SYSTEMS)
                     + f" | {ratios(row, 'torchpool', 'DummyVecEnv'):.2f}x"
                     + f" | {ratios(row, 'torchpool', 'SubprocVecEnv'):.2f}x |")
        lines.append("| &nbsp;&nbsp;share of that learn() in `VecEnv.step` | "
                     + " | ".join(share_cell(env_share[(task.env_id, s)]) for s in SYSTEMS) + " | | |")
    return lines


def reading(results: dict, args) -> str:
    """What the PPO rows say: how much of learn() the VecEnv is, so how much a faster one can give."""
    ppo, env_share = results["ppo"], results["env_share"]
    parts = []
    for task in args.ppo_tasks:
        share = {s: statistics.median(env_share[(task.env_id, s)]) for s in SYSTEMS}
        parts.append(f"{task.env_id}: stepping is {share['DummyVecEnv']:.0%} of learn() on DummyVecEnv, "
                     f"{share['SubprocVecEnv']:.0%} on SubprocVecEnv and {share['torchpool']:.0%} on torchpool "
                     f"(learn() {ratios({s: ppo[(task.env_id, s)] for s in SYSTEMS}, 'torchpool', 'DummyVecEnv'):.2f}x"
                     " DummyVecEnv's rate)")
    return ("Reading: a VecEnv can speed learn() up by at most the share of it spent stepping; " + "; ".join(parts)
            + ". The rest is SB3's per-step Python (policy call, buffer adds) and the updates. The raw rates show "
            "what a loop with less per-step work gets." + busy(results))


def busy(results: dict) -> str:
    """A warning where other work held the cores: the pool's threads (one per core) lose more than one process."""
    if max(results["load"]) <= os.cpu_count():
        return ""
    return (f" The load average ({max(results['load']):.1f}) exceeded the {os.cpu_count()} cores: the pool's "
            f"{min(torchpool.available_cpus(), 8)} threads found no free core, which costs a pool more than a "
            "one-process DummyVecEnv (HalfCheetah above all: `benchmarks/mujoco_tasks.py` measured torchpool at 3x "
            "SyncVectorEnv on this VM when idle).")


def print_table(results: dict, args) -> None:
    print(f"\nmedians of {args.rounds} rounds, {args.num_envs} envs; ratios: medians of per-round ratios; "
          f"{results['minutes']:.1f} min in all")
    print("\n".join(table_lines(results, args)))
    print(reading(results, args))


SCORES = ("<!-- sb3-scores:begin -->", "<!-- sb3-scores:end -->")


def kept_scores() -> list[str]:
    """The section's block of training runs to the Zoo's scores (``examples/sb3``, written by hand), kept by a rerun."""
    text = harness.RESULTS.read_text() if harness.RESULTS.exists() else ""
    if SCORES[0] not in text or SCORES[1] not in text:
        return []
    return ["", text[text.index(SCORES[0]):text.index(SCORES[1]) + len(SCORES[1])]]


def record(results: dict, args) -> None:
    threads = torchpool.available_cpus()
    ppo_settings = "; ".join(f"{task.env_id} {task.policy}: {task.zoo}, {task.timesteps} agent steps timed per round"
                             for task in args.ppo_tasks)
    harness.record_section(
        "sb3", "Stable-Baselines3: VecEnv steps/s and PPO frames/s (`benchmarks/sb3.py`)",
        packages=("stable_baselines3", "gymnasium", "mujoco", "ale_py"),
        question=__doc__.splitlines()[0],
        settings=[
            f"- Load: the 1-minute load average was {results['load'][0]:.1f} before the run and "
            f"{results['load'][1]:.1f} after (other work shares these cores).",
            f"- Settings: {args.num_envs} envs; torchpool `torchpool.sb3.make_vec_env` (sync pool, batch_size = "
            f"num_envs = {args.num_envs}, num_threads {min(threads, args.num_envs)} by default, float32 "
            "observations); SB3's `make_vec_env` with `DummyVecEnv` (default) or `SubprocVecEnv` (forkserver, one "
            "process per env), Monitor-wrapped Gymnasium envs. Raw steps: random actions drawn before the timed "
            f"loop, {args.seconds:g} s per measurement after 20 warm-up calls.",
            f"- PPO: one model and VecEnv per system (seed 0), warmed by one untimed rollout and update, then "
            f"`learn(budget, reset_num_timesteps=False)` timed each round (updates included); torch 1 thread, CPU. "
            f"{ppo_settings}. Pong: torchpool's `Pong-v5` with `episodic_life=True, reward_clip=True` (84x84 grey, "
            "frame skip 4 max-pooled, 30 no-ops, fire reset and `stack_num=4` by default) against SB3's "
            "`make_atari_env('PongNoFrameskip-v4')` (AtariWrapper: the same) + `VecFrameStack(4)` + "
            "`VecTransposeImage`. Share in `VecEnv.step`: seconds inside the VecEnv's `step_async` + `step_wait` "
            "(VecNormalize, frame stacking and transposing included) over learn()'s.",
            f"- {args.rounds} interleaved rounds (the systems' order rotates); medians, and medians of the per-round "
            "ratios. No frame skip but for Pong: frames/s = steps/s."],
        body=[*table_lines(results, args), "",
              "Cells: median (range of the rounds). " + reading(results, args), "",
              "![SB3 on torchpool](sb3.png)",
              *kept_scores()])

    steps, ppo, env_share = results["steps"], results["ppo"], results["env_share"]
    tasks = [task.env_id for task in args.ppo_tasks]
    figure, axes = harness.panels(3, (4.7, 3.8))
    harness.grouped_bars(axes[0], list(STEP_TASKS),
                         {s: [statistics.median(steps[(e, s)]) for e in STEP_TASKS] for s in SYSTEMS})
    axes[0].set_yscale("log")
    axes[0].set_ylabel("steps/s (log)")
    axes[0].set_title(f"VecEnv.step, {args.num_envs} envs")
    harness.grouped_bars(axes[1], tasks, {s: [statistics.median(ppo[(e, s)]) for e in tasks] for s in SYSTEMS})
    axes[1].set_yscale("log")
    axes[1].set_ylabel("agent steps/s (log)")
    axes[1].set_title("PPO learn(), RL Zoo hyper-parameters")
    harness.grouped_bars(axes[2], tasks,
                         {s: [100 * statistics.median(env_share[(e, s)]) for e in tasks] for s in SYSTEMS})
    axes[2].set_ylabel("% of learn() in VecEnv.step")
    axes[2].set_title("PPO learn(): the env's share of the time")
    harness.save(figure, harness.OUTPUT / "sb3.png")


if __name__ == "__main__":
    main()
