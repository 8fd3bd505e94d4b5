"""Stable-Baselines3's SAC on torchpool: RL Zoo's tuned Pendulum-v1 settings, then an evaluation.

The only torchpool line is the env construction; the rest is plain SB3.
RL Zoo (rl_zoo3 2.9.2 hyperparams/sac.yml): 20,000 steps, learning rate 1e-3,
one env, SAC's defaults otherwise (one gradient step of batch 256 per env
step). The Zoo's benchmark lists SAC Pendulum-v1 at about -160; the mean
return here should land near it.

    pip install "stable-baselines3>=2.3"
    python examples/sb3/sac_pendulum.py
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from dataclasses import dataclass

import torch
from stable_baselines3 import SAC
from stable_baselines3.common.evaluation import evaluate_policy

import torchpool.sb3


@dataclass
class Args:
    env_id: str = "Pendulum-v1"
    """the torchpool env id"""
    n_envs: int = 1
    """envs in the pool (RL Zoo: 1, its default)"""
    total_timesteps: int = 20_000
    """env steps to train for (RL Zoo: 20000)"""
    learning_rate: float = 1e-3
    """Adam's learning rate for actor, critics and entropy coefficient (RL Zoo: 1e-3)"""
    eval_episodes: int = 10
    """episodes for the final evaluation (deterministic actions)"""
    threads: int = 1
    """torch threads (SAC's 256x256 MLPs on batch 256: one thread is about as fast on a busy machine)"""
    seed: int = 0
    """seeds SB3 and the envs (env i gets seed + i)"""


def parse_args() -> Args:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for field in dataclasses.fields(Args):
        parser.add_argument(f"--{field.name.replace('_', '-')}", type=type(field.default), default=field.default)
    return Args(**vars(parser.parse_args()))


if __name__ == "__main__":
    args = parse_args()
    torch.set_num_threads(args.threads)

    # was: envs = stable_baselines3.common.env_util.make_vec_env(args.env_id, n_envs=args.n_envs, seed=args.seed)
    envs = torchpool.sb3.make_vec_env(args.env_id, n_envs=args.n_envs, seed=args.seed)
    model = SAC("MlpPolicy", envs, learning_rate=args.learning_rate, seed=args.seed, device="cpu")
    start = time.perf_counter()
    model.learn(args.total_timesteps)
    seconds = time.perf_counter() - start
    last = [episode["r"] for episode in model.ep_info_buffer]  # Monitor's episode info, as SB3's own envs give
    print(f"trained {model.num_timesteps} steps in {seconds:.1f} s ({model.num_timesteps / seconds:,.0f} frames/s); "
          f"mean return of the last {len(last)} training episodes {sum(last) / len(last):.1f}")

    # Fresh envs with other seeds; Monitor's episode info lets evaluate_policy count whole episodes.
    evaluation = torchpool.sb3.make_vec_env(args.env_id, n_envs=1, seed=args.seed + 10_000)
    mean, std = evaluate_policy(model, evaluation, n_eval_episodes=args.eval_episodes)
    print(f"evaluation over {args.eval_episodes} episodes: mean return {mean:.1f} +/- {std:.1f}")
    envs.close()
    evaluation.close()
