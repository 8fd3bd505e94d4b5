"""torchpool.envpool_compat against EnvPool's behaviour, and a CleanRL-style PPO loop on it.

The PPO loop has the shape of CleanRL's ``ppo_atari_envpool.py``: the
legacy-gym 4-tuple API, its ``RecordEpisodeStatistics(gym.Wrapper)`` reading
``info["reward"]`` / ``info["lives"]``, the attributes it assigns after
``make()``, and its episode reads (``info["r"]`` where ``done and lives == 0``).
Only the ``envpool`` import is replaced. EnvPool itself (installed) is the
reference for the info layout and the next-step autoreset.
"""

from __future__ import annotations

import copy
import pickle
from collections import deque
from typing import Any

import gym  # the legacy package CleanRL's EnvPool scripts import
import gymnasium
import numpy as np
import pytest
import torch
import torch.nn as nn
from torch.distributions.categorical import Categorical

import torchpool
import torchpool.envpool_compat as envpool  # was: import envpool


# NOTE [The gym API follows the installed gym] (envpool_compat.py): CleanRL's EnvPool scripts declare
# gym 0.23, whose API (env_type="gym": obs-only resets, 4-tuple steps) these tests check. The test venv
# has gym 0.26.2 for its spaces; each test here sees it as 0.23.1 unless it says otherwise.
# tests/test_envpool_legacy_gym.py runs the loop with gym 0.23.1 itself installed.
@pytest.fixture(autouse=True)
def gym_as_cleanrl_declares_it(monkeypatch):
    monkeypatch.setattr(gym, "__version__", "0.23.1")


def test_gym_api_follows_the_installed_gym(monkeypatch):
    def shapes(envs):
        reset = envs.reset()
        step = envs.step(np.zeros(2, dtype=np.int64))
        envs.close()
        return type(reset).__name__, len(step)

    assert shapes(envpool.make_gym("CartPole-v1", num_envs=2)) == ("ndarray", 4), "gym 0.23: the legacy API"
    monkeypatch.setattr(gym, "__version__", "0.26.2")
    assert shapes(envpool.make_gym("CartPole-v1", num_envs=2)) == ("tuple", 5), "gym 0.26: Gymnasium's API"
    monkeypatch.setitem(__import__("sys").modules, "gym", None)  # no gym at all: EnvPool 1.2's make_gym
    assert shapes(envpool.make_gym("CartPole-v1", num_envs=2)) == ("tuple", 5)
    with pytest.raises(ValueError, match="gym_reset_return_info=False asks for the legacy gym API"):
        envpool.make_gym("CartPole-v1", gym_reset_return_info=False)


# ---- behaviour next to EnvPool's ----------------------------------------------------------


def _real_envpool():
    return pytest.importorskip("envpool", reason="EnvPool is the reference for these checks")


def _first_done_then_next(env, num_envs: int, action: int) -> tuple[tuple, tuple, int]:
    """Steps with a constant action until some env's episode ends; the step tuples at and after it."""
    actions = np.full(num_envs, action, dtype=np.int64)
    for _ in range(500):
        at = env.step(actions)
        terminated, truncated = at[2], at[3]
        ended = np.flatnonzero(terminated | truncated)
        if len(ended):
            return at, env.step(actions), int(ended[0])
    raise AssertionError("no episode ended in 500 steps")


def test_cartpole_info_spaces_and_dtypes_match_envpool():
    real = _real_envpool().make("CartPole-v1", env_type="gymnasium", num_envs=4, seed=0)
    ours = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=4, seed=0)
    try:
        assert ours.observation_space == real.observation_space, (
            f"observation_space: torchpool {ours.observation_space} EnvPool {real.observation_space}")
        assert ours.action_space == real.action_space, (
            f"action_space: torchpool {ours.action_space} EnvPool {real.action_space}")
        for what, (ours_out, real_out) in {
            "reset": (ours.reset(), real.reset()),
            "step": (ours.step(np.ones(4, dtype=np.int64)), real.step(np.ones(4, dtype=np.int64))),
        }.items():
            assert len(ours_out) == len(real_out), f"{what}: {len(ours_out)} values, EnvPool gives {len(real_out)}"
            for k, (a, b) in enumerate(zip(ours_out[:-1], real_out[:-1])):
                assert (a.dtype, a.shape) == (b.dtype, b.shape), (
                    f"{what} value {k}: torchpool {a.dtype}{a.shape} EnvPool {b.dtype}{b.shape}")
            ours_info, real_info = ours_out[-1], real_out[-1]
            missing = set(real_info) - set(ours_info)
            assert not missing, f"{what} info lacks EnvPool's keys {sorted(missing)}"
            for key in real_info:
                if key == "players":
                    assert np.array_equal(ours_info[key]["env_id"], real_info[key]["env_id"])
                    continue
                assert ours_info[key].dtype == real_info[key].dtype, (
                    f"{what} info[{key!r}]: torchpool {ours_info[key].dtype} EnvPool {real_info[key].dtype}")
                if key in ("env_id", "elapsed_step"):
                    assert np.array_equal(ours_info[key], real_info[key]), (
                        f"{what} info[{key!r}]: torchpool {ours_info[key]} EnvPool {real_info[key]}")
    finally:
        ours.close()
        real.close()


