"""tests/side_venv.py: an environment of its own that cannot be made fails the tests needing it in CI, and
only skips them elsewhere (the dm_control reference and RLlib tests rely on it; so does the SLURM test)."""

from __future__ import annotations

import subprocess

import pytest
from side_venv import side_python


@pytest.mark.parametrize("ci,outcome", [("true", pytest.fail.Exception), ("", pytest.skip.Exception)],
                         ids=["in-ci-fails", "elsewhere-skips"])
def test_an_environment_that_cannot_be_made_fails_in_ci_and_skips_elsewhere(monkeypatch, tmp_path, ci, outcome):
    monkeypatch.setenv("CI", ci)
    monkeypatch.setattr(subprocess, "run", lambda command, **_: subprocess.CompletedProcess(command, 1, "", "offline"))
    try:
        side_python(tmp_path / "venv", ["pkg==1.0"], "import pkg", "no X environment")
        raised = None
    except (pytest.fail.Exception, pytest.skip.Exception) as stopped:  # caught here, so a skip cannot pass
        raised = stopped
    assert isinstance(raised, outcome), (
        f"CI={ci!r}: without its environment a test is {type(raised).__name__}, not {outcome.__name__}")
    assert "no X environment (pkg==1.0): offline" in str(raised)


def test_an_environment_that_works_is_made_once(tmp_path):
    """A probe that succeeds in the existing venv means nothing is installed again."""
    venv = tmp_path / "venv"
    python = side_python(venv, [], "import json", "no plain environment")
    assert python == str(venv / "bin" / "python")
    stamp = (venv / "bin" / "python").lstat().st_mtime_ns
    assert side_python(venv, ["never-installed==0"], "import json", "no plain environment") == python
    assert (venv / "bin" / "python").lstat().st_mtime_ns == stamp
