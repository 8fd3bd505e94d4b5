"""The supervisor thread (torchpool/_workers/supervisor.py): an error it does not expect is said, then raised.

Its pool here is a stand-in with no workers whose ``_unanswered`` (asked each
pass when there is a step timeout) raises as told: the thread's own steps,
with nothing to spawn.
"""

import threading
import warnings

import pytest

from torchpool._workers import supervisor


class Pool:
    """What the supervisor asks of a pool (supervisor.Restarts); ``_unanswered`` raises ``failures`` times."""

    def __init__(self, failures: float):
        self.failures = failures
        self.calls = 0

    def _unanswered(self):
        self.calls += 1
        if self.calls <= self.failures:
            raise RuntimeError(f"the pool's books are unreadable (pass {self.calls})")
        return []

    def _mark_dead(self, index, status):
        raise AssertionError("no worker died")

    def _start_worker(self, index):
        raise AssertionError("no worker died")

    def _connect_worker(self, worker):
        raise AssertionError("no worker died")


@pytest.fixture
def quick_pauses(monkeypatch):
    monkeypatch.setattr(supervisor, "_FIRST_PAUSE_S", 0.001)
    monkeypatch.setattr(supervisor, "_LONGEST_PAUSE_S", 0.01)


@pytest.fixture
def thread_errors(monkeypatch):
    """The exceptions raised out of threads, as threading.excepthook is given them."""
    raised = []
    monkeypatch.setattr(threading, "excepthook", raised.append)
    return raised


def wait_for(condition, seconds: float = 10.0) -> bool:
    event = threading.Event()
    for _ in range(int(seconds / 0.01)):
        if condition():
            return True
        event.wait(0.01)
    return condition()


def test_an_error_on_every_pass_is_raised_from_the_thread_not_retried_for_good(quick_pauses, thread_errors):
    pool = Pool(failures=float("inf"))
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        watcher = supervisor.Supervisor([], pool, step_timeout=0.01)
        try:
            watcher.join(timeout=10)
            assert not watcher._thread.is_alive(), (f"the supervisor still retries after {pool.calls} failed passes "
                                                    "instead of giving up")
        finally:
            watcher.stop()
    assert pool.calls == supervisor._MOST_FAILED_PASSES, "it gives up after a bounded number of passes"
    assert isinstance(watcher.error, RuntimeError) and "unreadable (pass 8)" in str(watcher.error)
    assert len(thread_errors) == 1, "the thread's end is raised to threading.excepthook, once"
    raised = thread_errors[0].exc_value
    assert "worker supervisor gave up after 8 failed passes" in str(raised), str(raised)
    assert "is not restarted" in str(raised) and raised.__cause__ is watcher.error
    said = [str(warning.message) for warning in warned if warning.category is RuntimeWarning]
    assert said == ["torchpool's worker supervisor failed (RuntimeError: the pool's books are unreadable (pass 1)); "
                    "trying again"], said


def test_a_passing_error_is_said_and_the_thread_goes_on(quick_pauses, thread_errors):
    pool = Pool(failures=2)
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        watcher = supervisor.Supervisor([], pool, step_timeout=0.01)
        try:
            assert wait_for(lambda: pool.calls > 10), f"the supervisor stopped asking after {pool.calls} passes"
            assert watcher._thread.is_alive() and watcher.error is None
        finally:
            watcher.stop()
            watcher.join()
    said = [str(warning.message) for warning in warned if warning.category is RuntimeWarning]
    assert len(said) == 1 and "books are unreadable (pass 1)" in said[0], f"the error was not said once: {said}"
    assert thread_errors == []


def test_an_error_racing_close_ends_the_thread_without_a_word(quick_pauses, thread_errors):
    class Closing(Pool):
        def _unanswered(self):
            self.calls += 1
            watcher.stop()  # close() ran while this pass read the pool
            raise RuntimeError("the pool's books are unmapped")

    pool = Closing(failures=0)
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        watcher = supervisor.Supervisor([], pool, step_timeout=0.01)
        watcher.join(timeout=10)
    assert not watcher._thread.is_alive()
    assert pool.calls == 1 and watcher.error is None and thread_errors == []
    assert not [warning for warning in warned if warning.category is RuntimeWarning]
