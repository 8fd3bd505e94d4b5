"""How many CPUs this process may run on: its affinity mask and its cgroup's CPU quota.

``os.cpu_count()`` counts the host's cores; under ``taskset``, a container
limited to 4 CPUs of a 64-core host, or a SLURM job, that many spinning
worker threads would fight over a few cores.
"""

from __future__ import annotations

import math
import os


def available_cpus(cgroup_root: str = "/sys/fs/cgroup") -> int:
    """The CPUs this process may use: ``min(affinity, ceil(cgroup quota))``, at least 1."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    quota = cgroup_cpu_quota(cgroup_root)
    if quota is not None:
        cpus = min(cpus, max(1, math.ceil(quota)))
    return max(1, cpus)


def cgroup_cpu_quota(root: str = "/sys/fs/cgroup") -> float | None:
    """CPUs' worth of time the cgroup grants per period, or None when unlimited or unknown."""
    # cgroup v2: "<quota> <period>" or "max <period>".
    try:
        with open(os.path.join(root, "cpu.max")) as file:
            quota, period = file.read().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    # cgroup v1: quota -1 means unlimited.
    for folder in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):
        try:
            with open(os.path.join(root, folder, "cpu.cfs_quota_us")) as file:
                quota = int(file.read())
            with open(os.path.join(root, folder, "cpu.cfs_period_us")) as file:
                period = int(file.read())
        except (OSError, ValueError):
            continue
        return None if quota <= 0 or period <= 0 else quota / period
    return None
