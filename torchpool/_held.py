"""HeldWatch: is anyone but its owner still holding a TensorDict or its memory?

NOTE [Output ring reuse]
Tensors handed to the user are views of buffers that are written again later
(the pool's output ring, the stream's rollout buffers). Before a buffer is
written again its owner asks ``held()``: if the user still references the
TensorDict, one of its tensors, or any other tensor viewing the same storage
(a slice, a ``.view()``), the owner swaps a fresh buffer in and leaves the old
one to the user. A loop that drops last step's outputs therefore never
allocates, and a user who keeps them never sees them overwritten.

Held-ness is read from reference counts whose baseline is taken when the
buffer is made: the TensorDict's Python refcount, each leaf tensor's Python
refcount (a user holding ``td["observation"]`` holds our own tensor object,
which no storage count can see), and the C++ use count of each watched
storage (every view holds its storage).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from tensordict import TensorDictBase

_storage_use_count = torch._C._storage_Use_Count


class HeldWatch:
    """Owns a TensorDict and tells whether anyone else holds it or its memory.

    The watch must be the TensorDict's only long-lived owner (others reach it
    through ``watch.tensordict``), so its refcount baseline is known.
    """

    __slots__ = ("tensordict", "_leaves", "_leaf_baselines", "_anchors", "_storages", "_storage_baselines")

    def __init__(self, tensordict: TensorDictBase, anchors: Sequence[torch.Tensor] | None = None):
        """``anchors``: one tensor per storage to watch (e.g. the byte buffer all
        leaves view); default: every leaf (each with a storage of its own)."""
        self.tensordict = tensordict
        self._leaves = tuple(tensordict.values(include_nested=True, leaves_only=True))
        self._anchors = self._leaves if anchors is None else tuple(anchors)
        # The StorageImpl addresses, read once: untyped_storage() builds a
        # Python object per call (~1 us per held() on a cold cache), and the
        # anchors keep these storages alive, so the addresses stay valid.
        self._storages = tuple(anchor.untyped_storage()._cdata for anchor in self._anchors)
        # Baselines are read here, once the caller's temporaries are gone.
        self._leaf_baselines = self._leaf_uses()
        self._storage_baselines = self._storage_uses()

    def held(self) -> bool:
        # 2 = the watch's own reference + getrefcount's argument.
        return (sys.getrefcount(self.tensordict) > 2
                or self._storage_uses() != self._storage_baselines
                or self._leaf_uses() != self._leaf_baselines)

    def _leaf_uses(self) -> tuple[int, ...]:
        # map() passes each tensor straight to getrefcount: no temporary (a zip
        # tuple, a loop variable) adds a reference, so the count is stable.
        return tuple(map(sys.getrefcount, self._leaves))

    def _storage_uses(self) -> tuple[int, ...]:
        return tuple(map(_storage_use_count, self._storages))
