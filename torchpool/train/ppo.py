"""PPO on torchpool.stream, in the spirit of CleanRL's ppo.py / ppo_continuous_action.py.

One file, top to bottom: arguments, the agent, then the loop. Each batch from
``torchpool.stream`` is ``[num_envs, num_steps]`` with torchrl's keys; GAE is
computed on it with the true next observations (same-step autoreset), so
time-limit truncations bootstrap from V(s') instead of pretending to be
terminal.

    python -m torchpool train CartPole-v1
    python -m torchpool train Pendulum-v1 --total-frames 2000000
    python -m torchpool train Pong-v5                              # the CPU recipe: 42x42 frames, a compact CNN
    python -m torchpool train Pong-v5 --recipe cleanrl --device cuda  # CleanRL's Nature-CNN settings
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical, Normal

import torchpool
from torchpool.train._envs import one_vector
from torchpool.train._outputs import file_stem, play_fresh_games, save_run


@dataclass
class Args:
    env_id: str = "CartPole-v1"
    """the env to train on"""
    total_frames: int = 500_000
    """env steps to collect at most"""
    num_envs: int = 8
    """envs stepped in parallel"""
    num_steps: int = 128
    """steps per env per batch (a batch is num_envs * num_steps frames)"""
    learning_rate: float = 2.5e-4
    """Adam's learning rate"""
    anneal_lr: bool = True
    """decay the learning rate linearly to 0 over total_frames"""
    kl_target: float | None = None
    """adapt the learning rate instead (rl_games' adaptive schedule): after each epoch, /1.5 when the
    epoch's KL estimate exceeds 2x this, x1.5 when it is under half of it"""
    kl_lr_max: float = 1e-2
    """the highest rate the adaptive schedule may reach (rl_games' bound)"""
    gamma: float = 0.99
    """discount"""
    gae_lambda: float = 0.95
    """GAE's lambda"""
    num_minibatches: int = 4
    """minibatches per epoch"""
    update_epochs: int = 4
    """passes over each batch"""
    clip_coef: float = 0.2
    """PPO's ratio clip"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient clipping"""
    norm_adv: bool = True
    """normalise advantages per minibatch"""
    reward_scale: float = 1.0
    """rewards are multiplied by this before GAE (returns are logged unscaled)"""
    clip_actions: bool = False
    """continuous actions: clip what the env gets into the action bounds (CleanRL's ClipAction wrapper,
    rl_games' clip_actions); PPO's ratio uses the raw sample. Without it, envs whose control cost counts the raw
    action (Gymnasium's MuJoCo tasks) are charged for torques the simulator clamps anyway"""
    bounds_loss_coef: float = 0.0
    """continuous actions: weight of rl_games' bounds loss, the squared excess of the policy's mean beyond
    1.1 x the action bounds; keeps a clipped policy's mean where its gradient still reaches the env"""
    norm_obs: bool = False
    """normalise observations by a running mean and variance, updated after each batch's update"""
    shared_body: bool = False
    """MLP agents: actor and critic heads on one MLP body (rl_games' separate: False) instead of two MLPs"""
    norm_value: bool = False
    """MLP agents: the critic learns returns normalised by their running mean and variance (rl_games'
    normalize_value), the statistics updated with each batch's returns before its update"""
    hidden: int | tuple[int, ...] = 64
    """MLP agents: the width of two hidden layers, or each layer's width (rl_games' Ant: (256, 128, 64))"""
    activation: str = "tanh"
    """MLP agents: the hidden layers' activation, "tanh" (CleanRL's) or "elu" (rl_games')"""
    seed: int = 1
    """seeds torch and the envs"""
    device: str = "cpu"
    """where the policy, the batches and the update run"""
    target_return: float | None = None
    """stop once the mean return of the last 20 episodes reaches this"""
    split_envs: bool = False
    """two env groups for overlap (worth it for costly envs or a GPU policy)"""
    prefetch: bool = False
    """collect the next batch while this one trains: the batch comes from the policy one update behind, which
    the loss corrects as decoupled PPO does (NOTE [Decoupled PPO under prefetch])"""
    network: str = "nature"
    """image envs: "nature" (CleanRL's Nature CNN), "compact" (3 small convs, for 42x42 frames on a CPU) or
    "minigrid" (rl-starter-files' 2x2 convs on MiniGrid's cell codes, with image_only=True)"""
    channels_last: bool = False
    """image envs: run the CNN in channels_last memory format (faster convolutions on CPUs)"""
    bf16: bool = False
    """image envs: run the CNN's trunk in bfloat16 (torch.autocast; weights and heads stay float32); pays only
    where the CPU computes bf16 natively (AVX512-BF16, AMX) or on a GPU"""
    torch_threads: int | None = None
    """torch's intra-op threads on a CPU (default: 1 for MLPs, every usable CPU for CNNs)"""
    collect_threads: int | None = None
    """torch's intra-op threads while the stream collects (the policy's inference); default 1 for CNNs on a CPU"""
    max_seconds: float | None = None
    """stop after this many seconds of training wall time"""
    eval_games: int = 0
    """after training, play this many fresh episodes (new seeds, rewards unclipped; continuous actions: the policy's
    mean action, and the same seeds again sampled; discrete ones: sampled) and report their mean"""
    make_kwargs: dict = field(default_factory=dict)
    """task kwargs for torchpool.make (the Atari recipes: episodic_life, reward_clip)"""
    out_dir: str = "runs"
    """where the learning curve (PNG, JSON) and the weights go"""
    progress: bool = True
    """show a progress bar"""
    tensorboard: bool = False
    """also log to TensorBoard, under out_dir/tensorboard/<env_id>_<seed> (needs the tensorboard package)"""


