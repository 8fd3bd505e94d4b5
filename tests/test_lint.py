"""The code is clean under ruff (pyproject.toml's [tool.ruff]) and clang-format (.clang-format).

Both come with the test extra, so `.ci/run` (the README's test command) checks them.
"""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CXX_DIRS = ("csrc", "tests/cpp")


def tool(name: str) -> str:
    beside = Path(sys.executable).parent / name  # the venv's own, whatever PATH says
    found = str(beside) if beside.exists() else shutil.which(name)
    assert found, f"{name} is not installed: pip install -e '.[test]' brings it"
    return found


def test_python_is_clean_under_ruff():
    done = subprocess.run([tool("ruff"), "check", "--no-cache", str(ROOT)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_cxx_is_clean_under_clang_format():
    files = sorted(str(path) for folder in CXX_DIRS for pattern in ("*.h", "*.cpp")
                   for path in (ROOT / folder).rglob(pattern))
    assert len(files) > 20, f"expected the C++ sources under {CXX_DIRS}"
    done = subprocess.run([tool("clang-format"), "--dry-run", "-Werror", *files], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]
