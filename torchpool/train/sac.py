"""SAC on torchpool.stream, in the spirit of CleanRL's sac_continuous_action.py.

One file, top to bottom: arguments, the replay, the networks, then the loop.
The stream yields ``[num_envs, steps_per_batch]`` batches in torchrl's
layout; each is copied into a replay ring, then ``utd`` gradient steps per
collected frame sample from it. ``("next", "observation")`` is the true next
observation, also at an episode's end (same-step autoreset), and only
``terminated`` stops the bootstrap: a time-limit truncation bootstraps from
Q(s', a') of the final observation, as it should.

    python -m torchpool train Pendulum-v1 --algo sac
    python -m torchpool train HalfCheetah-v5 --algo sac           # CleanRL's settings: 1M frames, 1 env
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import torchpool
from torchpool.train._envs import one_vector
from torchpool.train._outputs import play_fresh_games, save_run


@dataclass
class Args:
    env_id: str = "Pendulum-v1"
    """the env to train on (continuous actions)"""
    total_frames: int = 1_000_000
    """env steps to collect at most"""
    num_envs: int = 1
    """envs stepped in parallel"""
    steps_per_batch: int = 1
    """steps per env per batch: the stream yields num_envs * steps_per_batch frames, then the updates run"""
    utd: float = 1.0
    """update-to-data ratio: gradient steps (critic updates) per frame collected once learning has started;
    after each batch of F frames the loop runs utd * F of them, carrying the fraction to the next batch"""
    buffer_size: int = 1_000_000
    """transitions the replay keeps (the oldest are overwritten)"""
    batch_size: int = 256
    """transitions per gradient step, sampled uniformly with replacement from the replay"""
    learning_starts: int = 5_000
    """frames of uniform random actions (within the action bounds) before the first update"""
    gamma: float = 0.99
    """discount"""
    tau: float = 0.005
    """Polyak coefficient of the target critics: target <- (1 - tau) target + tau critic"""
    policy_lr: float = 3e-4
    """Adam's learning rate for the actor"""
    q_lr: float = 1e-3
    """Adam's learning rate for the critics (and the entropy coefficient)"""
    policy_frequency: int = 2
    """delayed actor updates (TD3's): every policy_frequency-th critic update runs policy_frequency actor updates"""
    target_network_frequency: int = 1
    """update the target critics every this many critic updates"""
    alpha: float = 0.2
    """the entropy coefficient when autotune is off"""
    autotune: bool = True
    """tune the entropy coefficient towards an entropy of -action_dim (it starts at 1, as CleanRL's)"""
    hidden: int = 256
    """the width of the two hidden ReLU layers of the actor and of each critic"""
    seed: int = 1
    """seeds torch and the envs"""
    device: str = "cpu"
    """where the networks, the replay and the updates live"""
    torch_threads: int | None = None
    """torch's intra-op threads on a CPU (default 1: small MLPs, and the env workers want the other cores)"""
    target_return: float | None = None
    """stop once the mean return of the last 20 episodes reaches this"""
    max_seconds: float | None = None
    """stop after this many seconds of training wall time"""
    eval_games: int = 0
    """after training, play this many fresh episodes (new seeds) with the deterministic policy (the squashed mean
    action) and report their mean"""
    make_kwargs: dict = field(default_factory=dict)
    """task kwargs for torchpool.make"""
    out_dir: str = "runs"
    """where the learning curve (PNG, JSON) and the weights go"""
    progress: bool = True
    """show a progress bar"""


# Tuned defaults per env; anything given on the command line wins.
RECIPES: dict[str, dict] = {
    # Chosen for wall time to a mean of -200 over the last 20 episodes (3 seeds each, nice'd on a busy 2-core
    # CPU, where gradient steps are ~all the time): 64-wide networks (a step costs ~1/3 of a 256-wide one's);
    # 20 envs, so the last 20 episodes are one 4,000-frame round of them; and few gradient steps per frame, since
    # steps, not frames, cost time. 1 env-step : 8 updates of 256 took 3,400-3,900 steps and 28-32k frames
    # (10-12 s); utd 0.25 needed 4,750 steps (20k frames, 14 s), 0.5: 5,500 (12k, 16 s), 4 envs at utd 1:
    # 7,000-9,400 (8-10k frames, 21-30 s); batches of 128 or policy_lr 1e-3 made no difference, 40 envs at utd
    # 1/16 missed the target in 60k frames for 2 seeds of 3.
    "Pendulum-v1": dict(total_frames=60_000, num_envs=20, steps_per_batch=10, utd=0.125, learning_starts=1_000,
                        hidden=64, target_return=-200.0, eval_games=10),
    # CleanRL's sac_continuous_action.py as it runs MuJoCo: 1 env, an update after every step, 5,000 random
    # steps, 256x256 networks, lr 3e-4 (actor) and 1e-3 (critics), delayed actor updates; 1M frames.
    "HalfCheetah-v5": dict(total_frames=1_000_000, num_envs=1, steps_per_batch=1, utd=1.0, learning_starts=5_000,
                           eval_games=10),
}


