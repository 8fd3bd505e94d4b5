"""Gymnasium spaces as the core's columns, and back.

A process pool's envs are Python envs: their observation space becomes the
core's observation fields (one unnamed field for a ``Box``, ``Discrete``,
``MultiDiscrete`` or ``MultiBinary``; named fields for a ``Dict`` or ``Tuple``,
``td["observation", name]``), their action space the core's action (a
``Discrete`` index, or a box of numbers the worker casts back to the space's
dtype), and the numeric entries of their first ``info`` extras. Each spec
keeps the original space, so ``.to_gymnasium()`` returns it unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .. import _core
from ..specs import BoxSpec, DictSpec, DiscreteSpec

# NumPy dtypes the core stores as they are; the others are widened (an int8
# Box arrives as int32), their space kept for to_gymnasium().
_STORED = {np.dtype(name): name for name in ("bool", "uint8", "int32", "int64", "float32", "float64")}
_WIDENED = {np.dtype("int8"): "int32", np.dtype("int16"): "int32", np.dtype("uint16"): "int32",
            np.dtype("uint32"): "int64", np.dtype("float16"): "float32"}
_CODES = dict(_core.DTYPE_CODES)


class _KeepsSpace:
    """A spec of a Python env's space: ``to_gymnasium()`` is that space, unchanged."""

    def to_gymnasium(self):
        return self.space


@dataclass(frozen=True)
class SpaceBoxSpec(_KeepsSpace, BoxSpec):
    space: Any = None


@dataclass(frozen=True)
class SpaceDictSpec(_KeepsSpace, DictSpec):  # a Dict or Tuple space
    space: Any = None


@dataclass(frozen=True)
class SpaceDiscreteSpec(_KeepsSpace, DiscreteSpec):
    space: Any = None


@dataclass(frozen=True)
class Column:
    """One observation field: its name ("" for the only one), where it is in an observation, how it is stored."""

    name: str
    path: tuple
    dtype: np.dtype
    shape: tuple[int, ...]
    low: np.ndarray
    high: np.ndarray

    @property
    def row_bytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def core_field(self) -> tuple:
        return (self.name, _CODES[self.dtype.name], list(self.shape), _flat(self.low), _flat(self.high))

    def box_spec(self, space: Any = None) -> BoxSpec:
        dtype = getattr(torch, self.dtype.name)
        low = torch.as_tensor(np.broadcast_to(self.low, self.shape).copy())
        high = torch.as_tensor(np.broadcast_to(self.high, self.shape).copy())
        if dtype.is_floating_point:
            low, high = low.to(torch.float64), high.to(torch.float64)
        else:
            low, high = low.to(dtype), high.to(dtype)
        return SpaceBoxSpec(self.shape, dtype, low, high, space=space)


def _flat(values: np.ndarray) -> list[float]:
    return [float(v) for v in np.asarray(values, dtype=np.float64).reshape(-1)]


def _stored_dtype(dtype: np.dtype, what: str) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype in _STORED:
        return dtype
    if dtype in _WIDENED:
        return np.dtype(_WIDENED[dtype])
    raise ValueError(f"{what} has dtype {dtype}, which torchpool cannot store "
                     f"(it takes {', '.join(sorted(set(_STORED.values()) | set(_WIDENED)))})")


def _leaf(space: Any, name: str, path: tuple, what: str) -> Column:
    from gymnasium import spaces

    if isinstance(space, spaces.Box):
        return Column(name, path, _stored_dtype(space.dtype, what), tuple(space.shape), space.low, space.high)
    if isinstance(space, spaces.Discrete):
        return Column(name, path, np.dtype("int64"), (), np.array(space.start), np.array(space.start + space.n - 1))
    if isinstance(space, spaces.MultiDiscrete):
        return Column(name, path, np.dtype("int64"), tuple(space.shape), space.start, space.start + space.nvec - 1)
    if isinstance(space, spaces.MultiBinary):
        return Column(name, path, np.dtype("uint8"), tuple(space.shape), np.zeros(space.shape), np.ones(space.shape))
    raise ValueError(f"{what} is a {type(space).__name__} space, which torchpool cannot serve "
                     "(it takes Box, Discrete, MultiDiscrete, MultiBinary, and a Dict or Tuple of them)")


