"""HeldWatch (torchpool/_held.py): when may the owner of a TensorDict write into its memory again?"""

import sys

import pytest
import torch
from tensordict import TensorDict

from torchpool import _held
from torchpool._held import HeldWatch


def watched() -> HeldWatch:
    buffer = torch.zeros(64, dtype=torch.uint8)
    watch = HeldWatch(TensorDict({"a": buffer[:32], "b": buffer[32:].view(torch.float32)}, batch_size=[]),
                      anchors=[buffer])
    del buffer
    return watch.arm()


def test_a_watch_nobody_else_references_is_reusable():
    watch = watched()
    assert not watch.held() and not watch.moved() and watch.reusable()


@pytest.mark.parametrize("hold", ["tensordict", "leaf", "view of the storage", "storage object"])
def test_any_reference_the_user_keeps_makes_it_held(hold):
    watch = watched()
    kept = {"tensordict": lambda td: td, "leaf": lambda td: td["a"], "view of the storage": lambda td: td["b"][1:],
            "storage object": lambda td: td["a"].untyped_storage()}
    reference = kept[hold](watch.tensordict)
    assert watch.held(), f"a kept {hold} is not seen"
    del reference
    assert not watch.held(), f"the {hold}, dropped, still counts"


def test_arrays_watched_also_are_held_while_the_user_keeps_them_or_a_view():
    watch = watched()
    arrays = {key: leaf.numpy() for key, leaf in watch.tensordict.items()}
    watch.watch_also(array for array in arrays.values())
    assert not watch.held(), "the owner's own arrays count as held"
    kept = arrays["a"]
    assert watch.held(), "a kept array is not seen"
    del kept
    kept = arrays["b"][1:]
    assert watch.held(), "a NumPy view of an array is not seen"
    del kept
    assert not watch.held(), "the arrays, dropped, still count"


def test_memory_moved_by_share_memory_is_never_reusable_again():
    watch = watched()
    watch.tensordict.share_memory_()
    assert watch.moved() and not watch.held() and not watch.reusable()


def test_a_watch_never_armed_counts_as_held():
    watch = HeldWatch(TensorDict({"a": torch.zeros(3)}, batch_size=[]))
    assert watch.held() and not watch.reusable(), "without baselines nothing rules out a holder"


def test_without_torchs_storage_use_count_every_buffer_counts_as_held(monkeypatch):
    monkeypatch.setattr(_held, "_storage_use_count", None)
    watch = watched()
    assert watch.held() and not watch.reusable(), "without the use count a view could be missed: must be held"


def test_torch_still_has_the_private_storage_use_count():
    assert _held._storage_use_count is not None, "torch._C._storage_Use_Count is gone: buffers are never reused"


def test_free_threaded_python_is_refused_by_name(monkeypatch):
    # NOTE [Free-threaded Python]: without the GIL the reference counts cannot show every holder.
    monkeypatch.setattr(sys, "_is_gil_enabled", lambda: False, raising=False)
    with pytest.raises(RuntimeError, match=r"free-threaded Python .*sys\._is_gil_enabled\(\) is False.*PYTHON_GIL=1"):
        HeldWatch(TensorDict({"a": torch.zeros(3)}, batch_size=[]))
    monkeypatch.setattr(sys, "_is_gil_enabled", lambda: True)
    assert HeldWatch(TensorDict({"a": torch.zeros(3)}, batch_size=[])).arm().reusable(), \
        "a free-threaded build running with the GIL (PYTHON_GIL=1) must be accepted"


def test_a_pool_on_free_threaded_python_raises_and_the_process_goes_on(monkeypatch):
    import torchpool

    monkeypatch.setattr(sys, "_is_gil_enabled", lambda: False, raising=False)
    with pytest.raises(RuntimeError, match="free-threaded"):
        torchpool.make("CartPole-v1", num_envs=2)
    monkeypatch.undo()
    with torchpool.make("CartPole-v1", num_envs=2) as pool:
        assert pool.reset()["observation"].shape == (2, 4)

