"""A pytest plug-in that runs EnvPool's own tests on ``torchpool.envpool_compat``.

``pytest -p envpool_plugin`` (with this folder on ``sys.path``) makes ``import envpool`` and the
submodules EnvPool's tests import (``envpool.registration``, ``envpool.<family>.registration``,
``envpool.python.protocol``) resolve to torchpool's drop-in, before any test module is imported.
EnvPool's test files themselves are run as they are (run_envpool.sh takes them from EnvPool's repository).
"""

from __future__ import annotations

import os
import sys
import types

import torchpool.envpool_compat as compat
from torchpool import registry
from torchpool.families import dmc

# The registration modules EnvPool's tests import for their side effect of registering a family's ids:
# the drop-in lists every id torchpool has, so each is an empty module.
_FAMILY_REGISTRATIONS = ("classic_control", "atari", "mujoco.gym", "mujoco.dmc", "box2d", "toy_text", "minigrid")


def _module(name: str, **attributes) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    sys.modules[name] = module
    return module


class _NotInTheDropIn:
    """Stands for a private name of EnvPool's (or for jax, when absent) that a test file imports: the file is
    collected, and only the tests that use the name fail, saying why."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return _NotInTheDropIn(f"{self._name}.{attribute}")

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(f"{self._name} is not part of torchpool's EnvPool drop-in")


def _placeholder_module(name: str) -> None:
    module = _module(name)
    module.__getattr__ = lambda attribute: _NotInTheDropIn(f"{name}.{attribute}")


def _mujoco_gym_envs() -> list[tuple[str, tuple[str, ...], int]]:
    """``envpool.mujoco.gym.registration.gym_mujoco_envs`` as torchpool has them: (task, versions, steps)."""
    versions: dict[str, list[str]] = {}
    for env_id in registry.list_envs():
        if registry.lookup(env_id).family in _MUJOCO_STEPS:
            task, version = env_id.rsplit("-", 1)
            versions.setdefault(task, []).append(version)
    return [(task, tuple(sorted(found)), _MUJOCO_STEPS[task]) for task, found in sorted(versions.items())]


# EnvPool's time limits of the MuJoCo tasks (Gymnasium's): 1000 steps but Pusher's 100 and Reacher's 50.
_MUJOCO_STEPS = {name: 1000 for name in ("Ant", "HalfCheetah", "Hopper", "Humanoid", "HumanoidStandup",
                                         "InvertedDoublePendulum", "InvertedPendulum", "Swimmer", "Walker2d")}
_MUJOCO_STEPS.update(Pusher=100, Reacher=50)


def pytest_load_initial_conftests(early_config, parser, args) -> None:
    if os.environ.get("ENVPOOL_PEER_BASELINE") == "1":  # EnvPool itself: only jax stands in, where absent
        _stand_in_for_jax()
        return
    sys.modules["envpool"] = compat
    sys.modules["envpool.python"] = compat.python
    sys.modules["envpool.python.envpool"] = compat.python.envpool
    public = {name: getattr(compat, name) for name in compat.__all__}
    _module("envpool.registration", **public)
    _module("envpool.python.protocol", **public)
    for family in _FAMILY_REGISTRATIONS:
        parts = family.split(".")
        for depth in range(1, len(parts) + 1):
            name = "envpool." + ".".join(parts[:depth])
            if name not in sys.modules:
                _module(name)
        _module(f"envpool.{family}.registration")
    # `import envpool.a.b as name` walks attributes from the top module.
    for name in sorted(sys.modules):
        if name.startswith("envpool.") and name.count(".") >= 1:
            parent, _, child = name.rpartition(".")
            setattr(sys.modules[parent], child, sys.modules[name])
    sys.modules["envpool.mujoco.gym.registration"].gym_mujoco_envs = _mujoco_gym_envs()
    sys.modules["envpool.mujoco.dmc.registration"].dmc_mujoco_envs = [
        (domain, task, 1000) for domain, (_, _, tasks) in sorted(dmc.DMC_DOMAINS.items()) for task in tasks]
    # Windows' GL libraries: nothing to preload here.
    _module("envpool.python.glfw_context", preload_windows_gl_dlls=lambda strict=False: None)
    # EnvPool's internals (the Atari family's spec and pool classes) and, where it is not installed, jax.
    _placeholder_module("envpool.atari.atari_envpool")
    sys.modules["envpool.atari"].__getattr__ = lambda attribute: _NotInTheDropIn(f"envpool.atari.{attribute}")
    _stand_in_for_jax()


def _stand_in_for_jax() -> None:
    try:
        import jax  # noqa: F401
    except ImportError:
        for name in ("jax", "jax.numpy"):
            _placeholder_module(name)