def observation_columns(space: Any) -> list[Column]:
    """The core's observation fields of ``space``, in its order."""
    from gymnasium import spaces

    if isinstance(space, (spaces.Dict, spaces.Tuple)):
        items = space.spaces.items() if isinstance(space, spaces.Dict) else enumerate(space.spaces)
        columns = []
        for key, subspace in items:
            if isinstance(subspace, (spaces.Dict, spaces.Tuple)):
                raise ValueError(f"observation space entry {key!r} is a nested {type(subspace).__name__}, which "
                                 "torchpool cannot serve (one level of Dict or Tuple)")
            columns.append(_leaf(subspace, str(key), (key,), f"observation space entry {key!r}"))
        if not columns:
            raise ValueError(f"the observation space {space} is empty")
        return columns
    return [_leaf(space, "", (), "the observation space")]


def observation_spec(space: Any, columns: list[Column]) -> BoxSpec | DictSpec:
    if len(columns) == 1 and columns[0].name == "":
        return columns[0].box_spec(space)
    return SpaceDictSpec({column.name: column.box_spec() for column in columns}, space=space)


@dataclass(frozen=True)
class ActionPlan:
    core: tuple          # (discrete, n, shape, low, high) for _process.register_region
    worker: tuple        # ("discrete"|"box", numpy dtype name, shape) for the worker's converter
    spec: Any            # the pool's action_spec
    dtypes: frozenset    # the torch dtypes a send() takes
    size: int            # numbers per env in the region


def action_plan(space: Any) -> ActionPlan:
    from gymnasium import spaces

    if isinstance(space, spaces.Discrete):
        if int(space.start) != 0:
            raise ValueError(f"the action space {space} starts at {int(space.start)}; torchpool serves Discrete "
                             "actions that start at 0 (wrap the env to shift them)")
        n = int(space.n)
        return ActionPlan((True, n, [], [], []), ("discrete", "int64", ()), SpaceDiscreteSpec(n, space=space),
                          frozenset({torch.int64, torch.int32, torch.uint8}), 1)
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        column = _leaf(space, "", (), "the action space")
        integral = not np.issubdtype(np.dtype(space.dtype), np.floating)
        dtypes = {torch.float32, torch.float64} | ({torch.int64, torch.int32, torch.uint8} if integral else set())
        shape = tuple(space.shape)
        size = int(np.prod(shape, dtype=np.int64))
        spec = column.box_spec(space)
        return ActionPlan((False, 0, list(shape), _flat(np.broadcast_to(column.low, shape)),
                           _flat(np.broadcast_to(column.high, shape))),
                          ("box", np.dtype(space.dtype).name, shape), spec, frozenset(dtypes), size)
    raise ValueError(f"the action space {space} is a {type(space).__name__}, which torchpool cannot serve "
                     "(it takes Discrete, Box, MultiDiscrete and MultiBinary actions)")


def info_extras(info: dict | None, reserved: set[str]) -> tuple[list[tuple[str, np.dtype, tuple]], list[str]]:
    """The extras of a first ``info`` — ``(key, dtype, shape)`` of each numeric entry — and the keys dropped."""
    extras, dropped = [], []
    for key, value in (info or {}).items():
        array = None if value is None or isinstance(value, (dict, str, bytes)) else np.asarray(value)
        usable = (array is not None and array.dtype.kind in "biuf" and isinstance(key, str) and "." not in key
                  and key not in reserved and array.size <= 4096)
        if not usable:
            dropped.append(str(key))
            continue
        if array.dtype in _STORED:
            dtype = array.dtype
        else:
            dtype = np.dtype(_WIDENED.get(array.dtype, "float64" if array.dtype.kind == "f" else "int64"))
        extras.append((key, dtype, tuple(array.shape)))
    return extras, dropped

