"""OutputTargets: a sync pool's step written straight into tensors of your own.

``Pool.output_targets({key: tensor, ...})`` checks, once, one tensor per
output key, each ``[num_envs, *shape]`` of the key's dtype on the CPU with
every env's row contiguous and no two rows sharing memory (an ``expand()``ed
tensor is refused); rows may be strided, so a target can be column ``t`` of a
``[num_envs, T, ...]`` rollout tensor. ``send_into``/``step_into``
then have the C++ workers write env ``i``'s value of each key into row ``i``
of its tensor: a rollout buffer in its final layout fills with no copy.
``Pool.output_target_columns`` does the same for every column of
``[num_envs, T, *shape]`` tensors at once (a stream makes T per batch buffer).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping

import torch

Layout = list[tuple[str, torch.dtype, tuple[int, ...], int]]


class OutputTargets:
    """Checked destinations for one step of one pool (see the module docstring)."""

    __slots__ = ("pool", "tensors", "table", "address", "_bases")

    def __init__(self, pool: weakref.ref, tensors: dict[str, torch.Tensor], table: torch.Tensor):
        self.pool = pool  # a weak reference: a later pool may reuse a dead one's id()
        # Held so that the memory the workers write stays alive while a step is in flight.
        self.tensors = tensors
        self.table = table  # int64 [keys, 2]: (address, row stride in bytes) in layout order
        self.address = table.data_ptr()
        self._bases = tuple(tensor.data_ptr() for tensor in tensors.values())

    def moved(self) -> str | None:
        """The first key whose tensor's memory moved since these targets were made (NOTE [Moved storage])."""
        for (key, tensor), base in zip(self.tensors.items(), self._bases):
            if tensor.data_ptr() != base:
                return key
        return None

    @classmethod
    def for_step(cls, pool: weakref.ref, layout: Layout, num_envs: int,
                 tensors: Mapping[str, torch.Tensor]) -> OutputTargets:
        tensors = _in_layout_order(layout, tensors)
        entries = _checked(layout, tensors, (num_envs,))
        return cls(pool, tensors, torch.tensor([entry[:2] for entry in entries], dtype=torch.int64))

    @classmethod
    def for_columns(cls, pool: weakref.ref, layout: Layout, num_envs: int,
                    columns: Mapping[str, torch.Tensor]) -> list[OutputTargets]:
        """One OutputTargets per column t of ``[num_envs, T, *shape]`` tensors, all checked at once."""
        columns = _in_layout_order(layout, columns)
        first = next(iter(columns.values()))
        if first.__class__ is not torch.Tensor or first.dim() < 2:
            raise ValueError(f"output target columns are [num_envs, T, *shape] tensors; got {_describe(first)}")
        steps = first.shape[1]
        entries = torch.tensor(_checked(layout, columns, (num_envs, steps)), dtype=torch.int64)
        # Column t of a key starts t column strides after its column 0; the row stride is the same.
        offsets = torch.arange(steps, dtype=torch.int64).view(steps, 1) * entries[:, 2]
        tables = entries[:, :2].repeat(steps, 1, 1)
        tables[:, :, 0] += offsets
        return [cls(pool, columns, tables[t]) for t in range(steps)]


def _in_layout_order(layout: Layout, tensors: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    keys = [name for name, _, _, _ in layout]
    missing, unknown = [k for k in keys if k not in tensors], [k for k in tensors if k not in keys]
    if missing or unknown:
        raise ValueError(f"output targets need exactly the keys {keys}; missing {missing}, unknown {unknown}")
    return {name: tensors[name] for name in keys}


def _checked(layout: Layout, tensors: dict[str, torch.Tensor], lead: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """(address, row stride, column stride) in bytes per key; ``lead`` is (num_envs,) or (num_envs, T)."""
    entries = []
    for name, dtype, shape, _ in layout:
        tensor = tensors[name]
        expected = (*lead, *shape)
        if (tensor.__class__ is not torch.Tensor or tensor.dtype != dtype or not tensor.is_cpu
                or tuple(tensor.shape) != expected):
            raise ValueError(f"output target {name!r} must be a CPU {dtype} tensor of shape {expected}, "
                             f"got {_describe(tensor)}")
        strides = tensor.stride()
        if not _rows_contiguous(shape, strides[len(lead):]):
            raise ValueError(f"output target {name!r}: each env's row must be contiguous (strides {strides})")
        row_stride = strides[0] * dtype.itemsize
        column_stride = strides[1] * dtype.itemsize if len(lead) > 1 else 0
        _check_cells_apart(name, lead, (row_stride, column_stride)[:len(lead)], _record_bytes(shape, dtype))
        entries.append((tensor.data_ptr(), row_stride, column_stride))
    return entries


def _check_cells_apart(name: str, lead: tuple[int, ...], strides: tuple[int, ...], record_bytes: int) -> None:
    """Refuses a target where two cells (an env's row at a step) share memory: one would overwrite another.

    ``lead``: (num_envs,) or (num_envs, T); ``strides``: theirs in bytes. A stride of 0 (``expand()``) is
    named as such: every env, or every step, would write the same memory. An interleaving that no cells share
    but that the strides do not show apart (an ``as_strided`` puzzle, no rollout's layout) is refused too.
    """
    dims = [(stride, size, what) for size, stride, what in zip(lead, strides, ("env", "step")) if size > 1]
    for stride, _, what in dims:
        if stride == 0:
            raise ValueError(f"output target {name!r} has stride 0 along its {what} dimension (as expand() makes): "
                             f"every {what} would write the same memory; give it memory of its own (torch.empty, "
                             f"or .clone() the expanded tensor)")
    # Cells are apart when each stride, from the smallest up, steps past every cell the smaller ones reach.
    reach, inner = record_bytes, None
    for stride, size, what in sorted(dims):
        if stride < reach:
            within = f"{reach} bytes per row" if inner is None else f"the {reach} bytes its {inner}s span"
            raise ValueError(f"output target {name!r}: rows overlap ({what} stride {stride} bytes < {within})")
        reach, inner = stride * size, what


def _rows_contiguous(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether a row of this shape and these strides is one contiguous run (size-1 dims may stride anyhow)."""
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _record_bytes(shape: tuple[int, ...], dtype: torch.dtype) -> int:
    count = 1
    for size in shape:
        count *= size
    return count * dtype.itemsize


def _describe(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"{value.dtype} tensor of shape {tuple(value.shape)} on {value.device}"
    return type(value).__name__
