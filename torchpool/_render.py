"""Screens for the families without a renderer of their own: Gymnasium's env draws the pool's state.

The classic-control and MuJoCo families keep their whole state in numbers
the core can read (``PoolCore.get_state``, the parity tests' state
injection). Their Gymnasium reference env, made with
``render_mode="rgb_array"`` and its default kwargs, is given an env's state
and draws it, so a frame is exactly what Gymnasium would have shown for that
state. Classic control draws with pygame (``pip install
"gymnasium[classic-control]"``), MuJoCo with an OpenGL backend (``MUJOCO_GL``);
without them Gymnasium's own error says what to install.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import registry


class ReferenceRenderer:
    """Renders a state of env id ``env_id`` with one Gymnasium env, made on first use."""

    def __init__(self, reference_id: str):
        self.reference_id = reference_id
        self._env: Any = None

    def __call__(self, state: list[float]) -> np.ndarray:
        if self._env is None:
            import gymnasium

            self._env = gymnasium.make(self.reference_id, render_mode="rgb_array", disable_env_checker=True)
            self._env.reset(seed=0)
        env = self._env.unwrapped
        if hasattr(env, "set_state") and hasattr(env, "model"):  # MuJoCo: qpos, then qvel
            nq = env.model.nq
            env.set_state(np.asarray(state[:nq]), np.asarray(state[nq:]))
        else:
            env.state = np.asarray(state, dtype=np.float64)
            if hasattr(env, "last_u"):  # Pendulum draws the last torque as an arrow: none for an injected state
                env.last_u = None
        return np.asarray(self._env.render())

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None


def reference_renderer(env_id: str, family_has_state: bool) -> ReferenceRenderer | None:
    """A renderer for ``env_id``'s family, if its state is readable and Gymnasium has its reference env."""
    if not family_has_state:
        return None
    try:
        entry = registry.lookup(env_id)
    except (KeyError, ValueError):
        return None
    return ReferenceRenderer(entry.reference) if entry.reference else None