# What every MuJoCo recipe shares: rl_games' envpool settings (observation and value normalisation, an ELU MLP,
# no entropy bonus, grad norm 1, the rate adapted to each epoch's KL) with prefetch and decoupled PPO, a KL
# target 3x rl_games' 0.008 and the adapted rate capped at 2e-3 (rl_games': 1e-2): uncapped, one Ant-v4 seed of
# three climbed to 5e-3 and collapsed (benchmarks/RESULTS.md, "How the Ant-v4 recipe was chosen").
_MUJOCO = dict(kl_target=0.024, kl_lr_max=2e-3, ent_coef=0.0, max_grad_norm=1.0, norm_obs=True, norm_value=True,
               activation="elu", prefetch=True, eval_games=10)

# Tuned defaults per env; anything given on the command line wins.
RECIPES: dict[str, dict] = {
    # Short batches of many envs and large steps: 32 x 32 frames, lr 2e-3, 8 epochs of 4 minibatches, no
    # entropy bonus. Chosen from a 5-seed sweep of batch shape, rate, epochs and minibatches (benchmarks/
    # RESULTS.md, "How the CartPole-v1 recipe was chosen"): the one whose fresh episodes averaged >= 493 for
    # every seed.
    "CartPole-v1": dict(total_frames=300_000, num_envs=32, num_steps=32, learning_rate=2e-3, update_epochs=8,
                        num_minibatches=4, ent_coef=0.0, target_return=475.0, eval_games=10),
    "Acrobot-v1": dict(total_frames=500_000, num_envs=8, num_steps=128, target_return=-100.0),
    "MountainCar-v0": dict(total_frames=1_000_000, num_envs=16, num_steps=128, ent_coef=0.0),
    # 16 x 256 frames, gamma 0.95, lambda 0.9, reward_scale 0.1; then 4 large minibatches (not 32) at lr 3e-3
    # for 15 epochs: a third of the time, from a 5-seed sweep whose fresh episodes all averaged >= -200
    # (benchmarks/RESULTS.md, "How the Pendulum-v1 recipe was chosen").
    "Pendulum-v1": dict(total_frames=2_000_000, num_envs=16, num_steps=256, learning_rate=3e-3,
                        gamma=0.95, gae_lambda=0.9, update_epochs=15, num_minibatches=4, ent_coef=0.0,
                        reward_scale=0.1, target_return=-200.0, eval_games=10),
    "MountainCarContinuous-v0": dict(total_frames=1_000_000, num_envs=16, num_steps=256, ent_coef=0.0),
    # Ant-v4 to 5,000: rl_games' ant_envpool.yaml network and batch (an ELU MLP of 256-128-64, observation and
    # value normalisation, 64 envs x 64 steps, 4 epochs of 2 minibatches, critic weight 2, grad norm 1, lr 3e-4
    # adapted to each epoch's KL), with prefetch (the update hides behind the envs: ~10k frames/s instead of
    # ~6.9k) and decoupled PPO for its one-update lag, and a KL target of 0.024 instead of 0.008: 5,000 at 2.9M
    # frames instead of not by 4.6M (benchmarks/RESULTS.md, "How the Ant-v4 recipe was chosen"). Separate actor
    # and critic MLPs: a shared body (rl_games') plateaued near 3,500. With the rate capped (_MUJOCO) every seed
    # of three reached 5,000 (5.7-7.6 min); 6 epochs were faster for two seeds and missed with the third.
    "Ant-v4": dict(_MUJOCO, total_frames=10_000_000, num_envs=64, num_steps=64, learning_rate=3e-4,
                   num_minibatches=2, update_epochs=4, vf_coef=2.0, hidden=(256, 128, 64), target_return=5000.0),
    # The other MuJoCo tasks: the Ant-v4 recipe's method (_MUJOCO) on each task's rl_games envpool YAML
    # (configs/mujoco/<task>_envpool.yaml: batch shape, epochs, rate, critic weight, widths). Targets: about
    # where rl_games' own curves for these YAMLs (docs/MUJOCO_ENVPOOL.md) cross them, at 2.4M (HalfCheetah),
    # 0.9M (Hopper) and 1.3M (Walker2d) frames; times in benchmarks/RESULTS.md.
    "HalfCheetah-v5": dict(_MUJOCO, total_frames=10_000_000, num_envs=64, num_steps=256, learning_rate=5e-4,
                           num_minibatches=8, update_epochs=5, vf_coef=4.0, hidden=(128, 64, 32),
                           target_return=4000.0),
    "Hopper-v5": dict(_MUJOCO, total_frames=5_000_000, num_envs=64, num_steps=64, learning_rate=5e-4,
                      num_minibatches=2, update_epochs=5, vf_coef=2.0, hidden=(256, 128, 64), target_return=2500.0),
    "Walker2d-v5": dict(_MUJOCO, total_frames=10_000_000, num_envs=64, num_steps=128, learning_rate=3e-4,
                        num_minibatches=4, update_epochs=5, vf_coef=2.0, hidden=(256, 128, 64),
                        target_return=4000.0),
    # A Python env, stepped in worker processes: Gymnasium's Box2D LunarLander (pip install 'torchpool[box2d]').
    # RL Zoo's PPO settings (gamma 0.999, lambda 0.98, 4 epochs, minibatches of 64, entropy 0.01) on 16 envs x
    # 256 steps; with minibatches of 256 it plateaus near 110 by 2M frames.
    "gymnasium:LunarLander-v3": dict(total_frames=2_000_000, num_envs=16, num_steps=256, learning_rate=3e-4,
                                     gamma=0.999, gae_lambda=0.98, update_epochs=4, num_minibatches=64,
                                     ent_coef=0.01, target_return=200.0, eval_games=10),
    # Atari on a CPU: 42x42 frames and the compact CNN (the GPU recipe is the "cleanrl" variant).
    # Pong has no lives, so episode returns are whole games; they count +-1 per point either way.
    # The PPO settings of the CleanRL sweep that solves Pong in ~5 min on a GPU (envpool's cleanrl example),
    # with rl_games' adaptive learning rate instead of annealing, capped at 1e-3: uncapped it can climb to
    # 1e-2 and a policy collapsed onto few actions keeps it there (docs/performance.md, "Pong on a CPU").
    **{env_id: dict(total_frames=8_000_000, num_envs=16, num_steps=128, learning_rate=2.5e-4, kl_target=0.01,
                    kl_lr_max=1e-3, clip_coef=0.2, ent_coef=0.01, update_epochs=3, num_minibatches=8,
                    target_return=target, network="compact", channels_last=True, eval_games=10,
                    make_kwargs=dict(img_height=42, img_width=42, episodic_life=True, reward_clip=True))
       for env_id, target in (("Pong-v5", 18.0), ("Breakout-v5", None))},
}

