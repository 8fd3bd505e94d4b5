"""NOTE [Ctrl-C while workers step] (csrc/envs/process/shared_region.h): Ctrl-C ends a call of Python envs
whatever hangs in it, every env of every worker included, and close() then ends the hung workers.

Each env of a worker waits for its answer in turn behind the one its worker is stuck on; a Ctrl-C counts for
every request sent before it, and all of the call's envs give up at one deadline after it was first seen.
The step timeout (30 s) only keeps a broken Ctrl-C from hanging the suite: the call would then raise EnvError,
not KeyboardInterrupt, and the test fail."""

import functools
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import python_envs
import torch

import torchpool
from torchpool._workers import interrupts


class HangsAtSecondStep(python_envs.CountsSteps):
    """Hangs (sleeps an hour, the GIL released) at its second step if `hangs`, having created `flag`."""

    def __init__(self, hangs: bool, flag: str):
        self.hangs, self.flag = hangs, flag

    def step(self, action):
        self.steps += 1
        if self.hangs and self.steps == 2:
            Path(self.flag).touch()
            time.sleep(3600)
        return np.full(1, self.steps, np.float32), 1.0, False, False, {}


def _interrupt_when(flags: list[Path]) -> threading.Thread:
    """SIGINT to this process (a Ctrl-C) once every flag exists, i.e. every hanging env is stuck."""
    def interrupt():
        deadline = time.monotonic() + 60
        while not all(flag.exists() for flag in flags):
            assert time.monotonic() < deadline, f"the envs never hung: {[str(f) for f in flags]}"
            time.sleep(0.005)
        os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=interrupt, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("hanging", [[0, 1, 2, 3], [0]], ids=["every env", "one env"])
def test_ctrl_c_ends_a_call_whatever_hangs_and_close_ends_the_hung_workers(hanging, tmp_path):
    signal.set_wakeup_fd(-1)  # as a script starts: an earlier test's event loop may have held it
    flags = [tmp_path / f"env{i}" for i in range(4)]
    fns = [functools.partial(HangsAtSecondStep, i in hanging, str(flags[i])) for i in range(4)]
    # 2 envs per worker: env 1 waits behind env 0 in worker 0, env 3 behind env 2 in worker 1.
    with torchpool.make(fns, num_envs=4, num_workers=2, step_timeout=30) as pool:
        assert interrupts.relaying(), "no thread relays Ctrl-C to the pool (or another holds the wake-up fd)"
        pool.reset()
        pool.step(torch.zeros(4, dtype=torch.int64))
        workers = list(pool.worker_pids)
        # Only the first env of each worker can be seen hanging: the second never starts its step.
        interrupter = _interrupt_when([flags[i] for i in hanging if i in (0, 2)])
        with pytest.raises(KeyboardInterrupt):
            pool.step(torch.zeros(4, dtype=torch.int64))
        interrupter.join()
        assert pool.schedule["step_timeouts"] == 0, "the step timeout ended the call, not Ctrl-C"
    assert not any(python_envs.alive(pid) for pid in workers), "close() left a hung worker running"
