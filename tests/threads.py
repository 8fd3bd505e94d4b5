"""Counting torchpool's worker threads, for the tests that check how many a pool starts and stops."""

import os


def native_threads() -> int:
    """torchpool worker threads alive in this process (the executor names them)."""
    names = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/comm") as comm:
                names.append(comm.read().strip())
        except FileNotFoundError:  # the thread ended meanwhile
            pass
    return names.count("torchpool")
