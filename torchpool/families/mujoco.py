"""Gymnasium's MuJoCo tasks (csrc/envs/mujoco, the ``_mujoco`` module).

Gymnasium's v5 tasks with every constructor kwarg of theirs and the same
defaults (gymnasium/envs/mujoco/*_v5.py), and their v4 tasks (below). The
XML files are read from the installed gymnasium package, located without
importing gymnasium.envs.mujoco (which needs imageio). Rendering kwargs
(render_mode, width, camera, ...) are not taken: torchpool does not render.
"""

from __future__ import annotations

import importlib.util
import math
import os
from typing import Any

from .. import _mujoco_lib, registry
from .._family_modules import FamilyModule
from ..registry import EnvEntry, FloatPair, IntOrStr, Kwarg

MODULE = FamilyModule("_mujoco", extra="mujoco", before_import=_mujoco_lib.load)


def mujoco_assets_dir() -> str:
    """gymnasium/envs/mujoco/assets of the installed gymnasium (found without importing it)."""
    spec = importlib.util.find_spec("gymnasium")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the MuJoCo tasks read their XML files from the gymnasium package: pip install gymnasium")
    return os.path.join(spec.submodule_search_locations[0], "envs", "mujoco", "assets")


def _prepare_mujoco(kwargs: dict[str, Any]) -> dict[str, Any]:
    # gymnasium/envs/mujoco/mujoco_env.py, expand_model_path: names starting with
    # "." or "/" are paths, "~" is expanded, anything else is a file in the assets.
    prepared = {"gymnasium_version": 5, **kwargs}  # the -v4 ids pass 4 (_register_mujoco_v4)
    xml_file = kwargs["xml_file"]
    if xml_file.startswith((".", "/")):
        path = xml_file
    elif xml_file.startswith("~"):
        path = os.path.expanduser(xml_file)
    else:
        path = os.path.join(mujoco_assets_dir(), xml_file)
    if not os.path.exists(path):
        raise FileNotFoundError(f"xml_file: file {path} does not exist")
    prepared["xml_file"] = os.path.abspath(path)
    for name, value in kwargs.items():
        if isinstance(value, list) and FloatPair.accepts(value):
            prepared[name] = tuple(value)
    if prepared["frame_skip"] < 1:
        raise ValueError(f"frame_skip must be at least 1, got {prepared['frame_skip']}")
    return prepared


def _mujoco_common(xml_file: str, frame_skip: int) -> dict[str, Kwarg]:
    return {
        "xml_file": Kwarg(str, xml_file, "MJCF file: a name in gymnasium's mujoco assets, or a path"),
        "frame_skip": Kwarg(int, frame_skip, "MuJoCo steps per env step"),
    }


def _register_mujoco(env_id: str, family: str, kwargs: dict[str, Kwarg]) -> None:
    MODULE.register(EnvEntry(env_id, family, kwargs, reference=env_id, prepare=_prepare_mujoco))


_NOISE = "half-width of the uniform (or std of the Gaussian) reset noise"
_EXCLUDE_XY = "drop the x, y positions from the observation"