def test_next_step_autoreset_matches_envpool():
    real = _real_envpool().make("CartPole-v1", env_type="gymnasium", num_envs=4, seed=3)
    ours = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=4, seed=3)
    try:
        for name, env in (("EnvPool", real), ("torchpool", ours)):
            env.reset()
            at, after, i = _first_done_then_next(env, 4, action=1)
            obs, reward, terminated, truncated, info = after
            length = int(at[4]["elapsed_step"][i])
            assert at[2][i] and 5 <= length < 100, f"{name}: env {i} fell after {length} steps"
            # The step after an end resets: reward 0, not done, elapsed_step 0, a reset-range observation.
            assert reward[i] == 0 and not terminated[i] and not truncated[i], (
                f"{name}: the step after the end gave reward {reward[i]}, terminated {terminated[i]}, "
                f"truncated {truncated[i]}")
            assert info["elapsed_step"][i] == 0, f"{name}: elapsed_step {info['elapsed_step'][i]} after a reset"
            assert np.all(np.abs(obs[i]) <= 0.05), f"{name}: {obs[i]} is not a CartPole reset state"
    finally:
        ours.close()
        real.close()


def test_legacy_gym_api():
    envs = envpool.make("CartPole-v1", env_type="gym", num_envs=3, seed=0, max_episode_steps=4)
    try:
        assert isinstance(envs.action_space, gym.spaces.Discrete), type(envs.action_space)
        assert isinstance(envs.observation_space, gym.spaces.Box), type(envs.observation_space)
        assert envs.is_vector_env and envs.num_envs == 3 and len(envs) == 3
        obs = envs.reset()
        assert isinstance(obs, np.ndarray) and obs.shape == (3, 4), f"reset() gave {type(obs)}"
        # 0, 1, 0, 1: balanced enough that no pole falls within the 4-step limit.
        for t in range(4):
            out = envs.step(np.full(3, t % 2))
            assert len(out) == 4, f"step() gave {len(out)} values, the legacy gym API has 4"
        obs, reward, done, info = out
        assert done.all() and info["TimeLimit.truncated"].all(), (
            f"at the 4-step limit: done {done}, TimeLimit.truncated {info['TimeLimit.truncated']}")
        assert np.array_equal(info["elapsed_step"], [4, 4, 4]), info["elapsed_step"]
        assert np.array_equal(info["terminated"], [0, 0, 0]), "a time limit is not a game over"
        obs, info = envpool.make("CartPole-v1", env_type="gym", num_envs=2, gym_reset_return_info=True).reset()
        assert obs.shape == (2, 4) and "env_id" in info
    finally:
        envs.close()


def test_gymnasium_api_reports_terminated_and_truncated_apart():
    envs = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=2, seed=0)
    try:
        obs, info = envs.reset()
        at, _, i = _first_done_then_next(envs, 2, action=1)
        obs, reward, terminated, truncated, info = at
        assert terminated[i] and not truncated[i] and info["terminated"][i] == 1, (
            f"a fallen pole: terminated {terminated[i]} truncated {truncated[i]} info {info['terminated'][i]}")
        assert "TimeLimit.truncated" not in info, "the gymnasium API has no TimeLimit.truncated"
        assert isinstance(envs.action_space, gymnasium.spaces.Discrete)
    finally:
        envs.close()


def test_async_send_recv_tracks_each_env():
    envs = envpool.make("CartPole-v1", env_type="gym", num_envs=8, batch_size=4, seed=0, num_threads=2)
    try:
        assert envs.is_async
        envs.async_reset()
        steps = np.zeros(8, dtype=np.int64)    # steps each env took in its current episode
        seen_envs = set()
        for _ in range(60):
            obs, reward, done, info = envs.recv()
            env_id = info["env_id"]
            assert obs.shape == (4, 4) and env_id.dtype == np.int32 and len(set(env_id.tolist())) == 4
            assert np.array_equal(info["elapsed_step"], steps[env_id]), (
                f"envs {env_id}: elapsed_step {info['elapsed_step']}, sent {steps[env_id]} actions since reset")
            steps[env_id] = np.where(done, 0, steps[env_id] + 1)
            seen_envs.update(env_id.tolist())
            envs.send(np.ones(4, dtype=np.int64), env_id)
        assert seen_envs == set(range(8)), f"only envs {sorted(seen_envs)} came back"
    finally:
        envs.close()


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="env_type"):
        envpool.make("CartPole-v1", env_type="jax")
    with pytest.raises(ValueError, match="unknown env id"):
        envpool.make("CartPol-v1", env_type="gym")
    with pytest.raises(TypeError, match="unknown kwarg"):
        envpool.make("CartPole-v1", env_type="gym", episodic_lif=True)


