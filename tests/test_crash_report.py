"""The opt-in native crash report (csrc/crash_report.h, torchpool.testing.crash_report): a crash prints the
C++ frames with their modules and offsets, to stderr and to a file, then dies by its signal as before, with
faulthandler's Python frames after ours."""

import signal
import subprocess
import sys

_CRASH = "import ctypes, torchpool; ctypes.string_at(0)"


def test_a_crash_prints_its_native_stack_and_still_dies_by_its_signal(tmp_path):
    report = tmp_path / "crash.txt"
    done = subprocess.run([sys.executable, "-X", "faulthandler", "-c", _CRASH], capture_output=True, text=True,
                          timeout=120, env={**__import__("os").environ, "TORCHPOOL_CRASH_REPORT": str(report)})
    assert done.returncode == -signal.SIGSEGV, f"exit {done.returncode}: {done.stderr[-2000:]}"
    assert "torchpool crash report: signal 11 (SIGSEGV) at address 0x0" in done.stderr, done.stderr[-2000:]
    frames = done.stderr.split("native stack")[1].split("end of the native stack")[0]
    assert "libc.so" in frames or "_ctypes" in frames, f"no frame names its module:\n{frames}"
    assert "Current thread" in done.stderr or "Fatal Python error" in done.stderr, "faulthandler did not run after"
    assert "signal 11 (SIGSEGV)" in report.read_text(), "the report file is empty"


def test_without_the_variable_nothing_is_installed():
    done = subprocess.run([sys.executable, "-c", _CRASH], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGSEGV
    assert "torchpool crash report" not in done.stderr
