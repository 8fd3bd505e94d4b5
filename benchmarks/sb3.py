"""How much faster does Stable-Baselines3 step, and train, on torchpool than on its own vectorized envs?

Two measurements, each system against the same task in one process, in
interleaved rounds (the systems' order rotates each round):

* raw ``VecEnv.step`` rate (steps/s: one env advancing once) of
  ``torchpool.sb3.make_vec_env`` vs SB3's ``make_vec_env`` with
  ``DummyVecEnv`` (Python loop over Monitor-wrapped Gymnasium envs, the
  default) and with ``SubprocVecEnv`` (one process per env), for
  CartPole-v1 and HalfCheetah-v5, random actions made before the timed loop;
* SB3 PPO ``learn()`` frames/s on CartPole-v1 with each, with RL Zoo's tuned
  CartPole-v1 hyper-parameters (its updates included: what a user sees).

No frame skip in these tasks: frames/s = steps/s.

    python benchmarks/sb3.py --record
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env as sb3_make_vec_env
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv

import torchpool.sb3
from torchpool import bench

HERE = Path(__file__).resolve().parent
SYSTEMS = ("torchpool", "DummyVecEnv", "SubprocVecEnv")
STEP_TASKS = ("CartPole-v1", "HalfCheetah-v5")
# RL Zoo's CartPole-v1 PPO (rl_zoo3 2.9.2 hyperparams/ppo.yml; lin_x: linear from x to 0), n_envs 8.
ZOO_PPO = {"n_steps": 32, "batch_size": 256, "gae_lambda": 0.8, "gamma": 0.98, "n_epochs": 20, "ent_coef": 0.0}


def linear(initial: float):
    """RL Zoo's ``lin_<initial>``: ``initial`` times the progress remaining (1 -> 0)."""
    return lambda progress_remaining: progress_remaining * initial


def make_envs(system: str, env_id: str, num_envs: int, seed: int = 0) -> VecEnv:
    if system == "torchpool":
        return torchpool.sb3.make_vec_env(env_id, n_envs=num_envs, seed=seed)
    vec_env_cls = DummyVecEnv if system == "DummyVecEnv" else SubprocVecEnv
    return sb3_make_vec_env(env_id, n_envs=num_envs, seed=seed, vec_env_cls=vec_env_cls)


def step_rate(envs: VecEnv, actions: list[np.ndarray], seconds: float) -> float:
    """Env steps per second of ``envs.step`` over ``seconds`` (after a warm-up)."""
    for action in actions[:20]:
        envs.step(action)
    calls, start = 0, time.perf_counter()
    while True:
        envs.step(actions[calls % len(actions)])
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return calls * envs.num_envs / elapsed


def ppo_rate(system: str, num_envs: int, timesteps: int, seed: int) -> float:
    """Frames per second of PPO.learn(timesteps) on CartPole-v1 (model and envs made outside the timing)."""
    envs = make_envs(system, "CartPole-v1", num_envs, seed=seed)
    try:
        model = PPO("MlpPolicy", envs, seed=seed, device="cpu", learning_rate=linear(1e-3),
                    clip_range=linear(0.2), **ZOO_PPO)
        start = time.perf_counter()
        model.learn(timesteps)
        return model.num_timesteps / (time.perf_counter() - start)
    finally:
        envs.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per raw-step measurement")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--ppo-timesteps", type=int, default=16384, help="PPO timesteps per measurement")
    parser.add_argument("--record", action="store_true", help="write the RESULTS.md section and sb3.png")
    args = parser.parse_args()
    torch.set_num_threads(1)  # PPO's 64-unit MLP: a second thread only contends with the envs
    n = args.num_envs
    load_before = os.getloadavg()[0]

    steps: dict[tuple[str, str], list[float]] = {}
    for env_id in STEP_TASKS:
        systems = {system: make_envs(system, env_id, n) for system in SYSTEMS}
        space = systems["torchpool"].action_space
        space.seed(0)
        actions = [np.stack([space.sample() for _ in range(n)]) for _ in range(64)]
        for envs in systems.values():
            envs.reset()
        for r in range(args.rounds):
            for system in SYSTEMS[r % 3:] + SYSTEMS[:r % 3]:
                rate = step_rate(systems[system], actions, args.seconds)
                steps.setdefault((env_id, system), []).append(rate)
                print(f"{env_id:15s} round {r}  {system:14s} {rate:12,.0f} steps/s", flush=True)
        for envs in systems.values():
            envs.close()

    ppo: dict[str, list[float]] = {}
    for r in range(args.rounds):
        for system in SYSTEMS[r % 3:] + SYSTEMS[:r % 3]:
            rate = ppo_rate(system, n, args.ppo_timesteps, seed=r)
            ppo.setdefault(system, []).append(rate)
            print(f"PPO CartPole-v1 round {r}  {system:14s} {rate:10,.0f} frames/s", flush=True)

    results = {"steps": steps, "ppo": ppo, "load": (load_before, os.getloadavg()[0])}
    print_table(results, args)
    if args.record:
        record(results, args)


def ratios(values: dict, base: str, other: str) -> float:
    """Median over rounds of values[base][r] / values[other][r] (paired by round)."""
    return statistics.median(a / b for a, b in zip(values[base], values[other]))


def cell(values: list[float]) -> str:
    """The median, and the rounds' range."""
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f})"


