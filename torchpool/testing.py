"""Helpers for testing code that drives pools: Ctrl-C delivered at random points.

``Interrupter`` sends SIGINT to the process at random moments from a thread.
Python's handler raises ``KeyboardInterrupt`` only while ``armed`` is set, so
a test arms it just before a pool call and disarms it in the statement after:
the interrupt lands inside the call (in C++, or in the pool's own Python,
including right after the core returns) and never inside the test's checks.
Main thread only (signal handlers live there).

``inject_interrupts(k)`` instead makes every k-th poll for Ctrl-C of a waiting
call raise ``KeyboardInterrupt``, deterministically: the way to reach a
second Ctrl-C landing while an interrupted call winds down.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import threading
import time
from collections.abc import Iterator


class Interrupter:
    """SIGINT every ``uniform(0, gap)`` seconds, landing only while ``armed``.

    Use as a context manager, or call ``stop()``: it restores Python's default handler.
    """

    def __init__(self, gap: float = 0.02, seed: int = 0):
        self.armed = False
        self.landed = 0
        # Signal sent -> KeyboardInterrupt caught: the worst so far (no list: a soak lands tens of thousands).
        self.worst_latency = 0.0
        self._gap = gap
        self._sent_at = 0.0
        self._landed_sent_at = 0.0
        self._rng = random.Random(seed)
        self._stop = threading.Event()
        signal.signal(signal.SIGINT, self._handler)
        self._thread = threading.Thread(target=self._run, daemon=True, name="interrupter")
        self._thread.start()

    def _handler(self, signum, frame):
        if self.armed:
            self.armed = False
            self.landed += 1
            self._landed_sent_at = self._sent_at
            raise KeyboardInterrupt

    def _run(self):
        while not self._stop.wait(self._rng.uniform(0, self._gap)):
            self._sent_at = time.perf_counter()
            os.kill(os.getpid(), signal.SIGINT)

    def caught(self) -> None:
        """Call from the ``except KeyboardInterrupt`` clause: records how long the interrupt took."""
        self.worst_latency = max(self.worst_latency, time.perf_counter() - self._landed_sent_at)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.armed = False
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def __enter__(self) -> Interrupter:
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()


@contextlib.contextmanager
def inject_interrupts(every: int) -> Iterator[None]:
    """Within the block, every ``every``-th Ctrl-C poll of a waiting pool call raises ``KeyboardInterrupt``.

    A waiting call polls each time it wakes from a sleep slice (20 ms), so an
    env step longer than that is cut short; ``every=2`` also cuts short the
    wind-down of the call it interrupted (NOTE [Interrupted calls]).
    """
    from .pool import _inject_interrupts

    _inject_interrupts(every)
    try:
        yield
    finally:
        _inject_interrupts(0)


def crash_report(path: str | os.PathLike = "") -> None:
    """Makes a native crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) print its C++ stack first.

    Each frame is written as ``module(symbol+offset) [address]`` to stderr, and appended to ``path`` if
    given; ``addr2line -e <module> <offset>`` names the line. The signal then goes on to the handler it
    replaced (``faulthandler``'s, with the Python frames, if enabled), so the process dies as before.
    Setting ``TORCHPOOL_CRASH_REPORT=1`` (or a path) in the environment does this at ``import torchpool``.
    """
    from .pool import install_crash_report

    install_crash_report(os.fspath(path))
