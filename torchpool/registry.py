"""Env ids: the mechanism that registers them, finds them and checks their task kwargs.

Each registered id maps to a C++ family (``EnvEntry.family``, stepped by the
extension module its family file declares, ``_family_modules``) and a schema
of the task kwargs that family reads. ``resolve_kwargs`` rejects unknown or
ill-typed kwargs with the closest valid names, and fills defaults, so C++
always receives a complete, typed config.

The ids themselves are registered by the family files, one per family beside
its C++ (``torchpool/families/<family>.py`` beside ``csrc/envs/<family>/``);
this module names no family. A family whose ids are costly to find (Atari
hashes its ROMs) registers them on first need (``register_later``), and may
explain an id it would own but cannot serve (``explain_unknown_ids``).
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from numbers import Real
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
    reference: str = ""  # what the env matches (a Gymnasium id where it has one: rendering draws with it)
    hidden: bool = False  # test-only envs: constructible, not listed
    # Turns validated, completed kwargs into what the C++ family reads (e.g.
    # MuJoCo's xml_file name into a path, what the id fixes); may raise for bad values.
    prepare: Callable[[dict[str, Any]], dict[str, Any]] | None = None


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



_REGISTRY: dict[str, EnvEntry] = {}


@dataclass
class _Later:
    """A family's ids registered on first need: ``register()`` registers them, ``ids()`` names them cheaply."""

    register: Callable[[], None]
    ids: Callable[[], Iterable[str]]
    done: bool = False


_LATER: list[_Later] = []
_EXPLAINERS: list[Callable[[str], str | None]] = []
_families_loaded = False


def load_families() -> None:
    """Runs the family files, which register their ids (importing torchpool does; this covers code that
    reaches the registry first)."""
    global _families_loaded
    if not _families_loaded:
        _families_loaded = True
        importlib.import_module(f"{__package__}.families")


def _entries() -> dict[str, EnvEntry]:
    """Every id, the ones registered on first need included."""
    load_families()
    for later in _LATER:
        if not later.done:
            later.done = True
            later.register()
    return _REGISTRY


def register(entry: EnvEntry, replace: bool = False) -> None:
    if entry.env_id in _REGISTRY and not replace:
        raise ValueError(f"env id {entry.env_id!r} is already registered")
    _REGISTRY[entry.env_id] = entry


def register_later(register_ids: Callable[[], None], ids: Callable[[], Iterable[str]]) -> None:
    """Registers a family's ids when first needed: ``register_ids()`` registers them (it may be slow: Atari's
    hashes every ROM), ``ids()`` names them without that cost, for ``list_envs_unchecked``."""
    _LATER.append(_Later(register_ids, ids))


def explain_unknown_ids(explain: Callable[[str], str | None]) -> None:
    """``explain(env_id)``: the whole error message for an unknown id its family would own but cannot serve
    (built without it, its package missing), else None."""
    _EXPLAINERS.append(explain)


def is_registered(env_id: str) -> bool:
    load_families()
    if env_id in _REGISTRY:
        return True
    # Only an id a family would register later is worth its costly registration.
    if not any(env_id in later.ids() for later in _LATER if not later.done):
        return False
    return env_id in _entries()


def list_envs() -> list[str]:
    """Every registered env id, sorted."""
    return sorted(env_id for env_id, entry in _entries().items() if not entry.hidden)


def list_envs_unchecked() -> list[str]:
    """``list_envs()`` without the costly registrations: their ids as their families name them cheaply.

    For registering ids elsewhere (Gymnasium's registry) at import time: it
    loads no module and reads no ROM; making an id ALE cannot play still fails.
    """
    load_families()
    listed = {env_id for env_id, entry in _REGISTRY.items() if not entry.hidden}
    for later in _LATER:
        if not later.done:
            listed.update(later.ids())
    return sorted(listed)


def entries() -> list[EnvEntry]:
    """Every listed id's entry, sorted by id (``python -m torchpool list``, docs/envs.md)."""
    return [_entries()[env_id] for env_id in list_envs()]


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
    load_families()
    # An id registered up front is found without the costly registrations (which hash every ROM).
    entry = _REGISTRY.get(env_id) or _entries().get(env_id)
    if entry is not None:
        return entry
    for explain in _EXPLAINERS:
        message = explain(env_id)
        if message is not None:
            raise ValueError(message)
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
    """What the C++ family reads: ``checked_kwargs``, then the entry's ``prepare`` (paths, what the id fixes)."""
    return prepared(entry, checked_kwargs(entry, kwargs, callers_arguments))


def prepared(entry: EnvEntry, checked: dict[str, Any]) -> dict[str, Any]:
    """``checked_kwargs``' result as the C++ family reads it (the entry's ``prepare``)."""
    return entry.prepare(dict(checked)) if entry.prepare is not None else dict(checked)


def checked_kwargs(entry: EnvEntry, kwargs: dict[str, Any], callers_arguments: Sequence[str] = ()) -> dict[str, Any]:
    """Validates ``kwargs`` against the entry's schema and fills defaults: the id's kwargs as a user passes
    them (``Pool.task_kwargs``; making the id again with them makes the same env).

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
    return resolved
