"""HeldWatch: may the owner write into a TensorDict's memory again?

NOTE [Output ring reuse]
Tensors handed to the user are views of buffers that are written again later
(the pool's output ring, the stream's rollout buffers). Before a buffer is
written again its owner asks ``reusable()``. It is not when

* the user still references the TensorDict, one of its tensors, or any other
  tensor viewing the same storage (a slice, a ``.view()``): the user keeps the
  buffer, and the owner swaps a fresh one in;
* the buffer's memory has moved (NOTE [Moved storage]): the owner forgets it
  for good.

A loop that drops last step's outputs therefore never allocates, and a user
who keeps them never sees them overwritten.

Held-ness is read from reference counts whose baselines are taken by
``arm()``, once the owner has dropped its temporaries: the TensorDict's
Python refcount, each leaf tensor's Python refcount (a user holding
``td["observation"]`` holds our own tensor object, which no storage count can
see), the C++ use count of each watched storage (every view holds its
storage), and the Python refcount of each storage's Python object (torch
keeps one per storage while tensors use it and returns it from every
``untyped_storage()`` call; a user holding it adds nothing to the C++ count).
The baselines are measured, not assumed, so the check does not depend on how
a Python version counts a call's own references. What the C++ count means is
pinned by tests/test_storage_use_count.py.

NOTE [Moved storage]
The C++ workers write through raw addresses taken when a buffer was made.
``share_memory_()`` (called by a ``torch.multiprocessing`` queue, or by a
``DataLoader`` worker sending a batch), ``resize_()`` and ``set_()`` on the
storage replace the memory behind a storage without changing the objects the
watch counts, and free the old memory: a worker writing to the old address
corrupts the heap. So ``reusable()`` also compares each storage's address with
the one the buffer was made with. A moved buffer is never written
again, even after the user lets it go: shared memory may be mapped by another
process that still reads it.

NOTE [Free-threaded Python]
The scheme reads reference counts as a stable record of who holds what: the
GIL makes each count exact while ``held()`` reads it. Free-threaded CPython
(3.13t and later with the GIL off: ``sys._is_gil_enabled()`` is False)
splits a count between its owning thread and the others and merges them
lazily, so a reference held on another thread can be missed and a buffer
the user still reads overwritten. A watch refuses to be made there (a
free-threaded build with ``PYTHON_GIL=1`` runs with the GIL and is fine).
The semantics of the counts it reads are pinned by
tests/test_storage_use_count.py.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from tensordict import TensorDictBase

# The C++ use count of a storage: a private torch function. Without it no view
# can be seen, so every buffer counts as held and is never written again
# (safe; it only allocates more).
_storage_use_count = getattr(torch._C, "_storage_Use_Count", None)


def _refuse_free_threaded() -> None:
    """Raises where the GIL is off: NOTE [Free-threaded Python]."""
    gil_enabled = getattr(sys, "_is_gil_enabled", None)  # Python 3.13+; always on before
    if gil_enabled is not None and not gil_enabled():
        raise RuntimeError(
            "torchpool does not run on free-threaded Python with the GIL off (sys._is_gil_enabled() is False, "
            "a Py_GIL_DISABLED build): it reuses output buffers only when reference counts show nobody holds "
            "them, and without the GIL those counts can miss a holder, so buffers you still read could be "
            "overwritten. Use a standard CPython build, or run this one with PYTHON_GIL=1 (or -X gil=1).")


class HeldWatch:
    """Owns a TensorDict and tells whether its memory may be written again.

    The watch must be the TensorDict's only long-lived owner (others reach it
    through ``watch.tensordict``), and ``arm()`` must be called once the
    caller holds no other reference to it or its leaves.
    """

    __slots__ = ("tensordict", "_anchors", "_counted", "_storages", "_addresses", "_counts", "_storage_counts")

    def __init__(self, tensordict: TensorDictBase, anchors: Sequence[torch.Tensor] | None = None):
        """``anchors``: one tensor per storage to watch (e.g. the byte buffer all
        leaves view); default: every leaf (each with a storage of its own)."""
        _refuse_free_threaded()
        self.tensordict = tensordict
        leaves = tuple(tensordict.values(include_nested=True, leaves_only=True))
        self._anchors = leaves if anchors is None else tuple(anchors)
        # The storages' Python objects (see the NOTE) and their StorageImpl
        # addresses, read once: the anchors keep these storages alive, so the
        # addresses stay valid.
        storage_objects = tuple(anchor.untyped_storage() for anchor in self._anchors)
        self._storages = tuple(storage._cdata for storage in storage_objects)
        # Everything whose Python refcount tells a holder, in one tuple: one map() per check on the hot path.
        self._counted = (tensordict, *leaves, *storage_objects)
        self._addresses = self._memory()
        self._counts = None  # no baseline yet: held() is True (never reused) until arm()

    def arm(self) -> HeldWatch:
        """Takes the reference-count baselines: call once the caller's temporaries are gone."""
        self._counts = self._python_uses()
        # Without torch's use count no view can be seen: a baseline nothing equals keeps it held.
        self._storage_counts = self._storage_uses() if _storage_use_count is not None else object()
        return self

    def watch_also(self, views: Iterable[object]) -> HeldWatch:
        """Counts ``views`` too (objects made from the leaves after the watch: NumPy arrays of them) and
        takes the baselines again: call only when nobody but the owner holds anything of this memory, and
        pass a generator (a list the caller keeps would count as a holder in the baselines).

        A NumPy array of a leaf holds that tensor, so the leaf's count already sees the array; a user holding
        the array itself (or a NumPy view of it, which holds the array) is seen by the array's own count.
        """
        self._counted = (*self._counted, *views)
        return self.arm()

    def held(self) -> bool:
        """Whether anyone but the watch references the TensorDict, a leaf, a storage or a view of its memory.

        True before ``arm()``: with no baseline nothing can be ruled out.
        """
        return self._python_uses() != self._counts or self._storage_uses() != self._storage_counts

    def moved(self) -> bool:
        """Whether the memory behind a watched storage was replaced since the watch was made."""
        return self._memory() != self._addresses

    def reusable(self) -> bool:
        """Whether the owner may write into this memory again: not held and not moved."""
        return not self.held() and not self.moved()

    def _memory(self) -> tuple[int, ...]:
        # The address alone tells: share_memory_(), set_() and resize_() all
        # put the storage's bytes at a new address (resize_ copies on the CPU).
        return tuple(map(torch.Tensor.data_ptr, self._anchors))

    def _python_uses(self) -> tuple[int, ...]:
        # map() passes each object straight to getrefcount: no temporary (a zip
        # tuple, a loop variable) adds a reference, so the count is stable.
        return tuple(map(sys.getrefcount, self._counted))

    def _storage_uses(self) -> tuple[int, ...] | None:
        if _storage_use_count is None:
            return None
        return tuple(map(_storage_use_count, self._storages))
