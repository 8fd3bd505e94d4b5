"""The thread that restarts worker processes that die.

It sleeps in ``poll()`` on the workers' pidfds (and a pipe that wakes it to
stop). When a worker exits while the pool is open, it reads the exit status
without reaping, records it in the shared region and bumps the worker's
generation (the envs waiting on that worker raise at once,
csrc/envs/process/process_env.h), then reaps the process and starts a
replacement with the same envs' constructors, which serves the dead worker's
envs from their next reset on. A replacement that dies while starting, or
cannot be started at all, is tried again after a growing pause, so an env
whose constructor crashes does not make this thread spin.
"""

from __future__ import annotations

import os
import select
import threading
import time
import weakref
from typing import Protocol

from . import launch

# Pauses before the n-th consecutive restart of one worker: none for the
# first, then doubling from 0.1 s up to 5 s.
_FIRST_PAUSE_S = 0.1
_LONGEST_PAUSE_S = 5.0


class Restarts(Protocol):
    """What the supervisor asks of its pool (torchpool/_workers/process_pool.py)."""

    def _mark_dead(self, index: int, status: int) -> None: ...
    def _start_worker(self, index: int) -> launch.Worker: ...
    def _connect_worker(self, worker: launch.Worker) -> bool: ...


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
    def __init__(self, workers: list[launch.Worker], pool: Restarts):
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
            except Exception:  # never let this thread die: a worker left dead would fail its envs for good
                time.sleep(_FIRST_PAUSE_S)

    def _bury(self, pool: Restarts, dead: launch.Worker) -> None:
        pool._mark_dead(dead.index, exit_status(dead))
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
