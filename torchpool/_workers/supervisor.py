"""The thread that restarts worker processes that die.

It sleeps in ``poll()`` on the workers' pidfds (and a pipe that wakes it to
stop). When a worker exits while the pool is open, it reads the exit status
without reaping, records it in the shared region and bumps the worker's
generation (the envs waiting on that worker raise at once,
csrc/envs/process/process_env.h), then reaps the process and starts a
replacement with the same envs' constructors, which serves the dead worker's
envs from their next reset on. A replacement that dies while starting, or
cannot be started at all, is tried again after a growing pause, so an env
whose constructor crashes does not make this thread spin. Any other error is
not expected here: it is said, tried again a few times, then raised
(NOTE [Supervisor errors]).
"""

from __future__ import annotations

import os
import select
import signal
import threading
import time
import traceback
import warnings
import weakref
from typing import Protocol

from . import launch

# Pauses before the n-th consecutive restart of one worker: none for the
# first, then doubling from 0.1 s up to 5 s.
_FIRST_PAUSE_S = 0.1
_LONGEST_PAUSE_S = 5.0

# NOTE [Supervisor errors]: what a dying worker may do is handled where it
# happens (a replacement that cannot start, or dies starting, is tried again
# after a pause: _replace). An exception that reaches _run is no such thing:
# a race with close() (then the thread is stopping, and ends without a word)
# or a fault of this code's or the pool's. Said at once as a RuntimeWarning,
# it is tried again after growing pauses (a passing shortage clears); if the
# passes keep failing, the thread gives up loudly (the error is kept in
# `error` and raised from the thread, which threading.excepthook prints)
# instead of trying in silence for good. Nothing hangs for it: an env whose
# worker has died finds it dead itself (process_env.h, check_worker_alive)
# and raises; only no replacement starts.
_MOST_FAILED_PASSES = 8  # consecutive: 0.1 + 0.2 + ... + 5 s, some 11 s of trying


# How often the thread looks for requests past the step timeout: this
# fraction of the timeout, and at least once a second.
_TIMEOUT_CHECKS_PER_TIMEOUT = 4
_LONGEST_CHECK_S = 1.0
# The exit status recorded for a worker killed for a request past the step
# timeout, plus the env's id (kStoppedForTimeout, shared_region.h).
STOPPED_FOR_TIMEOUT = 1 << 30


class Restarts(Protocol):
    """What the supervisor asks of its pool (torchpool/_workers/process_pool.py)."""

    def _mark_dead(self, index: int, status: int) -> None: ...
    def _start_worker(self, index: int) -> launch.Worker: ...
    def _connect_worker(self, worker: launch.Worker) -> bool: ...
    def _unanswered(self) -> list[tuple[int, int]]: ...


