"""Gymnasium spaces as the core's columns, and back.

A process pool's envs are Python envs: their observation space becomes the
core's observation fields (one unnamed field for a ``Box``, ``Discrete``,
``MultiDiscrete`` or ``MultiBinary``; named fields for ``Dict`` and ``Tuple``
spaces, nested ones included, ``td["observation", "position/x"]``), their action space the
core's action (a ``Discrete`` index, or a box of numbers the worker casts back
to the space's dtype and structure), and the numeric entries of their first
``info`` extras. Each spec keeps the original space, so ``.to_gymnasium()``
returns it unchanged.

NOTE [Python objects]. What no fixed-size column can hold travels as a pickle
in a slot of the region's object area (``worker.ObjectSlots``): the parts of an
observation that cannot batch (``Text``, ``Sequence``, ``Graph``, ``OneOf``, a
custom ``Space``: their "object leaves"), an action of such a space, an
``info`` whose keys or values the extras columns do not hold as they are (a
key missing or added, a dict, a string), and in SAME_STEP pools every
reset's ``info`` (the extras keep the step's) and an episode's last answer
(its info, and its observation as ``final_obs``, as the env returned it). A
step with none of these (most steps of most envs) writes no pickle. The
Gymnasium adapter reads them back (``ProcessPool.objects``), so its
observations and infos are what Gymnasium's own vector envs return.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..pool import DTYPE_CODES
from ..specs import BoxSpec, DictSpec, DiscreteSpec

# NumPy dtypes the core stores as they are; the others are widened (an int8
# Box arrives as int32), their space kept for to_gymnasium().
_STORED = {np.dtype(name): name for name in ("bool", "uint8", "int32", "int64", "float32", "float64")}
_WIDENED = {np.dtype("int8"): "int32", np.dtype("int16"): "int32", np.dtype("uint16"): "int32",
            np.dtype("uint32"): "int64", np.dtype("float16"): "float32"}
_CODES = dict(DTYPE_CODES)


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
    """One observation field: its name ("" for the only one), where it is in an observation, how it is stored
    (``dtype``) and the dtype of its space (``space_dtype``: the Gymnasium adapter hands that back).

    ``path`` is None for the placeholder of an observation with no field that batches (all object leaves)."""

    name: str
    path: tuple | None
    dtype: np.dtype
    shape: tuple[int, ...]
    low: np.ndarray
    high: np.ndarray
    space_dtype: np.dtype | None = None

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
                     f"(it takes {', '.join(sorted(set(_STORED.values()) | {dtype.name for dtype in _WIDENED}))})")


_BATCHED = ("Box", "Discrete", "MultiDiscrete", "MultiBinary")


def _leaf(space: Any, name: str, path: tuple, what: str) -> Column:
    from gymnasium import spaces

    dtype = np.dtype(space.dtype) if space.dtype is not None else None
    if isinstance(space, spaces.Box):
        return Column(name, path, _stored_dtype(dtype, what), tuple(space.shape), space.low, space.high, dtype)
    if isinstance(space, spaces.Discrete):
        return Column(name, path, _stored_dtype(dtype, what), (), np.array(space.start),
                      np.array(space.start + space.n - 1), dtype)
    if isinstance(space, spaces.MultiDiscrete):
        return Column(name, path, _stored_dtype(dtype, what), tuple(space.shape), space.start,
                      space.start + space.nvec - 1, dtype)
    if isinstance(space, spaces.MultiBinary):  # 0 and 1: bytes whatever the dtype (int8 by default)
        return Column(name, path, np.dtype("uint8"), tuple(space.shape), np.zeros(space.shape),
                      np.ones(space.shape), dtype)
    raise ValueError(f"{what} is a {type(space).__name__} space, which torchpool cannot batch "
                     f"(it batches {', '.join(_BATCHED)}, and Dict and Tuple spaces of them)")


def batches(space: Any) -> bool:
    """Whether ``space`` is a leaf that a column holds (else its values are Python objects, NOTE [Python objects])."""
    from gymnasium import spaces

    return isinstance(space, (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary))


def _walk(space: Any, path: tuple = ()):
    """``(path, leaf)`` of every leaf of ``space`` (Dict and Tuple spaces are walked into), in order."""
    from gymnasium import spaces

    if isinstance(space, spaces.Dict):
        for key, subspace in space.spaces.items():
            yield from _walk(subspace, (*path, key))
    elif isinstance(space, spaces.Tuple):
        for index, subspace in enumerate(space.spaces):
            yield from _walk(subspace, (*path, index))
    else:
        yield path, space


def object_paths(space: Any) -> list[tuple]:
    """The paths of the leaves of an observation space that cannot batch (NOTE [Python objects]), in order."""
    return [path for path, leaf in _walk(space) if not batches(leaf)]


def observation_columns(space: Any) -> list[Column]:
    """The core's observation fields of ``space``, in its order: one per leaf that batches, named by its
    path (``"position/x"``); an observation with none has one placeholder field (``path`` None)."""
    leaves = list(_walk(space))
    if leaves == [((), space)] and batches(space):
        return [_leaf(space, "", (), "the observation space")]
    columns = [_leaf(leaf, "/".join(map(str, path)), path, f"observation space entry {'/'.join(map(str, path))!r}")
               for path, leaf in leaves if batches(leaf)]
    if not columns:
        return [Column("", None, np.dtype("uint8"), (), np.array(0), np.array(0))]
    if len(columns) == 1:  # the core's one field is unnamed, wherever it is in the observation
        return [dataclasses.replace(columns[0], name="")]
    return columns


def check_observation_spaces(observation_spaces: Sequence[Any], mode: str) -> None:
    """Every env's observation space against env 0's: equal (``mode`` ``"same"``), or (``"different"``,
    Gymnasium's ``observation_mode``) made of the same leaves with the same shapes and dtypes, so one
    layout of columns holds them all. TypeError for other leaves, ValueError for other shapes or dtypes."""
    first = observation_spaces[0]
    for env, space in enumerate(observation_spaces[1:], 1):
        if space == first:
            continue
        if mode == "same":
            raise ValueError(f"env {env} has another observation space than env 0 ({space} vs {first}): every env "
                             "of a pool must have the same spaces (observation_mode='different' takes spaces "
                             "whose bounds differ)")
        kinds = [[(path, type(leaf)) for path, leaf in _walk(each)] for each in (first, space)]
        if kinds[0] != kinds[1]:
            raise TypeError(f"env {env}'s observation space {space} is not made of the spaces env 0's is ({first}): "
                            "the envs of a pool must batch together")
        layouts = [[(path, getattr(leaf, "shape", None), getattr(leaf, "dtype", None)) for path, leaf in _walk(each)]
                   for each in (first, space)]
        if layouts[0] != layouts[1]:
            raise ValueError(f"env {env}'s observation space {space} has other shapes or dtypes than env 0's "
                             f"({first}): the envs of a pool must batch together")


def observation_spec(space: Any, columns: list[Column]) -> BoxSpec | DictSpec:
    if len(columns) == 1 and columns[0].name == "":
        return columns[0].box_spec(space)
    return SpaceDictSpec({column.name: column.box_spec() for column in columns}, space=space)


def batch_observations(space: Any, columns: list[Column], arrays: Any, objects: list | None) -> Any:
    """The batch Gymnasium's vector envs return for ``space``, from the pool's arrays and object leaves.

    ``arrays``: the pool's observation (an array [N, ...], or a dict of them by column name);
    ``objects``: per env, the values of its object leaves (``object_paths`` order). A leaf that batches
    is its array in the space's own dtype (a view when the bytes are the same); an object leaf is a
    tuple of the envs' values, as ``gymnasium.vector.utils.concatenate`` makes it.
    """
    return observation_batcher(space, columns)(arrays, objects)


def observation_batcher(space: Any, columns: list[Column]):
    """``batch(arrays, objects)``: :func:`batch_observations` for ``space``, its walk done once."""
    from gymnasium import spaces

    by_path = {column.path: column for column in columns}
    object_index = {path: index for index, path in enumerate(object_paths(space))}
    if len(columns) == 1 and columns[0].path == () and columns[0].space_dtype in (None, columns[0].dtype):
        return lambda arrays, objects: arrays  # one leaf stored in its own dtype: the pool's array itself

    def batcher(subspace: Any, path: tuple):
        if isinstance(subspace, spaces.Dict):
            items = [(key, batcher(value, (*path, key))) for key, value in subspace.spaces.items()]
            return lambda arrays, objects: {key: batch(arrays, objects) for key, batch in items}
        if isinstance(subspace, spaces.Tuple):
            items = [batcher(value, (*path, index)) for index, value in enumerate(subspace.spaces)]
            return lambda arrays, objects: tuple(batch(arrays, objects) for batch in items)
        column = by_path.get(path)
        if column is None:
            index = object_index[path]
            return lambda arrays, objects: tuple(values[index] for values in objects)
        if column.name == "":
            return lambda arrays, objects: _as_space_dtype(arrays, column)
        name = column.name
        return lambda arrays, objects: _as_space_dtype(arrays[name], column)

    return batcher(space, ())


def row(space: Any, batch: Any, index: int) -> Any:
    """Env ``index``'s observation in a batch of ``batch_observations``."""
    from gymnasium import spaces

    if isinstance(space, spaces.Dict):
        return {key: row(value, batch[key], index) for key, value in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(row(value, batch[i], index) for i, value in enumerate(space.spaces))
    return batch[index]


def _as_space_dtype(array: np.ndarray, column: Column) -> np.ndarray:
    wanted = column.space_dtype
    if wanted is None or array.dtype == wanted:
        return array
    if wanted.itemsize == array.dtype.itemsize and wanted.kind in "iu" and array.dtype.kind in "iu":
        return array.view(wanted)  # MultiBinary's 0 and 1 as int8: the same bytes
    return array.astype(wanted)


@dataclass(frozen=True)
class ActionPlan:
    core: tuple          # (discrete, n, shape, low, high) for _process.register_region
    worker: tuple        # (kind, numpy dtype name, shape) for the worker's converter, worker.action_reader()
    spec: Any            # the pool's action_spec
    dtypes: frozenset    # the torch dtypes a send() takes
    size: int            # numbers per env in the region
    leaves: tuple = ()   # "flat" actions: (path, numbers) of each leaf, in the region's order


_INTEGERS = frozenset({torch.int64, torch.int32, torch.uint8})
_FLOATS = frozenset({torch.float32, torch.float64})


def action_plan(space: Any) -> ActionPlan:
    """How actions of ``space`` travel: the kind the worker reads back (worker.action_reader()).

    ``"discrete"``: a ``Discrete`` from 0, the core's index. ``"box"``: a ``Box``, ``MultiDiscrete`` or
    ``MultiBinary``, its numbers. ``"flat"``: a ``Dict`` or ``Tuple`` of those (nested too) or a
    ``Discrete`` with another start: the numbers of every leaf in a row, rebuilt into the space's
    structure and dtypes (``flatten_actions`` makes the row). ``"object"``: a space with a leaf that cannot
    batch (``Text``, ``Graph``, ...): each env's action is pickled into its object slot (NOTE [Python objects]);
    the core carries a dummy index.
    """
    from gymnasium import spaces

    if isinstance(space, spaces.Discrete) and int(space.start) == 0:
        n = int(space.n)
        return ActionPlan((True, n, [], [], []), ("discrete", np.dtype(space.dtype).name, ()),
                          SpaceDiscreteSpec(n, space=space), _INTEGERS, 1)
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        column = _leaf(space, "", (), "the action space")
        dtype = np.dtype(space.dtype)
        dtypes = _FLOATS | (_INTEGERS if dtype.kind in "iub" else set())
        shape = tuple(space.shape)
        size = int(np.prod(shape, dtype=np.int64))
        spec = column.box_spec(space)
        return ActionPlan((False, 0, list(shape), _flat(np.broadcast_to(column.low, shape)),
                           _flat(np.broadcast_to(column.high, shape))),
                          ("box", dtype.name, shape), spec, frozenset(dtypes), size)
    leaves = list(_walk(space))
    if all(batches(leaf) for _, leaf in leaves):
        return _flat_action_plan(space, leaves)
    return ActionPlan((True, 1, [], [], []), ("object", "", ()), SpaceDiscreteSpec(1, space=space), _INTEGERS, 1)


def _flat_action_plan(space: Any, leaves: list) -> ActionPlan:
    lows, highs, rows, integral = [], [], [], True
    for path, leaf in leaves:
        column = _leaf(leaf, "", path, "the action space")
        shape = tuple(leaf.shape)
        numbers = int(np.prod(shape, dtype=np.int64))
        lows += _flat(np.broadcast_to(column.low, shape))
        highs += _flat(np.broadcast_to(column.high, shape))
        rows.append((path, numbers))
        integral = integral and np.dtype(leaf.dtype).kind in "iub"
    size = len(lows)
    dtype = torch.int64 if integral else torch.float64
    spec = SpaceBoxSpec((size,), dtype, torch.tensor(lows).to(dtype), torch.tensor(highs).to(dtype), space=space)
    return ActionPlan((False, 0, [size], lows, highs), ("flat", _structure(space, 0)[0], (size,)), spec,
                      _FLOATS | (_INTEGERS if integral else frozenset()), size, tuple(rows))


def _structure(space: Any, offset: int) -> tuple[tuple, int]:
    """The worker's recipe for a "flat" action (worker.action_reader()), and the offset after it:
    ``("dict", ((key, recipe), ...))``, ``("tuple", (recipe, ...))``, or ``("leaf", offset, numbers, dtype,
    shape, scalar)`` where ``scalar`` says the value is a NumPy scalar (a ``Discrete``'s), not an array."""
    from gymnasium import spaces

    if isinstance(space, spaces.Dict):
        items = []
        for key, subspace in space.spaces.items():
            recipe, offset = _structure(subspace, offset)
            items.append((key, recipe))
        return ("dict", tuple(items)), offset
    if isinstance(space, spaces.Tuple):
        items = []
        for subspace in space.spaces:
            recipe, offset = _structure(subspace, offset)
            items.append(recipe)
        return ("tuple", tuple(items)), offset
    shape = tuple(space.shape)
    numbers = int(np.prod(shape, dtype=np.int64))
    return ("leaf", offset, numbers, np.dtype(space.dtype).name, shape,
            isinstance(space, spaces.Discrete)), offset + numbers


def flatten_actions(plan: ActionPlan, space: Any, actions: Any, num_envs: int) -> np.ndarray:
    """A batch of "flat" actions (a dict or tuple of arrays ``[N, ...]``, as ``batch_space(space)`` samples
    them) as the region's rows: float64 ``[N, plan.size]``."""
    rows = np.empty((num_envs, plan.size), dtype=np.float64)
    offset = 0
    for path, numbers in plan.leaves:
        value = actions
        for key in path:
            value = value[key]
        value = np.asarray(value)
        if value.shape[:1] != (num_envs,):
            raise ValueError(f"the action at {'/'.join(map(str, path))} has shape {value.shape}; expected "
                             f"{num_envs} rows, one per env")
        rows[:, offset:offset + numbers] = value.reshape(num_envs, numbers)
        offset += numbers
    return rows


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