# ---- spaces of both gym and Gymnasium, and EnvPool's spec --------------------------------------


def _twins(space) -> tuple:
    """The plain gym and Gymnasium spaces equal to ``space``."""
    if hasattr(space, "n"):
        return gym.spaces.Discrete(space.n), gymnasium.spaces.Discrete(space.n)
    return tuple(lib.spaces.Box(low=space.low, high=space.high, shape=space.shape, dtype=space.dtype)
                 for lib in (gym, gymnasium))


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1", "Pong-v5"])
def test_gym_spaces_are_gymnasium_spaces_too(env_id):
    envs = envpool.make(env_id, env_type="gym", num_envs=2)
    envs.close()
    for which, space in (("observation_space", envs.observation_space), ("action_space", envs.action_space)):
        name = "Discrete" if hasattr(space, "n") else "Box"
        gym_twin, gymnasium_twin = _twins(space)
        # CleanRL checks gym's classes; Gymnasium's Dict (rl_games) and rl_games'
        # type(space).__name__ dispatch need Gymnasium's class and name.
        assert isinstance(space, getattr(gym.spaces, name)) and isinstance(space, getattr(gymnasium.spaces, name)), (
            f"{which} {type(space).__mro__} is not both gym's and Gymnasium's {name}")
        assert type(space).__name__ == name, f"{which}: class name {type(space).__name__!r}, rl_games wants {name!r}"
        for twin in (gym_twin, gymnasium_twin):
            assert space == twin and twin == space, f"{which} {space} and {type(twin).__module__}'s {twin} differ"
        assert gymnasium.spaces.Dict({"observation": space}) and gym.spaces.Dict({"observation": space})
        assert gym.spaces.flatdim(space) == gymnasium.spaces.flatdim(space) == gymnasium.spaces.flatdim(gymnasium_twin)
        space.seed(0)
        assert space.contains(space.sample()) and gymnasium_twin.contains(space.sample())
        copied = pickle.loads(pickle.dumps(space))
        assert type(copied) is type(space) and copied == space, f"{which}: pickle gave {type(copied)} {copied}"
        assert copy.deepcopy(space) == space
        if name == "Discrete":
            assert type(space.n) is int, f"n is {type(space.n)}; gym's is an int (rl_games' LSTM takes no np.int64)"


def test_gymnasium_pools_give_gymnasium_spaces():
    envs = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=2)
    envs.close()
    assert type(envs.observation_space) is gymnasium.spaces.Box, type(envs.observation_space)
    assert type(envs.action_space) is gymnasium.spaces.Discrete, type(envs.action_space)


@pytest.mark.parametrize("env_type", ["gym", "gymnasium"])
def test_spec_has_the_config_and_gym_flavoured_spaces(env_type):
    envs = envpool.make("CartPole-v1", env_type=env_type, num_envs=3, seed=5)
    envs.close()
    assert isinstance(envs, envpool.python.envpool.EnvPoolMixin), "torchrl's wrapper checks EnvPoolMixin"
    spec = envs.spec
    assert spec.config._asdict() == envs.config, f"spec.config {spec.config}, config {envs.config}"
    assert (spec.config.num_envs, spec.config.seed) == (3, 5)
    # Gym-flavoured whatever the env_type (torchrl converts them under its "gym" backend).
    assert isinstance(spec.observation_space, gym.spaces.Box) and isinstance(spec.action_space, gym.spaces.Discrete)
    assert type(spec.gymnasium_observation_space) is gymnasium.spaces.Box
    assert spec.observation_space == envs.observation_space == spec.gymnasium_observation_space
    assert spec.action_space == envs.action_space == spec.gymnasium_action_space


def test_spec_matches_envpool():
    real = _real_envpool().make("Pong-v5", env_type="gym", num_envs=2, seed=3)
    ours = envpool.make("Pong-v5", env_type="gym", num_envs=2, seed=3)
    try:
        for key in ("num_envs", "batch_size", "max_num_players", "seed", "max_episode_steps"):
            ours_value, real_value = getattr(ours.spec.config, key), getattr(real.spec.config, key)
            assert ours_value == real_value, f"spec.config.{key}: torchpool {ours_value} EnvPool {real_value}"
        assert ours.spec.observation_space == real.spec.observation_space, (
            f"spec.observation_space: torchpool {ours.spec.observation_space} EnvPool {real.spec.observation_space}")
        assert ours.spec.action_space == real.spec.action_space
    finally:
        ours.close()
        real.close()


# ---- a CleanRL-style PPO loop, unchanged but for the import ------------------------------------


