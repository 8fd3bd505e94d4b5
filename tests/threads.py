"""Counting torchpool's worker threads, for the tests that check how many a pool starts and stops."""

import os
import time


def torchpool_threads() -> frozenset[int]:
    """The thread ids of torchpool's worker threads alive in this process (the executor names them)."""
    tids = set()
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as comm:
                if comm.read().strip() == "torchpool":
                    tids.add(int(task))
        except FileNotFoundError:  # the thread ended meanwhile
            pass
    return frozenset(tids)


def started_since(before: frozenset[int], settle_to: int | None = None) -> int:
    """How many torchpool threads alive now were not alive at ``before``.

    Counted by thread id, not by total: a thread of an earlier test's closed
    pool can still be listed in /proc for a moment after its ``join()``
    returned (the kernel reaps it after waking the joiner), and its going away
    meanwhile must not read as a thread of this test. For the same reason
    ``settle_to`` re-reads for up to five seconds until the count comes down to
    that number; a thread that really leaks still shows.
    """
    deadline = time.monotonic() + 5.0
    while True:
        count = len(torchpool_threads() - before)
        if settle_to is None or count <= settle_to or time.monotonic() > deadline:
            return count
        time.sleep(0.001)
