"""Misuse that used to work by accident: a pool inherited through fork(), and two threads in one pool."""

import subprocess
import sys
import textwrap
import threading
import time

import pytest
import torch

import torchpool


def run_python(code: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize("env, kwargs", [("CartPole-v1", {}), ("_Probe-v0", {"max_busy_us": 200.0}),
                                         ("HalfCheetah-v5", {})])
def test_a_pool_used_after_fork_raises_naming_fork_and_a_pool_made_in_the_child_works(env, kwargs):
    result = run_python(f"""
        import os, torch, torchpool
        pool = torchpool.make({env!r}, num_envs=4, num_threads=2, **{kwargs!r})
        pool.reset()
        action = torch.stack([torch.as_tensor(pool.action_spec.n - 1 if hasattr(pool.action_spec, "n") else
                                              pool.action_spec.low) for _ in range(4)])
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                pool.step(action)
                code = 10  # stepped a pool whose workers do not exist here
            except RuntimeError as error:
                if "fork()" not in str(error) or "spawn" not in str(error):
                    code = 11
            try:
                pool.reset()
                code = 12
            except RuntimeError:
                pass
            child = torchpool.make({env!r}, num_envs=4, num_threads=2, **{kwargs!r})
            child.reset()
            child.step(action)
            child.close()
            pool.close()  # must not try to join the parent's threads
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, os.waitstatus_to_exitcode(status)
        pool.step(action)  # the parent's pool is untouched
        print("ok")
    """)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "ok"


def test_a_forked_child_exits_cleanly_without_closing_the_inherited_pool():
    result = run_python("""
        import os, sys, torch, torchpool
        pool = torchpool.make("_Probe-v0", num_envs=4, num_threads=2, max_sleep_us=1000.0)
        pool.async_reset()
        pid = os.fork()
        if pid == 0:
            sys.exit(0)  # atexit and garbage collection close the inherited pool: no join, no hang
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
    """)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "0"


def test_a_second_thread_in_a_busy_pool_gets_a_clear_error_and_the_pool_stays_usable():
    with torchpool.make("_Probe-v0", num_envs=2, num_threads=1, max_sleep_us=400000.0) as pool:
        pool.reset(seed=0)
        errors = []

        def step_in_background():
            pool.step(torch.ones(2, dtype=torch.int64))

        def other_thread_inside() -> bool:
            # While another thread is inside a call, even reading the ledger it writes is refused, naming the call.
            try:
                pool.in_flight  # noqa: B018
            except RuntimeError as error:
                assert "another thread is inside Pool.step()" in str(error), error
                return True
            return False

        worker = threading.Thread(target=step_in_background)
        worker.start()
        # Each env step sleeps up to 0.4 s: time enough for the three calls below.
        deadline = time.monotonic() + 30.0
        while not other_thread_inside() and worker.is_alive() and time.monotonic() < deadline:
            time.sleep(0.001)
        assert other_thread_inside(), "the other thread never got inside step()"
        for call in (lambda: pool.step(torch.ones(2, dtype=torch.int64)), pool.reset, pool.recv):
            try:
                call()
            except RuntimeError as error:
                errors.append(str(error))
        still_inside = other_thread_inside()
        worker.join()
        assert still_inside, "the other thread's step() ended before the three calls: they prove nothing"
        assert len(errors) == 3, errors
        assert all("another thread" in message and "one thread at a time" in message for message in errors), errors
        assert pool.in_flight == 0
        assert pool.step(torch.ones(2, dtype=torch.int64))["observation"][:, 3].tolist() == [2.0, 2.0]
