"""Counting torchpool's worker threads, for the tests that check how many a pool starts and stops."""

import os
import time


def native_threads(settle_to: int | None = None) -> int:
    """torchpool worker threads alive in this process (the executor names them).

    A joined thread can stay listed in /proc for a moment after ``join()``
    returns (the kernel reaps it after waking the joiner), so with
    ``settle_to`` the count is re-read for up to five seconds until it comes down
    to that number. A thread that really leaks still shows.
    """
    deadline = time.monotonic() + 5.0
    while True:
        names = []
        for task in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{task}/comm") as comm:
                    names.append(comm.read().strip())
            except FileNotFoundError:  # the thread ended meanwhile
                pass
        count = names.count("torchpool")
        if settle_to is None or count <= settle_to or time.monotonic() > deadline:
            return count
        time.sleep(0.001)
