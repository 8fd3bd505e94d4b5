"""close(), garbage collection, Ctrl-C and interpreter exit never hang, even with work in flight.

Each case runs in a fresh interpreter with a timeout, so a hang fails the test
instead of freezing the suite.
"""

import subprocess
import sys
import textwrap

import pytest

# Steps of this probe sleep up to 50 ms, so work is always in flight.
PRELUDE = """
import os, signal, sys, threading, time, torch, torchpool
pool = torchpool.make("_Probe-v0", num_envs=8, batch_size=2, num_threads=2, max_sleep_us=50000.0)
pool.async_reset()
"""


def run_python(body: str, timeout: float = 30.0) -> subprocess.CompletedProcess:
    code = textwrap.dedent(PRELUDE) + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("name, body", [
    ("close with work in flight", "pool.close(); print('closed')"),
    ("del with work in flight", "del pool; import gc; gc.collect(); print('collected')"),
    ("exit with work in flight", "print('exiting')"),
    ("sys.exit with work in flight", "print('exiting'); sys.exit(0)"),
    ("close twice, then exit", "pool.close(); pool.close(); print('closed')"),
])
def test_shutdown_with_work_in_flight_does_not_hang(name, body):
    result = run_python(body)
    assert result.returncode == 0, f"{name}: exit {result.returncode}\n{result.stderr}"
    assert result.stdout.strip() in ("closed", "collected", "exiting")


def test_ctrl_c_interrupts_a_waiting_recv():
    # The resets nap for up to three hours (seeded: the same naps every run), so only Ctrl-C ends the recv();
    # a recv() that waited for them runs into the subprocess's timeout. The signal is sent once the main
    # thread is inside Pool.recv(), not after a guessed delay; os._exit skips closing the pool, which would
    # wait for the napping worker.
    body = """
    slow = torchpool.make("_Probe-v0", num_envs=2, batch_size=2, num_threads=1, max_sleep_us=1e10, seed=0)
    slow.async_reset()
    main = threading.main_thread().ident

    def interrupt_the_waiting_recv():
        while True:
            frame = sys._current_frames().get(main)
            if frame is not None and frame.f_code.co_name == "recv" and frame.f_code.co_filename.endswith("pool.py"):
                break
            time.sleep(0.001)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_the_waiting_recv, daemon=True).start()
    try:
        slow.recv()
        print("recv returned")
    except KeyboardInterrupt:
        print("interrupted", slow.in_flight)
    sys.stdout.flush()
    os._exit(0)
    """
    try:
        result = run_python(body, timeout=60.0)
    except subprocess.TimeoutExpired:
        pytest.fail("recv() was still waiting for the napping envs 60 s after Ctrl-C")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["interrupted", "2"], (
        f"{result.stdout!r}: a recv() interrupted by Ctrl-C leaves its envs in flight")


def test_many_pools_created_and_dropped():
    body = """
    for i in range(50):
        p = torchpool.make("CartPole-v1", num_envs=4)
        p.reset()
        p.step(torch.zeros(4, dtype=torch.int64))
    print('closed')
    """
    result = run_python(body, timeout=60)
    assert result.returncode == 0, result.stderr