_register_mujoco("Ant-v5", "Ant", {
    **_mujoco_common("ant.xml", 5),
    "forward_reward_weight": Kwarg(float, 1.0, "weight of the forward velocity reward"),
    "ctrl_cost_weight": Kwarg(float, 0.5, "weight of the squared-action cost"),
    "contact_cost_weight": Kwarg(float, 5e-4, "weight of the squared contact-force cost"),
    "healthy_reward": Kwarg(float, 1.0, "reward per step while healthy"),
    "main_body": Kwarg(IntOrStr, 1, "body (index or name) whose x, y velocity is rewarded"),
    "terminate_when_unhealthy": Kwarg(bool, True, "terminate when the torso's z leaves healthy_z_range"),
    "healthy_z_range": Kwarg(FloatPair, (0.2, 1.0), "healthy torso heights (inclusive)"),
    "contact_force_range": Kwarg(FloatPair, (-1.0, 1.0), "clip range of contact forces"),
    "reset_noise_scale": Kwarg(float, 0.1, _NOISE),
    "exclude_current_positions_from_observation": Kwarg(bool, True, _EXCLUDE_XY),
    "include_cfrc_ext_in_observation": Kwarg(bool, True, "append clipped contact forces to the observation"),
})
_register_mujoco("HalfCheetah-v5", "HalfCheetah", {
    **_mujoco_common("half_cheetah.xml", 5),
    "forward_reward_weight": Kwarg(float, 1.0, "weight of the forward velocity reward"),
    "ctrl_cost_weight": Kwarg(float, 0.1, "weight of the squared-action cost"),
    "reset_noise_scale": Kwarg(float, 0.1, _NOISE),
    "exclude_current_positions_from_observation": Kwarg(bool, True, "drop the x position from the observation"),
})
_register_mujoco("Hopper-v5", "Hopper", {
    **_mujoco_common("hopper.xml", 4),
    "forward_reward_weight": Kwarg(float, 1.0, "weight of the forward velocity reward"),
    "ctrl_cost_weight": Kwarg(float, 1e-3, "weight of the squared-action cost"),
    "healthy_reward": Kwarg(float, 1.0, "reward per step while healthy"),
    "terminate_when_unhealthy": Kwarg(bool, True, "terminate when unhealthy"),
    "healthy_state_range": Kwarg(FloatPair, (-100.0, 100.0), "healthy range of state[2:] (exclusive)"),
    "healthy_z_range": Kwarg(FloatPair, (0.7, math.inf), "healthy torso heights (exclusive)"),
    "healthy_angle_range": Kwarg(FloatPair, (-0.2, 0.2), "healthy torso angles (exclusive)"),
    "reset_noise_scale": Kwarg(float, 5e-3, _NOISE),
    "exclude_current_positions_from_observation": Kwarg(bool, True, "drop the x position from the observation"),
})
_register_mujoco("Walker2d-v5", "Walker2d", {
    **_mujoco_common("walker2d_v5.xml", 4),
    "forward_reward_weight": Kwarg(float, 1.0, "weight of the forward velocity reward"),
    "ctrl_cost_weight": Kwarg(float, 1e-3, "weight of the squared-action cost"),
    "healthy_reward": Kwarg(float, 1.0, "reward per step while healthy"),
    "terminate_when_unhealthy": Kwarg(bool, True, "terminate when unhealthy"),
    "healthy_z_range": Kwarg(FloatPair, (0.8, 2.0), "healthy torso heights (exclusive)"),
    "healthy_angle_range": Kwarg(FloatPair, (-1.0, 1.0), "healthy torso angles (exclusive)"),
    "reset_noise_scale": Kwarg(float, 5e-3, _NOISE),
    "exclude_current_positions_from_observation": Kwarg(bool, True, "drop the x position from the observation"),
})


def _humanoid_observation_kwargs() -> dict[str, Kwarg]:
    return {
        "exclude_current_positions_from_observation": Kwarg(bool, True, _EXCLUDE_XY),
        "include_cinert_in_observation": Kwarg(bool, True, "append cinert[1:] (body inertias)"),
        "include_cvel_in_observation": Kwarg(bool, True, "append cvel[1:] (body velocities)"),
        "include_qfrc_actuator_in_observation": Kwarg(bool, True, "append qfrc_actuator[6:] (actuator forces)"),
        "include_cfrc_ext_in_observation": Kwarg(bool, True, "append cfrc_ext[1:] (external contact forces)"),
    }


