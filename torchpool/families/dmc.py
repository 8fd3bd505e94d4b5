"""The DeepMind Control Suite (csrc/envs/dmc, the ``_dmc`` module).

EnvPool's ids for dm_control's suite (<Domain><Task>-v1), each a domain's family with its task fixed,
EnvPool's kwargs (frame_skip, the suite's control timestep in physics steps) and flatten_obs. The models
are dm_control's own XML files, read from the installed dm_control package (found without importing
it: dm_control 1.0.50 does not import under the mujoco we pin, but its files are all we need).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from typing import Any

from .. import _mujoco_lib
from .._family_modules import FamilyModule
from ..registry import EnvEntry, Kwarg

MODULE = FamilyModule("_dmc", extra="dmc", before_import=_mujoco_lib.load)


def dm_control_suite_dir() -> str:
    """dm_control/suite of the installed dm_control (found without importing it)."""
    spec = importlib.util.find_spec("dm_control")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the Control Suite tasks read their models from the dm_control package: "
                          "pip install 'torchpool[dmc]'")
    return os.path.join(spec.submodule_search_locations[0], "suite")


def _prepare_dmc(domain: str, task: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def prepare(kwargs: dict[str, Any]) -> dict[str, Any]:
        if kwargs["frame_skip"] < 1:
            raise ValueError(f"frame_skip must be at least 1, got {kwargs['frame_skip']}")
        path = os.path.join(dm_control_suite_dir(), f"{domain}.xml")
        if not os.path.exists(path):
            raise FileNotFoundError(f"the installed dm_control has no {path}")
        return {**kwargs, "xml_file": path, "task_name": task}
    return prepare


def dmc_env_id(domain: str, task: str) -> str:
    """dm_control's (domain, task) to EnvPool's id: ``("point_mass", "easy")`` -> ``PointMassEasy-v1``,
    ``("humanoid_CMU", "run")`` -> ``HumanoidCMURun-v1``."""
    return "".join(part[:1].upper() + part[1:] for part in f"{domain}_{task}".split("_")) + "-v1"


# domain -> (family, frame_skip = control_timestep / timestep, tasks), as dm_control.suite defines them.
DMC_DOMAINS: dict[str, tuple[str, int, tuple[str, ...]]] = {
    "acrobot": ("DmcAcrobot", 1, ("swingup", "swingup_sparse")),
    "ball_in_cup": ("DmcBallInCup", 10, ("catch",)),
    "cartpole": ("DmcCartpole", 1, ("balance", "balance_sparse", "swingup", "swingup_sparse", "two_poles",
                                    "three_poles")),
    "cheetah": ("DmcCheetah", 1, ("run",)),
    "dog": ("DmcDog", 3, ("stand", "walk", "trot", "run", "fetch")),
    "finger": ("DmcFinger", 2, ("spin", "turn_easy", "turn_hard")),
    "fish": ("DmcFish", 10, ("upright", "swim")),
    "hopper": ("DmcHopper", 4, ("stand", "hop")),
    "humanoid": ("DmcHumanoid", 5, ("stand", "walk", "run", "run_pure_state")),
    "humanoid_CMU": ("DmcHumanoidCMU", 10, ("stand", "walk", "run")),
    "lqr": ("DmcLqr", 1, ("lqr_2_1", "lqr_6_2")),
    "manipulator": ("DmcManipulator", 10, ("bring_ball", "bring_peg", "insert_ball", "insert_peg")),
    "pendulum": ("DmcPendulum", 1, ("swingup",)),
    "point_mass": ("DmcPointMass", 1, ("easy", "hard")),
    "quadruped": ("DmcQuadruped", 4, ("walk", "run", "escape", "fetch")),
    "reacher": ("DmcReacher", 1, ("easy", "hard")),
    "stacker": ("DmcStacker", 10, ("stack_2", "stack_4")),
    "swimmer": ("DmcSwimmer", 15, ("swimmer6", "swimmer15")),
    "walker": ("DmcWalker", 10, ("stand", "walk", "run")),
}

# env id -> (domain, task)
DMC_IDS: dict[str, tuple[str, str]] = {}

for _domain, (_family, _frame_skip, _tasks) in DMC_DOMAINS.items():
    for _task in _tasks:
        DMC_IDS[dmc_env_id(_domain, _task)] = (_domain, _task)
        MODULE.register(EnvEntry(dmc_env_id(_domain, _task), _family, {
            "frame_skip": Kwarg(int, _frame_skip, "physics steps per control step (the suite's control timestep)"),
            "flatten_obs": Kwarg(bool, False, "one vector of every observation key, in dm_control's order"),
        }, reference=f"dm_control suite.load({_domain!r}, {_task!r})", prepare=_prepare_dmc(_domain, _task)))
