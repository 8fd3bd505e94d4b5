"""Hearing Ctrl-C while the calling thread waits inside the core: NOTE [Ctrl-C while workers step].

The note (csrc/envs/process/shared_region.h) says why and what a waiting env
does with it. Here: one pipe per process, registered as Python's signal
wake-up fd (Python's C-level handler writes each signal's number to it, from
whatever the main thread is doing), and one daemon thread reading it that
bumps ``RegionHeader.interrupts`` of every open pool for each SIGINT.

It is only set up from the main thread (Python's rule for
``signal.set_wakeup_fd``) and only when no one else holds the wake-up fd (an
asyncio loop does): then a stuck env delays Ctrl-C until the step timeout, as
before. Signals other than SIGINT are left alone.
"""

from __future__ import annotations

import os
import signal
import threading
import weakref
from collections.abc import Callable

# Reentrant: building the list of pools may collect an unreachable pool, whose close() calls forget().
_lock = threading.RLock()
_listeners: weakref.WeakSet = weakref.WeakSet()  # pools: each has _interrupt_waits()
_read_fd = -1
_write_fd = -1


def listen(pool) -> bool:
    """Bumps ``pool``'s interrupt count on every Ctrl-C from now on; False where that cannot be arranged."""
    global _read_fd, _write_fd
    with _lock:
        if threading.current_thread() is threading.main_thread():
            if _read_fd < 0:
                read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
                os.set_blocking(write_fd, False)  # Python's rule for a wake-up fd
                if not _claim_wakeup_fd(write_fd):
                    os.close(read_fd), os.close(write_fd)
                    return False
                _read_fd, _write_fd = read_fd, write_fd
                threading.Thread(target=_relay, args=(read_fd,), name="torchpool-ctrl-c", daemon=True).start()
            elif not _claim_wakeup_fd(_write_fd):
                return False
        elif _read_fd < 0:
            return False
        _listeners.add(pool)
        return True


def _claim_wakeup_fd(write_fd: int) -> bool:
    """Makes ``write_fd`` Python's signal wake-up fd unless someone else holds it.

    Checked on every listen(), not once: an asyncio loop that took the
    wake-up fd after ours and then closed leaves none (it restores -1, not
    ours), and Ctrl-C would then go unheard by every later pool.
    """
    try:
        previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except ValueError:
        return False
    if previous not in (-1, write_fd):  # someone else's (an event loop): theirs to keep
        signal.set_wakeup_fd(previous)
        return False
    return True


def forget(pool) -> None:
    with _lock:
        _listeners.discard(pool)


def _relay(read_fd: int) -> None:
    global _read_fd, _write_fd
    try:
        while True:
            try:
                data = os.read(read_fd, 512)
            except InterruptedError:
                continue
            except OSError:  # the pipe is gone (closed under us): the next listen() makes a new one
                return
            if not data:
                return
            if signal.SIGINT in data:
                with _lock:  # held while bumping: forget() (a pool's close) waits for it, then unmaps
                    for pool in list(_listeners):
                        interrupt: Callable[[], None] | None = getattr(pool, "_interrupt_waits", None)
                        try:
                            if interrupt is not None:
                                interrupt()
                        except Exception:  # one pool's failure must not deafen the others to Ctrl-C
                            _listeners.discard(pool)
    finally:
        with _lock:
            if _read_fd == read_fd:
                _read_fd = _write_fd = -1


def relaying() -> bool:
    """Whether this process hears Ctrl-C for its pools now: the relay thread runs and holds the wake-up fd."""
    with _lock:
        if _read_fd < 0 or not any(thread.name == "torchpool-ctrl-c" and thread.is_alive()
                                   for thread in threading.enumerate()):
            return False
        if threading.current_thread() is not threading.main_thread():
            return True  # (only the main thread may look at the wake-up fd)
        current = signal.set_wakeup_fd(_write_fd, warn_on_full_buffer=False)
        signal.set_wakeup_fd(current, warn_on_full_buffer=False)
        return current == _write_fd
