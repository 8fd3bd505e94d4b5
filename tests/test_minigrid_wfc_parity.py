"""MiniGrid's Wave Function Collapse envs (csrc/envs/minigrid/tasks/wfc*.h) against the installed minigrid:
the first layouts of several seeds, whole grids, and episodes step for step (tests/minigrid_reference.py).

minigrid 3.2.0's wheel lacks the presets' pattern images: ``wfc_patterns`` points them at tests/data/minigrid_wfc.
minigrid's WFC resets take 0.2-3 s each, so the runs are short: 200 steps (episodes last 500), then 30 steps with
``max_steps=15`` (two episodes an env).
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from minigrid_reference import NUM_ENVS, compare, ids, wfc_patterns

import torchpool

pytest.importorskip("minigrid")  # registers its ids with Gymnasium

WFC_IDS = ids("MiniGrid-WFC-")
SEEDS = 6


@pytest.mark.parametrize("env_id", WFC_IDS)
def test_episodes_are_minigrids(env_id):
    with wfc_patterns():
        ended = compare(env_id, seed=7, steps=200) + compare(env_id, seed=1000, steps=30, max_steps=15)
    assert ended >= NUM_ENVS, f"{env_id}: no episode ended in the run"


@pytest.mark.parametrize("env_id", WFC_IDS)
def test_layouts_are_minigrids(env_id):
    """The whole grid (FullyObsWrapper's view) of the first layouts of seeds 0-5, start and goal included."""
    with wfc_patterns(), torchpool.make(env_id, num_envs=SEEDS, seed=0, observation="full") as pool:
        ref = gymnasium.make(env_id, disable_env_checker=True).unwrapped
        images = pool.reset()["observation"]["image"].numpy()
        for seed in range(SEEDS):
            ref.reset(seed=seed)
            full = ref.grid.encode()
            full[tuple(ref.agent_pos)] = (10, 0, ref.agent_dir)  # FullyObsWrapper's agent: red, its direction
            assert np.array_equal(images[seed], full), f"{env_id} seed {seed}:\nours {images[seed][..., 0].T}\n" \
                                                       f"minigrid {full[..., 0].T}"
        ref.close()
