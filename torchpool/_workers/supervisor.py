"""The thread that restarts worker processes that die.

It sleeps in ``select()`` on the workers' pidfds (and a pipe that wakes it to
stop). When a worker exits while the pool is open, it records the exit
status in the shared region and bumps the worker's generation (the envs
waiting on that worker raise at once, csrc/envs/process/process_env.h),
reaps it, and starts a replacement with the same envs' constructors. The
replacement serves the dead worker's envs from their next reset on.
"""

from __future__ import annotations

import os
import select
import threading
import weakref
from collections.abc import Callable

from . import launch


class Supervisor:
    def __init__(self, workers: list[launch.Worker], restart: Callable[[launch.Worker], launch.Worker],
                 mark_dead: Callable[[int, int], None]):
        self.workers = workers
        # Weak: the thread must not keep the pool alive (garbage collection closes a pool, and so stops this).
        self._restart = weakref.WeakMethod(restart)
        self._mark_dead = weakref.WeakMethod(mark_dead)
        self._wake_read, self._wake_write = os.pipe()
        self._stopping = False
        self._lock = threading.Lock()  # held while workers are replaced, so stop() waits for a restart in progress
        self.restarts = 0
        self._thread = threading.Thread(target=self._run, name="torchpool-supervisor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping = True
        os.write(self._wake_write, b"x")
        if threading.current_thread() is not self._thread:
            self._thread.join()
        os.close(self._wake_read)
        os.close(self._wake_write)

    def _run(self) -> None:
        while not self._stopping:
            by_fd = {worker.pidfd: worker for worker in self.workers}
            try:
                readable, _, _ = select.select([self._wake_read, *by_fd], [], [])
            except OSError:  # a pidfd closed under us: the pool is closing
                return
            with self._lock:
                if self._stopping:
                    return
                for fd in readable:
                    worker = by_fd.get(fd)
                    if worker is not None:
                        self._replace(worker)

    def _replace(self, dead: launch.Worker) -> None:
        restart, mark_dead = self._restart(), self._mark_dead()
        if restart is None or mark_dead is None:  # the pool is gone; its close() stops this thread
            return
        dead.process.wait()
        mark_dead(dead.index, dead.process.returncode)
        dead.sock.close()
        os.close(dead.pidfd)
        self.workers[dead.index] = restart(dead)
        self.restarts += 1