class RecordEpisodeStatistics(gym.Wrapper):
    """CleanRL's envpool episode recorder: sums info["reward"], ends games where lives run out."""

    def __init__(self, env, deque_size=100):
        super().__init__(env)
        self.num_envs = getattr(env, "num_envs", 1)
        self.episode_returns = None
        self.episode_lengths = None
        # Does the env have lives? (CleanRL probes with one step.)
        self.has_lives = False
        env.reset()
        info = env.step(np.zeros(self.num_envs, dtype=int))[-1]
        if info["lives"].sum() > 0:
            self.has_lives = True

    def reset(self, **kwargs):
        observations = super().reset(**kwargs)
        self.episode_returns = np.zeros(self.num_envs, dtype=np.float32)
        self.episode_lengths = np.zeros(self.num_envs, dtype=np.int32)
        self.lives = np.zeros(self.num_envs, dtype=np.int32)
        self.returned_episode_returns = np.zeros(self.num_envs, dtype=np.float32)
        self.returned_episode_lengths = np.zeros(self.num_envs, dtype=np.int32)
        return observations

    def step(self, action):
        observations, rewards, dones, infos = super().step(action)
        self.episode_returns += infos["reward"]
        self.episode_lengths += 1
        self.returned_episode_returns[:] = self.episode_returns
        self.returned_episode_lengths[:] = self.episode_lengths
        all_lives_exhausted = infos["lives"] == 0
        if self.has_lives:
            self.episode_returns *= 1 - all_lives_exhausted
            self.episode_lengths *= 1 - all_lives_exhausted
        else:
            self.episode_returns *= 1 - dones
            self.episode_lengths *= 1 - dones
        infos["r"] = self.returned_episode_returns
        infos["l"] = self.returned_episode_lengths
        return observations, rewards, dones, infos


def _layer(layer: nn.Module, std: float = np.sqrt(2), bias: float = 0.0) -> nn.Module:
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias)
    return layer


class MlpAgent(nn.Module):
    """CleanRL's ppo.py agent, for vector observations."""

    def __init__(self, envs):
        super().__init__()
        n_in = int(np.prod(envs.single_observation_space.shape))
        self.critic = nn.Sequential(_layer(nn.Linear(n_in, 64)), nn.Tanh(), _layer(nn.Linear(64, 64)), nn.Tanh(),
                                    _layer(nn.Linear(64, 1), std=1.0))
        self.actor = nn.Sequential(_layer(nn.Linear(n_in, 64)), nn.Tanh(), _layer(nn.Linear(64, 64)), nn.Tanh(),
                                   _layer(nn.Linear(64, envs.single_action_space.n), std=0.01))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        probs = Categorical(logits=self.actor(x))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


class CnnAgent(nn.Module):
    """CleanRL's ppo_atari_envpool.py agent (Nature CNN on 4 stacked 84x84 frames)."""

    def __init__(self, envs):
        super().__init__()
        self.network = nn.Sequential(
            _layer(nn.Conv2d(4, 32, 8, stride=4)), nn.ReLU(), _layer(nn.Conv2d(32, 64, 4, stride=2)), nn.ReLU(),
            _layer(nn.Conv2d(64, 64, 3, stride=1)), nn.ReLU(), nn.Flatten(), _layer(nn.Linear(64 * 7 * 7, 512)),
            nn.ReLU())
        self.actor = _layer(nn.Linear(512, envs.single_action_space.n), std=0.01)
        self.critic = _layer(nn.Linear(512, 1), std=1)

    def get_value(self, x):
        return self.critic(self.network(x / 255.0))

    def get_action_and_value(self, x, action=None):
        hidden = self.network(x / 255.0)
        probs = Categorical(logits=self.actor(hidden))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(hidden)


