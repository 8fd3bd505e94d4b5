"""What HeldWatch (torchpool/_held.py, NOTE [Output ring reuse]) assumes of torch's private storage use count.

``torch._C._storage_Use_Count(storage._cdata)`` is the C++ reference count of
a StorageImpl. HeldWatch takes it as a baseline once and calls a buffer
"held" while it differs, so it relies on exactly what these tests pin:
every other tensor viewing the storage (a slice, a dtype view, a detach, a
NumPy array) adds to the count while it lives; dropping it restores the
baseline; reading the count leaves it unchanged; a kept storage object
shows in the count or in its Python object's refcount (HeldWatch watches
both); and ``share_memory_()`` moves the bytes to a new address (NOTE [Moved
storage]). If a torch release changes any of
this, a test here fails, naming what changed.

Only torch is imported, so the file runs in any venv with torch and pytest,
torchpool built or not (``pytest tests/test_storage_use_count.py``).
"""

import gc
import sys

import pytest
import torch

use_count = getattr(torch._C, "_storage_Use_Count", None)
pytestmark = pytest.mark.skipif(
    use_count is None, reason=f"torch {torch.__version__} has no torch._C._storage_Use_Count "
                              "(HeldWatch then treats every buffer as held: tests/test_held.py checks that)")


def buffer_and_address() -> tuple[torch.Tensor, int]:
    """A byte buffer, as a pool's output block is, and its StorageImpl's address (what HeldWatch keeps)."""
    buffer = torch.zeros(64, dtype=torch.uint8)
    return buffer, buffer.untyped_storage()._cdata


def test_the_count_is_stable_while_nothing_changes():
    buffer, address = buffer_and_address()
    gc.collect()
    baseline = use_count(address)
    assert isinstance(baseline, int) and baseline >= 1, f"use count {baseline!r}: not a positive int"
    counts = [use_count(address) for _ in range(5)]
    assert counts == [baseline] * 5, f"repeated reads changed the count: {baseline} then {counts}"
    alias = buffer  # another Python name for our own tensor: the Python refcount's business, not this count's
    assert use_count(address) == baseline, f"a Python alias moved the storage count: {baseline} -> {use_count(address)}"
    del alias


@pytest.mark.parametrize("make_view", [
    pytest.param(lambda buffer: buffer[1:], id="slice"),
    pytest.param(lambda buffer: buffer[32:].view(torch.float32), id="dtype view"),
    pytest.param(lambda buffer: buffer.detach(), id="detach"),
    pytest.param(lambda buffer: buffer.as_strided((8,), (2,)), id="as_strided"),
    pytest.param(lambda buffer: buffer.reshape(8, 8), id="reshape"),
    pytest.param(lambda buffer: buffer.numpy(), id="numpy"),
])
def test_each_view_adds_one_while_it_lives(make_view):
    buffer, address = buffer_and_address()
    baseline = use_count(address)
    view = make_view(buffer)
    assert use_count(address) == baseline + 1, \
        f"a live view made the count {use_count(address)}, not baseline {baseline} + 1: held buffers would be missed"
    second = make_view(buffer)
    assert use_count(address) == baseline + 2, f"two views: {use_count(address)}, not {baseline} + 2"
    del view, second
    assert use_count(address) == baseline, \
        f"dropped views left the count at {use_count(address)}, not {baseline}: buffers would never be reused"


def test_a_kept_storage_object_shows_in_one_of_the_counts():
    # HeldWatch keeps the storage's Python object and watches its refcount as well as the C++ count:
    # torch 2.11-2.14 keep one Python object per storage, so a user's untyped_storage() adds nothing
    # to the C++ count, only to that object's refcount. Either must move, and come back when dropped.
    buffer, address = buffer_and_address()
    watched = buffer.untyped_storage()
    baseline, references = use_count(address), sys.getrefcount(watched)
    kept = buffer[8:].untyped_storage()
    assert use_count(address) > baseline or sys.getrefcount(watched) > references, (
        "a kept untyped_storage() moved neither the storage's use count nor its Python object's refcount: "
        "HeldWatch would overwrite memory the user still reads through it")
    del kept
    assert (use_count(address), sys.getrefcount(watched)) == (baseline, references), "a dropped storage object counts"


def test_a_view_of_a_view_is_seen_after_the_first_is_dropped():
    # The user slices a leaf, keeps only the slice: it still holds the storage.
    buffer, address = buffer_and_address()
    baseline = use_count(address)
    leaf = buffer[:32]
    kept = leaf[4:]
    del leaf
    assert use_count(address) == baseline + 1, f"a view of a dropped view: {use_count(address)}, not {baseline} + 1"
    del kept
    assert use_count(address) == baseline


def test_a_view_on_another_thread_is_counted():
    # Workers of a DataLoader or a user's thread may hold views: the count is the C++ atomic, not per thread.
    import threading

    buffer, address = buffer_and_address()
    baseline = use_count(address)
    views = []
    thread = threading.Thread(target=lambda: views.append(buffer[2:]))
    thread.start()
    thread.join()
    assert use_count(address) == baseline + 1, f"a view made on another thread: {use_count(address)}"
    views.clear()
    assert use_count(address) == baseline


def test_share_memory_moves_the_bytes():
    # NOTE [Moved storage]: HeldWatch tells a moved buffer by its data_ptr; the StorageImpl stays.
    buffer, address = buffer_and_address()
    before = buffer.data_ptr()
    buffer.share_memory_()
    assert buffer.data_ptr() != before, "share_memory_() kept the address: moved buffers would be written again"
    assert buffer.untyped_storage()._cdata == address, "share_memory_() replaced the StorageImpl HeldWatch counts"


def test_the_python_refcount_of_a_tensor_counts_each_reference():
    # HeldWatch's other half: a user holding our tensor object itself (td["observation"]) is seen by
    # sys.getrefcount only. Free-threaded builds defer and bias these counts (_held.py refuses them).
    tensor = torch.zeros(3)
    baseline = sys.getrefcount(tensor)
    kept = [tensor]
    assert sys.getrefcount(tensor) == baseline + 1, "a list holding the tensor is not counted"
    kept.clear()
    assert sys.getrefcount(tensor) == baseline
