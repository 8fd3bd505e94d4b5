"""The MiniGrid family against the installed minigrid, episode for episode (tests/minigrid_reference.py).

Env ``i`` of ``torchpool.make(id, seed=s)`` must lay out its grids as ``gymnasium.make(id).reset(seed=s + i)``
and the resets after it (no seed: the same np_random stream) do, and step as it does. Every registered
MiniGrid id but the WFC ones (tests/test_minigrid_wfc_parity.py) runs 1,000 random-action steps, then 400
more with ``max_steps=15`` for many more layouts; each must see episodes end.
"""

from __future__ import annotations

import pytest
from minigrid_reference import NUM_ENVS, compare, ids

pytest.importorskip("minigrid")  # registers its ids with Gymnasium

IDS = [e for e in ids("MiniGrid-") if not e.startswith("MiniGrid-WFC-")]


@pytest.mark.parametrize("env_id", IDS)
def test_episodes_are_minigrids(env_id):
    ended = compare(env_id, seed=7, steps=500)
    ended += compare(env_id, seed=1000, steps=200, max_steps=15)
    assert ended >= NUM_ENVS, f"{env_id}: no episode ended in the run"
