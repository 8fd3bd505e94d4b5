"""A pool whose threads cannot start raises a Python error naming the cause; the process goes on
(csrc/core/executor.h, start_workers; threads.h, run_on_threads). Root ignores RLIMIT_NPROC, so the limit
that binds here is the address space: each thread's stack is reserved from it."""

import subprocess
import sys

import pytest

_CHILD = """
import resource, sys
import torchpool
env_id, kwargs = sys.argv[1], eval(sys.argv[2])
torchpool.make(env_id, num_envs=2, num_threads=2, **kwargs).close()  # every library loaded first
with open("/proc/self/status") as status:
    used = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
# Room for a few 8 MiB thread stacks and their arenas, not for 64 of them.
resource.setrlimit(resource.RLIMIT_AS, (used + 160 * 2**20, resource.RLIM_INFINITY))
try:
    torchpool.make(env_id, num_envs=64, num_threads=64, **kwargs)
except Exception as error:
    print(f"{type(error).__name__}: {error}")
else:
    print("no error")
print("still running")
"""


# Costly envs are built on several threads before the workers start (threads.h); cheap ones are built by
# the caller, and then the pool's workers are the threads that cannot start (executor.h).
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux resource limits")
@pytest.mark.parametrize(("env_id", "kwargs", "which"), [("_Probe-v0", "dict(max_busy_us=50.0)", "to build the envs"),
                                                         ("CartPole-v1", "{}", "worker thread")])
def test_threads_that_cannot_start_raise_and_the_process_goes_on(env_id, kwargs, which):
    done = subprocess.run([sys.executable, "-c", _CHILD, env_id, kwargs], capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, f"the process died (exit {done.returncode}): {done.stderr[-2000:]}"
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "still running", done.stdout
    assert lines[0].startswith("RuntimeError: could not start "), done.stdout
    assert which in lines[0] and "Resource temporarily unavailable" in lines[0], done.stdout
