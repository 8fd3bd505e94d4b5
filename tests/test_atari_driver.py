"""The Atari family outside Python (csrc/envs/atari/driver.cpp, built beside the modules): clean under
valgrind, and the same frames whatever its thread count. It separates ALE and the toolchain from Python
and torch; the GPU check runs it on the CUDA machine too."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DRIVERS = sorted(ROOT.glob("build/*/torchpool_atari_driver"))

pytestmark = pytest.mark.skipif(not DRIVERS, reason="no torchpool_atari_driver in build/ (an editable build has it)")


@pytest.fixture(scope="module")
def rom() -> str:
    roms = pytest.importorskip("ale_py.roms")
    return str(roms.get_rom_path("pong"))


def drive(rom: str, steps: int, threads: int, *wrapper: str) -> str:
    done = subprocess.run([*wrapper, str(DRIVERS[-1]), rom, str(steps), str(threads)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stderr[-4000:]}"
    return done.stdout.strip()


def test_the_driver_plays_the_same_frames_on_one_and_two_threads(rom):
    one, two = drive(rom, 300, 1), drive(rom, 300, 2)
    assert one.startswith("steps 300 episodes "), one
    assert one == two, f"one thread: {one}; two: {two}"


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="no valgrind")
def test_the_driver_is_clean_under_valgrind(rom):
    """memcheck over the model, two envs, the reset and 60 sticky steps: no invalid read or write, no
    uninitialised value steering a branch (--error-exitcode fails the run on any)."""
    report = drive(rom, 60, 2, "valgrind", "-q", "--error-exitcode=99", "--leak-check=no")
    assert report == drive(rom, 60, 2), "valgrind's run played other frames"
