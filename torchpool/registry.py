"""Env ids, their C++ family, defaults, and task-kwarg validation.

Each registered id maps to a C++ family (whose module ``_family_modules`` finds)
and a schema of the task kwargs that family reads. ``resolve_kwargs`` rejects
unknown or ill-typed kwargs with the closest valid names, and fills defaults,
so C++ always receives a complete, typed config.
"""

from __future__ import annotations

import difflib
import importlib.util
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

from . import _family_modules


@dataclass(frozen=True)
class Kwarg:
    """One task kwarg: its Python type, default and a one-line doc."""

    type: type
    default: Any
    doc: str = ""


@dataclass(frozen=True)
class EnvEntry:
    env_id: str
    family: str
    kwargs: dict[str, Kwarg] = field(default_factory=dict)
    # "continuous": float observations (float32 by default, float64 on request);
    # "image": uint8 frames, obs_dtype is fixed.
    observation: str = "continuous"
    reference: str = ""  # the Gymnasium id this env matches
    hidden: bool = False  # test-only envs: constructible, not listed
    # Turns validated, completed kwargs into what the C++ family reads (e.g.
    # MuJoCo's xml_file name into a path); may raise for bad values.
    prepare: Callable[[dict[str, Any]], dict[str, Any]] | None = None


_REGISTRY: dict[str, EnvEntry] = {}

# The Atari ids are registered on first use: finding which ROMs ALE plays
# imports the Atari module and hashes each ROM (a second of CPU that `import
# torchpool` should not pay).
_atari_registered = False


def _entries() -> dict[str, EnvEntry]:
    global _atari_registered
    if not _atari_registered:
        _atari_registered = True
        if _atari_built():
            for rom in _atari_roms():
                register(EnvEntry(atari_env_id(rom), "Atari", dict(_ATARI_KWARGS), observation="image",
                                  reference=f"ALE/{atari_env_id(rom)}", prepare=_prepare_atari(rom)))
    return _REGISTRY


def register(entry: EnvEntry, replace: bool = False) -> None:
    if entry.env_id in _REGISTRY and not replace:
        raise ValueError(f"env id {entry.env_id!r} is already registered")
    _REGISTRY[entry.env_id] = entry


def is_registered(env_id: str) -> bool:
    return env_id in _entries()


def list_envs() -> list[str]:
    """Every registered env id, sorted."""
    return sorted(env_id for env_id, entry in _entries().items() if not entry.hidden)


def list_envs_unchecked() -> list[str]:
    """``list_envs()`` without asking ALE which ROMs it plays: the Atari ids are the installed ROMs' names.

    For registering ids elsewhere (Gymnasium's registry) at import time: it
    loads no module and reads no ROM; making an id ALE cannot play still fails.
    """
    if _atari_registered:
        return list_envs()
    playable = (rom for rom in _rom_files() if rom not in _ROMS_NOT_SINGLE_PLAYER)
    atari = [atari_env_id(rom) for rom in playable] if _atari_built() else []
    return sorted({env_id for env_id, entry in _REGISTRY.items() if not entry.hidden} | set(atari))


def _closest(name: str, choices: list[str]) -> str:
    """" Did you mean ...?" with the choices nearest to ``name``, ignoring case.

    Only those about as near as the nearest are named: with 120 ids, a
    mistyped 'Cartpole-v1' is near 'CartPole-v1' and also, less so, to
    Atari names such as 'Earthworld-v5', which would only be noise.
    """
    lowered = {choice.lower(): choice for choice in choices}
    if name.lower() in lowered:
        return f" Did you mean {lowered[name.lower()]!r}?"
    scored = sorted(((difflib.SequenceMatcher(None, name.lower(), key).ratio(), lowered[key]) for key in lowered),
                    reverse=True)
    if not scored or scored[0][0] < 0.5:
        return ""
    matches = [choice for ratio, choice in scored[:3] if ratio >= max(0.5, scored[0][0] - 0.1)]
    return f" Did you mean {', '.join(repr(m) for m in matches)}?"


# torchpool.make's own arguments: an unknown task kwarg may be a misspelling of one.
MAKE_ARGUMENTS = ("num_envs", "batch_size", "num_threads", "seed", "autoreset", "obs_dtype", "max_episode_steps",
                  "thread_affinity_offset", "spin_polls", "pin_memory")