def recipe(env_id: str) -> dict:
    """The tuned settings for env_id (a copy); {} for an env without a recipe."""
    return dict(RECIPES.get(env_id, {}))


def check_env(env_id: str, make_kwargs: dict | None = None):
    """(observation_spec, action_spec) of an env SAC can train; ValueError, one line, for any other.

    SAC here needs float observations (an MLP) and continuous actions with finite bounds (the tanh squashing).
    """
    with torchpool.make(env_id, num_envs=1, **(make_kwargs or {})) as probe:
        observation_spec, action_spec = probe.observation_spec, probe.action_spec
    if hasattr(action_spec, "n"):
        raise ValueError(f"SAC needs continuous actions, but {env_id}'s are discrete ({action_spec}); "
                         "train it with PPO (--algo ppo)")
    if not (torch.isfinite(action_spec.low).all() and torch.isfinite(action_spec.high).all()):
        raise ValueError(f"SAC squashes actions into the action bounds, but {env_id}'s are unbounded ({action_spec})")
    if not observation_spec.dtype.is_floating_point:
        raise ValueError(f"this SAC takes float observations (an MLP), but {env_id}'s are {observation_spec.dtype}")
    return observation_spec, action_spec


class Replay:
    """The last ``capacity`` transitions in preallocated tensors, a ring: add() overwrites the oldest.

    observation, next_observation: float32[capacity, *obs_shape]; action: float32[capacity, *action_shape];
    reward, terminated: float32[capacity] (terminated is 1.0 where the episode ended in a terminal state, the
    only case where the target does not bootstrap). Rows go in time-major order (step t of every env, then
    step t + 1), so the ring drops the oldest steps first. Rows [0, len(self)) hold transitions.
    """

    KEYS = ("observation", "action", "reward", "next_observation", "terminated")

    def __init__(self, capacity: int, obs_shape: tuple[int, ...], action_shape: tuple[int, ...],
                 device: torch.device | str = "cpu"):
        if capacity < 1:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self.capacity = capacity
        self.device = torch.device(device)
        self.observation = torch.empty(capacity, *obs_shape, device=self.device)
        self.action = torch.empty(capacity, *action_shape, device=self.device)
        self.reward = torch.empty(capacity, device=self.device)
        self.next_observation = torch.empty(capacity, *obs_shape, device=self.device)
        self.terminated = torch.empty(capacity, device=self.device)
        self.cursor = 0  # the row the next transition goes to
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def add(self, batch) -> None:
        """Stores a stream batch [num_envs, T]: its observation, action, ("next", reward / observation / terminated)."""
        rows = {"observation": batch["observation"], "action": batch["action"], "reward": batch["next", "reward"],
                "next_observation": batch["next", "observation"], "terminated": batch["next", "terminated"]}
        n = batch["observation"].shape[0] * batch["observation"].shape[1]
        first = max(0, n - self.capacity)  # a batch larger than the ring: only its last steps fit
        index = (self.cursor + torch.arange(n - first, device=self.device)) % self.capacity
        for key, value in rows.items():
            storage = getattr(self, key)
            value = value.transpose(0, 1).reshape(n, *storage.shape[1:])[first:]
            storage.index_copy_(0, index, value.to(storage.dtype))
        self.cursor = (self.cursor + n) % self.capacity
        self.size = min(self.size + n, self.capacity)

    def sample(self, n: int) -> dict[str, torch.Tensor]:
        """n transitions drawn uniformly with replacement (torch's global RNG): {key: tensor[n, ...]}."""
        if self.size == 0:
            raise ValueError("the replay is empty")
        index = torch.randint(self.size, (n,), device=self.device)
        return {key: getattr(self, key)[index] for key in self.KEYS}


