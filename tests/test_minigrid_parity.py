"""The MiniGrid family against the installed minigrid, episode for episode.

Env ``i`` of ``torchpool.make(id, seed=s)`` must lay out its grids as ``gymnasium.make(id).reset(seed=s + i)``
and the resets after it (no seed: the same np_random stream) do, and step as it does. Both get the same
random actions; every step's image, direction, mission, reward, terminated and truncated must agree (the
reward to float32, the pool's dtype), across autoresets. A run with a short ``max_steps`` sees many more
layouts. Every registered MiniGrid id is run; each must see at least one reset.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch

import torchpool
from torchpool.families.minigrid import mission_text

pytest.importorskip("minigrid")  # registers its ids with Gymnasium

IDS = sorted(e for e in torchpool.list_envs() if e.startswith("MiniGrid-"))
NUM_ENVS = 2
NUM_STEPS = 500  # per env: 1,000 steps an id


def _compare(env_id: str, seed: int, steps: int, **kwargs) -> int:
    """Runs pool and references side by side; returns how many episodes ended."""
    pool = torchpool.make(env_id, num_envs=NUM_ENVS, seed=seed, **kwargs)
    refs = [gymnasium.make(env_id, disable_env_checker=True, **kwargs).unwrapped for _ in range(NUM_ENVS)]
    try:
        td = pool.reset()
        ref_obs = [ref.reset(seed=seed + i)[0] for i, ref in enumerate(refs)]
        _check_obs(td["observation"], ref_obs, f"{env_id} reset")
        rng = np.random.default_rng(seed)
        num_actions = pool.action_spec.n if hasattr(pool.action_spec, "n") else refs[0].action_space.n
        ended = 0
        for step in range(steps):
            actions = rng.integers(0, num_actions, size=NUM_ENVS)
            td = pool.step(torch.from_numpy(actions))
            after = []
            for i, ref in enumerate(refs):
                obs, reward, terminated, truncated, _ = ref.step(int(actions[i]))
                where = f"{env_id} env {i} step {step} (action {int(actions[i])})"
                assert bool(td["terminated"][i]) == terminated, f"{where}: terminated"
                assert bool(td["truncated"][i]) == truncated, f"{where}: truncated"
                ours = float(td["reward"][i])
                assert ours == np.float32(reward), f"{where}: reward {ours} != {reward}"
                if terminated or truncated:
                    ended += 1
                    _check_obs(td["final_observation"][i:i + 1], [obs], where + " final")
                    obs, _ = ref.reset()
                after.append(obs)
            _check_obs(td["observation"], after, f"{env_id} step {step}")
        return ended
    finally:
        pool.close()
        for ref in refs:
            ref.close()


def _check_obs(ours, refs: list, where: str) -> None:
    for i, ref in enumerate(refs):
        image = ours["image"][i].numpy()
        if not np.array_equal(image, ref["image"]):
            diff = np.argwhere((image != ref["image"]).any(-1))
            raise AssertionError(f"{where}, env {i}: image differs at cells {diff.tolist()[:8]}\n"
                                 f"ours {image[..., 0].T}\nminigrid {ref['image'][..., 0].T}")
        assert int(ours["direction"][i]) == int(ref["direction"]), f"{where}, env {i}: direction"
        assert mission_text(ours["mission"][i]) == ref["mission"], f"{where}, env {i}: mission"


@pytest.mark.parametrize("env_id", IDS)
def test_episodes_are_minigrids(env_id):
    ended = _compare(env_id, seed=7, steps=NUM_STEPS)
    ended += _compare(env_id, seed=1000, steps=200, max_steps=15)
    assert ended >= NUM_ENVS, f"{env_id}: no episode ended in the run"
