"""gym 0.20's own Pendulum-v0, the reference of torchpool's Pendulum-v0 (and of EnvPool's).

gym 0.21 made the pendulum integrate its angle with the clipped velocity (Gymnasium's Pendulum-v1); gym 0.20
and older integrate it with the unclipped one. gym 0.20 itself does not install under today's setuptools, so
its ``gym/envs/classic_control/pendulum.py`` is taken from its source distribution on PyPI (downloaded once,
the file kept in ``.legacy-gym/``, gitignored) and run as written: its three imports from gym (``gym.Env``,
``spaces``, ``seeding``) are given Gymnasium's, which the file uses only to declare its spaces and draw its
reset. ``make_pendulum_v0`` wraps it in Gymnasium's API (``reset(seed=)``, five-value steps, a TimeLimit)
for the classic parity loop; ``env.unwrapped`` is gym 0.20's ``PendulumEnv`` with its ``state``.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import sys
import tarfile
import tempfile
import types
import urllib.request
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / ".legacy-gym" / "gym-0.20.0-pendulum.py"
MEMBER = "gym-0.20.0/gym/envs/classic_control/pendulum.py"
SDIST_SHA256 = "ca963d003cf8b7db8205865de6f3fed605e17e8e488f55ed9118b7768ea21100"  # PyPI's, for gym-0.20.0.tar.gz


def _pendulum_source() -> Path:
    """gym 0.20.0's pendulum.py, downloaded on first use; a failed download fails the test.

    The sdist is found on PyPI's simple index and checked against its sha256 (``pip download`` would run the
    sdist's setup.py, which today's setuptools refuses)."""
    if SOURCE.exists():
        return SOURCE
    try:
        index = urllib.request.urlopen("https://pypi.org/simple/gym/", timeout=60).read().decode()
        url = re.search(r'href="([^"#]*/gym-0\.20\.0\.tar\.gz)[#"]', index).group(1)
        sdist = urllib.request.urlopen(url, timeout=120).read()
    except (OSError, AttributeError) as error:
        pytest.fail(f"could not download gym 0.20.0's source from PyPI (unreachable?): {error!r}")
    if hashlib.sha256(sdist).hexdigest() != SDIST_SHA256:
        pytest.fail(f"gym 0.20.0's sdist from {url} does not have PyPI's sha256 {SDIST_SHA256}")
    with tarfile.open(fileobj=io.BytesIO(sdist)) as archive:
        source = archive.extractfile(MEMBER).read()
    SOURCE.parent.mkdir(exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=SOURCE.parent, delete=False) as fresh:
        fresh.write(source)
    os.replace(fresh.name, SOURCE)  # whole, so a half-written file is never taken for the source
    return SOURCE


def _load_pendulum_env() -> type:
    gym = types.ModuleType("gym")
    gym.Env, gym.spaces = gymnasium.Env, gymnasium.spaces
    gym.utils = types.ModuleType("gym.utils")
    gym.utils.seeding = gymnasium.utils.seeding
    module = types.ModuleType("gym020_pendulum_source")
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {"gym": gym, "gym.spaces": gym.spaces, "gym.utils": gym.utils,
                            "gym.utils.seeding": gym.utils.seeding}.items():
            patch.setitem(sys.modules, name, value)
        exec(compile(_pendulum_source().read_text(), MEMBER, "exec"), module.__dict__)  # noqa: S102
    return module.PendulumEnv


class _GymnasiumApi(gymnasium.Env):
    """gym 0.20's env in Gymnasium's API: reset(seed=) seeds it then resets; steps give five values."""

    def __init__(self, env: Any):
        self.env = env
        self.action_space, self.observation_space = env.action_space, env.observation_space

    @property
    def unwrapped(self) -> Any:
        return self.env

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        if seed is not None:
            self.env.seed(seed)
        return self.env.reset(), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        observation, reward, done, info = self.env.step(action)
        return observation, reward, done, False, info


def make_pendulum_v0(max_episode_steps: int = 200, **kwargs: Any) -> gymnasium.Env:
    """gym 0.20's ``gym.make("Pendulum-v0", **kwargs)`` (its registration: a 200-step limit), in Gymnasium's API."""
    env = _GymnasiumApi(_load_pendulum_env()(**kwargs))
    return gymnasium.wrappers.TimeLimit(env, max_episode_steps=max_episode_steps)
