"""Gymnasium's MuJoCo envs as the parity tests' references, Pusher-v4 included.

``gymnasium/envs/mujoco/pusher_v4.py`` refuses to construct under mujoco >= 3 (Gymnasium issue #950: the
object in its ``pusher.xml`` is lighter than air there, so the task plays differently than under mujoco 2).
torchpool's Pusher-v4 runs that same file on the same libmujoco as the reference, so the two are compared
with the version check shown a mujoco 2 version string while the reference is built; nothing else changes.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import mujoco
import pytest


def make_reference(env_id: str, **kwargs: Any) -> gymnasium.Env:
    """``gymnasium.make(env_id, **kwargs)``; Pusher-v4 past its mujoco < 3 check (see the module's docstring)."""
    if env_id != "Pusher-v4":
        return gymnasium.make(env_id, **kwargs)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mujoco, "__version__", "2.3.7")
        return gymnasium.make(env_id, **kwargs)