def lookup(env_id: str) -> EnvEntry:
    if not isinstance(env_id, str):
        raise TypeError(f"env_id must be a str, got {type(env_id).__name__}")
    # A non-Atari id is found without registering the Atari ids (which hashes every ROM).
    entry = _REGISTRY.get(env_id) or _entries().get(env_id)
    if entry is not None:
        return entry
    if _unbuilt_atari(env_id):
        raise ValueError(f"{env_id} is an Atari game, but this torchpool was built without the Atari family "
                         "(TORCHPOOL_ATARI=0); reinstall it with Atari (docs/parity.md: where the dependencies "
                         "come from)")
    if env_id.endswith("-v5") and _atari_built() and not _rom_files():
        hint = (" Atari games (<Game>-v5) read their ROMs from ale-py, which is not installed: "
                "pip install 'torchpool[atari]'.")
    else:
        hint = _closest(env_id, list_envs())
        if _gymnasium_knows(env_id):
            hint += (f" Gymnasium has {env_id} as a Python env: torchpool.make('gymnasium:{env_id}', ...) steps it "
                     "in worker processes.")
    raise ValueError(f"unknown env id {env_id!r}.{hint} torchpool.list_envs() lists all {len(list_envs())} ids.")


def _gymnasium_knows(env_id: str) -> bool:
    try:
        import gymnasium
    except ImportError:
        return False
    return env_id in gymnasium.registry


def _check_type(env_id: str, name: str, value: Any, expected: type) -> Any:
    # bool is an int subclass in Python; a bool where a number is wanted (or the
    # reverse) is almost always a mistake, so neither converts silently.
    if expected is bool:
        if hasattr(value, "item") and getattr(value, "shape", None) == ():
            value = value.item()
        ok = isinstance(value, bool)
    elif expected is float:
        if hasattr(value, "item") and getattr(value, "shape", None) == ():
            value = value.item()
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif expected is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, expected)
    if not ok:
        raise TypeError(
            f"{env_id}: kwarg {name!r} must be {expected.__name__}, got {value!r} ({type(value).__name__})"
        )
    return value


def resolve_kwargs(entry: EnvEntry, kwargs: dict[str, Any], callers_arguments: Sequence[str] = ()) -> dict[str, Any]:
    """Validates ``kwargs`` against the entry's schema and fills defaults.

    ``callers_arguments``: the caller's own argument names (``stream()``'s),
    suggested too when a name is unknown (a typo of ``total_frames``).
    """
    resolved = {}
    for name, value in kwargs.items():
        if name not in entry.kwargs:
            known = ", ".join(sorted(entry.kwargs)) or "none"
            choices = [*entry.kwargs, *MAKE_ARGUMENTS, *callers_arguments]
            raise TypeError(
                f"{entry.env_id} got an unknown kwarg {name!r}.{_closest(name, choices)} "
                f"Its task kwargs: {known}."
            )
        resolved[name] = _check_type(entry.env_id, name, value, entry.kwargs[name].type)
    for name, spec in entry.kwargs.items():
        resolved.setdefault(name, spec.default)
    return entry.prepare(resolved) if entry.prepare is not None else resolved


# ---- classic control (csrc/envs/classic) --------------------------------------

register(EnvEntry("CartPole-v1", "CartPole",
                  {"sutton_barto_reward": Kwarg(bool, False, "reward 0 per step and -1 on failure")},
                  reference="CartPole-v1"))
# Pendulum-v0 is gym 0.20's (and EnvPool's): the angle integrated with the unclipped velocity (pendulum.h);
# Gymnasium's Pendulum-v1 draws it (the same pendulum).
register(EnvEntry("Pendulum-v1", "Pendulum",
                  {"g": Kwarg(float, 10.0, "gravity")},
                  reference="Pendulum-v1", prepare=lambda kwargs: {**kwargs, "pendulum_version": 1}))
register(EnvEntry("Pendulum-v0", "Pendulum",
                  {"g": Kwarg(float, 10.0, "gravity")},
                  reference="Pendulum-v1", prepare=lambda kwargs: {**kwargs, "pendulum_version": 0}))
register(EnvEntry("MountainCar-v0", "MountainCar",
                  {"goal_velocity": Kwarg(float, 0.0, "minimum velocity at the goal")},
                  reference="MountainCar-v0"))
register(EnvEntry("MountainCarContinuous-v0", "MountainCarContinuous",
                  {"goal_velocity": Kwarg(float, 0.0, "minimum velocity at the goal")},
                  reference="MountainCarContinuous-v0"))
register(EnvEntry("Acrobot-v1", "Acrobot", {}, reference="Acrobot-v1"))