_register_mujoco("Humanoid-v5", "Humanoid", {
    **_mujoco_common("humanoid.xml", 5),
    "forward_reward_weight": Kwarg(float, 1.25, "weight of the forward (centre of mass) velocity reward"),
    "ctrl_cost_weight": Kwarg(float, 0.1, "weight of the squared-control cost"),
    "contact_cost_weight": Kwarg(float, 5e-7, "weight of the squared contact-force cost"),
    "contact_cost_range": Kwarg(FloatPair, (-math.inf, 10.0), "clip range of the contact cost"),
    "healthy_reward": Kwarg(float, 5.0, "reward per step while healthy"),
    "terminate_when_unhealthy": Kwarg(bool, True, "terminate when the torso's z leaves healthy_z_range"),
    "healthy_z_range": Kwarg(FloatPair, (1.0, 2.0), "healthy torso heights (exclusive)"),
    "reset_noise_scale": Kwarg(float, 1e-2, _NOISE),
    **_humanoid_observation_kwargs(),
})
_register_mujoco("HumanoidStandup-v5", "HumanoidStandup", {
    **_mujoco_common("humanoidstandup.xml", 5),
    "uph_cost_weight": Kwarg(float, 1.0, "weight of the upward reward (unused by the reference too)"),
    "ctrl_cost_weight": Kwarg(float, 0.1, "weight of the squared-control cost"),
    "impact_cost_weight": Kwarg(float, 0.5e-6, "weight of the squared contact-force cost"),
    "impact_cost_range": Kwarg(FloatPair, (-math.inf, 10.0), "clip range of the impact cost"),
    "reset_noise_scale": Kwarg(float, 1e-2, _NOISE),
    **_humanoid_observation_kwargs(),
})
_register_mujoco("Swimmer-v5", "Swimmer", {
    **_mujoco_common("swimmer.xml", 4),
    "forward_reward_weight": Kwarg(float, 1.0, "weight of the forward velocity reward"),
    "ctrl_cost_weight": Kwarg(float, 1e-4, "weight of the squared-action cost"),
    "reset_noise_scale": Kwarg(float, 0.1, _NOISE),
    "exclude_current_positions_from_observation": Kwarg(bool, True, _EXCLUDE_XY),
})
_register_mujoco("Reacher-v5", "Reacher", {
    **_mujoco_common("reacher.xml", 2),
    "reward_dist_weight": Kwarg(float, 1.0, "weight of the fingertip-to-target distance penalty"),
    "reward_control_weight": Kwarg(float, 1.0, "weight of the squared-action cost"),
})
_register_mujoco("Pusher-v5", "Pusher", {
    **_mujoco_common("pusher_v5.xml", 5),
    "reward_near_weight": Kwarg(float, 0.5, "weight of the fingertip-to-object distance penalty"),
    "reward_dist_weight": Kwarg(float, 1.0, "weight of the object-to-goal distance penalty"),
    "reward_control_weight": Kwarg(float, 0.1, "weight of the squared-action cost"),
})
_register_mujoco("InvertedPendulum-v5", "InvertedPendulum", {
    **_mujoco_common("inverted_pendulum.xml", 2),
    "reset_noise_scale": Kwarg(float, 0.01, "half-width of the uniform reset noise"),
})
_register_mujoco("InvertedDoublePendulum-v5", "InvertedDoublePendulum", {
    **_mujoco_common("inverted_double_pendulum.xml", 5),
    "healthy_reward": Kwarg(float, 10.0, "reward per step while the tip is above y = 1"),
    "reset_noise_scale": Kwarg(float, 0.1, _NOISE),
})


# Gymnasium's -v4 tasks (gymnasium/envs/mujoco/*_v4.py) with exactly their
# constructors' kwargs, fewer than v5's: no frame_skip, an xml_file only for
# Ant, Ant's use_contact_forces for include_cfrc_ext_in_observation, none of
# Humanoid's contact cost or observation switches, none at all for
# HumanoidStandup, the pendulums, Pusher and Reacher. The kwargs they share with
# v5 have v5's defaults. What a v4 reference hard-codes (its XML, frame_skip,
# Ant's torso as the main body) reaches the C++ family as a fixed kwarg, and
# gymnasium_version=4 selects v4's observations, rewards and info there
# (mirrors_v4 in csrc/envs/mujoco/mujoco_env.h; docs/parity.md lists the
# differences from v5).


def _v5_kwargs(env_id: str, *names: str) -> dict[str, Kwarg]:
    """The named kwargs of a registered v5 id's schema, in the order given."""
    kwargs = registry.lookup(env_id).kwargs
    return {name: kwargs[name] for name in names}


