"""Specs convert to the Gymnasium spaces of the reference envs (and torchrl specs when installed)."""

import gymnasium
import numpy as np
import pytest
import torch

import torchpool

CLASSIC = ["CartPole-v1", "Pendulum-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Acrobot-v1"]


@pytest.mark.parametrize("env_id", CLASSIC)
def test_spaces_equal_the_gymnasium_reference(env_id):
    reference = gymnasium.make(env_id)
    with torchpool.make(env_id, num_envs=1) as pool:
        assert pool.observation_spec.to_gymnasium() == reference.observation_space
        assert pool.action_spec.to_gymnasium() == reference.action_space


def test_float64_observations_give_a_float64_space():
    with torchpool.make("Pendulum-v1", num_envs=1, obs_dtype=torch.float64) as pool:
        space = pool.observation_spec.to_gymnasium()
        assert space.dtype == np.float64 and space.contains(pool.reset()["observation"][0].numpy())


@pytest.mark.parametrize("env_id", CLASSIC)
def test_observations_lie_in_the_declared_space(env_id):
    with torchpool.make(env_id, num_envs=8, seed=2) as pool:
        space = pool.observation_spec.to_gymnasium()
        pool.reset()
        for _ in range(50):
            if hasattr(pool.action_spec, "n"):
                action = torch.randint(0, pool.action_spec.n, (8,))
            else:
                action = torch.rand(8, *pool.action_spec.shape) * 2 - 1
            td = pool.step(action)
            for obs in td["observation"].numpy():
                assert space.contains(obs), f"{env_id}: {obs} outside {space}"


def test_torchrl_specs_have_the_batch_shape():
    pytest.importorskip("torchrl")
    with torchpool.make("Pendulum-v1", num_envs=4) as pool:
        assert pool.action_spec.to_torchrl((4,)).shape == (4, 1)
        assert pool.observation_spec.to_torchrl((4,)).shape == (4, 3)
    with torchpool.make("CartPole-v1", num_envs=4) as pool:
        assert pool.action_spec.to_torchrl((4,)).shape == (4,)
