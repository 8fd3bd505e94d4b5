"""The calls into the core (csrc/bindings.cpp over the C plug-in interface, csrc/core/plugin_abi.h): the ledger is
read only between calls, undo_recv() is a call like the others, and making a pool hears Ctrl-C while it builds the
envs (tests/cpp/odd_throws_test.cpp covers the C++ side: a substep's throw of any type, the build's stop)."""

import threading

import pytest
import torch
from threads import started_since, torchpool_threads

import torchpool
from torchpool.testing import inject_interrupts

BUSY = "another thread is inside Pool.step"


def _inside_a_step(pool: torchpool.Pool, action: torch.Tensor) -> tuple[threading.Thread, threading.Event]:
    """A thread stepping `pool` (each env sleeps up to 200 ms), and an event set once it has called step()."""
    entered = threading.Event()

    def step() -> None:
        entered.set()
        pool.step(action)

    thread = threading.Thread(target=step)
    thread.start()
    entered.wait()
    return thread, entered


def test_the_ledger_is_read_only_between_calls():
    # While another thread steps (its GIL released), the counters it is writing are refused by name, as a
    # second call would be; once it returns they read as usual.
    with torchpool.make("_Probe-v0", num_envs=2, num_threads=1, max_sleep_us=200_000, seed=1) as pool:
        pool.reset()
        action = torch.zeros(2, dtype=torch.int64)
        thread, _ = _inside_a_step(pool, action)
        refused = []
        while thread.is_alive():
            for name in ("rows_sent", "rows_received", "in_flight", "next_block"):
                try:
                    getattr(pool._core, name)
                except RuntimeError as error:
                    refused.append((name, str(error)))
            try:
                pool._core.undo_recv()
            except RuntimeError as error:
                refused.append(("undo_recv", str(error)))
        thread.join()
        assert refused, "no read overlapped the step: nothing was tested"
        for name, message in refused:
            assert f"Pool.{name}() was called while {BUSY}" in message, message
        assert {name for name, _ in refused} >= {"rows_sent", "undo_recv"}, refused
        assert pool._core.rows_sent == pool._core.rows_received == 2 and pool._core.in_flight == 0  # the step's
        assert pool._core.undo_recv() is False  # nothing to undo after a sync step


def test_ctrl_c_while_the_envs_are_built_stops_the_make_and_leaks_nothing():
    # 64 Atari games (each loads its ROM) on the plan's build threads: the caller polls for Ctrl-C meanwhile.
    if "Breakout-v5" not in torchpool.list_envs():
        pytest.skip("torchpool was built without the Atari family")
    before = torchpool_threads()
    with inject_interrupts(1), pytest.raises(KeyboardInterrupt):
        torchpool.make("Breakout-v5", num_envs=64)
    assert started_since(before, settle_to=0) == 0, "an interrupted make left worker threads behind"
    with torchpool.make("Breakout-v5", num_envs=2) as pool:  # and the next make is unaffected
        assert pool.reset()["observation"].shape == (2, 4, 84, 84)


def test_ctrl_c_while_one_thread_builds_is_heard_before_each_env():
    before = torchpool_threads()
    with inject_interrupts(1), pytest.raises(KeyboardInterrupt):
        torchpool.make("CartPole-v1", num_envs=4, num_threads=1)
    assert started_since(before, settle_to=0) == 0