# Ant-v5: Ant-v4's recipe, to 4,000 (rl_games' Ant curve: ~2M frames), with v5's 78 contact-force numbers left
# out of the observation (Gymnasium's include_cfrc_ext_in_observation=False; the reward still charges them, as
# v5 does): observed, one seed reached a best mean of 926 in 8 min where without them it reached 4,000 in 4.3
# (benchmarks/RESULTS.md, "How the Ant-v5 recipe was chosen").
RECIPES["Ant-v5"] = dict(RECIPES["Ant-v4"], target_return=4000.0,
                         make_kwargs=dict(include_cfrc_ext_in_observation=False))

# The Control Suite: _MUJOCO's method on rl_games' dm_control YAMLs (configs/dm_control/<task>.yaml: 64 envs x
# 128 steps, minibatches of 2048, 5 epochs, critic weight 4, the 256-128-64 ELU MLP, bounds loss 1e-3) on the
# flattened observation; rl_games' log(1 + r) reward shaping is left out. Targets: below the scores rl_games
# reports after ~32M steps (docs/ENVPOOL.md: WalkerWalk 917, CheetahRun 685).
_DMC = dict(_MUJOCO, total_frames=20_000_000, num_envs=64, num_steps=128, learning_rate=3e-4, num_minibatches=4,
            update_epochs=5, vf_coef=4.0, hidden=(256, 128, 64), bounds_loss_coef=1e-3,
            make_kwargs=dict(flatten_obs=True))
RECIPES["WalkerWalk-v1"] = dict(_DMC, target_return=900.0)
RECIPES["CheetahRun-v1"] = dict(_DMC, target_return=650.0)

# MiniGrid on the agent's 7x7 view alone (image_only: DoorKey's mission never changes), rl-starter-files' PPO
# (16 envs x 128 steps, lr 1e-3, 4 epochs of 256-frame minibatches, entropy 0.01) and its network (GridAgent).
_MINIGRID = dict(num_envs=16, num_steps=128, learning_rate=1e-3, anneal_lr=False, num_minibatches=8,
                 update_epochs=4, ent_coef=0.01, network="minigrid", eval_games=100,
                 make_kwargs=dict(image_only=True))
RECIPES["MiniGrid-DoorKey-5x5-v0"] = dict(_MINIGRID, total_frames=1_000_000, target_return=0.93)
# DoorKey-8x8 with these settings learned nothing in 1.8M frames (the 7x7 view) nor 2.3M (observation="full"):
# its goal is too rarely met at random for PPO without exploration bonuses (docs/training.md); no recipe yet.

# Named alternatives to a recipe (python -m torchpool train Pong-v5 --recipe cleanrl).
VARIANTS: dict[str, dict[str, dict]] = {
    # CleanRL's ppo_continuous_action.py as it runs MuJoCo: 1 env x 2048 steps, 32 minibatches, 10 epochs,
    # lr 3e-4 annealed, NormalizeObservation; its NormalizeReward wrapper becomes a fixed reward_scale and its
    # value clipping is left out. benchmarks/train_speed.py runs it next to the recipes.
    "cleanrl": {**{env_id: dict(total_frames=1_000_000, num_envs=1, num_steps=2048, learning_rate=3e-4,
                                num_minibatches=32, update_epochs=10, ent_coef=0.0, reward_scale=0.1, norm_obs=True,
                                max_grad_norm=0.5, eval_games=10)
                   for env_id in ("Ant-v4", "Ant-v5", "HalfCheetah-v5", "Hopper-v5", "Walker2d-v5")},
                # CleanRL's ppo_atari_envpool.py: the Nature CNN on 84x84 frames, 8 envs x 128 steps, 4 epochs;
                # frames here are agent steps (x4 emulator frames). Made for a GPU: on a 2-core CPU it is far
                # slower per frame (benchmarks/RESULTS.md, "Pong on a CPU").
                **{env_id: dict(total_frames=10_000_000, num_envs=8, num_steps=128, learning_rate=2.5e-4,
                                clip_coef=0.1, ent_coef=0.01, update_epochs=4, num_minibatches=4,
                                target_return=target, network="nature", channels_last=False, eval_games=10,
                                make_kwargs=dict(episodic_life=True, reward_clip=True))
                   for env_id, target in (("Pong-v5", 18.0), ("Breakout-v5", None))}},
    # The CPU recipe with the CNN's trunk in bfloat16: faster updates on CPUs with native bf16
    # (benchmarks/update_speed.py --cnn, RESULTS.md); elsewhere bf16 is emulated and slower.
    "bf16": {env_id: {**RECIPES[env_id], "bf16": True} for env_id in ("Pong-v5", "Breakout-v5")},
}


