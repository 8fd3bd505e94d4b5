"""Starting a worker process and the handshake on its control socket.

A worker is a fresh interpreter (``subprocess``, the equivalent of the spawn
start method: never a fork of the threaded parent) running
``torchpool/_workers/worker.py``. The parent sends its ``sys.path`` (and, to
worker 0, the seed of a probe reset), then the pickled constructors of the
worker's envs, reads back what the worker built (or its traceback), then
passes the shared region's memfd and layout.
"""

from __future__ import annotations

import os
import pickle
import socket
import struct
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import Any

from . import worker as _protocol

_WORKER_SCRIPT = _protocol.__file__
# A process group of its own: a Ctrl-C at the terminal reaches only the
# parent, even before the worker has set SIGINT aside (README, Guarantees).
# Not a session of its own: with the kernel's autogroups each session is
# scheduled as a group, and sched_yield() no longer hands the core between
# parent and workers (NOTE [Yielding spins]), which costs a cheap env's pool
# much of its speed (benchmarks/python_envs.py shows it).
_OWN_GROUP = {"process_group": 0} if sys.version_info >= (3, 11) else {}


# A worker steps one env at a time: thread pools of the numeric libraries an
# env may load (NumPy's BLAS, torch if an env imports it) would only compete
# with the other workers for the cores. A value the user set is kept.
_ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}


def _worker_environment() -> dict:
    return {**_ONE_THREAD, **os.environ}


@dataclass
class Worker:
    """One worker process as the parent sees it."""

    index: int
    first_env: int
    env_count: int
    process: subprocess.Popen
    sock: socket.socket
    pidfd: int

    @property
    def pid(self) -> int:
        return self.process.pid

    def close(self, timeout: float = 2.0) -> None:
        """Waits for the process to exit (it was told to), kills it after ``timeout``, frees its handles.

        Idempotent: the supervisor closes a dead worker, and the pool may close it again.
        """
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.sock.close()
        pidfd, self.pidfd = self.pidfd, -1
        if pidfd >= 0:
            os.close(pidfd)


def start(index: int, first_env: int, env_fns_payload: bytes, process_module: str,
          probe_seed: int | None = None) -> Worker:
    """Starts worker ``index`` and sends it its envs; returns at once (the worker builds them meanwhile).

    With ``probe_seed`` the worker also resets its first env with it once, to report its ``info``.
    """
    parent_sock, child_sock = socket.socketpair()
    # NOTE [Workers die with their parent] (worker.py): SIGKILL when this thread ends, only where it lives as
    # long as the pool.
    lasting_thread = threading.current_thread() is threading.main_thread() or threading.current_thread().name in (
        "torchpool-supervisor",)
    try:
        process = subprocess.Popen(
            [sys.executable, "-u", _WORKER_SCRIPT, str(child_sock.fileno()), process_module, str(os.getpid()),
             "1" if lasting_thread else "0"],
            pass_fds=(child_sock.fileno(),), stdin=subprocess.DEVNULL, close_fds=True, env=_worker_environment(),
            **_OWN_GROUP)
    except BaseException:
        parent_sock.close()
        raise
    finally:
        child_sock.close()
    pidfd = -1
    try:
        pidfd = os.pidfd_open(process.pid)
        try:
            _protocol.send_message(parent_sock, {"sys_path": list(sys.path), "probe_seed": probe_seed})
            _send_raw(parent_sock, env_fns_payload)
        except (BrokenPipeError, ConnectionResetError):  # it died at once: built() says how
            pass
    except BaseException:
        process.kill()
        process.wait()
        parent_sock.close()
        if pidfd >= 0:
            os.close(pidfd)
        raise
    return Worker(index, first_env, 0, process, parent_sock, pidfd)


def _send_raw(sock: socket.socket, data: bytes) -> None:
    sock.sendall(struct.pack("<Q", len(data)) + data)


def built(worker: Worker) -> tuple[str, Any]:
    """The worker's report: ``("built", spaces and info)`` or ``("error", traceback)``."""
    try:
        return _protocol.receive_message(worker.sock)
    except (EOFError, ConnectionError, pickle.UnpicklingError):
        worker.process.wait()
        return "died", f"it exited with status {worker.process.returncode} before reporting"


def send_region(worker: Worker, region_fd: int, plan: dict) -> None:
    data = pickle.dumps(("region", dict(plan, worker=worker.index)))
    message = struct.pack("<Q", len(data)) + data
    socket.send_fds(worker.sock, [message[:8]], [region_fd])
    worker.sock.sendall(message[8:])


def ready(worker: Worker) -> bool:
    try:
        return _protocol.receive_message(worker.sock)[0] == "ready"
    except (EOFError, ConnectionError):
        return False