def _register_mujoco_v4(env_id: str, family: str, kwargs: dict[str, Kwarg], **fixed: Any) -> None:
    def prepare(resolved: dict[str, Any]) -> dict[str, Any]:
        return _prepare_mujoco({**fixed, **resolved, "gymnasium_version": 4})

    MODULE.register(EnvEntry(env_id, family, kwargs, reference=env_id, prepare=prepare))


_register_mujoco_v4("Ant-v4", "Ant", {
    **_v5_kwargs("Ant-v5", "xml_file", "ctrl_cost_weight"),
    "use_contact_forces": Kwarg(bool, False, "observe every body's clipped contact forces and charge their cost"),
    **_v5_kwargs("Ant-v5", "contact_cost_weight", "healthy_reward", "terminate_when_unhealthy", "healthy_z_range",
                 "contact_force_range", "reset_noise_scale", "exclude_current_positions_from_observation"),
}, frame_skip=5, forward_reward_weight=1.0, main_body="torso")
_register_mujoco_v4("HalfCheetah-v4", "HalfCheetah", {
    **_v5_kwargs("HalfCheetah-v5", "forward_reward_weight", "ctrl_cost_weight", "reset_noise_scale",
                 "exclude_current_positions_from_observation"),
}, xml_file="half_cheetah.xml", frame_skip=5)
_register_mujoco_v4("Hopper-v4", "Hopper", {
    **_v5_kwargs("Hopper-v5", "forward_reward_weight", "ctrl_cost_weight", "healthy_reward",
                 "terminate_when_unhealthy", "healthy_state_range", "healthy_z_range", "healthy_angle_range",
                 "reset_noise_scale", "exclude_current_positions_from_observation"),
}, xml_file="hopper.xml", frame_skip=4)
_register_mujoco_v4("Walker2d-v4", "Walker2d", {
    **_v5_kwargs("Walker2d-v5", "forward_reward_weight", "ctrl_cost_weight", "healthy_reward",
                 "terminate_when_unhealthy", "healthy_z_range", "healthy_angle_range", "reset_noise_scale",
                 "exclude_current_positions_from_observation"),
}, xml_file="walker2d.xml", frame_skip=4)
_register_mujoco_v4("Humanoid-v4", "Humanoid", {
    **_v5_kwargs("Humanoid-v5", "forward_reward_weight", "ctrl_cost_weight", "healthy_reward",
                 "terminate_when_unhealthy", "healthy_z_range", "reset_noise_scale",
                 "exclude_current_positions_from_observation"),
}, xml_file="humanoid.xml", frame_skip=5)
_register_mujoco_v4("HumanoidStandup-v4", "HumanoidStandup", {}, xml_file="humanoidstandup.xml", frame_skip=5,
                    ctrl_cost_weight=0.1, impact_cost_weight=0.5e-6, impact_cost_range=(-math.inf, 10.0),
                    reset_noise_scale=1e-2, exclude_current_positions_from_observation=True)
_register_mujoco_v4("InvertedDoublePendulum-v4", "InvertedDoublePendulum", {},
                    xml_file="inverted_double_pendulum.xml", frame_skip=5, healthy_reward=10.0, reset_noise_scale=0.1)
_register_mujoco_v4("InvertedPendulum-v4", "InvertedPendulum", {}, xml_file="inverted_pendulum.xml", frame_skip=2,
                    reset_noise_scale=0.01)
_register_mujoco_v4("Pusher-v4", "Pusher", {}, xml_file="pusher.xml", frame_skip=5, reward_near_weight=0.5,
                    reward_dist_weight=1.0, reward_control_weight=0.1)
_register_mujoco_v4("Reacher-v4", "Reacher", {}, xml_file="reacher.xml", frame_skip=2, reward_dist_weight=1.0,
                    reward_control_weight=1.0)
_register_mujoco_v4("Swimmer-v4", "Swimmer", {
    **_v5_kwargs("Swimmer-v5", "forward_reward_weight", "ctrl_cost_weight", "reset_noise_scale",
                 "exclude_current_positions_from_observation"),
}, xml_file="swimmer.xml", frame_skip=4)