def run_ppo(env_id: str, agent_class, num_updates: int, make_kwargs: dict, num_envs: int = 8, num_steps: int = 128,
            learning_rate: float = 2.5e-3, seed: int = 1) -> list[float]:
    """CleanRL's ppo_atari_envpool.py main loop (hyperparameters as arguments); returns the episodic returns."""
    gamma, gae_lambda, num_minibatches, update_epochs = 0.99, 0.95, 4, 4
    clip_coef, ent_coef, vf_coef, max_grad_norm = 0.2, 0.0, 0.5, 0.5
    batch_size = num_envs * num_steps
    minibatch_size = batch_size // num_minibatches
    np.random.seed(seed)
    torch.manual_seed(seed)
    device = torch.device("cpu")

    # env setup
    envs = envpool.make(env_id, env_type="gym", num_envs=num_envs, seed=seed, **make_kwargs)
    envs.num_envs = num_envs
    envs.single_action_space = envs.action_space
    envs.single_observation_space = envs.observation_space
    envs = RecordEpisodeStatistics(envs)
    assert isinstance(envs.action_space, gym.spaces.Discrete), "only discrete action space is supported"

    agent = agent_class(envs).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=learning_rate, eps=1e-5)

    obs = torch.zeros((num_steps, num_envs) + envs.single_observation_space.shape).to(device)
    actions = torch.zeros((num_steps, num_envs) + envs.single_action_space.shape).to(device)
    logprobs = torch.zeros((num_steps, num_envs)).to(device)
    rewards = torch.zeros((num_steps, num_envs)).to(device)
    dones = torch.zeros((num_steps, num_envs)).to(device)
    values = torch.zeros((num_steps, num_envs)).to(device)
    avg_returns = deque(maxlen=20)
    episodic_returns = []

    next_obs = torch.Tensor(envs.reset()).to(device)
    next_done = torch.zeros(num_envs).to(device)
    for update in range(1, num_updates + 1):
        optimizer.param_groups[0]["lr"] = (1.0 - (update - 1.0) / num_updates) * learning_rate
        for step in range(num_steps):
            obs[step] = next_obs
            dones[step] = next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
                values[step] = value.flatten()
            actions[step] = action
            logprobs[step] = logprob

            next_obs, reward, done, info = envs.step(action.cpu().numpy())
            rewards[step] = torch.tensor(reward).to(device).view(-1)
            next_obs, next_done = torch.Tensor(next_obs).to(device), torch.Tensor(done).to(device)
            for idx, d in enumerate(done):
                if d and info["lives"][idx] == 0:
                    avg_returns.append(info["r"][idx])
                    episodic_returns.append(float(info["r"][idx]))

        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards).to(device)
            lastgaelam = 0
            for t in reversed(range(num_steps)):
                if t == num_steps - 1:
                    nextnonterminal, nextvalues = 1.0 - next_done, next_value
                else:
                    nextnonterminal, nextvalues = 1.0 - dones[t + 1], values[t + 1]
                delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
            returns = advantages + values

        b_obs = obs.reshape((-1,) + envs.single_observation_space.shape)
        b_logprobs, b_actions = logprobs.reshape(-1), actions.reshape((-1,) + envs.single_action_space.shape)
        b_advantages, b_returns, b_values = advantages.reshape(-1), returns.reshape(-1), values.reshape(-1)
        b_inds = np.arange(batch_size)
        for _epoch in range(update_epochs):
            np.random.shuffle(b_inds)
            for start in range(0, batch_size, minibatch_size):
                mb_inds = b_inds[start:start + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb_inds],
                                                                              b_actions.long()[mb_inds])
                ratio = (newlogprob - b_logprobs[mb_inds]).exp()
                mb_advantages = b_advantages[mb_inds]
                mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
                pg_loss = torch.max(-mb_advantages * ratio,
                                    -mb_advantages * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)).mean()
                newvalue = newvalue.view(-1)
                v_clipped = b_values[mb_inds] + torch.clamp(newvalue - b_values[mb_inds], -clip_coef, clip_coef)
                v_loss = 0.5 * torch.max((newvalue - b_returns[mb_inds]) ** 2,
                                         (v_clipped - b_returns[mb_inds]) ** 2).mean()
                loss = pg_loss - ent_coef * entropy.mean() + v_loss * vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
                optimizer.step()
    envs.close()
    return episodic_returns


def test_cleanrl_ppo_loop_learns_cartpole():
    returns = run_ppo("CartPole-v1", MlpAgent, num_updates=12, make_kwargs={})
    first, last = np.mean(returns[:30]), np.mean(returns[-30:])
    assert len(returns) > 60, f"only {len(returns)} episodes ended"
    assert last > 100 and last > 3 * first, (
        f"the return did not rise: first 30 episodes average {first:.1f}, last 30 {last:.1f} "
        f"({len(returns)} episodes)")


def test_cleanrl_ppo_loop_runs_on_pong():
    if "Pong-v5" not in torchpool.list_envs():
        pytest.skip("torchpool has no Pong-v5 yet (the Atari family is not registered)")
    # CleanRL's Atari settings; a few short updates check that the loop runs (no game ends that soon).
    kwargs = {"episodic_life": True, "reward_clip": True}
    probe = envpool.make("Pong-v5", env_type="gym", num_envs=2, **kwargs)
    assert probe.observation_space.shape == (4, 84, 84) and probe.observation_space.dtype == np.uint8, (
        f"EnvPool's Pong-v5 frames are uint8 (4, 84, 84), got {probe.observation_space}")
    probe.close()
    run_ppo("Pong-v5", CnnAgent, num_updates=3, num_steps=32, learning_rate=2.5e-4, make_kwargs=kwargs)