class SoftQNetwork(nn.Module):
    """Q(s, a) [n, 1]: the observation and the action concatenated, two hidden ReLU layers."""

    def __init__(self, obs_size: int, action_size: int, hidden: int):
        super().__init__()
        self.network = nn.Sequential(nn.Linear(obs_size + action_size, hidden), nn.ReLU(),
                                     nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, observation: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return self.network(torch.cat([observation, action], 1))


LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0


class Actor(nn.Module):
    """A tanh-squashed diagonal Gaussian, rescaled to the action bounds (CleanRL's, with PyTorch's default init).

    act() is the stream's policy: uniform random actions within the bounds while explore_uniformly is set
    (before learning_starts), samples of the policy afterwards.
    """

    def __init__(self, obs_size: int, action_spec, hidden: int):
        super().__init__()
        action_size = int(np.prod(action_spec.shape))
        self.trunk = nn.Sequential(nn.Linear(obs_size, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.mean = nn.Linear(hidden, action_size)
        self.log_std = nn.Linear(hidden, action_size)
        low, high = action_spec.low.float().reshape(-1), action_spec.high.float().reshape(-1)
        self.register_buffer("action_scale", (high - low) / 2.0)
        self.register_buffer("action_bias", (high + low) / 2.0)
        self.action_shape = tuple(action_spec.shape)
        self.explore_uniformly = True

    def forward(self, observation: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The pre-squash mean and log-std [n, action_size]; the log-std mapped into [LOG_STD_MIN, LOG_STD_MAX]."""
        hidden = self.trunk(observation)
        log_std = torch.tanh(self.log_std(hidden))
        return self.mean(hidden), LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)

    def sample(self, observation: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """A reparameterised action [n, action_size] within the bounds and its log-probability [n, 1]."""
        mean, log_std = self(observation)
        normal = torch.distributions.Normal(mean, log_std.exp())
        x = normal.rsample()
        y = torch.tanh(x)
        # The change of variables through tanh and the rescaling (SAC paper, appendix C).
        log_prob = normal.log_prob(x) - torch.log(self.action_scale * (1 - y.pow(2)) + 1e-6)
        return y * self.action_scale + self.action_bias, log_prob.sum(1, keepdim=True)

    def deterministic(self, observation: torch.Tensor) -> torch.Tensor:
        """The squashed mean action: what the trained policy plays in evaluation."""
        mean, _ = self(observation)
        return torch.tanh(mean) * self.action_scale + self.action_bias

    def deterministic_act(self, observation: torch.Tensor) -> torch.Tensor:
        """deterministic() for observations [n, *obs_shape]: actions [n, *action_shape] (evaluation's policy)."""
        action = self.deterministic(observation.reshape(observation.shape[0], -1))
        return action.reshape(observation.shape[0], *self.action_shape)

    def act(self, observation: torch.Tensor) -> torch.Tensor:
        """The stream's policy: actions [n, *action_shape] for observations [n, *obs_shape]."""
        shape = (observation.shape[0], *self.action_shape)
        if self.explore_uniformly:
            uniform = torch.rand(observation.shape[0], self.action_scale.shape[0], device=observation.device)
            return ((2 * uniform - 1) * self.action_scale + self.action_bias).reshape(shape)
        action, _ = self.sample(observation.reshape(observation.shape[0], -1))
        return action.reshape(shape)


def train(args: Args) -> dict:
    args = dataclasses.replace(args, make_kwargs=one_vector(args.env_id, args.make_kwargs))
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    observation_spec, action_spec = check_env(args.env_id, args.make_kwargs)
    obs_shape = tuple(observation_spec.shape)
    if device.type == "cpu":
        torch.set_num_threads(args.torch_threads or 1)  # small MLPs: extra intra-op threads fight the env workers
    obs_size, action_size = int(np.prod(obs_shape)), int(np.prod(action_spec.shape))
    actor = Actor(obs_size, action_spec, args.hidden).to(device)
    qf1, qf2 = SoftQNetwork(obs_size, action_size, args.hidden), SoftQNetwork(obs_size, action_size, args.hidden)
    qf1_target, qf2_target = SoftQNetwork(obs_size, action_size, args.hidden), \
        SoftQNetwork(obs_size, action_size, args.hidden)
    qf1_target.load_state_dict(qf1.state_dict())
    qf2_target.load_state_dict(qf2.state_dict())
    for network in (qf1, qf2, qf1_target, qf2_target):
        network.to(device)
    q_parameters = [*qf1.parameters(), *qf2.parameters()]
    target_parameters = [*qf1_target.parameters(), *qf2_target.parameters()]
    q_optimizer = torch.optim.Adam(q_parameters, lr=args.q_lr)
    actor_optimizer = torch.optim.Adam(actor.parameters(), lr=args.policy_lr)
    target_entropy = -float(action_size)
    log_alpha = torch.zeros(1, device=device, requires_grad=True)
    alpha_optimizer = torch.optim.Adam([log_alpha], lr=args.q_lr)
    alpha = 1.0 if args.autotune else args.alpha  # a float: the targets and losses treat it as a constant

    replay = Replay(args.buffer_size, obs_shape, tuple(action_spec.shape), device)
    frames_per_batch = args.num_envs * args.steps_per_batch
    stream = torchpool.stream(args.env_id, actor.act, num_envs=args.num_envs, frames_per_batch=frames_per_batch,
                              total_frames=args.total_frames, device=device, seed=args.seed, **args.make_kwargs)
    recent = deque(maxlen=20)
    curve: list[tuple[int, float, float]] = []  # (frames, seconds, mean return of the last 20 episodes)
    start = time.perf_counter()
    frames = updates = 0
    owed = 0.0  # gradient steps due (utd * frames since learning started) and not yet run
    bar = None
    if args.progress:
        from tqdm import tqdm

        bar = tqdm(total=args.total_frames, unit="frame", desc=f"SAC {args.env_id}")
    reached = None
    for batch in stream:
        frames += frames_per_batch
        replay.add(batch)
        done = batch["next", "done"].squeeze(-1)
        if done.any():  # the curve gets a point per batch that ended episodes (not per batch: 1M of them)
            recent.extend(batch["next", "episode_return"].squeeze(-1)[done].tolist())
            curve.append((frames, time.perf_counter() - start, float(np.mean(recent))))
            if bar is not None:
                bar.set_postfix(mean_return=f"{np.mean(recent):.1f}", alpha=f"{alpha:.3f}",
                                fps=f"{frames / (time.perf_counter() - start):,.0f}", refresh=False)
        if frames >= args.learning_starts:
            actor.explore_uniformly = False  # from the next batch on, the policy acts
            owed += args.utd * min(frames_per_batch, frames - args.learning_starts)

        while owed >= 1.0:
            owed -= 1.0
            updates += 1
            data = replay.sample(args.batch_size)
            with torch.no_grad():
                next_action, next_log_prob = actor.sample(data["next_observation"])
                next_q = torch.min(qf1_target(data["next_observation"], next_action),
                                   qf2_target(data["next_observation"], next_action)) - alpha * next_log_prob
                # Only termination stops the bootstrap: truncations bootstrap from the true final observation.
                target_q = data["reward"] + (1 - data["terminated"]) * args.gamma * next_q.view(-1)
            qf1_loss = F.mse_loss(qf1(data["observation"], data["action"]).view(-1), target_q)
            qf2_loss = F.mse_loss(qf2(data["observation"], data["action"]).view(-1), target_q)
            q_optimizer.zero_grad()
            (qf1_loss + qf2_loss).backward()
            q_optimizer.step()

            if updates % args.policy_frequency == 0:  # TD3's delay, made up by as many actor steps
                for _ in range(args.policy_frequency):
                    action, log_prob = actor.sample(data["observation"])
                    min_q = torch.min(qf1(data["observation"], action), qf2(data["observation"], action))
                    actor_loss = (alpha * log_prob - min_q).mean()
                    actor_optimizer.zero_grad()
                    actor_loss.backward()  # also leaves gradients on the critics; q_optimizer zeroes them first
                    actor_optimizer.step()
                    if args.autotune:
                        # The actor step's log-probs (SB3's and the paper's choice; CleanRL samples again).
                        alpha_loss = (-log_alpha.exp() * (log_prob.detach() + target_entropy)).mean()
                        alpha_optimizer.zero_grad()
                        alpha_loss.backward()
                        alpha_optimizer.step()
                        alpha = log_alpha.exp().item()

            if updates % args.target_network_frequency == 0:
                with torch.no_grad():
                    torch._foreach_lerp_(target_parameters, q_parameters, args.tau)  # (1 - tau) target + tau q

        if bar is not None:
            bar.update(frames_per_batch)
        if (args.target_return is not None and len(recent) == recent.maxlen
                and np.mean(recent) >= args.target_return):
            reached = time.perf_counter() - start
            break
        if args.max_seconds is not None and time.perf_counter() - start >= args.max_seconds:
            break
    wall = time.perf_counter() - start
    if bar is not None:
        bar.close()
    collection = stream.stats()  # seconds waiting on envs / in the policy / in copies / in this loop (the updates)
    del stream  # closes the pools
    evaluation = None
    if args.eval_games:
        # The actor plays its deterministic action, the squashed mean (as PPO's continuous agents play theirs).
        evaluation = play_fresh_games(actor.deterministic_act, args.env_id, args.eval_games, args.seed,
                                      args.make_kwargs, device)
        evaluation["policy"] = "deterministic (the squashed mean action)"
    result = {"env_id": args.env_id, "frames": frames, "wall_seconds": wall, "evaluation": evaluation,
              "final_mean_return": float(np.mean(recent)) if recent else float("nan"),
              "target_return": args.target_return, "seconds_to_target": reached, "frames_per_s": frames / wall,
              "time_split": collection["seconds"], "curve": curve, "updates": updates, "alpha": alpha,
              "args": dataclasses.asdict(args)}
    networks = {"actor": actor, "qf1": qf1, "qf2": qf2, "qf1_target": qf1_target, "qf2_target": qf2_target}
    save_run({name: network.state_dict() for name, network in networks.items()}, result, Path(args.out_dir),
             algo="sac")
    return result
