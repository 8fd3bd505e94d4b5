"""The MiniGrid family through every adapter: Gymnasium's VectorEnv (a Dict observation), torchrl's
TorchPoolEnv (its specs, the mission tokens among them), SB3 (MultiInputPolicy on the Dict), the EnvPool
drop-in (the mission as EnvPool gives it: the text's bytes) and torchpool.stream; the mission tokens read
back as minigrid's text; the options' shapes; bad options named."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch

import torchpool
from torchpool.families.minigrid import mission_text, vocabulary

pytest.importorskip("minigrid")

ENV_ID = "MiniGrid-DoorKey-5x5-v0"


def _reference_obs(env_id: str, seed: int, **kwargs) -> dict:
    ref = gymnasium.make(env_id, disable_env_checker=True, **kwargs)
    obs, _ = ref.reset(seed=seed)
    ref.close()
    return obs


def test_the_mission_tokens_read_back_as_minigrids_text():
    with torchpool.make("MiniGrid-LockedRoom-v0", num_envs=3, seed=5) as pool:
        missions = pool.reset()["observation", "mission"]
    assert mission_text(missions) == [_reference_obs("MiniGrid-LockedRoom-v0", 5 + i)["mission"] for i in range(3)]
    assert vocabulary()[0] == "" and "room," in vocabulary()
    assert int(missions.max()) < len(vocabulary())


def test_the_gymnasium_vector_env_gives_minigrids_dict():
    from torchpool.gym import VectorEnv

    env = VectorEnv(ENV_ID, num_envs=3, seed=11)
    try:
        space = env.single_observation_space
        assert isinstance(space, gymnasium.spaces.Dict) and list(space) == ["image", "direction", "mission"]
        assert space["image"].shape == (7, 7, 3) and space["image"].dtype == np.uint8
        obs, _ = env.reset(seed=11)
        assert obs in env.observation_space
        for i in range(3):
            ref = _reference_obs(ENV_ID, 11 + i)
            np.testing.assert_array_equal(obs["image"][i], ref["image"])
            assert obs["direction"][i] == ref["direction"]
        obs, reward, terminated, truncated, _ = env.step(np.array([2, 1, 5]))
        assert obs["image"].shape == (3, 7, 7, 3) and reward.dtype == np.float32
    finally:
        env.close()


def test_torchrl_specs_hold_the_rollout():
    from torchrl.envs.utils import check_env_specs

    from torchpool.torchrl import TorchPoolEnv

    env = TorchPoolEnv(ENV_ID, num_envs=2)
    try:
        spec = env.observation_spec
        assert spec["mission"].dtype == torch.uint8 and spec["mission"].shape[-1] == 24
        assert spec["image"].shape[-3:] == (7, 7, 3)
        check_env_specs(env)
        rollout = env.rollout(20)
        assert rollout["next", "image"].shape == (2, 20, 7, 7, 3)
    finally:
        env.close()


def test_sb3_multi_input_policy_trains_on_the_dict():
    from stable_baselines3 import PPO

    from torchpool.sb3 import PoolVecEnv

    env = PoolVecEnv(ENV_ID, num_envs=4, seed=0)
    try:
        # The view's bounds are its codes' (0-10, 0-5, 0-3), so SB3 flattens it rather than build a Nature
        # CNN for a 7x7 "picture".
        assert not __import__("stable_baselines3").common.preprocessing.is_image_space(
            env.observation_space["image"])
        model = PPO("MultiInputPolicy", env, n_steps=32, batch_size=64, n_epochs=1, device="cpu", seed=0)
        before = [p.detach().clone() for p in model.policy.parameters()]
        model.learn(256)
        assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.parameters()))
    finally:
        env.close()


def test_the_envpool_drop_in_gives_the_mission_as_envpool_does():
    from torchpool import envpool_compat

    env = envpool_compat.make(ENV_ID, env_type="gymnasium", num_envs=2, seed=3)
    try:
        obs, info = env.reset()
        assert set(obs) == {"image", "direction", "mission"} and obs["mission"].shape == (2, 96)
        for i in range(2):
            text = bytes(obs["mission"][i]).rstrip(b"\0").decode()
            assert text == _reference_obs(ENV_ID, 3 + i)["mission"]
        obs, reward, terminated, truncated, info = env.step(np.zeros(2, dtype=np.int32))
        assert obs["image"].shape == (2, 7, 7, 3)
    finally:
        env.close()


def test_the_stream_yields_minigrid_batches():
    policy = lambda obs: torch.randint(0, 7, (obs["image"].shape[0],))  # noqa: E731
    stream = torchpool.stream(ENV_ID, policy, num_envs=4, frames_per_batch=32, total_frames=64)
    batches = list(stream)
    assert len(batches) == 2
    assert batches[0]["observation", "image"].shape == (4, 8, 7, 7, 3)
    assert batches[0]["observation", "mission"].shape == (4, 8, 24)


@pytest.mark.parametrize("kwargs, shape", [
    ({}, (7, 7, 3)),
    ({"agent_view_size": 5}, (5, 5, 3)),
    ({"observation": "full"}, (5, 5, 3)),
    ({"observation": "rgb"}, (40, 40, 3)),
    ({"observation": "rgb_partial", "tile_size": 4}, (28, 28, 3)),
])
def test_the_options_shape_the_image(kwargs, shape):
    with torchpool.make(ENV_ID, num_envs=1, **kwargs) as pool:
        assert tuple(pool.reset()["observation", "image"].shape[1:]) == shape
    with torchpool.make(ENV_ID, num_envs=1, image_only=True, **kwargs) as pool:
        assert tuple(pool.reset()["observation"].shape[1:]) == shape


def test_the_full_view_is_fully_obs_wrappers():
    from minigrid.wrappers import FullyObsWrapper

    ref = FullyObsWrapper(gymnasium.make("MiniGrid-KeyCorridorS3R3-v0", disable_env_checker=True))
    with torchpool.make("MiniGrid-KeyCorridorS3R3-v0", num_envs=1, seed=4, observation="full") as pool:
        td = pool.reset()
        obs, _ = ref.reset(seed=4)
        for action in np.random.default_rng(0).integers(0, 7, 60):
            np.testing.assert_array_equal(td["observation", "image"][0].numpy(), obs["image"])
            td = pool.step(torch.tensor([int(action)]))
            obs, _, terminated, truncated, _ = ref.step(int(action))
            if terminated or truncated:
                break


@pytest.mark.parametrize("kwargs, message", [
    ({"agent_view_size": 4}, "agent_view_size must be odd"),
    ({"observation": "pixels"}, "observation must be 'partial'"),
    ({"max_steps": 0}, "max_steps must be at least 1"),
    ({"tile_size": 0}, "tile_size must be in"),
    ({"size": 2}, None),
])
def test_bad_options_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message or "size"):
        torchpool.make(ENV_ID, num_envs=1, **kwargs)


def test_the_side_by_side_bench_steps_minigrids_own_env_in_gymnasium():
    """`python -m torchpool bench MiniGrid-...` times minigrid's env in SyncVectorEnv too: the runner imports
    minigrid (which registers its ids) and keeps the image alone (its Text mission batches in no vector env)."""
    from torchpool._side_by_side import run_gymnasium

    result = run_gymnasium("MiniGrid-Empty-5x5-v0", num_envs=2, calls=5, warmup=1)
    assert result.system == "gymnasium-sync" and result.steps_per_s > 0
