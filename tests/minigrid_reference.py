"""Runs torchpool's MiniGrid family beside the installed minigrid, step for step (tests/test_minigrid_parity.py,
test_minigrid_wfc_parity.py, test_babyai_parity.py).

``compare(env_id, seed, steps, **kwargs)``: env ``i`` of ``torchpool.make(id, seed=s)`` beside
``gymnasium.make(id).reset(seed=s + i)``, the same random actions to both; every step's image, direction,
mission, reward (to float32, the pool's dtype), terminated and truncated must agree, across autoresets (the
reference resets without a seed: the same np_random stream). Returns how many episodes ended.

``wfc_patterns``: minigrid 3.2.0's wheel lacks the pattern images of its WFC presets; this points them at
tests/data/minigrid_wfc (their copies from minigrid's repository) while a test runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch

import torchpool
from torchpool.families.minigrid import mission_text

NUM_ENVS = 2
WFC_PATTERNS = Path(__file__).resolve().parent / "data" / "minigrid_wfc"


def ids(prefix: str) -> list[str]:
    return sorted(e for e in torchpool.list_envs() if e.startswith(prefix))


@contextlib.contextmanager
def wfc_patterns() -> Iterator[None]:
    """minigrid's WFC presets read their pattern images from tests/data/minigrid_wfc (the wheel has none)."""
    pytest.importorskip("networkx")  # minigrid[wfc]'s own dependencies
    pytest.importorskip("imageio")
    from minigrid.envs.wfc.config import WFC_PRESETS

    with pytest.MonkeyPatch.context() as patch:
        for config in WFC_PRESETS.values():
            patch.setattr(config, "pattern_path", WFC_PATTERNS / Path(config.pattern_path).name)
        yield


def compare(env_id: str, seed: int, steps: int, **kwargs) -> int:
    """Runs pool and references side by side; returns how many episodes ended."""
    pool = torchpool.make(env_id, num_envs=NUM_ENVS, seed=seed, **kwargs)
    refs = [gymnasium.make(env_id, disable_env_checker=True, **kwargs).unwrapped for _ in range(NUM_ENVS)]
    try:
        td = pool.reset()
        ref_obs = [ref.reset(seed=seed + i)[0] for i, ref in enumerate(refs)]
        check_obs(td["observation"], ref_obs, f"{env_id} reset")
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
                    check_obs(td["final_observation"][i:i + 1], [obs], where + " final")
                    obs, _ = ref.reset()
                after.append(obs)
            check_obs(td["observation"], after, f"{env_id} step {step}")
        return ended
    finally:
        pool.close()
        for ref in refs:
            ref.close()


def check_obs(ours, refs: list, where: str) -> None:
    for i, ref in enumerate(refs):
        image = ours["image"][i].numpy()
        if not np.array_equal(image, ref["image"]):
            diff = np.argwhere((image != ref["image"]).any(-1))
            raise AssertionError(f"{where}, env {i}: image differs at cells {diff.tolist()[:8]}\n"
                                 f"ours {image[..., 0].T}\nminigrid {ref['image'][..., 0].T}")
        assert int(ours["direction"][i]) == int(ref["direction"]), f"{where}, env {i}: direction"
        assert mission_text(ours["mission"][i]) == ref["mission"], f"{where}, env {i}: mission"
