"""Env ids, their C++ family, defaults, and task-kwarg validation.

Each registered id maps to a C++ family (a name in ``torchpool._core.families()``)
and a schema of the task kwargs that family reads. ``resolve_kwargs`` rejects
unknown or ill-typed kwargs with the closest valid names, and fills defaults,
so C++ always receives a complete, typed config.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any


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


_REGISTRY: dict[str, EnvEntry] = {}


def register(entry: EnvEntry) -> None:
    if entry.env_id in _REGISTRY:
        raise ValueError(f"env id {entry.env_id!r} is already registered")
    _REGISTRY[entry.env_id] = entry


def list_envs() -> list[str]:
    """Every registered env id, sorted."""
    return sorted(env_id for env_id, entry in _REGISTRY.items() if not entry.hidden)


def _closest(name: str, choices: list[str]) -> str:
    matches = difflib.get_close_matches(name, choices, n=3, cutoff=0.5)
    if not matches:
        lowered = {c.lower(): c for c in choices}
        matches = [lowered[c] for c in difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.5)]
    return f" Did you mean {', '.join(repr(m) for m in matches)}?" if matches else ""


def lookup(env_id: str) -> EnvEntry:
    if not isinstance(env_id, str):
        raise TypeError(f"env_id must be a str, got {type(env_id).__name__}")
    try:
        return _REGISTRY[env_id]
    except KeyError:
        raise ValueError(
            f"unknown env id {env_id!r}.{_closest(env_id, list_envs())} "
            f"torchpool.list_envs() lists all {len(list_envs())} ids."
        ) from None


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


def resolve_kwargs(entry: EnvEntry, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Validates ``kwargs`` against the entry's schema and fills defaults."""
    resolved = {}
    for name, value in kwargs.items():
        if name not in entry.kwargs:
            known = ", ".join(sorted(entry.kwargs)) or "none"
            raise TypeError(
                f"{entry.env_id} got an unknown kwarg {name!r}.{_closest(name, list(entry.kwargs))} "
                f"Its task kwargs: {known}."
            )
        resolved[name] = _check_type(entry.env_id, name, value, entry.kwargs[name].type)
    for name, spec in entry.kwargs.items():
        resolved.setdefault(name, spec.default)
    return resolved


# ---- classic control (csrc/envs/classic) --------------------------------------

register(EnvEntry("CartPole-v1", "CartPole",
                  {"sutton_barto_reward": Kwarg(bool, False, "reward 0 per step and -1 on failure")},
                  reference="CartPole-v1"))
register(EnvEntry("Pendulum-v1", "Pendulum",
                  {"g": Kwarg(float, 10.0, "gravity")},
                  reference="Pendulum-v1"))
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
    "fail_at_step": Kwarg(int, -1, "the env's n-th step raises; -1 never"),
}, hidden=True))
