"""Array specs of a pool, convertible to Gymnasium spaces and torchrl specs.

``Pool.observation_spec`` and ``Pool.action_spec`` describe one env (no batch
dimension). ``to_gymnasium()`` gives the single-env space; ``to_torchrl(batch)``
gives a torchrl spec with a leading batch shape.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class BoxSpec:
    """A tensor of ``shape`` and ``dtype`` with elementwise bounds (±inf when unbounded)."""

    shape: tuple[int, ...]
    dtype: torch.dtype
    low: torch.Tensor
    high: torch.Tensor

    def to_gymnasium(self):
        import gymnasium

        np_dtype = torch.empty((), dtype=self.dtype).numpy().dtype
        return gymnasium.spaces.Box(
            low=self.low.numpy().astype(np_dtype), high=self.high.numpy().astype(np_dtype),
            shape=self.shape, dtype=np_dtype,
        )

    def to_torchrl(self, batch_shape: tuple[int, ...] = ()):
        from torchrl.data import Bounded, Unbounded

        shape = torch.Size((*batch_shape, *self.shape))
        if bool(torch.isinf(self.low).any() or torch.isinf(self.high).any()):
            return Unbounded(shape=shape, dtype=self.dtype)
        low = self.low.to(self.dtype).expand(shape).clone()
        high = self.high.to(self.dtype).expand(shape).clone()
        return Bounded(low=low, high=high, shape=shape, dtype=self.dtype)


@dataclass(frozen=True)
class DiscreteSpec:
    """An integer action in ``[0, n)``; int64 by convention."""

    n: int
    dtype: torch.dtype = torch.int64
    shape: tuple[int, ...] = ()

    def to_gymnasium(self):
        import gymnasium

        return gymnasium.spaces.Discrete(self.n)

    def to_torchrl(self, batch_shape: tuple[int, ...] = ()):
        from torchrl.data import Categorical

        return Categorical(n=self.n, shape=torch.Size(batch_shape), dtype=self.dtype)


def _bounds(values: list[float], shape: tuple[int, ...], fill: float) -> torch.Tensor:
    if not values:
        return torch.full(shape, fill, dtype=torch.float64)
    if len(values) == 1:  # one bound for every element (e.g. 0..255 for Atari frames)
        return torch.full(shape, values[0], dtype=torch.float64)
    return torch.tensor(np.asarray(values, dtype=np.float64).reshape(shape))


def observation_spec(spec: dict, dtype: torch.dtype) -> BoxSpec:
    shape = tuple(spec["shape"])
    return BoxSpec(shape, dtype, _bounds(spec["low"], shape, -np.inf), _bounds(spec["high"], shape, np.inf))


def action_spec(spec: dict) -> BoxSpec | DiscreteSpec:
    if spec["discrete"]:
        return DiscreteSpec(int(spec["n"]))
    shape = tuple(spec["shape"])
    return BoxSpec(shape, torch.float32, _bounds(spec["low"], shape, -np.inf), _bounds(spec["high"], shape, np.inf))
