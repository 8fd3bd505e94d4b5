"""A throughput case: one system at one size, built and timed by the side-by-side runners.

``SystemCase`` is what classic.py and mujoco_tasks.py measure: torchpool,
EnvPool or a Gymnasium vector env on one env id, sync (every env steps per
call) or async (send/recv of ``batch_size = num_envs // 2``), run by the
runners of ``torchpool._side_by_side`` (the actions drawn before the timed
loop, every output handed over as a torch tensor). A script names its
systems for tables and legends in ``LABELS``.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from typing import ClassVar

from torchpool._side_by_side import Result, run_envpool, run_gymnasium, run_torchpool

__all__ = ["SystemCase", "gym_async_skip_reason"]


@dataclass(frozen=True)
class SystemCase:
    """One system at one size: what a throughput measurement builds and times."""

    env_id: str
    system: str      # "torchpool", "envpool", "gymnasium-sync" or "gymnasium-async"
    mode: str        # "sync": every env steps per call; "async": batch_size envs per send/recv
    num_envs: int

    LABELS: ClassVar[dict[tuple[str, str], str]] = {}  # (system, mode) -> the name tables and legends give it

    @property
    def batch_size(self) -> int:
        return self.num_envs if self.mode == "sync" else max(1, self.num_envs // 2)

    @property
    def label(self) -> str:
        return self.LABELS.get((self.system, self.mode), f"{self.system} {self.mode}")

    def run(self, calls: int, warmup: int | None = None) -> Result:
        """Builds the system, times ``calls`` step calls after ``warmup`` (the runner's default if None)."""
        kwargs = {} if warmup is None else {"warmup": warmup}
        async_batch = self.batch_size if self.mode == "async" else None
        if self.system == "torchpool":
            return run_torchpool(self.env_id, self.num_envs, calls, batch_size=async_batch, **kwargs)
        if self.system == "envpool":
            return run_envpool(self.env_id, self.num_envs, calls, batch_size=async_batch, **kwargs)
        return run_gymnasium(self.env_id, self.num_envs, calls, self.system.removeprefix("gymnasium-"), **kwargs)

    def __str__(self) -> str:
        return f"{self.env_id} {self.label} num_envs={self.num_envs}"


def gym_async_skip_reason(num_envs: int, max_envs: int, mib_per_worker: float) -> str | None:
    """Why Gymnasium's AsyncVectorEnv with ``num_envs`` worker processes is not attempted, or None to try it:
    more than ``max_envs``, more memory than half the free (``mib_per_worker`` each), or too few descriptors."""
    if num_envs > max_envs:
        return f"num_envs > --gym-async-max-envs={max_envs}"
    free_mib = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**20
    if num_envs * mib_per_worker > free_mib / 2:
        return (f"{num_envs} worker processes may need ~{num_envs * mib_per_worker:.0f} MiB, "
                f"over half the free {free_mib:.0f} MiB")
    open_files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if 4 * num_envs > open_files:
        return f"{num_envs} workers need ~{4 * num_envs} file descriptors; the limit is {open_files}"
    return None
