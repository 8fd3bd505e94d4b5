"""Array specs of a pool, convertible to Gymnasium spaces and torchrl specs.

``Pool.observation_spec`` and ``Pool.action_spec`` describe one env (no batch
dimension). An observation of named fields has a ``DictSpec`` (a Gymnasium
``Dict``, a torchrl ``Composite``). ``to_gymnasium()`` gives the single-env space; ``to_gym()`` the
same space as an instance of both legacy ``gym``'s and Gymnasium's classes
(NOTE [Spaces of both gym and Gymnasium]); ``to_torchrl(batch)`` gives a
torchrl spec with a leading batch shape.
"""

from __future__ import annotations

import collections
import functools
from dataclasses import dataclass
from typing import Any

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

        return self._space(gymnasium.spaces.Box)

    def to_gym(self):
        """A Box of both legacy ``gym`` and Gymnasium; ImportError without ``gym``."""
        return self._space(_spaces_of_both_libraries()["Box"])

    def _space(self, box_class: type):
        np_dtype = torch.empty((), dtype=self.dtype).numpy().dtype
        return box_class(
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
class DictSpec:
    """Named observation fields, in the family's order: ``td["observation", name]`` is field ``name``."""

    fields: dict[str, BoxSpec]

    def to_gymnasium(self):
        import gymnasium

        # An OrderedDict keeps the family's order (Gymnasium sorts a plain dict's keys).
        return gymnasium.spaces.Dict(collections.OrderedDict(
            (name, field.to_gymnasium()) for name, field in self.fields.items()))

    def to_gym(self):
        """A Dict of both legacy ``gym`` and Gymnasium, of ``to_gym()`` boxes; ImportError without ``gym``."""
        return _spaces_of_both_libraries()["Dict"](
            collections.OrderedDict((name, field.to_gym()) for name, field in self.fields.items()))

    def flattened(self) -> BoxSpec:
        """One float32 vector of every field's elements, in field order (rl_games' and EnvPool's flatten_obs)."""
        low = torch.cat([field.low.to(torch.float64).flatten() for field in self.fields.values()])
        high = torch.cat([field.high.to(torch.float64).flatten() for field in self.fields.values()])
        return BoxSpec((low.numel(),), torch.float32, low, high)

    @staticmethod
    def flatten(observation: Any) -> torch.Tensor:
        """``[n, total]`` float32 of a TensorDict of named fields ``[n, ...]``, as ``flattened()`` describes."""
        return torch.cat([value.reshape(value.shape[0], -1).to(torch.float32) for value in observation.values()], 1)

    def to_torchrl(self, batch_shape: tuple[int, ...] = ()):
        from torchrl.data import Composite

        return Composite({name: field.to_torchrl(batch_shape) for name, field in self.fields.items()},
                         shape=torch.Size(batch_shape))


@dataclass(frozen=True)
class DiscreteSpec:
    """An integer action in ``[0, n)``; int64 by convention."""

    n: int
    dtype: torch.dtype = torch.int64
    shape: tuple[int, ...] = ()

    def to_gymnasium(self):
        import gymnasium

        return gymnasium.spaces.Discrete(self.n)

    def to_gym(self):
        """A Discrete of both legacy ``gym`` and Gymnasium; ImportError without ``gym``."""
        return _spaces_of_both_libraries()["Discrete"](self.n)

    def to_torchrl(self, batch_shape: tuple[int, ...] = ()):
        from torchrl.data import Categorical

        return Categorical(n=self.n, shape=torch.Size(batch_shape), dtype=self.dtype)


# NOTE [Spaces of both gym and Gymnasium]
# Scripts written for EnvPool test its spaces against the legacy gym package
# (CleanRL: ``isinstance(envs.action_space, gym.spaces.Discrete)``; torchrl's
# EnvPool wrapper converts them under its "gym" backend), while rl_games and
# Gymnasium's wrappers put the same spaces into a ``gymnasium.spaces.Dict``,
# which refuses anything that is not a Gymnasium Space. One environment often
# has both packages, so ``to_gym()`` gives a space whose class inherits from
# both libraries' classes:
#
#   DualBox -> gymnasium.Box -> gymnasium.Space -> gym.Box -> gym.Space -> Generic
#
# Gymnasium's class comes first, so its constructor and methods are the ones
# that run (neither library's ``__init__`` calls past its own Space, so gym's
# never runs; it would set the same attributes: low, high, bounded_below/above,
# n, start, _shape, dtype, _np_random). gym's class only makes gym's
# ``isinstance`` checks and its singledispatch helpers (flatdim, flatten_space)
# hold. ``__eq__`` accepts the twin from either library, so the equality is
# the same from both sides. ``type(space).__name__`` is "Box" / "Discrete", as
# code that dispatches on the class name (rl_games) expects.


@functools.cache
def _spaces_of_both_libraries() -> dict[str, type]:
    import gym  # legacy gym; ImportError where it is missing
    import gymnasium

    class DualBox(gymnasium.spaces.Box, gym.spaces.Box):
        """A Box of both Gymnasium and legacy gym; see NOTE [Spaces of both gym and Gymnasium]."""

        __qualname__ = "DualBox"

        def __eq__(self, other: Any) -> bool:
            return bool(gymnasium.spaces.Box.__eq__(self, other) or gym.spaces.Box.__eq__(self, other))

    class DualDiscrete(gymnasium.spaces.Discrete, gym.spaces.Discrete):
        """A Discrete of both Gymnasium and legacy gym; see NOTE [Spaces of both gym and Gymnasium]."""

        __qualname__ = "DualDiscrete"

        def __init__(self, n: int, seed: Any = None, start: int = 0):
            super().__init__(n, seed=seed, start=start)
            # Python ints, as gym keeps them (Gymnasium 1.x keeps NumPy ints,
            # which code written for gym can refuse: rl_games passes n to
            # torch.nn.LSTM(input_size=...), which takes an int only).
            self.n, self.start = int(self.n), int(self.start)

        def __eq__(self, other: Any) -> bool:
            return bool(gymnasium.spaces.Discrete.__eq__(self, other) or gym.spaces.Discrete.__eq__(self, other))

    class DualDict(gymnasium.spaces.Dict):
        """A Dict of both Gymnasium and legacy gym (named observation fields, e.g. the Control Suite's):
        Gymnasium's flatten_space (rl_games' EnvPool wrapper under flatten_obs) and gym's both take it.
        Both libraries' Dicts derive from typing.Mapping in orders no class can merge, so gym's is a
        virtual base (registered below: its isinstance and singledispatch helpers see it)."""

        __qualname__ = "DualDict"

        def __eq__(self, other: Any) -> bool:
            return bool(gymnasium.spaces.Dict.__eq__(self, other) or gym.spaces.Dict.__eq__(self, other))

    gym.spaces.Dict.register(DualDict)

    # Named as the classes they stand for: rl_games dispatches on the name
    # (``type(action_space).__name__ == "Discrete"`` in a2c_common.py,
    # players.py, experience.py). __qualname__ keeps the Dual prefix, the
    # module attribute that pickle looks up (see __getattr__ below).
    DualBox.__name__, DualDiscrete.__name__, DualDict.__name__ = "Box", "Discrete", "Dict"
    return {"Box": DualBox, "Discrete": DualDiscrete, "Dict": DualDict}


def __getattr__(name: str) -> type:
    # DualBox / DualDiscrete / DualDict are made on first use (they import gym); pickle
    # finds them here by name.
    if name in ("DualBox", "DualDiscrete", "DualDict"):
        return _spaces_of_both_libraries()[name.removeprefix("Dual")]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _bounds(values: list[float], shape: tuple[int, ...], fill: float) -> torch.Tensor:
    if not values:
        return torch.full(shape, fill, dtype=torch.float64)
    if len(values) == 1:  # one bound for every element (e.g. 0..255 for Atari frames)
        return torch.full(shape, values[0], dtype=torch.float64)
    return torch.tensor(np.asarray(values, dtype=np.float64).reshape(shape))


def _field_spec(field: dict) -> BoxSpec:
    shape, dtype = tuple(field["shape"]), field["dtype"]
    low, high = _bounds(field["low"], shape, -np.inf), _bounds(field["high"], shape, np.inf)
    if not dtype.is_floating_point:  # integer bounds in the field's dtype (float64 cannot hold int64's range)
        info = (0, 1) if dtype == torch.bool else (torch.iinfo(dtype).min, torch.iinfo(dtype).max)
        low = torch.full(shape, info[0], dtype=dtype) if not field["low"] else low.to(dtype)
        high = torch.full(shape, info[1], dtype=dtype) if not field["high"] else high.to(dtype)
    return BoxSpec(shape, dtype, low, high)


def observation_spec(fields: list[dict]) -> BoxSpec | DictSpec:
    """The spec of the core's observation fields (``name``, ``shape``, torch ``dtype``, ``low``, ``high``)."""
    if len(fields) == 1 and not fields[0]["name"]:
        return _field_spec(fields[0])
    return DictSpec({field["name"]: _field_spec(field) for field in fields})


def action_spec(spec: dict) -> BoxSpec | DiscreteSpec:
    if spec["discrete"]:
        return DiscreteSpec(int(spec["n"]))
    shape = tuple(spec["shape"])
    return BoxSpec(shape, torch.float32, _bounds(spec["low"], shape, -np.inf), _bounds(spec["high"], shape, np.inf))
