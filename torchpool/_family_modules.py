"""The family modules: which extension module steps each env family, loaded when first needed.

Each family is an extension module of its own (``csrc/envs/<family>/module.cpp``)
exporting a ``family_plugin`` capsule that ``torchpool._core`` makes pools
through (``csrc/core/plugin.h`` checks that both were built alike). A module
is imported when an id of its family is first made, so ``import torchpool``
loads neither libmujoco nor ALE. The MuJoCo and Atari families need packages
installed as extras (``torchpool[mujoco]``, ``torchpool[atari]``); making an
id whose package is missing names the extra to install.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import Any

from . import _mujoco_lib

# Family name (EnvEntry.family) -> module name, one line per family.
_MODULES = {
    "CartPole": "_classic", "Pendulum": "_classic", "MountainCar": "_classic",
    "MountainCarContinuous": "_classic", "Acrobot": "_classic",
    "Ant": "_mujoco", "HalfCheetah": "_mujoco", "Hopper": "_mujoco", "Walker2d": "_mujoco", "Humanoid": "_mujoco",
    "HumanoidStandup": "_mujoco", "Swimmer": "_mujoco", "Reacher": "_mujoco", "Pusher": "_mujoco",
    "InvertedPendulum": "_mujoco", "InvertedDoublePendulum": "_mujoco",
    # The Control Suite: one family per domain (csrc/envs/dmc/<domain>.h), all in one module.
    **{f"Dmc{domain}": "_dmc" for domain in (
        "Acrobot", "BallInCup", "Cartpole", "Cheetah", "Dog", "Finger", "Fish", "Hopper", "Humanoid", "HumanoidCMU",
        "Lqr", "Manipulator", "Pendulum", "PointMass", "Quadruped", "Reacher", "Stacker", "Swimmer", "Walker")},
    "Atari": "_atari",
    "Probe": "_testing",
}

# The extra that installs what a module needs at run time.
EXTRAS = {"_mujoco": "mujoco", "_atari": "atari", "_dmc": "dmc"}

# Families whose module was loaded from elsewhere (torchpool.register_cpp_env).
_ADDED: dict[str, ModuleType] = {}


def add(family: str, module: ModuleType) -> None:
    """Makes ``module`` (one exporting a ``family_plugin``) the module of ``family``."""
    _ADDED[family] = module


def built(family: str) -> bool:
    """Whether this torchpool was built with the module of ``family`` (found without importing it)."""
    if family in _ADDED:
        return True
    name = _MODULES.get(family)
    return name is not None and importlib.util.find_spec(f"{__package__}.{name}") is not None


def module(family: str) -> ModuleType:
    """The extension module of ``family``, imported (and its libraries loaded) on first use."""
    if family in _ADDED:
        return _ADDED[family]
    name = _MODULES.get(family)
    if name is None:
        raise ValueError(f"no module steps the env family {family!r}")
    if name in ("_mujoco", "_dmc"):
        try:
            _mujoco_lib.load()  # libmujoco first: the module links it by its soname
        except ImportError as error:
            raise ImportError(f"{error}. The MuJoCo tasks need torchpool's mujoco extra: "
                              f"pip install 'torchpool[{EXTRAS[name]}]'") from None
    return importlib.import_module(f"{__package__}.{name}")


def plugin(family: str) -> Any:
    """The ``family_plugin`` capsule that ``torchpool._core.make`` takes for ``family``."""
    return module(family).family_plugin
