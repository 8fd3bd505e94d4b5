"""Environments of their own for references that cannot live beside the test extra (dm_control on an older
mujoco, RLlib with its Gymnasium pin), and what a test does when one is missing.

    python = side_python(ROOT / ".venv-x", ["pkg==1.0"], "import pkg", "no X environment")

makes the venv on first use (one maker at a time: pytest-xdist's workers and concurrent runs share the
folder) and returns its interpreter. What cannot be had (no network, a broken index, a program not
installed) goes through ``unavailable``: CI (``CI`` set and not false) installs everything these tests need,
so there it fails the test; elsewhere it skips it, with the reason.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false")


def unavailable(message: str) -> NoReturn:
    """Fails the test in CI, skips it elsewhere: ``message`` says what is missing."""
    if in_ci():
        pytest.fail(message)
    pytest.skip(message)


def side_python(venv: Path, packages: list[str], check: str, what: str) -> str:
    """The interpreter of ``venv``, made with ``packages`` unless ``python -c check`` already succeeds there;
    ``unavailable(what + ...)`` when it cannot be made."""
    python = venv / "bin" / "python"
    probe = [str(python), "-c", check]
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.with_name(venv.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
            return str(python)
        made = subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], capture_output=True, text=True)
        if made.returncode == 0 and packages:
            made = subprocess.run([str(python), "-m", "pip", "install", "-q", *packages], capture_output=True,
                                  text=True, timeout=900)
        if made.returncode == 0 and subprocess.run(probe, capture_output=True).returncode == 0:
            return str(python)
    unavailable(f"{what} ({' '.join(packages)}): {made.stderr[-500:]}")
