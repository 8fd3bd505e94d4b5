"""Stable-Baselines3's PPO on torchpool's Pong: RL Zoo's Atari settings, with SB3's Atari preprocessing in the env.

The only torchpool line is the env construction; the rest is plain SB3.
RL Zoo (rl_zoo3 2.9.2 hyperparams/ppo.yml, ``atari``): 8 envs, n_steps 128,
batch 256, 4 epochs, lin_2.5e-4 learning rate, lin_0.1 clip, ent_coef 0.01,
CnnPolicy, 10M agent steps. ``torchpool.sb3.make_atari_env`` stands in for
SB3's: the frames, rewards and episodes of its ``AtariWrapper`` (84x84 grey,
max-pooled frame skip 4, 30 no-ops, fire reset, lost lives ending episodes,
clipped rewards), stacked by SB3's own ``VecFrameStack``. The returns printed
are whole games, unclipped, as Monitor under SB3's AtariWrapper reports them;
a random policy scores -20.7.

    pip install "stable-baselines3>=2.3" "ale-py>=0.9"
    python examples/sb3/ppo_pong.py --total-timesteps 10000000
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from dataclasses import dataclass

import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecFrameStack

from torchpool.sb3 import make_atari_env


@dataclass
class Args:
    env_id: str = "PongNoFrameskip-v4"
    """the game, as SB3 and the RL Zoo name it (or a torchpool id, "Pong-v5")"""
    n_envs: int = 8
    """envs in the pool (RL Zoo: 8)"""
    total_timesteps: int = 10_000_000
    """agent steps to train for, 4 emulator frames each (RL Zoo: 1e7)"""
    n_steps: int = 128
    """steps per env per rollout (RL Zoo: 128)"""
    batch_size: int = 256
    """minibatch size (RL Zoo: 256)"""
    n_epochs: int = 4
    """passes over each rollout (RL Zoo: 4)"""
    learning_rate: float = 2.5e-4
    """initial learning rate, decayed linearly to 0 (RL Zoo: lin_2.5e-4)"""
    clip_range: float = 0.1
    """initial ratio clip, decayed linearly to 0 (RL Zoo: lin_0.1)"""
    ent_coef: float = 0.01
    """entropy bonus (RL Zoo: 0.01)"""
    log_every: int = 20
    """rollouts between progress lines"""
    threads: int = 1
    """torch threads (0: torch's default; on 2 busy cores that ran 2x slower, its threads contending with the pool's)"""
    seed: int = 0
    """seeds SB3 and the envs (env i gets seed + i)"""


def linear(initial: float):
    """RL Zoo's ``lin_<initial>`` schedule: ``initial`` decayed linearly to 0 (SB3 passes the progress remaining)."""
    return lambda progress_remaining: progress_remaining * initial


class Progress(BaseCallback):
    """Prints agent steps, frames/s and the mean return of the last 100 games every ``every`` rollouts."""

    def __init__(self, every: int, frame_skip: int):
        super().__init__()
        self.every, self.frame_skip, self.rollouts, self.start = every, frame_skip, 0, time.perf_counter()

    def _on_rollout_end(self) -> None:
        self.rollouts += 1
        if self.rollouts % self.every:
            return
        games = [episode["r"] for episode in self.model.ep_info_buffer]
        mean = f"{sum(games) / len(games):6.1f}" if games else "   n/a"
        seconds, frames = time.perf_counter() - self.start, self.frame_skip * self.num_timesteps
        print(f"{self.num_timesteps:9d} steps ({frames:10d} frames) in {seconds:7.0f} s, "
              f"{frames / seconds:6.0f} frames/s; mean return of the last {len(games):3d} games "
              f"{mean}", flush=True)

    def _on_step(self) -> bool:
        return True


def parse_args() -> Args:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for field in dataclasses.fields(Args):
        parser.add_argument(f"--{field.name.replace('_', '-')}", type=type(field.default), default=field.default)
    return Args(**vars(parser.parse_args()))


if __name__ == "__main__":
    args = parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    # was: from stable_baselines3.common.env_util import make_atari_env
    envs = VecFrameStack(make_atari_env(args.env_id, n_envs=args.n_envs, seed=args.seed), n_stack=4)
    model = PPO("CnnPolicy", envs, n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.n_epochs,
                learning_rate=linear(args.learning_rate), clip_range=linear(args.clip_range),
                vf_coef=0.5, ent_coef=args.ent_coef, seed=args.seed, device="cpu")
    model.learn(args.total_timesteps, callback=Progress(args.log_every, frame_skip=4))
    envs.close()