# ---- test-only (csrc/envs/testing) --------------------------------------------

register(EnvEntry("_Probe-v0", "Probe", {
    "episode_length": Kwarg(int, 5, "steps until terminated"),
    "max_sleep_us": Kwarg(float, 0.0, "each step/reset sleeps uniformly up to this"),
    "max_busy_us": Kwarg(float, 0.0, "each step/reset computes (spins) uniformly up to this, like a real env"),
    "fail_at_step": Kwarg(int, -1, "the env's n-th step raises; -1 never"),
    "fail_probability": Kwarg(float, 0.0, "each step raises with this probability (drawn from the env's RNG)"),
    "dict_observation": Kwarg(bool, False, "named observation fields: counters, last_action, grid"),
}, hidden=True))


# ---- MuJoCo (csrc/envs/mujoco) ------------------------------------------------
#
# Gymnasium's v5 tasks with every constructor kwarg of theirs and the same
# defaults (gymnasium/envs/mujoco/*_v5.py), and their v4 tasks (below). The
# XML files are read from the installed gymnasium package, located without
# importing gymnasium.envs.mujoco (which needs imageio). Rendering kwargs
# (render_mode, width, camera, ...) are not taken: torchpool does not render.


class _Checked(type):
    """Metaclass of kwarg types checked by a predicate: ``isinstance(v, T)`` calls ``T.accepts(v)``."""

    def __instancecheck__(cls, value: Any) -> bool:
        return cls.accepts(value)


class FloatPair(metaclass=_Checked):
    """A ``(low, high)`` tuple or list of two numbers, as in ``healthy_z_range=(0.2, 1.0)``."""

    @staticmethod
    def accepts(value: Any) -> bool:
        return (isinstance(value, (tuple, list)) and len(value) == 2
                and all(isinstance(v, Real) and not isinstance(v, bool) for v in value))


class IntOrStr(metaclass=_Checked):
    """A body's index (int) or name (str), like Ant's ``main_body``."""

    @staticmethod
    def accepts(value: Any) -> bool:
        return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


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
    register(EnvEntry(env_id, family, kwargs, reference=env_id, prepare=_prepare_mujoco))


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
    kwargs = _REGISTRY[env_id].kwargs
    return {name: kwargs[name] for name in names}


def _register_mujoco_v4(env_id: str, family: str, kwargs: dict[str, Kwarg], **fixed: Any) -> None:
    def prepare(resolved: dict[str, Any]) -> dict[str, Any]:
        return _prepare_mujoco({**fixed, **resolved, "gymnasium_version": 4})

    register(EnvEntry(env_id, family, kwargs, reference=env_id, prepare=prepare))


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


# ---- DeepMind Control Suite (csrc/envs/dmc) ------------------------------------
#
# EnvPool's ids for dm_control's suite (<Domain><Task>-v1), each a domain's family with its task fixed,
# EnvPool's kwargs (frame_skip, the suite's control timestep in physics steps) and flatten_obs. The models
# are dm_control's own XML files, read from the installed dm_control package (found without importing
# it: dm_control 1.0.50 does not import under the mujoco we pin, but its files are all we need).


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
        register(EnvEntry(dmc_env_id(_domain, _task), _family, {
            "frame_skip": Kwarg(int, _frame_skip, "physics steps per control step (the suite's control timestep)"),
            "flatten_obs": Kwarg(bool, False, "one vector of every observation key, in dm_control's order"),
        }, reference=f"dm_control suite.load({_domain!r}, {_task!r})", prepare=_prepare_dmc(_domain, _task)))


# ---- Atari (csrc/envs/atari) --------------------------------------------------
#
# Every game whose ROM the installed ale-py ships, as <Game>-v5 with EnvPool's
# option names and defaults. ROMs are read from the ale-py package at make()
# time; nothing from ALE lives in this repository.


def ale_roms_dir() -> str:
    """ale_py/roms of the installed ale-py (found without importing it)."""
    spec = importlib.util.find_spec("ale_py")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the Atari games read their ROMs from the ale-py package: pip install ale-py==0.12.0")
    return os.path.join(spec.submodule_search_locations[0], "roms")


def atari_env_id(rom: str) -> str:
    """ALE's ROM name to the env id, as ale-py and EnvPool spell it: ``space_invaders`` -> ``SpaceInvaders-v5``."""
    return "".join(part.capitalize() for part in rom.split("_")) + "-v5"


