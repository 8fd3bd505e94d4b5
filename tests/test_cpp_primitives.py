"""C++ unit tests of the core's primitives (tests/cpp/*_test.cpp), compiled and run here."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTS = sorted((ROOT / "tests" / "cpp").glob("*_test.cpp"))


@pytest.mark.parametrize("source", TESTS, ids=[t.stem for t in TESTS])
def test_cpp_unit_test_passes(source, tmp_path):
    compiler = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        pytest.skip("no C++ compiler")
    program = tmp_path / source.stem
    subprocess.run([compiler, "-O2", "-std=c++20", "-pthread", "-I", str(ROOT / "csrc"), str(source), "-o",
                    str(program)], check=True)
    result = subprocess.run([str(program)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr + result.stdout
