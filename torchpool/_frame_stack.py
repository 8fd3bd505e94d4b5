"""EnvPool's ``frame_stack``: each env's last ``depth`` observations, oldest first, for the EnvPool drop-in.

    stack = FrameStack(depth=4, num_envs=8)
    stacked = stack(observation, env_id, first)   # [B, *shape] -> [B, 4, *shape]; a dict: each field so

A row whose episode starts (``first``: a reset, or next-step autoreset's reset row) fills its env's whole
stack with that observation, as EnvPool does; any other row pushes it. Stacks are kept per env in NumPy
(``[num_envs, depth, *shape]`` per field) and rows come out as copies, so a held batch never changes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .specs import BoxSpec, DictSpec


def stacked_spec(spec: BoxSpec | DictSpec, depth: int) -> BoxSpec | DictSpec:
    """``spec`` with a leading ``depth`` axis (each field's, for a dict); ``depth == 1`` leaves it as it is."""
    if depth == 1:
        return spec
    if isinstance(spec, DictSpec):
        return DictSpec({name: stacked_spec(field, depth) for name, field in spec.fields.items()})

    def stack(bound: torch.Tensor) -> torch.Tensor:
        return bound.expand(spec.shape).unsqueeze(0).expand((depth, *spec.shape)).clone()

    return BoxSpec((depth, *spec.shape), spec.dtype, stack(spec.low), stack(spec.high))


class FrameStack:
    def __init__(self, depth: int, num_envs: int):
        self.depth = depth
        self._num_envs = num_envs
        self._stacks: dict[str | None, np.ndarray] = {}

    def __call__(self, observation: Any, env_id: np.ndarray, first: np.ndarray) -> Any:
        if isinstance(observation, dict):
            return {name: self._push(name, field, env_id, first) for name, field in observation.items()}
        return self._push(None, observation, env_id, first)

    def _push(self, name: str | None, rows: np.ndarray, env_id: np.ndarray, first: np.ndarray) -> np.ndarray:
        stack = self._stacks.get(name)
        if stack is None:
            stack = self._stacks[name] = np.zeros((self._num_envs, self.depth, *rows.shape[1:]), rows.dtype)
        stack[env_id, :-1] = stack[env_id, 1:]
        stack[env_id, -1] = rows
        starts = env_id[first]
        stack[starts] = rows[first][:, None]
        return stack[env_id]