def exit_status(worker: launch.Worker) -> int:
    """The dead worker's status as ``Popen.returncode`` gives it, read without reaping it."""
    try:
        info = os.waitid(os.P_PIDFD, worker.pidfd, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:  # reaped already
        return worker.process.wait()
    if info is None:
        return worker.process.wait()
    return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status


def _close_pipe(read_fd: int, write_fd: int) -> None:
    os.close(read_fd)
    os.close(write_fd)


class Supervisor:
    def __init__(self, workers: list[launch.Worker], pool: Restarts, step_timeout: float | None = None):
        self.workers = workers  # the pool's own list: a replacement takes its predecessor's place in it
        # Weak: the thread must not keep the pool alive (garbage collection closes a pool, and so stops this).
        self._pool = weakref.ref(pool)
        self._wake_read, self._wake_write = os.pipe2(os.O_CLOEXEC)
        # The pipe outlives stop(): closed with this object, once the thread (which holds it) has ended.
        weakref.finalize(self, _close_pipe, self._wake_read, self._wake_write)
        self._stopping = False
        # Held while a replacement is started and entered in `workers`, and by
        # stop(): once stop() returns no process is started, and every one
        # started is in `workers`, for the pool's close() to end.
        self._lock = threading.Lock()
        self._failures = [0] * len(workers)  # consecutive failed restarts, per worker
        self._due: dict[int, float] = {}  # worker index -> when its replacement may start (monotonic)
        self.restarts = 0
        # NOTE [Step timeout] (shared_region.h): per env with a request unanswered, (request, serving pid,
        # first seen); per worker killed for a timeout, the env that ran past it.
        self._step_timeout = step_timeout
        self._unanswered_since: dict[int, tuple[int, int, float]] = {}
        self._timed_out: dict[int, int] = {}
        self.timeouts = 0
        self.error: BaseException | None = None  # what made the thread give up (NOTE [Supervisor errors])
        self._thread = threading.Thread(target=self._run, name="torchpool-supervisor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Starts no worker from now on and wakes the thread to end."""
        with self._lock:
            self._stopping = True
        os.write(self._wake_write, b"x")

    def join(self, timeout: float = 5.0) -> None:
        """Waits for the thread (a replacement's handshake ends once the pool has ended that process)."""
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def _run(self) -> None:
        failed_passes = 0  # consecutive passes that raised (NOTE [Supervisor errors])
        while not self._stopping:
            pool = None  # never held across the wait
            poller = select.poll()  # not select(): pidfds may be numbered past 1024
            poller.register(self._wake_read, select.POLLIN)
            watched = {}
            for worker in self.workers:
                if worker.pidfd >= 0 and worker.index not in self._due:
                    watched[worker.pidfd] = worker
                    poller.register(worker.pidfd, select.POLLIN)
            timeout_ms = None
            if self._due:
                timeout_ms = max(0.0, min(self._due.values()) - time.monotonic()) * 1000
            if self._step_timeout is not None:
                check_ms = min(self._step_timeout / _TIMEOUT_CHECKS_PER_TIMEOUT, _LONGEST_CHECK_S) * 1000
                timeout_ms = check_ms if timeout_ms is None else min(timeout_ms, check_ms)
            events = poller.poll(timeout_ms)
            if self._stopping:
                return
            pool = self._pool()
            if pool is None:  # the pool is gone; its close() stops this thread
                return
            try:
                for fd, _ in events:
                    if fd in watched:
                        self._bury(pool, watched[fd])
                for index, due in sorted(self._due.items()):
                    if time.monotonic() >= due:
                        self._replace(pool, index)
                if self._step_timeout is not None:
                    self._stop_overdue(pool)
            except Exception as error:  # NOTE [Supervisor errors]
                pool = None
                if self._stopping:
                    return  # close() ran meanwhile: what failed raced it
                traceback.clear_frames(error.__traceback__)  # kept, it must not keep the pool alive
                failed_passes += 1
                if failed_passes == _MOST_FAILED_PASSES:
                    self.error = error
                    raise RuntimeError(f"torchpool's worker supervisor gave up after {failed_passes} failed passes "
                                       f"in a row ({type(error).__name__}: {error}): a worker process that dies "
                                       "from now on is not restarted, its envs keep raising; close the pool") \
                        from error
                if failed_passes == 1:
                    warnings.warn(f"torchpool's worker supervisor failed ({type(error).__name__}: {error}); "
                                  "trying again", RuntimeWarning, stacklevel=1)
                time.sleep(min(_FIRST_PAUSE_S * 2 ** (failed_passes - 1), _LONGEST_PAUSE_S))
            else:
                failed_passes = 0

    def _stop_overdue(self, pool: Restarts) -> None:
        """Kills the worker of each env whose request has gone unanswered for the step timeout.

        The clock of a request starts when this thread first sees it, and
        again when another process serves its env (a replacement answers the
        requests its dead predecessor left).
        """
        now = time.monotonic()
        pids = {worker.index: worker.pid for worker in self.workers}
        unanswered = {}
        for env, request in pool._unanswered():
            index = self._worker_of(env)
            seen = self._unanswered_since.get(env)
            if seen is None or seen[:2] != (request, pids[index]):
                seen = (request, pids[index], now)
            unanswered[env] = seen
            if (now - seen[2] >= self._step_timeout and index not in self._due
                    and index not in self._timed_out):
                self._timed_out[index] = env
                pool._mark_dead(index, STOPPED_FOR_TIMEOUT + env)  # before the kill: the waiting envs read it
                worker = self.workers[index]
                try:
                    signal.pidfd_send_signal(worker.pidfd, signal.SIGKILL)
                except OSError:  # gone already: its pidfd reports it
                    pass
                self.timeouts += 1
        self._unanswered_since = unanswered

    def _worker_of(self, env: int) -> int:
        for worker in self.workers:
            if worker.first_env <= env < worker.first_env + worker.env_count:
                return worker.index
        raise ValueError(f"env {env} belongs to no worker")

    def _bury(self, pool: Restarts, dead: launch.Worker) -> None:
        stuck = self._timed_out.pop(dead.index, None)
        pool._mark_dead(dead.index, exit_status(dead) if stuck is None else STOPPED_FOR_TIMEOUT + stuck)
        dead.close(timeout=0)
        failures = self._failures[dead.index]
        pause = 0.0 if failures == 0 else min(_FIRST_PAUSE_S * 2 ** (failures - 1), _LONGEST_PAUSE_S)
        self._due[dead.index] = time.monotonic() + pause

    def _replace(self, pool: Restarts, index: int) -> None:
        with self._lock:
            if self._stopping:
                return
            del self._due[index]
            try:
                worker = pool._start_worker(index)
            except Exception:  # no process (out of pids or fds, say): try again later
                self._failures[index] += 1
                self._due[index] = time.monotonic() + min(_FIRST_PAUSE_S * 2 ** self._failures[index],
                                                          _LONGEST_PAUSE_S)
                return
            self.workers[index] = worker
        if pool._connect_worker(worker):
            self._failures[index] = 0
            self.restarts += 1
        else:  # it died while starting: its pidfd wakes this thread, and the next try waits a little
            self._failures[index] += 1
