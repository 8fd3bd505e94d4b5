"""Ctrl-C inside any blocking call leaves the pool consistent, and the next call works.

Each case runs tests/interrupt_harness.py in a fresh interpreter (a hang is a
timeout; a KeyboardInterrupt never reaches pytest), which delivers SIGINT at
random points of one kind of call for a few seconds and checks the pool
after each interrupt (NOTE [Interrupted calls] in csrc/core/executor.h).
"""

import json
import os
import subprocess
import sys

import pytest

HARNESS = os.path.join(os.path.dirname(__file__), "interrupt_harness.py")

# Probe envs the workers really step (busy or sleeping), so interrupts land
# while work is queued and running.
BUSY_PROBE = {"max_busy_us": 300.0}
SLEEPY_PROBE = {"max_sleep_us": 3000.0}

CASES = [
    # call, env, num_envs, batch_size, num_threads, kwargs
    ("step", "CartPole-v1", 4, None, None, {}),
    ("step", "_Probe-v0", 8, None, 2, BUSY_PROBE),
    ("step", "_Probe-v0", 8, None, 2, SLEEPY_PROBE),
    ("step", "Pong-v5", 16, None, None, {}),
    ("step", "HalfCheetah-v5", 8, None, None, {}),
    ("reset", "Pong-v5", 16, None, None, {}),
    ("reset", "_Probe-v0", 8, None, 2, SLEEPY_PROBE),
    ("recv", "_Probe-v0", 16, 8, 2, BUSY_PROBE),
    ("recv", "_Probe-v0", 8, 2, 2, SLEEPY_PROBE),
    ("recv", "HalfCheetah-v5", 16, 8, None, {}),
    ("step_into", "_Probe-v0", 8, None, 2, BUSY_PROBE),
    ("recv_into", "_Probe-v0", 8, None, 2, SLEEPY_PROBE),
    ("stream", "_Probe-v0", 8, None, 2, BUSY_PROBE),
    ("stream", "CartPole-v1", 8, None, None, {}),
    ("torchrl_step", "_Probe-v0", 8, None, 2, SLEEPY_PROBE),
    ("torchrl_reset", "Pong-v5", 8, None, None, {}),
]


@pytest.mark.parametrize("call, env, num_envs, batch_size, num_threads, kwargs", CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}" + (f"/{c[3]}" if c[3] else "") for c in CASES])
def test_interrupts_at_random_points_leave_the_pool_usable(call, env, num_envs, batch_size, num_threads, kwargs):
    # Sanitized builds run the envs several times slower: tools/sanitize.sh stretches time and gaps alike.
    slowdown = float(os.environ.get("TORCHPOOL_TEST_SLOWDOWN", "1"))
    case = {"call": call, "env": env, "num_envs": num_envs, "batch_size": batch_size, "num_threads": num_threads,
            "kwargs": kwargs, "seconds": 2.0 * slowdown, "gap": 0.02 * slowdown}
    result = subprocess.run([sys.executable, HARNESS, json.dumps(case)], capture_output=True, text=True,
                            timeout=120 * slowdown)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["interrupts"] >= 5, f"too few interrupts landed to test anything: {report}"
    assert report["calls"] > report["interrupts"], f"no call completed between interrupts: {report}"
    # Prompt: an env step here is at most 3 ms, so anything near a second means a wait that ignored Ctrl-C.
    assert report["worst_latency"] < 1.0 * slowdown, report