def test_atari_info_terminated_is_the_game_over_not_a_lost_life():
    # CleanRL's EnvPool scripts log an episode where info["terminated"] is set;
    # under episodic_life a lost life is `done` but not the end of the game.
    env = envpool.make("Breakout-v5", env_type="gym", num_envs=1, episodic_life=True, seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    ends = []
    for _ in range(5000):
        _, _, done, info = env.step(rng.integers(4, size=1))
        if done[0]:
            ends.append((int(info["lives"][0]), int(info["terminated"][0])))
            if info["terminated"][0]:
                break
    assert ends == [(4, 0), (3, 0), (2, 0), (1, 0), (0, 1)]


def test_only_the_atari_family_renames_game_over_and_raw_reward():
    # A Python env whose info has Atari's extras' names: info["terminated"] and info["reward"] must be its
    # own terminated and reward, and its game_over / raw_reward stay in info under their own names.
    from atari_named_info_env import LENGTH, AtariNamedInfoEnv

    env = envpool.make(AtariNamedInfoEnv, env_type="gymnasium", num_envs=2, num_workers=1)
    try:
        assert env.pool.family == "Process"
        env.reset()
        for _ in range(LENGTH):
            _, reward, terminated, _, info = env.step(np.zeros(2, dtype=np.int64))
        assert terminated.all(), f"the episodes end after {LENGTH} steps, terminated {terminated}"
        assert info["terminated"].tolist() == [1, 1], (
            f"info['terminated'] {info['terminated']}: the env's game_over extra was taken for Atari's game end")
        assert info["reward"].tolist() == reward.tolist() == [1.0, 1.0], (
            f"info['reward'] {info['reward']}, the step's reward {reward}: raw_reward was taken for Atari's")
        assert info["game_over"].tolist() == [0, 0] and info["raw_reward"].tolist() == [100.0, 100.0], (
            f"the env's own info entries are lost or changed: {sorted(info)}")
    finally:
        env.close()


# ---- env_type="dm": TimeSteps as EnvPool gives them (NOTE [TimeSteps as EnvPool gives them]) ----------------


def _control_suite_ids_envpool_has() -> list[str]:
    try:
        import envpool as real
    except ImportError:  # the test below skips, naming EnvPool
        return ["CheetahRun-v1"]
    theirs = set(real.list_all_envs())
    return [env_id for env_id in torchpool.families.dmc.DMC_IDS if env_id in theirs]


def _layout(state: Any) -> list[tuple[str, Any, tuple[int, ...]]]:
    """(name, dtype, shape) of each State entry; players as its own namedtuple's."""
    return [(name, value.dtype, value.shape) if hasattr(value, "dtype") else (name, _layout(value), ())
            for name, value in zip(state._fields, state)]


@pytest.mark.parametrize("env_id", _control_suite_ids_envpool_has())
def test_control_suite_timesteps_match_envpools_layout(env_id):
    real = _real_envpool().make(env_id, env_type="dm", num_envs=2, seed=0)
    ours = envpool.make(env_id, env_type="dm", num_envs=2, seed=0)
    try:
        action = np.zeros((2, *real.action_spec().shape))
        for what, (theirs_step, ours_step) in {"reset": (real.reset(), ours.reset()),
                                               "step": (real.step(action), ours.step(action))}.items():
            for key in ("step_type", "reward", "discount"):
                dtypes = getattr(ours_step, key).dtype, getattr(theirs_step, key).dtype
                assert dtypes[0] == dtypes[1], f"{what} {key}: torchpool {dtypes[0]} EnvPool {dtypes[1]}"
            theirs, mine = _layout(theirs_step.observation), _layout(ours_step.observation)
            # NOTE [TimeSteps as EnvPool gives them]: EnvPool's entries exactly, the domain's fields included.
            assert mine == theirs, (f"{env_id} {what}: State (name, dtype, shape) differs from EnvPool's\n"
                                    f"torchpool {mine}\nEnvPool   {theirs}")
        spec_theirs = [(name, getattr(spec, "dtype", None)) for name, spec in zip(real.observation_spec()._fields,
                                                                                   real.observation_spec())]
        spec_ours = [(name, getattr(spec, "dtype", None)) for name, spec in zip(ours.observation_spec()._fields,
                                                                                 ours.observation_spec())]
        assert spec_ours == spec_theirs, f"{env_id} observation_spec(): torchpool {spec_ours} EnvPool {spec_theirs}"
    finally:
        real.close()
        ours.close()


def test_atari_dm_state_names_its_extras_as_envpool():
    real = _real_envpool().make("Pong-v5", env_type="dm", num_envs=2, seed=0)
    ours = envpool.make("Pong-v5", env_type="dm", num_envs=2, seed=0)
    try:
        theirs, mine = _layout(real.reset().observation), _layout(ours.reset().observation)
        assert mine == theirs, f"Pong-v5 State: torchpool {mine}\nEnvPool {theirs}"
    finally:
        real.close()
        ours.close()


# ---- what EnvPool's own tests found missing --------------------------------------------------------


def test_make_spec_list_all_envs_version_and_reward_threshold():
    spec = envpool.make_spec("CartPole-v1", num_envs=4)
    assert spec.config.num_envs == 4 and spec.reward_threshold == 475.0
    assert envpool.make_spec("Pendulum-v1").reward_threshold is None
    listed = set(envpool.list_all_envs())
    assert set(torchpool.list_envs()) - listed == {"MiniGrid-MultiRoom-N4-S5-v1"}, "every torchpool id EnvPool has"
    envpool.make_gymnasium("MiniGrid-MultiRoom-N4-S5-v1").close()  # not in EnvPool's list, still made
    assert envpool.make_spec("CartPole-v0").reward_threshold == 195.0, "EnvPool's CartPole-v0"
    assert envpool.make_gym("CartPole-v0").spec.config.max_episode_steps == 200
    # EnvPool's older MuJoCo ids are its -v4 tasks; Pendulum-v0 is gym 0.20's (tests/test_classic_parity.py).
    older = [f"{task}-v3" for task in ("Ant", "HalfCheetah", "Hopper", "Walker2d", "Humanoid", "Swimmer")] + [
        f"{task}-v2" for task in ("HumanoidStandup", "InvertedDoublePendulum", "InvertedPendulum", "Pusher", "Reacher")]
    for env_id in [*older, "Pendulum-v0", "phys2d/Pendulum-v0"]:
        ours, real = envpool.make_spec(env_id), _real_envpool().make_spec(env_id)
        assert ours.observation_space.shape == real.observation_space.shape, env_id
        assert ours.action_space.shape == real.action_space.shape, env_id
        assert ours.config.max_episode_steps == real.config.max_episode_steps, env_id
    with pytest.raises(AssertionError, match="unknown env id 'Combat-v5'"):  # EnvPool's checks are asserts
        envpool.make_gym("Combat-v5")
    with pytest.raises(ValueError, match="seed must be an int32"):
        envpool.make_gym("Pong-v5", seed=2**31)
    spec = envpool.make_spec("Pong-v5")
    assert spec.action_array_spec["action"].maximum == 5 and spec.state_array_spec["info:ram"].shape == [128]
    assert spec.observation_spec().obs.maximum == 255 and spec.action_spec().num_values == 6
    assert envpool.__version__ == _real_envpool().__version__, "the EnvPool release the drop-in follows"
    assert envpool.GymnasiumEnvPool is envpool.EnvPool and envpool.DMEnvPool is envpool.DmEnvPool


def test_pools_are_vector_envs_and_dm_pools_dm_envs():
    import dm_env

    envs, dm = envpool.make_gymnasium("CartPole-v1", num_envs=2), envpool.make_dm("CartPole-v1", num_envs=2)
    try:
        assert isinstance(envs, gymnasium.vector.VectorEnv) and isinstance(envs, gymnasium.Env)
        assert envs.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.NEXT_STEP
        assert isinstance(dm, dm_env.Environment)
    finally:
        envs.close()
        dm.close()


def test_a_fresh_pool_steps_and_its_first_step_resets():
    # EnvPool's envs start done: the first step resets them, ignoring the action (reward 0, elapsed_step 0).
    envs = envpool.make_gymnasium("CartPole-v1", num_envs=3, seed=0)
    reference = envpool.make_gymnasium("CartPole-v1", num_envs=3, seed=0)
    try:
        obs, reward, terminated, truncated, info = envs.step(np.ones(3, dtype=np.int64))
        np.testing.assert_array_equal(obs, reference.reset()[0])
        assert not reward.any() and not (terminated | truncated).any() and not info["elapsed_step"].any()
        assert (envs.step(np.ones(3, dtype=np.int64))[4]["elapsed_step"] == 1).all()
    finally:
        envs.close()
        reference.close()


def test_dict_actions_as_envpool_takes_them():
    envs = envpool.make_gymnasium("CartPole-v1", num_envs=4, batch_size=2, seed=0)
    try:
        envs.async_reset()
        info = envs.recv(reset=True)[1]
        envs.send({"action": np.zeros(2, dtype=np.int64), "env_id": info["env_id"]})
        assert sorted(envs.recv()[4]["env_id"].tolist()) != [], "the dict's env_id was stepped"
        with pytest.raises(KeyError, match="a dict action has the keys 'action'"):
            envs.send({"actions": np.zeros(2, dtype=np.int64)})
    finally:
        envs.close()


def test_a_sync_pool_steps_some_envs_as_envpool_does():
    # EnvPool's sync step(action, env_id): only those envs step; their rows come back in env_id's order.
    some = envpool.make_gymnasium("CartPole-v1", num_envs=5, seed=0)
    every = envpool.make_gymnasium("CartPole-v1", num_envs=5, seed=0)
    try:
        some.reset()
        every.reset()
        obs, reward, terminated, truncated, info = some.step(np.array([1, 0]), env_id=np.array([3, 1]))
        full = every.step(np.array([0, 0, 0, 1, 0]))
        assert info["env_id"].tolist() == [3, 1] and info["elapsed_step"].tolist() == [1, 1]
        np.testing.assert_array_equal(obs, full[0][[3, 1]])
        info = some.step(np.zeros(5, dtype=np.int64))[4]
        assert info["elapsed_step"].tolist() == [1, 2, 1, 2, 1], "the others had not stepped"
    finally:
        some.close()
        every.close()


def test_a_step_that_cannot_fill_a_batch_is_refused_before_anything_is_queued():
    pool = torchpool.make("CartPole-v1", num_envs=5, batch_size=4, seed=0)
    pool.async_reset()
    pool.recv()
    with pytest.raises(ValueError, match=r"step\(action, env_id\) with 2 envs \(1 in flight\) cannot fill a batch"):
        pool.step(torch.zeros(2, dtype=torch.int64), env_id=[0, 1])
    assert pool.in_flight == 1, "nothing was queued"
    assert len(pool.step(torch.zeros(3, dtype=torch.int64), env_id=[0, 1, 2])["env_id"]) == 4, "the pool still steps"
    pool.close()


@pytest.mark.parametrize("make", ["make_gymnasium", "make_dm"])
def test_frame_stack_stacks_each_envs_last_observations(make):
    envs = getattr(envpool, make)("Pendulum-v1", num_envs=2, seed=0, frame_stack=3, max_episode_steps=4)
    plain = getattr(envpool, make)("Pendulum-v1", num_envs=2, seed=0, max_episode_steps=4)

    def observations(out):
        return out.observation.obs if make == "make_dm" else out[0]

    try:
        if make == "make_dm":
            assert envs.observation_spec().obs.shape == (3, 3)
        else:
            assert envs.observation_space.shape == (3, 3) and envs.spec.config.frame_stack == 3
        first, reference = observations(envs.reset()), observations(plain.reset())
        np.testing.assert_array_equal(first, np.repeat(reference[:, None], 3, axis=1))  # a reset fills the stack
        history = [reference]
        for t in range(6):
            action = np.full((2, 1), 0.5, dtype=np.float32)
            stacked, reference = observations(envs.step(action)), observations(plain.step(action))
            history = [reference] * 3 if t == 4 else [*history, reference][-3:]  # t == 4: the autoreset's row
            np.testing.assert_array_equal(stacked[:, -1], reference, err_msg=f"step {t}: the newest")
            np.testing.assert_array_equal(stacked, np.stack(([history[0]] * 3 + history)[-3:], axis=1),
                                          err_msg=f"step {t}")
    finally:
        envs.close()
        plain.close()
    with pytest.raises(ValueError, match="frame_stack must be an int >= 1, got 0"):
        envpool.make_gym("Pendulum-v1", frame_stack=0)


def test_atari_mode_difficulty_and_ram_as_envpool_gives_them():
    if "Freeway-v5" not in torchpool.list_envs():
        pytest.skip("torchpool was built without the Atari family")
    import ale_py

    kwargs = {"num_envs": 1, "seed": 0, "stack_num": 1, "noop_max": 0, "use_fire_reset": False, "gray_scale": False,
              "img_height": 210, "img_width": 160}
    assert envpool.make_spec("Freeway-v5").config.mode == -1
    default = envpool.make_gymnasium("Freeway-v5", **kwargs)
    other = envpool.make_gymnasium("Freeway-v5", mode=1, difficulty=1, **kwargs)
    reference = ale_py.ALEInterface()
    reference.setLoggerMode(ale_py.LoggerMode.Error)
    reference.loadROM(ale_py.roms.get_rom_path("freeway"))
    reference.setMode(1)
    reference.setDifficulty(1)
    reference.reset_game()
    try:
        obs, info = other.reset()
        assert not np.array_equal(default.reset()[0], obs), "mode 1 starts from another screen"
        np.testing.assert_array_equal(obs[0].transpose(1, 2, 0), reference.getScreenRGB())
        assert info["ram"].shape == (1, 128) and info["ram"].dtype == np.uint8
        np.testing.assert_array_equal(info["ram"][0], reference.getRAM())
    finally:
        default.close()
        other.close()
    with pytest.raises(ValueError, match="mode=99 is not one of this game's"):
        torchpool.make("Freeway-v5", mode=99)


@pytest.mark.parametrize("env_id", ["Pong-v5", "CartPole-v1", "CheetahRun-v1"])
def test_info_has_envpools_keys_and_the_atari_three_only(env_id):
    # torchpool's own extras (Atari's episode_frame_number, the Control Suite's unstable) stay out of info;
    # lives, reward and terminated are the documented superset for every family.
    real, ours = _real_envpool().make_gymnasium(env_id, num_envs=2), envpool.make_gymnasium(env_id, num_envs=2)
    try:
        theirs, mine = set(real.reset()[1]), set(ours.reset()[1])
        assert mine == theirs | {"lives", "reward", "terminated"}, f"torchpool {sorted(mine)} EnvPool {sorted(theirs)}"
    finally:
        real.close()
        ours.close()
