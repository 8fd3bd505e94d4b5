"""The command line (torchpool/__main__.py) and what a user sees before it runs (torchpool/__init__.py).

Each test runs ``python -m torchpool ...`` in a subprocess, as a user does:
mistakes are one line on stderr with exit code 2, never a traceback.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import torch

from torchpool.train.ppo import RECIPES, VARIANTS

SOURCE = Path(__file__).resolve().parent.parent / "torchpool"


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchpool", *args], capture_output=True, text=True,
                          timeout=timeout)


def assert_usage_error(done: subprocess.CompletedProcess, *fragments: str) -> None:
    """Exit code 2 and one line on stderr that holds every fragment."""
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, f"exit code {done.returncode}, stderr:\n{done.stderr}"
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, f"a usage error must be one line, got:\n{done.stderr}"
    for fragment in fragments:
        assert fragment in lines[0], f"{fragment!r} missing from {lines[0]!r}"


# ---- help -----------------------------------------------------------------------------

def test_help_is_plain_text_with_the_commands_and_examples():
    done = cli("--help")
    assert done.returncode == 0, done.stderr
    assert "``" not in done.stdout, f"reStructuredText markup in --help:\n{done.stdout}"
    for command in ("train", "list", "bench", "demo"):
        assert f"python -m torchpool {command}" in done.stdout, f"no example of {command!r} in --help"


def test_train_help_lists_the_envs_with_recipes_and_the_variants():
    done = cli("train", "--help")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())  # the list is wrapped: compare words, not lines
    for env_id in RECIPES:
        assert env_id in text, f"train --help does not list {env_id}, which has a recipe"
    for variant in VARIANTS:
        assert variant in text, f"train --help does not name the --recipe variant {variant!r}"


# ---- usage errors ---------------------------------------------------------------------

@pytest.mark.parametrize("command", ["train", "demo", "bench"])
def test_an_unknown_id_is_one_line_with_the_closest_name(command):
    assert_usage_error(cli(command, "CartPol-v1"), "unknown env id 'CartPol-v1'", "Did you mean 'CartPole-v1'?")


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_device_cuda_without_cuda_is_a_usage_error():
    assert_usage_error(cli("train", "CartPole-v1", "--device", "cuda"), "--device", "CUDA is not available")


BAD_ARGUMENTS = [  # (the command line, what its one-line error must say)
    (["train", "--num-envs", "0"], ["--num-envs", "positive int", "'0'"]),
    (["train", "--total-frames", "-5"], ["--total-frames", "positive int"]),
    (["train", "--num-envs", "x"], ["--num-envs", "must be an int, got 'x'"]),
    (["train", "--seed", "-1"], ["--seed", "non-negative int"]),
    (["train", "--max-seconds", "nan"], ["--max-seconds", "positive number"]),
    (["train", "--device", "tpu"], ["--device", "'tpu'"]),
    (["train", "Pong-v5", "--recipe", "fast"], ["unknown recipe 'fast'", "cleanrl"]),
    (["train", "CartPole-v1", "--recipe", "cleanrl"], ["recipe 'cleanrl' has no settings for 'CartPole-v1'"]),
    (["demo", "--steps", "-1"], ["--steps", "positive int"]),
    (["bench", "--calls", "0"], ["--calls", "positive int"]),
    (["demo", "CartPole-v1", "g=3"], ["unrecognized arguments: g=3"]),
    (["frobnicate"], ["invalid choice: 'frobnicate'"]),
    ([], ["required"]),
]


@pytest.mark.parametrize("args, fragments", BAD_ARGUMENTS,
                         ids=[" ".join(args) or "no command" for args, _ in BAD_ARGUMENTS])
def test_bad_arguments_are_one_line_usage_errors(args, fragments):
    assert_usage_error(cli(*args), *fragments)


# ---- runs that end without an episode ------------------------------------------------

def test_train_with_no_finished_episode_prints_no_nan(tmp_path):
    # MountainCar's episodes last 200 steps; one batch of 2 envs x 128 steps ends none.
    done = cli("train", "MountainCar-v0", "--total-frames", "1", "--num-envs", "2", "--out-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "nan" not in done.stdout.lower(), done.stdout
    assert "MountainCar-v0: no episode finished in 256 frames" in done.stdout, done.stdout
    assert ".png" not in done.stdout, f"no curve to draw, yet a PNG is announced:\n{done.stdout}"
    assert (tmp_path / "ppo_MountainCar-v0.pt").exists()


def test_demo_with_no_finished_episode_says_so():
    done = cli("demo", "MountainCar-v0", "--steps", "10")
    assert done.returncode == 0, done.stderr
    assert "no episode finished in 10 steps" in done.stdout and "mean return" not in done.stdout, done.stdout


# ---- importing an unbuilt checkout -----------------------------------------------------

def import_from_copy(tmp_path: Path, with_extension: bool) -> subprocess.CompletedProcess:
    """``import torchpool`` in a Python that sees a copy of the source tree and the installed dependencies.

    ``-S`` skips site's .pth files, so neither the editable install's import
    hook nor any installed torchpool can stand in for the copy; the
    site-packages folders come back through PYTHONPATH, after the copy.
    """
    shutil.copytree(SOURCE, tmp_path / "torchpool", ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    if with_extension:
        import torchpool._core

        shutil.copy(torchpool._core.__file__, tmp_path / "torchpool")
    site = [path for path in sys.path if path.endswith("site-packages")] + [sysconfig.get_paths()["purelib"]]
    return subprocess.run([sys.executable, "-S", "-c", "import torchpool; print(torchpool.__file__)"],
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys(site))},
                          capture_output=True, text=True, timeout=120)


def test_importing_an_unbuilt_checkout_says_to_build_it(tmp_path):
    done = import_from_copy(tmp_path, with_extension=False)
    assert done.returncode != 0, f"the copy without torchpool._core imported:\n{done.stdout}"
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: torchpool is not built; run from outside the checkout or "
                           "`pip install -e .`"), done.stderr
    assert "cannot import name '_core'" not in done.stderr, f"the raw error shows through:\n{done.stderr}"


def test_the_same_copy_imports_once_the_extension_is_beside_it(tmp_path):
    # The control: the setup above fails only for the missing extension.
    done = import_from_copy(tmp_path, with_extension=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "torchpool" / "__init__.py")
