"""Runs Stable-Baselines3's own VecEnv tests, from its sdist, on torchpool's ``PoolVecEnv`` (or on SB3's own).

    python tests/peers/sb3_run.py              # SB3's tests with sb3_plugin.py: torchpool's VecEnv
    python tests/peers/sb3_run.py --baseline   # the same files on SB3's own DummyVecEnv/SubprocVecEnv
    python tests/peers/sb3_run.py --output -- -k custom_calls   # pytest's output, some cases only

Downloads the sdist of the installed SB3 version from PyPI (``pip download --no-binary :all:``) into
a cache folder (``--cache``, default ``$TMPDIR/torchpool-peers``; a second run downloads nothing),
unpacks it, runs ``FILES`` with pytest in a subprocess (SB3's own pytest settings, its
``pyproject.toml``) and prints the counts: passed, failed, errors, skipped, and each case that did
not pass. ``--json PATH`` writes ``{"version", "plugin", "outcomes": {case id: outcome}}``. Exits 0
when the run itself worked (whatever the cases did), 2 when SB3 could not be fetched.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ElementTree
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
FILES = ("tests/test_vec_envs.py", "tests/test_vec_check_nan.py", "tests/test_vec_normalize.py")
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "torchpool-peers"


class FetchError(RuntimeError):
    """SB3's sdist could not be downloaded (no network, no such version)."""


def sdist_tests(version: str, cache: Path) -> Path:
    """The unpacked sdist of stable-baselines3 ``version`` (its root, holding ``tests/``), downloaded once."""
    root = cache / f"stable_baselines3-{version}"
    if all((root / name).is_file() for name in FILES):
        return root
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / f"stable_baselines3-{version}.tar.gz"
    if not archive.is_file():
        with tempfile.TemporaryDirectory(dir=cache) as download:
            done = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                                   "--no-binary", ":all:", "--retries", "1", "--timeout", "30",
                                   f"stable-baselines3=={version}", "-d", download],
                                  capture_output=True, text=True)
            found = sorted(Path(download).glob("*.tar.gz"))
            if done.returncode != 0 or not found:
                raise FetchError(f"pip download stable-baselines3=={version} (its sdist, for SB3's own tests) "
                                 f"failed; this needs PyPI:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
            os.replace(found[0], archive)
    with tempfile.TemporaryDirectory(dir=cache) as unpacked:
        with tarfile.open(archive) as tar:
            # filter="data" (no links out, no device files) where this Python has it (3.10.12+, 3.11.4+)
            tar.extractall(unpacked, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        tops = [path for path in Path(unpacked).iterdir() if path.is_dir()]
        if len(tops) != 1 or not all((tops[0] / name).is_file() for name in FILES):
            raise FetchError(f"{archive} does not hold {FILES} under one folder")
        # Only SB3's tests: its package stays the installed one (pytest puts the rootdir on sys.path).
        shutil.rmtree(tops[0] / "stable_baselines3")
        if not root.exists():
            os.replace(tops[0], root)
    return root


def run(version: str, plugin: bool, cache: Path = DEFAULT_CACHE, extra: list[str] | None = None,
        show_output: bool = False) -> dict[str, str]:
    """{case id: "passed" | "failed" | "error" | "skipped"} of SB3's ``FILES``, on torchpool's VecEnv if ``plugin``."""
    root = sdist_tests(version, cache)
    env = dict(os.environ)
    if plugin:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.xml"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(root),
                   "-c", str(root / "pyproject.toml"), f"--junitxml={report}", "-o", "junit_family=xunit2",
                   *(["-p", "sb3_plugin"] if plugin else []), *(extra or []), *FILES]
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
        if show_output:
            print(done.stdout, done.stderr, sep="\n")
        if not report.is_file():
            raise RuntimeError(f"pytest wrote no report (exit {done.returncode}):\n{done.stdout[-4000:]}"
                               f"{done.stderr[-4000:]}")
        outcomes = {}
        for case in ElementTree.parse(report).getroot().iter("testcase"):
            module = case.get("classname", "").rsplit(".", 1)[-1]
            name = f"{module}.py::{case.get('name')}"
            kinds = {child.tag for child in case}
            outcomes[name] = ("failed" if "failure" in kinds else "error" if "error" in kinds
                              else "skipped" if "skipped" in kinds else "passed")
        if done.returncode not in (0, 1):  # 1: some cases failed; anything else: pytest itself did not run
            raise RuntimeError(f"pytest exited {done.returncode}:\n{done.stdout[-4000:]}{done.stderr[-4000:]}")
    return outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", action="store_true", help="SB3's own VecEnvs: run without sb3_plugin")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where the sdist is kept")
    parser.add_argument("--json", type=Path, help="write the outcomes here")
    parser.add_argument("--output", action="store_true", help="print pytest's output (the failures' tracebacks)")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --), e.g. -k custom_calls")
    args = parser.parse_args()
    version = metadata.version("stable-baselines3")
    try:
        outcomes = run(version, plugin=not args.baseline, cache=args.cache, extra=args.pytest_args,
                       show_output=args.output)
    except FetchError as error:
        print(error, file=sys.stderr)
        return 2
    counts = collections.Counter(outcomes.values())
    on = "SB3's own VecEnvs" if args.baseline else "torchpool's PoolVecEnv (sb3_plugin)"
    for case, outcome in outcomes.items():
        if outcome != "passed":
            print(f"{outcome:8} {case}")
    print(f"stable-baselines3 {version} {', '.join(FILES)} on {on}: {counts['passed']} passed, "
          f"{counts['failed']} failed, {counts['error']} errors, {counts['skipped']} skipped of {len(outcomes)}")
    if args.json:
        args.json.write_text(json.dumps({"version": version, "plugin": not args.baseline, "outcomes": outcomes},
                                        indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
