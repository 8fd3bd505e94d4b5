"""Finds ALE's C++ sources for the Atari family; CMakeLists.txt runs this at configure time.

Prints one line: the directory holding ``src/ale/ale_interface.hpp``.

ALE is compiled from the source distribution of the pinned ale-py release
(never committed here). In order:

1. ``TORCHPOOL_ALE_SOURCE``: an unpacked ale-py sdist (or ALE checkout) to use as is.
2. The cache, ``$TORCHPOOL_CACHE`` or ``~/.cache/torchpool``: ``ale_py-<version>/``
   from an earlier build.
3. ``pip download ale-py==<version>`` (the sdist, by package name, so pip's own
   index, proxy and certificate settings apply), unpacked into the cache.

The cache keeps only what the build reads (``src/``, ~4 MB) and ALE's licence:
the sdist also carries ~400 MB of ALE's own scratch data, docs and tests. A
cache left whole by an older torchpool is pruned the same way on its next use.

Exit status 1 with a message on stderr when none of these works.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

MARKER = Path("src", "ale", "ale_interface.hpp")
KEPT = ("src", "LICENSE.md")  # what the cache keeps of the sdist's top level


def fail(message: str) -> None:
    print(f"torchpool: {message}", file=sys.stderr)
    sys.exit(1)


def cache_root() -> Path:
    return Path(os.environ.get("TORCHPOOL_CACHE") or Path.home() / ".cache" / "torchpool")


def pip_download(version: str, into: Path) -> Path:
    # --no-build-isolation: pip reads the sdist's metadata with the scikit-build-core
    # this build already has, instead of installing ale-py's own build requirements
    # (nanobind and jax) just to learn its version. A plain isolated call is the
    # fallback when that backend is not importable here.
    base = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", "ale-py",
            "--disable-pip-version-check", "-d", str(into), f"ale-py=={version}"]
    errors = []
    for extra in (["--no-build-isolation"], []):
        result = subprocess.run(base + extra, capture_output=True, text=True)
        archives = sorted(into.glob(f"ale_py-{version}.tar.gz"))
        if archives:
            return archives[0]
        errors.append(result.stderr.strip().splitlines()[-3:] if result.stderr else [f"exit {result.returncode}"])
    fail(
        f"cannot download the ale-py {version} source distribution with pip "
        f"({' | '.join(' '.join(e) for e in errors)}).\n"
        f"  Either give the build network access to your package index, or download it yourself\n"
        f"  (pip download --no-deps --no-binary ale-py ale-py=={version}), unpack it and set\n"
        f"  TORCHPOOL_ALE_SOURCE=/path/to/ale_py-{version}; or build without Atari: TORCHPOOL_ATARI=0."
    )
    raise AssertionError  # unreachable


def prune(root: Path) -> None:
    """Deletes what the build does not read from an unpacked sdist."""
    for entry in root.iterdir():
        if entry.name not in KEPT:
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()


def main() -> None:
    if len(sys.argv) != 2:
        fail("usage: fetch_ale_source.py <ale-py version>")
    version = sys.argv[1]

    given = os.environ.get("TORCHPOOL_ALE_SOURCE")
    if given:
        if not (Path(given) / MARKER).exists():
            fail(f"TORCHPOOL_ALE_SOURCE={given} has no {MARKER}: point it at an unpacked ale-py {version} sdist")
        print(Path(given).resolve())
        return

    target = cache_root() / f"ale_py-{version}"
    if (target / MARKER).exists():
        prune(target)
        print(target)
        return

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        archive = pip_download(version, Path(scratch))
        with tarfile.open(archive) as tar:
            if hasattr(tarfile, "data_filter"):  # Python >= 3.10.12 / 3.11.4: refuse odd members
                tar.extractall(scratch, filter="data")
            else:
                tar.extractall(scratch)
        unpacked = Path(scratch) / f"ale_py-{version}"
        if not (unpacked / MARKER).exists():
            fail(f"{archive.name} has no {MARKER}")
        prune(unpacked)
        # A rename is atomic, so two builds racing both end up with one whole copy.
        try:
            unpacked.rename(target)
        except OSError:
            if not (target / MARKER).exists():
                raise
            shutil.rmtree(unpacked, ignore_errors=True)
    print(target)


if __name__ == "__main__":
    main()
