"""The dm_env API: torchpool.dm_env (one env, as dm_control's suite.load) and envpool_compat's
env_type="dm" (batched, as EnvPool's), checked with dm_env's own conformance mixin and an actor loop."""

from __future__ import annotations

import collections
import unittest

import dm_env
import numpy as np
import pytest
import torch
from dm_env import test_utils

import torchpool
import torchpool.envpool_compat as envpool
from torchpool import dm_env as suite

pytestmark = pytest.mark.skipif(not torchpool._family_modules.built("DmcWalker"),
                                reason="torchpool was built without the Control Suite family")


class WalkerWalkConformsToDmEnv(test_utils.EnvironmentTestMixin, unittest.TestCase):
    def make_object_under_test(self):
        return suite.load("walker", "walk", task_kwargs={"random": 3}, max_episode_steps=15)

    def make_action_sequence(self):  # long enough to pass LAST and the reset after it
        for _ in range(40):
            yield self.make_action()


class FlatCheetahRunConformsToDmEnv(test_utils.EnvironmentTestMixin, unittest.TestCase):
    def make_object_under_test(self):
        return suite.load("cheetah", "run", environment_kwargs={"flat_observation": True}, max_episode_steps=10)


class CartPoleConformsToDmEnv(test_utils.EnvironmentTestMixin, unittest.TestCase):
    """Any id has the view: a discrete action, one unnamed observation, a terminating task."""

    def make_object_under_test(self):
        return suite.Environment("CartPole-v1", seed=1)

    def make_action_sequence(self):
        for _ in range(200):
            yield self.make_action()


def test_load_gives_dm_controls_keys_and_steps():
    env = suite.load("walker", "walk", task_kwargs={"random": 1}, max_episode_steps=3)
    try:
        first = env.reset()
        assert first.first() and first.reward is None and first.discount is None
        assert isinstance(first.observation, collections.OrderedDict)
        assert list(first.observation) == ["orientations", "height", "velocity"]
        assert first.observation["height"].shape == () and first.observation["height"].dtype == np.float64
        spec = env.action_spec()
        assert isinstance(spec, dm_env.specs.BoundedArray) and spec.shape == (6,)
        kinds = [env.step(np.zeros(6)).step_type for _ in range(4)]
        assert kinds == [dm_env.StepType.MID, dm_env.StepType.MID, dm_env.StepType.LAST, dm_env.StepType.FIRST]
    finally:
        env.close()


def test_load_refuses_what_it_cannot_follow():
    with pytest.raises(ValueError, match="unknown Control Suite task"):
        suite.load("walker", "fly")
    with pytest.raises(TypeError, match="int seed"):
        suite.load("walker", "walk", task_kwargs={"random": np.random.RandomState(0)})
    with pytest.raises(ValueError, match="time_limit"):
        suite.load("walker", "walk", task_kwargs={"time_limit": 5})
    with pytest.raises(ValueError, match="n_sub_steps"):
        suite.load("walker", "walk", environment_kwargs={"n_sub_steps": 2})


def test_batched_timesteps_follow_envpool():
    env = envpool.make_dm("CheetahRun-v1", num_envs=3, seed=5, max_episode_steps=4)
    try:
        first = env.reset()
        assert isinstance(first, dm_env.TimeStep)
        assert first.step_type.dtype == np.int32 and first.step_type.tolist() == [0, 0, 0]
        assert first.reward.dtype == np.float32 and first.discount.tolist() == [1.0, 1.0, 1.0]
        observation = first.observation
        assert observation._fields[:4] == ("env_id", "players", "position", "velocity")  # EnvPool's order
        assert observation.position.shape == (3, 8) and observation.env_id.tolist() == [0, 1, 2]
        assert observation.players.env_id.tolist() == [0, 1, 2]
        spec = env.observation_spec()
        assert spec.position.shape == (8,) and spec.velocity.shape == (9,)
        assert env.action_spec().shape == (6,)
        types = [env.step(np.zeros((3, 6))).step_type.tolist() for _ in range(5)]
        assert types == [[1] * 3, [1] * 3, [1] * 3, [2] * 3, [0] * 3]
    finally:
        env.close()


