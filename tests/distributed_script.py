"""Runs a torch.distributed script (torchrl's DistributedCollector) in a subprocess of its own session, under a
watchdog: its rendezvous waits ~forever (torchrl sets a 1000-day timeout), so an overrun kills the whole session.
Used by tests/test_torchrl.py and tests/test_distributed.py.

    process = run_watched(SCRIPT, out_path)   # the script gets a free port and out_path as argv[1:], in its folder
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

TIMEOUT_S = 90


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("localhost", 0))
        return sock.getsockname()[1]


def run_watched(script: str, out: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Runs ``script`` (``python -c``) with a free port, ``out`` and ``args``, in ``out``'s folder, with ``env``
    added to the environment; fails the test, naming the output's tail, if it overruns TIMEOUT_S or exits
    non-zero. Returns the finished process (its pid is its session's id)."""
    process = subprocess.Popen([sys.executable, "-c", script, str(free_port()), str(out), *args],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                               cwd=Path(out).parent, env={**os.environ, **(env or {})})
    try:
        output, _ = process.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        pytest.fail(f"DistributedCollector did not finish within {TIMEOUT_S} s:\n{output[-3000:]}")
    assert process.returncode == 0, f"DistributedCollector failed:\n{output[-3000:]}"
    return process