def _rom_files() -> dict[str, str]:
    """ROM name -> path, for every .bin the installed ale-py ships (none without ale-py)."""
    try:
        directory = ale_roms_dir()
        names = os.listdir(directory)
    except FileNotFoundError:
        return {}
    return {name[:-4]: os.path.join(directory, name) for name in names if name.endswith(".bin")}


# The ROMs ale-py 0.12.0 ships that ALE plays only with two players: what the
# MD5 check of _atari_roms() leaves out, known without reading a ROM
# (tests/test_registry.py checks the two agree for the pinned ale-py).
_ROMS_NOT_SINGLE_PLAYER = frozenset({"combat", "joust", "maze_craze", "warlords"})


def _atari_roms() -> list[str]:
    """The ROMs of the installed ale-py that ALE can play single-player (by MD5)."""
    rom_supported = _family_modules.module("Atari").rom_supported
    return sorted(rom for rom, path in _rom_files().items() if rom_supported(path))


def _prepare_atari(rom: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def prepare(kwargs: dict[str, Any]) -> dict[str, Any]:
        env_id = atari_env_id(rom)
        checks = [
            ("img_height", 1 <= kwargs["img_height"] <= 210, "in [1, 210] (the screen is 210 x 160)"),
            ("img_width", 1 <= kwargs["img_width"] <= 160, "in [1, 160] (the screen is 210 x 160)"),
            ("stack_num", kwargs["stack_num"] >= 1, "at least 1"),
            ("frame_skip", kwargs["frame_skip"] >= 1, "at least 1"),
            ("noop_max", kwargs["noop_max"] >= 0, "at least 0"),
            ("repeat_action_probability", 0.0 <= kwargs["repeat_action_probability"] <= 1.0, "in [0, 1]"),
            ("resize", kwargs["resize"] in ("area", "bilinear"), "'area' or 'bilinear'"),
            ("preprocessing", kwargs["preprocessing"] in ("gymnasium", "sb3"), "'gymnasium' or 'sb3'"),
        ]
        for name, ok, expected in checks:
            if not ok:
                raise ValueError(f"{env_id}: {name} must be {expected}, got {kwargs[name]!r}")
        path = os.path.join(ale_roms_dir(), f"{rom}.bin")
        if not os.path.exists(path):
            raise FileNotFoundError(
                f"{env_id}: no ROM {path}. The ROMs come with ale-py: "
                f"pip install --force-reinstall ale-py==0.12.0")
        return {**kwargs, "rom_path": path}
    return prepare


_ATARI_KWARGS = {
    "img_height": Kwarg(int, 84, "observation height"),
    "img_width": Kwarg(int, 84, "observation width"),
    "stack_num": Kwarg(int, 4, "frames stacked into one observation"),
    "gray_scale": Kwarg(bool, True, "grey frames (else RGB: 3 planes per frame)"),
    "frame_skip": Kwarg(int, 4, "emulator frames per step; the last two are max-pooled"),
    "noop_max": Kwarg(int, 30, "reset plays 1..noop_max no-op frames (0: none)"),
    "use_fire_reset": Kwarg(bool, True, "press FIRE once after each reset (games that have FIRE)"),
    "episodic_life": Kwarg(bool, False, "a lost life ends the episode (extras' game_over marks the real end)"),
    "reward_clip": Kwarg(bool, False, "rewards become their sign (extras' raw_reward keeps the score)"),
    "repeat_action_probability": Kwarg(float, 0.0, "sticky actions per frame (0.25: Gymnasium's ALE v5)"),
    "full_action_space": Kwarg(bool, False, "all 18 actions instead of the game's minimal set"),
    "resize": Kwarg(str, "area", "'area' (cv2.INTER_AREA, bit-exact) or 'bilinear'"),
    "preprocessing": Kwarg(str, "gymnasium", "'gymnasium' (AtariPreprocessing's frames) or 'sb3' (SB3's "
                           "AtariWrapper: OpenCV grey of the RGB max, FIRE and lost-life resets as SB3 does them)"),
    "mode": Kwarg(int, -1, "the game's mode (ALE's setMode; -1: the game's default)"),
    "difficulty": Kwarg(int, -1, "the game's difficulty (ALE's setDifficulty; -1: the game's default)"),
}


def _atari_built() -> bool:
    return _family_modules.built("Atari")


def _unbuilt_atari(env_id: str) -> bool:
    """Whether env_id would be an Atari id, had the extension been built with the family."""
    if not env_id.endswith("-v5") or _atari_built():
        return False
    return env_id in {atari_env_id(rom) for rom in _rom_files()}
