"""BabyAI's levels (csrc/envs/minigrid/tasks/babyai_*.h) against the installed minigrid, episode for episode
(tests/minigrid_reference.py): layouts, missions, the verifier's rewards and endings.

minigrid's BabyAI resets are slow (rejection sampling in Python): each id runs 150 steps, then 150 with
``max_steps=15`` for many short episodes.
"""

from __future__ import annotations

import pytest
from minigrid_reference import NUM_ENVS, compare, ids

import torchpool

pytest.importorskip("minigrid")  # registers its ids with Gymnasium


@pytest.mark.parametrize("env_id", ids("BabyAI-"))
def test_episodes_are_minigrids(env_id):
    ended = compare(env_id, seed=7, steps=150) + compare(env_id, seed=1000, steps=150, max_steps=15)
    assert ended >= NUM_ENVS, f"{env_id}: no episode ended in the run"


def test_a_level_whose_limit_is_per_episode_truncates_as_minigrid():
    """LevelGen's sequences set max_steps per episode from the instruction (RoomGridLevel.reset): the env
    truncates itself, episode by episode, where minigrid does; the pool keeps no limit of its own."""
    env_id = "BabyAI-GoToSeqS5R2-v0"  # 100 steps a navigation: episodes of 100-400 steps under random actions
    with torchpool.make(env_id, num_envs=1) as pool:
        assert pool.max_episode_steps == 0
    ended = compare(env_id, seed=3, steps=900)
    assert ended >= 2 * NUM_ENVS, f"{env_id}: {ended} episodes ended in 900 steps"