def table_lines(results: dict) -> list[str]:
    steps, ppo = results["steps"], results["ppo"]
    lines = ["| measurement | torchpool | DummyVecEnv | SubprocVecEnv | torchpool / Dummy | torchpool / Subproc |",
             "|---|---:|---:|---:|---:|---:|"]
    for env_id in STEP_TASKS:
        row = {system: steps[(env_id, system)] for system in SYSTEMS}
        lines.append(f"| `VecEnv.step`, {env_id} (steps/s = frames/s) | "
                     + " | ".join(cell(row[s]) for s in SYSTEMS)
                     + f" | {ratios(row, 'torchpool', 'DummyVecEnv'):.1f}x"
                     + f" | {ratios(row, 'torchpool', 'SubprocVecEnv'):.1f}x |")
    lines.append("| PPO `learn()`, CartPole-v1, RL Zoo hyper-parameters (frames/s) | "
                 + " | ".join(cell(ppo[s]) for s in SYSTEMS)
                 + f" | {ratios(ppo, 'torchpool', 'DummyVecEnv'):.2f}x"
                 + f" | {ratios(ppo, 'torchpool', 'SubprocVecEnv'):.2f}x |")
    return lines


def reading(results: dict) -> str:
    """What share of PPO's time DummyVecEnv's stepping can be, from the medians."""
    steps, ppo = results["steps"], results["ppo"]
    share = statistics.median(ppo["DummyVecEnv"]) / statistics.median(steps[("CartPole-v1", "DummyVecEnv")])
    return (f"Reading: at these hyper-parameters (20 epochs of updates per 256 frames) PPO learns at "
            f"{statistics.median(ppo['DummyVecEnv']):,.0f} frames/s on DummyVecEnv, whose stepping alone runs at "
            f"{statistics.median(steps[('CartPole-v1', 'DummyVecEnv')]):,.0f} steps/s: stepping is about "
            f"{share:.0%} of learn()'s time, so no VecEnv can make it much faster; SB3's per-step Python "
            "(policy call, buffer adds) and the updates dominate. The raw rates show what a loop with less "
            "per-step work gets." + busy(results))


def busy(results: dict) -> str:
    """A warning where other work held the cores: the pool's threads (one per core) lose more than one process."""
    if max(results["load"]) <= os.cpu_count():
        return ""
    return (f" The load average ({max(results['load']):.1f}) exceeded the {os.cpu_count()} cores: the pool's "
            f"{min(torchpool.available_cpus(), 8)} threads found no free core, which costs a pool more than a "
            "one-process DummyVecEnv (HalfCheetah above all: `benchmarks/mujoco_tasks.py` measured torchpool at 3x "
            "SyncVectorEnv on this VM when idle).")


def print_table(results: dict, args) -> None:
    print(f"\nmedians of {args.rounds} rounds, {args.num_envs} envs; ratios: medians of per-round ratios")
    print("\n".join(table_lines(results)))
    print(reading(results))


def record(results: dict, args) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    info = bench.machine(("stable_baselines3", "gymnasium", "mujoco"))
    threads = torchpool.available_cpus()
    section = [
        "<!-- sb3:begin -->",
        "## Stable-Baselines3: VecEnv steps/s and PPO frames/s (`benchmarks/sb3.py`)", "",
        f"- Recorded: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- Machine: {info['cpu']}, {info['cores']} cores (shared with other work: 1-minute load average "
        f"{results['load'][0]:.1f} before, {results['load'][1]:.1f} after), {info['ram']} RAM, "
        f"{info['os']}; {info['versions']}",
        f"- Settings: {args.num_envs} envs; torchpool `torchpool.sb3.make_vec_env` (sync pool, batch_size = "
        f"num_envs = {args.num_envs}, num_threads {min(threads, args.num_envs)} by default, float32 observations); "
        "SB3's `make_vec_env` with `DummyVecEnv` (default) or `SubprocVecEnv` (forkserver, one process per env), "
        "Monitor-wrapped Gymnasium envs. Raw steps: random actions drawn before the timed loop, "
        f"{args.seconds:g} s per measurement after 20 warm-up calls. PPO: RL Zoo's CartPole-v1 "
        f"hyper-parameters (n_steps 32, batch 256, 20 epochs, lin_0.001 learning rate, lin_0.2 clip), "
        f"{args.ppo_timesteps} timesteps per measurement (updates included), a fresh model and VecEnv each, "
        "torch 1 thread, CPU. No frame skip: frames/s = steps/s.",
        f"- {args.rounds} interleaved rounds (the systems' order rotates); medians, and medians of the per-round "
        "ratios.", "",
        *table_lines(results), "",
        "Cells: median (range of the rounds). " + reading(results), "",
        "![SB3 on torchpool](sb3.png)",
        "<!-- sb3:end -->",
    ]
    bench.write_section(HERE / "RESULTS.md", "\n".join(section), "<!-- sb3:begin -->", "<!-- sb3:end -->")

    steps, ppo = results["steps"], results["ppo"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    bench.grouped_bars(axes[0], list(STEP_TASKS),
                       {s: [statistics.median(steps[(e, s)]) for e in STEP_TASKS] for s in SYSTEMS})
    axes[0].set_yscale("log")
    axes[0].set_ylabel("steps/s (log)")
    axes[0].set_title(f"VecEnv.step, {args.num_envs} envs")
    axes[1].bar(list(SYSTEMS), [statistics.median(ppo[s]) for s in SYSTEMS], color=["C0", "C1", "C2"])
    axes[1].set_ylabel("frames/s")
    axes[1].set_title("PPO learn(), CartPole-v1, RL Zoo hyper-parameters")
    axes[1].grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(HERE / "sb3.png", dpi=120)
    print("wrote RESULTS.md and sb3.png")


if __name__ == "__main__":
    main()