def test_batched_discount_is_zero_only_where_a_task_terminates():
    env = envpool.make("CartPole-v1", env_type="dm", num_envs=4, seed=2)
    try:
        env.reset()
        terminated = 0
        for _ in range(100):
            step = env.step(np.ones(4, dtype=np.int64))  # always push right: every pole falls
            last = step.step_type == dm_env.StepType.LAST
            assert np.array_equal(step.discount == 0.0, last)  # CartPole ends by termination here
            terminated += int(last.sum())
        assert terminated >= 4
    finally:
        env.close()


def test_an_acme_style_actor_loop_sees_every_episode():
    """The loop of Acme's EnvPool example: observe_first on FIRST rows, observe on the others. Each
    episode's return, summed from the timesteps' rewards, equals the episode_return a plain pool reports
    for the same seed and actions."""
    num_envs, steps = 4, 60
    rng = np.random.default_rng(0)
    env = envpool.make_dm("WalkerWalk-v1", num_envs=num_envs, seed=9, max_episode_steps=7)
    spec = env.action_spec()
    actions = rng.uniform(spec.minimum, spec.maximum, size=(steps, num_envs, *spec.shape))
    returns, finished = np.zeros(num_envs), []
    try:
        env.reset()
        for t in range(steps):
            timestep = env.step(actions[t])
            for i in range(num_envs):
                if timestep.step_type[i] == dm_env.StepType.FIRST:
                    returns[i] = 0.0
                    continue
                returns[i] += timestep.reward[i]
                if timestep.step_type[i] == dm_env.StepType.LAST:
                    finished.append((t, i, returns[i]))
    finally:
        env.close()
    pool = torchpool.make("WalkerWalk-v1", num_envs=num_envs, seed=9, max_episode_steps=7, autoreset="next_step")
    want = []
    try:
        pool.reset()
        for t in range(steps):
            td = pool.step(torch.from_numpy(actions[t]))
            want += [(t, i, float(td["episode_return"][i])) for i in range(num_envs) if td["done"][i]]
    finally:
        pool.close()
    assert len(finished) == num_envs * (steps // 8)  # 7 steps and a FIRST per episode
    assert [(t, i) for t, i, _ in finished] == [(t, i) for t, i, _ in want]
    np.testing.assert_allclose([r for _, _, r in finished], [r for _, _, r in want], rtol=1e-6)


@pytest.mark.parametrize("env_id", ["WalkerWalk-v1", "HumanoidRun-v1", "FishSwim-v1"])
def test_torchpoolenv_names_fields_as_torchrls_dmcontrolenv(env_id):
    """torchrl's own DMControlEnv spec conversion, fed the dm_env specs (dm_control's keys and shapes,
    tests/test_dmc_parity.py), gives the keys, shapes and dtypes TorchPoolEnv uses."""
    pytest.importorskip("torchrl")
    from torchrl.envs.libs.dm_control import _dmcontrol_to_torchrl_spec_transform

    env = torchpool.TorchPoolEnv(env_id, num_envs=2, obs_dtype=torch.float64)
    try:
        dm_spec = suite.observation_spec(env.pool.observation_spec)
        theirs = _dmcontrol_to_torchrl_spec_transform(dm_spec)
        ours = env.observation_spec
        assert list(theirs.keys()) == [key for key in ours.keys() if key in theirs.keys()] == list(dm_spec)
        for key in theirs.keys():
            assert ours[key].shape == (2, *theirs[key].shape) and ours[key].dtype == theirs[key].dtype, key
        td = env.rollout(3)
        assert td["next", list(dm_spec)[0]].shape[:2] == (2, 3)
    finally:
        env.close()
