"""Stable-Baselines3's PPO on torchpool: RL Zoo's tuned CartPole-v1 settings, then an evaluation.

The only torchpool line is the env construction; the rest is plain SB3.
About 20 s on one CPU core; the mean return should reach 500.

    pip install "stable-baselines3>=2.3"
    python examples/sb3/ppo_cartpole.py
    python examples/sb3/ppo_cartpole.py --total-timesteps 50000 --n-envs 16
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from dataclasses import dataclass

import torch
from stable_baselines3 import PPO
from stable_baselines3.common.evaluation import evaluate_policy

import torchpool.sb3


@dataclass
class Args:
    env_id: str = "CartPole-v1"
    """the torchpool env id"""
    n_envs: int = 8
    """envs in the pool (RL Zoo: 8)"""
    total_timesteps: int = 100_000
    """env steps to train for (RL Zoo: 1e5)"""
    n_steps: int = 32
    """steps per env per rollout (RL Zoo: 32)"""
    batch_size: int = 256
    """minibatch size (RL Zoo: 256)"""
    n_epochs: int = 20
    """passes over each rollout (RL Zoo: 20)"""
    gamma: float = 0.98
    """discount (RL Zoo: 0.98)"""
    gae_lambda: float = 0.8
    """GAE's lambda (RL Zoo: 0.8)"""
    learning_rate: float = 1e-3
    """initial learning rate, decayed linearly to 0 (RL Zoo: lin_0.001)"""
    clip_range: float = 0.2
    """initial ratio clip, decayed linearly to 0 (RL Zoo: lin_0.2)"""
    eval_episodes: int = 20
    """episodes for the final evaluation"""
    seed: int = 0
    """seeds SB3 and the envs (env i gets seed + i)"""


def linear(initial: float):
    """RL Zoo's ``lin_<initial>`` schedule: ``initial`` decayed linearly to 0 (SB3 passes the progress remaining)."""
    return lambda progress_remaining: progress_remaining * initial


def parse_args() -> Args:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for field in dataclasses.fields(Args):
        parser.add_argument(f"--{field.name.replace('_', '-')}", type=type(field.default), default=field.default)
    return Args(**vars(parser.parse_args()))


if __name__ == "__main__":
    args = parse_args()
    torch.set_num_threads(1)  # a 64-unit MLP: more threads only contend with the pool's

    # was: envs = stable_baselines3.common.env_util.make_vec_env(args.env_id, n_envs=args.n_envs, seed=args.seed)
    envs = torchpool.sb3.make_vec_env(args.env_id, n_envs=args.n_envs, seed=args.seed)
    model = PPO("MlpPolicy", envs, n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.n_epochs,
                gamma=args.gamma, gae_lambda=args.gae_lambda, ent_coef=0.0,
                learning_rate=linear(args.learning_rate),
                clip_range=linear(args.clip_range), seed=args.seed, device="cpu")
    start = time.perf_counter()
    model.learn(args.total_timesteps)
    seconds = time.perf_counter() - start
    last = [episode["r"] for episode in model.ep_info_buffer]  # Monitor's episode info, as SB3's own envs give
    print(f"trained {model.num_timesteps} steps in {seconds:.1f} s ({model.num_timesteps / seconds:,.0f} frames/s); "
          f"mean return of the last {len(last)} training episodes {sum(last) / len(last):.1f}")

    # Fresh envs with other seeds; Monitor's episode info lets evaluate_policy count whole episodes.
    evaluation = torchpool.sb3.make_vec_env(args.env_id, n_envs=4, seed=args.seed + 10_000)
    mean, std = evaluate_policy(model, evaluation, n_eval_episodes=args.eval_episodes)
    print(f"evaluation over {args.eval_episodes} episodes: mean return {mean:.1f} +/- {std:.1f}")
    envs.close()
    evaluation.close()
