"""cmake/fetch_ale_source.py: where the build finds ALE's source, and what it says when it cannot."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "cmake" / "fetch_ale_source.py"
VERSION = "0.12.0"


def fetch(env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("TORCHPOOL_ALE_SOURCE", "TORCHPOOL_CACHE")}
    return subprocess.run([sys.executable, str(SCRIPT), VERSION], env={**clean, **env}, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)


def fake_source(root: Path) -> Path:
    (root / "src" / "ale").mkdir(parents=True)
    (root / "src" / "ale" / "ale_interface.hpp").write_text("// stand-in\n")
    return root


def test_an_unpacked_copy_named_by_the_environment_wins(tmp_path):
    source = fake_source(tmp_path / "my-ale")
    done = fetch({"TORCHPOOL_ALE_SOURCE": str(source), "TORCHPOOL_CACHE": str(tmp_path / "cache")}, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(source.resolve())
    assert not (tmp_path / "cache").exists(), "nothing is downloaded when a copy is given"


def test_a_wrong_copy_is_named_in_the_error(tmp_path):
    done = fetch({"TORCHPOOL_ALE_SOURCE": str(tmp_path / "nowhere")}, tmp_path)
    assert done.returncode == 1
    assert f"TORCHPOOL_ALE_SOURCE={tmp_path / 'nowhere'} has no src/ale/ale_interface.hpp" in done.stderr


def test_the_cache_is_used_without_pip(tmp_path):
    cached = fake_source(tmp_path / "cache" / f"ale_py-{VERSION}")
    # An index that cannot answer: the cache must not need it.
    done = fetch({"TORCHPOOL_CACHE": str(tmp_path / "cache"), "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
                  "PIP_NO_INDEX": "1"}, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(cached)


def test_the_cache_keeps_only_what_the_build_reads(tmp_path):
    cached = fake_source(tmp_path / "cache" / f"ale_py-{VERSION}")
    (cached / "LICENSE.md").write_text("GPL-2.0\n")
    (cached / "scratch").mkdir()
    (cached / "scratch" / "log_data.npz").write_bytes(b"\0" * 1024)  # the sdist's 387 MB of scratch data
    (cached / "docs").mkdir()
    (cached / "README.md").write_text("ALE\n")
    done = fetch({"TORCHPOOL_CACHE": str(tmp_path / "cache"), "PIP_NO_INDEX": "1"}, tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in cached.iterdir()) == ["LICENSE.md", "src"]
    assert (cached / "src" / "ale" / "ale_interface.hpp").exists()


def test_no_source_anywhere_says_what_to_do(tmp_path):
    done = fetch({"TORCHPOOL_CACHE": str(tmp_path / "cache"), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path)},
                 tmp_path)
    assert done.returncode == 1
    message = done.stderr
    assert f"cannot download the ale-py {VERSION} source distribution with pip" in message
    assert "TORCHPOOL_ALE_SOURCE" in message and "TORCHPOOL_ATARI=0" in message
    assert not list((tmp_path / "cache").glob("ale_py-*")), "no half-unpacked copy is left in the cache"