# The "gpu" variant: a GPU box with many cores (the H200 machine: 16) steps many more envs than the 2-core
# recipes assume, and on a GPU the policy's cost is per call (kernel launches), not per env. So the envs are
# scaled with the cores and the steps per batch shrink alike: the same frames per batch, minibatches and
# epochs, and a quarter of the policy calls per frame at 16 cores (Ant-v4: 256 envs x 16 steps). Atari
# starts from CleanRL's GPU recipe (the Nature CNN), MuJoCo from the tuned one.
_GPU_BASES = {"Ant-v4": None, "Ant-v5": None, "HalfCheetah-v5": None, "Pong-v5": "cleanrl", "Breakout-v5": "cleanrl"}
_GPU_CORES_PER_SCALE = 4  # envs x (cores // 4); fewer than 8 cores leave the recipe as it is
_GPU_SHORTEST_STEPS = 16  # GAE over shorter horizons than this bootstraps too much


def gpu_recipe(env_id: str, cores: int) -> dict:
    """The env's recipe with num_envs scaled to ``cores`` and num_steps shrunk alike (``--recipe gpu``)."""
    settings = recipe(env_id, _GPU_BASES[env_id])
    scale = max(1, min(cores // _GPU_CORES_PER_SCALE, settings["num_steps"] // _GPU_SHORTEST_STEPS))
    settings["num_envs"] *= scale
    settings["num_steps"] //= scale
    return settings


def recipe(env_id: str, variant: str | None = None) -> dict:
    """The tuned settings for env_id (a copy), or those of a named variant."""
    if variant is None:
        return dict(RECIPES.get(env_id, {}))
    if variant == "gpu":
        if env_id not in _GPU_BASES:
            raise ValueError(f"recipe 'gpu' has no settings for {env_id!r}; it covers {sorted(_GPU_BASES)}")
        from .._cpus import available_cpus

        return gpu_recipe(env_id, available_cpus())
    if variant not in VARIANTS:
        raise ValueError(f"unknown recipe {variant!r}; known: {sorted([*VARIANTS, 'gpu'])}")
    if env_id not in VARIANTS[variant]:
        raise ValueError(f"recipe {variant!r} has no settings for {env_id!r}; it covers {sorted(VARIANTS[variant])}")
    return dict(VARIANTS[variant][env_id])


def layer(inputs: int, outputs: int, std: float = np.sqrt(2)) -> nn.Linear:
    linear = nn.Linear(inputs, outputs)
    nn.init.orthogonal_(linear.weight, std)
    nn.init.constant_(linear.bias, 0.0)
    return linear


class RunningNorm(nn.Module):
    """Observations [n, obs_size] -> (x - mean) / std clipped to [-10, 10], as CleanRL's NormalizeObservation.

    The statistics are buffers (saved with the weights) and change only in update(), which train() calls
    after each batch's PPO epochs, so the epochs see a batch normalised as it was when collected.
    """

    def __init__(self, size: int):
        super().__init__()
        self.register_buffer("mean", torch.zeros(size))
        self.register_buffer("var", torch.ones(size))
        self.register_buffer("count", torch.tensor(1e-4))

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        return ((observation - self.mean) / (self.var + 1e-8).sqrt()).clamp(-10.0, 10.0)

    @torch.no_grad()
    def update(self, observation: torch.Tensor) -> None:
        """Merges a batch's mean and variance into the running ones (Chan et al.'s parallel formula)."""
        n = observation.shape[0]
        delta = observation.mean(0) - self.mean
        total = self.count + n
        self.mean += delta * n / total
        self.var.copy_((self.var * self.count + observation.var(0, unbiased=False) * n
                        + delta.square() * self.count * n / total) / total)
        self.count.fill_(total)


class Policy(nn.Module):
    """What the loop needs of an agent: value(), distribution(), and these shared helpers."""

    discrete = True
    clip_actions = False  # continuous agents: act() clips into the bounds, the raw sample goes in extras

    def log_prob(self, distribution, action: torch.Tensor) -> torch.Tensor:
        log_prob = distribution.log_prob(action)
        return log_prob if self.discrete else log_prob.sum(-1)

    def entropy(self, distribution) -> torch.Tensor:
        entropy = distribution.entropy()
        return entropy if self.discrete else entropy.sum(-1)

    def value_scale(self) -> torch.Tensor | float:
        """What value errors are divided by in the loss: 1 unless the agent normalises its values."""
        return 1.0

    def evaluate(self, observation: torch.Tensor):
        """The update's pass: the action distribution and the value."""
        return self.distribution(observation), self.value(observation)

    def play(self, observation: torch.Tensor, deterministic: bool = True) -> torch.Tensor:
        """The trained policy's action in fresh episodes: continuous agents play their mean action (clipped
        into the bounds where training clipped), as rl_games' and SB3's deterministic players do, or a sample
        as in training when not deterministic; discrete agents always sample (an argmax policy can stall an
        Atari game)."""
        distribution = self.distribution(observation)
        if self.discrete:
            return distribution.sample()
        action = distribution.mean if deterministic else distribution.sample()
        return action.clamp(self.low, self.high) if self.clip_actions else action

    def act(self, observation: torch.Tensor):
        """The stream's policy: an action plus what PPO needs later, under the batch's keys."""
        distribution, value = self.evaluate(observation)  # one pass where the agent shares a body
        action = distribution.sample()
        extras = {"sample_log_prob": self.log_prob(distribution, action), "state_value": value}
        if self.clip_actions:
            # The env gets the action clipped into its bounds (CleanRL's ClipAction, rl_games' clip_actions);
            # the update needs the raw sample its log-prob belongs to.
            extras["raw_action"] = action
            action = action.clamp(self.low, self.high)
        return action, extras


ACTIVATIONS = {"tanh": nn.Tanh, "elu": nn.ELU}


def mlp(inputs: int, hidden: tuple[int, ...], outputs: int | None, activation: str, out_std: float = 1.0
        ) -> nn.Sequential:
    """Linear layers of the given widths, each followed by the activation, then a linear layer to `outputs`
    (none if None: a body for heads of its own)."""
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [layer(inputs, width), ACTIVATIONS[activation]()]
        inputs = width
    if outputs is not None:
        layers.append(layer(inputs, outputs, std=out_std))
    return nn.Sequential(*layers)


class Agent(Policy):
    """CleanRL's MLP actor-critic: Categorical for discrete actions, a diagonal Gaussian otherwise.

    Actor and critic are separate MLPs of the same hidden widths (hidden: one int for two layers of it), or
    with shared_body one MLP whose last hidden layer feeds both heads (rl_games' `separate: False`).
    """

    def __init__(self, obs_size: int, action_spec, hidden: int | tuple[int, ...], norm_obs: bool = False,
                 activation: str = "tanh", norm_value: bool = False, shared_body: bool = False):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        widths = (hidden, hidden) if isinstance(hidden, int) else tuple(hidden)
        self.normalize = RunningNorm(obs_size) if norm_obs else nn.Identity()
        # The critic's output is a normalised value; value() maps it back with the returns' statistics.
        self.returns = RunningNorm(1) if norm_value else None
        self.discrete = hasattr(action_spec, "n")
        out = action_spec.n if self.discrete else int(np.prod(action_spec.shape))
        if shared_body:
            self.body = mlp(obs_size, widths, None, activation)
            self.critic, self.actor = layer(widths[-1], 1, std=1.0), layer(widths[-1], out, std=0.01)
        else:
            self.body = nn.Identity()
            self.critic = mlp(obs_size, widths, 1, activation, out_std=1.0)
            self.actor = mlp(obs_size, widths, out, activation, out_std=0.01)
        if not self.discrete:
            self.log_std = nn.Parameter(torch.zeros(out))
            self.register_buffer("low", action_spec.low.float())
            self.register_buffer("high", action_spec.high.float())

    def _value(self, features: torch.Tensor) -> torch.Tensor:
        value = self.critic(features)
        if self.returns is not None:
            value = value * (self.returns.var + 1e-8).sqrt() + self.returns.mean
        return value

    def _distribution(self, features: torch.Tensor):
        logits = self.actor(features)
        if self.discrete:
            return Categorical(logits=logits)
        return Normal(logits, self.log_std.exp().expand_as(logits))

    def value(self, observation: torch.Tensor) -> torch.Tensor:
        return self._value(self.body(self.normalize(observation)))

    def distribution(self, observation: torch.Tensor):
        return self._distribution(self.body(self.normalize(observation)))

    def evaluate(self, observation: torch.Tensor):
        """The distribution and the value, normalising the observation (and running a shared body) once."""
        features = self.body(self.normalize(observation))
        return self._distribution(features), self._value(features)

    def bounds_loss(self, distribution) -> torch.Tensor:
        """rl_games' bound loss: the squared excess of each mean beyond 1.1 x the bounds' half-width from
        their centre, summed over action dims, averaged over the batch."""
        centre, half = (self.high + self.low) / 2, (self.high - self.low) / 2
        excess = ((distribution.mean - centre).abs() - 1.1 * half).clamp_min(0.0)
        return excess.square().sum(-1).mean()

    def value_scale(self) -> torch.Tensor | float:
        """The returns' running std with norm_value, else 1."""
        return 1.0 if self.returns is None else (self.returns.var + 1e-8).sqrt()


def conv(inputs: int, outputs: int, kernel: int, stride: int) -> nn.Conv2d:
    layer_ = nn.Conv2d(inputs, outputs, kernel, stride)
    nn.init.orthogonal_(layer_.weight, np.sqrt(2))
    nn.init.constant_(layer_.bias, 0.0)
    return layer_


# The convolutions of each image network: (out_channels, kernel, stride).
CNN_LAYERS = {
    "nature": ((32, 8, 4), (64, 4, 2), (64, 3, 1)),  # Mnih et al. 2015, for 84x84 frames; 512 hidden
    "compact": ((16, 4, 2), (32, 4, 2), (32, 3, 1)),  # for 42x42 frames; 256 hidden, ~1/3 of the compute
}
CNN_HIDDEN = {"nature": 512, "compact": 256}


class TrunkAgent(Policy):
    """A discrete agent whose actor and critic heads read one trunk, ``hidden()``: the image agents."""

    def hidden(self, observation: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def value(self, observation: torch.Tensor) -> torch.Tensor:
        return self.critic(self.hidden(observation))

    def distribution(self, observation: torch.Tensor):
        return Categorical(logits=self.actor(self.hidden(observation)))

    def evaluate(self, observation: torch.Tensor):
        """The update's pass: the distribution and the value from one pass through the trunk."""
        hidden = self.hidden(observation)
        return Categorical(logits=self.actor(hidden)), self.critic(hidden)


class CnnAgent(TrunkAgent):
    """CleanRL's Atari agent: a CNN on uint8 [stack, H, W] frames, shared by actor and critic."""

    def __init__(self, obs_shape: tuple[int, ...], num_actions: int, network: str = "nature",
                 channels_last: bool = False, bf16: bool = False):
        super().__init__()
        if network not in CNN_LAYERS:
            raise ValueError(f"network must be one of {sorted(CNN_LAYERS)}, got {network!r}")
        channels, height, width = obs_shape
        layers: list[nn.Module] = []
        for out, kernel, stride in CNN_LAYERS[network]:
            layers += [conv(channels, out, kernel, stride), nn.ReLU()]
            channels = out
        self.network = nn.Sequential(*layers, nn.Flatten())
        with torch.no_grad():
            features = self.network(torch.zeros(1, *obs_shape)).shape[1]
        hidden = CNN_HIDDEN[network]
        self.network.append(layer(features, hidden))
        self.network.append(nn.ReLU())
        self.actor = layer(hidden, num_actions, std=0.01)
        self.critic = layer(hidden, 1, std=1.0)
        self.channels_last = channels_last
        self.bf16 = bf16
        if channels_last:
            self.to(memory_format=torch.channels_last)

    def hidden(self, observation: torch.Tensor) -> torch.Tensor:
        x = observation.float() / 255.0
        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        if self.bf16:
            with torch.autocast(x.device.type, dtype=torch.bfloat16):
                return self.network(x).float()
        return self.network(x)


class GridAgent(TrunkAgent):
    """rl-starter-files' MiniGrid agent: three 2x2 convolutions (a max-pool after the first) on the agent's view
    of cell codes [view, view, 3] (object, colour, state; small integers, taken as they are), then separate
    tanh actor and critic heads of 64."""

    def __init__(self, obs_shape: tuple[int, ...], num_actions: int):
        super().__init__()
        height, width, channels = obs_shape
        self.network = nn.Sequential(
            nn.Conv2d(channels, 16, 2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 2), nn.ReLU(),
            nn.Conv2d(32, 64, 2), nn.ReLU(), nn.Flatten())
        with torch.no_grad():
            features = self.network(torch.zeros(1, channels, height, width)).shape[1]
        self.actor = nn.Sequential(layer(features, 64), nn.Tanh(), layer(64, num_actions, std=0.01))
        self.critic = nn.Sequential(layer(features, 64), nn.Tanh(), layer(64, 1, std=1.0))

    def hidden(self, observation: torch.Tensor) -> torch.Tensor:
        return self.network(observation.float().permute(0, 3, 1, 2))


def next_values(agent: Policy, batch) -> torch.Tensor:
    """V(("next", "observation")) [N, T], mostly from the batch's own values.

    With same-step autoreset the next observation of step t is the root
    observation of step t + 1, whose value the acting policy already computed,
    except at episode ends (the true last observation) and at the last step:
    only those go through the network, a pass over the batch saved.
    """
    value = batch["state_value"].squeeze(-1)
    next_value = torch.empty_like(value)
    next_value[:, :-1] = value[:, 1:]
    ends = batch["next", "done"].squeeze(-1).clone()
    ends[:, -1] = True
    where = ends.nonzero(as_tuple=True)
    next_value[where] = agent.value(batch["next", "observation"][where]).squeeze(-1).to(value.dtype)
    return next_value


def gae(batch, next_value: torch.Tensor, gamma: float, lam: float, reward_scale: float) -> torch.Tensor:
    """Advantages [N, T] from a [N, T] batch; next_value is V(("next", "observation"))."""
    reward = batch["next", "reward"].squeeze(-1) * reward_scale
    terminated = batch["next", "terminated"].squeeze(-1).float()
    done = batch["next", "done"].squeeze(-1).float()
    value = batch["state_value"].squeeze(-1)
    # Truncated steps bootstrap from the true next observation; only
    # termination zeroes it. Episode ends (either) stop the recursion.
    delta = reward + gamma * next_value * (1.0 - terminated) - value
    advantage = torch.zeros_like(delta)
    running = torch.zeros_like(delta[:, 0])
    for t in reversed(range(delta.shape[1])):
        running = delta[:, t] + gamma * lam * (1.0 - done[:, t]) * running
        advantage[:, t] = running
    return advantage


def clipped_surrogate(ratio: torch.Tensor, advantage: torch.Tensor, clip_coef: float,
                      weight: torch.Tensor | None = None) -> torch.Tensor:
    """PPO's clipped objective, as a loss to minimise: mean of -min(r A, clip(r, 1 -+ clip_coef) A).

    ratio: pi / pi_prox [n]; advantage [n]. weight: pi_prox / pi_behaviour [n] where the data came from an
    older policy than pi_prox (NOTE [Decoupled PPO under prefetch]); None for plain PPO (pi_prox the behaviour).
    """
    if weight is not None:
        advantage = advantage * weight  # weight > 0, so it factors out of the min
    return torch.max(-advantage * ratio, -advantage * ratio.clamp(1 - clip_coef, 1 + clip_coef)).mean()


def adapt_lr(lr: float, kl: float, target: float, highest: float = 1e-2) -> float:
    """rl_games' AdaptiveScheduler: a step of 1.5x towards keeping each epoch's KL near target, in [1e-6, highest]."""
    if kl > 2.0 * target:
        return max(lr / 1.5, 1e-6)
    if kl < 0.5 * target:
        return min(lr * 1.5, highest)
    return lr


def update(agent: Policy, optimizer: torch.optim.Optimizer, flat: dict[str, torch.Tensor], args: Args,
           shuffles: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """PPO's update on one batch, flattened to [frames, ...] (observation, action, log_prob, prox_log_prob,
    advantage, returns, and weight with prefetch): update_epochs passes of num_minibatches shuffled minibatches,
    the rate adapted after each epoch with kl_target. Returns the last minibatch's policy and value losses."""
    frames = flat["advantage"].shape[0]
    device = flat["advantage"].device
    value_scale = agent.value_scale()
    minibatch = frames // args.num_minibatches
    for _ in range(args.update_epochs):
        kl_sum = torch.zeros((), device=device)
        order = torch.randperm(frames, device=device, generator=shuffles)
        for first in range(0, frames, minibatch):
            index = order[first:first + minibatch]
            distribution, value = agent.evaluate(flat["observation"][index])
            log_prob = agent.log_prob(distribution, flat["action"][index])
            log_ratio = log_prob - flat["prox_log_prob"][index]
            ratio = log_ratio.exp()
            kl_sum += 0.5 * log_ratio.detach().square().mean()  # rl_games' estimate of KL(old || new)
            adv = flat["advantage"][index]
            if args.norm_adv:
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            policy_loss = clipped_surrogate(ratio, adv, args.clip_coef,
                                            flat["weight"][index] if "weight" in flat else None)
            value_loss = 0.5 * ((value.squeeze(-1) - flat["returns"][index]) / value_scale).pow(2).mean()
            loss = policy_loss + args.vf_coef * value_loss - args.ent_coef * agent.entropy(distribution).mean()
            if args.bounds_loss_coef:
                loss = loss + args.bounds_loss_coef * agent.bounds_loss(distribution)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            optimizer.step()
        if args.kl_target is not None:
            optimizer.param_groups[0]["lr"] = adapt_lr(optimizer.param_groups[0]["lr"],
                                                       kl_sum.item() / args.num_minibatches, args.kl_target,
                                                       args.kl_lr_max)
    return policy_loss, value_loss


def train(args: Args) -> dict:
    args = dataclasses.replace(args, make_kwargs=one_vector(args.env_id, args.make_kwargs))
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    with torchpool.make(args.env_id, num_envs=1, **args.make_kwargs) as probe:
        obs_shape = tuple(probe.observation_spec.shape)
        image_obs = probe.observation_spec.dtype == torch.uint8
        action_spec = probe.action_spec
    if args.network == "minigrid":
        default_threads = 1  # a small network on 7x7 views: one thread, the other cores step the envs
        agent = GridAgent(obs_shape, action_spec.n).to(device)
    elif image_obs:
        # Env steps and the CNN's work take turns (one env group), so the CNN gets
        # every usable core (docs/performance.md: "Pong on a CPU").
        default_threads = torchpool.available_cpus()
        agent = CnnAgent(obs_shape, action_spec.n, args.network, args.channels_last, args.bf16).to(device)
    else:
        default_threads = 1  # small MLPs: extra intra-op threads only fight the env workers
        agent = Agent(int(np.prod(obs_shape)), action_spec, args.hidden, args.norm_obs, args.activation,
                      args.norm_value, args.shared_body).to(device)
    if args.norm_value and image_obs:
        raise ValueError("norm_value is for MLP agents; the CNN agent of image envs does not normalise its values")
    if args.clip_actions:
        if agent.discrete:
            raise ValueError(f"clip_actions is for continuous actions; {args.env_id}'s are discrete")
        agent.clip_actions = True
    if args.bounds_loss_coef and agent.discrete:
        raise ValueError(f"bounds_loss_coef is for continuous actions; {args.env_id}'s are discrete")
    if device.type == "cpu" or not image_obs:
        torch.set_num_threads(args.torch_threads or default_threads)
    # While the stream collects, the CNN's batch is one step of the envs: a
    # second intra-op thread gains little there, and idle ones spinning after
    # each op take cores from the env workers (docs/performance.md, "Pong on a CPU").
    default_collect = 1 if image_obs and device.type == "cpu" else None
    # Fused: one kernel for every parameter's Adam step, 1.03-1.13x faster updates on a CPU
    # (benchmarks/update_speed.py, RESULTS.md "The PPO update on a CPU").
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5, fused=True)
    # NOTE [One generator per thread]: with prefetch the collector samples actions on its own thread from
    # torch's global generator; were the update's shuffles drawn from it too, the two threads' draws would
    # interleave by timing and no run could be repeated. The update has its own.
    shuffles = torch.Generator(device).manual_seed(args.seed)
    frames_per_batch = args.num_envs * args.num_steps
    stream = torchpool.stream(args.env_id, agent.act, num_envs=args.num_envs, frames_per_batch=frames_per_batch,
                              total_frames=args.total_frames, device=device, seed=args.seed,
                              split_envs=args.split_envs, prefetch=args.prefetch, **args.make_kwargs)
    recent = deque(maxlen=20)
    learning_rates: list[float] = []  # one per batch: with kl_target, how the rate adapted
    curve: list[tuple[int, float, float]] = []  # (frames, seconds, mean return of the last 20 episodes)
    start = time.perf_counter()
    frames = 0
    bar = None
    if args.progress:
        from tqdm import tqdm

        bar = tqdm(total=args.total_frames, unit="frame", desc=f"PPO {args.env_id}")
    reached = None
    writer = _tensorboard_writer(args) if args.tensorboard else None
    update_threads = torch.get_num_threads()
    collect_threads = args.collect_threads or default_collect or update_threads
    torch.set_num_threads(collect_threads)
    for batch in stream:
        torch.set_num_threads(update_threads)
        frames += frames_per_batch
        done = batch["next", "done"].squeeze(-1)
        recent.extend(batch["next", "episode_return"].squeeze(-1)[done].tolist())
        if recent:
            curve.append((frames, time.perf_counter() - start, float(np.mean(recent))))
        learning_rates.append(optimizer.param_groups[0]["lr"])  # the rate this batch's update starts from
        if args.anneal_lr and args.kl_target is None:
            # Never below zero: the stream rounds total_frames up to whole batches.
            optimizer.param_groups[0]["lr"] = args.learning_rate * max(0.0, 1.0 - frames / args.total_frames)

        with torch.no_grad():
            advantage = gae(batch, next_values(agent, batch), args.gamma, args.gae_lambda, args.reward_scale)
            returns = advantage + batch["state_value"].squeeze(-1)
        action = batch["raw_action"] if args.clip_actions else batch["action"]  # what the log-prob belongs to
        flat = {"observation": batch["observation"].reshape(frames_per_batch, *obs_shape),
                "action": action.reshape(frames_per_batch, *action.shape[2:]),
                "log_prob": batch["sample_log_prob"].reshape(-1), "advantage": advantage.reshape(-1),
                "returns": returns.reshape(-1), "value": batch["state_value"].reshape(-1)}
        # NOTE [Decoupled PPO under prefetch]: a prefetched batch was collected by the weights of one update
        # ago (the behaviour policy). Clipping pi / pi_behaviour would spend part of the trust region on that
        # lag, and the adaptive rate would read the lag as KL and shrink. Decoupled PPO (Hilton et al. 2021,
        # "Batch size-invariance for policy optimization") clips pi / pi_prox instead, pi_prox being the weights
        # as this update starts, and weighs each sample by pi_prox / pi_behaviour so the objective stays an
        # estimate under the behaviour data. Without prefetch pi_prox is pi_behaviour: plain PPO.
        if args.prefetch:
            with torch.no_grad():
                flat["prox_log_prob"] = agent.log_prob(agent.distribution(flat["observation"]), flat["action"])
            flat["weight"] = (flat["prox_log_prob"] - flat["log_prob"]).exp()
        else:
            flat["prox_log_prob"] = flat["log_prob"]
        if args.norm_value:
            agent.returns.update(flat["returns"].unsqueeze(-1))
        policy_loss, value_loss = update(agent, optimizer, flat, args, shuffles)
        if args.norm_obs:
            agent.normalize.update(flat["observation"])
        if writer is not None:
            if recent:
                writer.add_scalar("charts/mean_return", float(np.mean(recent)), frames)
            writer.add_scalar("charts/frames_per_s", frames / (time.perf_counter() - start), frames)
            writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], frames)
            writer.add_scalar("losses/policy", policy_loss.item(), frames)
            writer.add_scalar("losses/value", value_loss.item(), frames)
            for name, seconds in stream.stats()["seconds"].items():
                writer.add_scalar(f"time/{name}_seconds", seconds, frames)

        if bar is not None:
            bar.update(frames_per_batch)
            if recent:
                fps = frames / (time.perf_counter() - start)
                bar.set_postfix(mean_return=f"{np.mean(recent):.1f}", fps=f"{fps:,.0f}",
                                lr=f"{optimizer.param_groups[0]['lr']:.1e}")
        if (args.target_return is not None and len(recent) == recent.maxlen
                and np.mean(recent) >= args.target_return):
            reached = time.perf_counter() - start
            break
        if args.max_seconds is not None and time.perf_counter() - start >= args.max_seconds:
            break
        torch.set_num_threads(collect_threads)
    torch.set_num_threads(update_threads)
    wall = time.perf_counter() - start
    if bar is not None:
        bar.close()
    collection = stream.stats()  # seconds waiting on envs / in the policy / in copies / in this loop
    if writer is not None:
        writer.close()
    del stream  # closes the pools
    evaluation = None
    if args.eval_games:
        with torch.no_grad():
            evaluation = play_fresh_games(agent.play, args.env_id, args.eval_games, args.seed, args.make_kwargs,
                                          device)
            if agent.discrete:
                evaluation["policy"] = "sampled"
            else:
                evaluation["policy"] = "deterministic (the mean action)"
                # The sampled policy too, on the same seeds: it is what the training curve measured, and the
                # two can part ways (a WalkerWalk-v1 policy whose mean action never stands up, tutorials/08).
                evaluation["sampled"] = play_fresh_games(partial(agent.play, deterministic=False), args.env_id,
                                                         args.eval_games, args.seed, args.make_kwargs, device)
    result = {"env_id": args.env_id, "frames": frames, "wall_seconds": wall, "evaluation": evaluation,
              "final_mean_return": float(np.mean(recent)) if recent else float("nan"),
              "target_return": args.target_return, "seconds_to_target": reached, "frames_per_s": frames / wall,
              "time_split": collection["seconds"], "curve": curve, "learning_rates": learning_rates,
              "args": dataclasses.asdict(args)}
    save_run(agent.state_dict(), result, Path(args.out_dir), algo="ppo")
    return result


def _tensorboard_writer(args: Args):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError as error:
        raise ImportError("tensorboard=True needs the tensorboard package: pip install tensorboard") from error
    return SummaryWriter(str(Path(args.out_dir) / "tensorboard" / f"{file_stem(args.env_id)}_{args.seed}"))
