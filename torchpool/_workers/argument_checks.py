"""What the parent checks before any worker process starts, so that a mistake fails at once and says what to do.

- An env *instance* (a pool builds its own envs, in other processes):
  ``torchpool/_arguments.py``, which ``make()`` asks first.
- A ``"gymnasium:<id>"`` nobody registered: Gymnasium's own message, and
  how to register it (NOTE [Registrations], worker.py).
- A keyword the env's constructor does not take: usually a typo of one of
  torchpool's own arguments (``num_worker=2``), which would otherwise reach
  the constructor in every worker and fail there seconds later.

And what the parent hands the workers for ids it registered
(``parent_registrations``).
"""

from __future__ import annotations

import difflib
import inspect
import sys
from collections.abc import Callable
from typing import Any

# Gymnasium's own ids: every worker has them without being told.
_GYMNASIUM_ENTRY_POINTS = "gymnasium."
# The arguments of torchpool.make() and ProcessPool: a keyword close to one of
# these, and named by no env constructor, is a typo.
TORCHPOOL_ARGUMENTS = ("num_envs", "batch_size", "num_workers", "seed", "autoreset", "env_kwargs",
                       "max_episode_steps", "pin_memory", "spin_polls", "step_timeout", "steps_in", "num_threads",
                       "obs_dtype")
# gymnasium.make()'s own keywords, besides those of the env's constructor.
_MAKE_KEYWORDS = ("max_episode_steps", "disable_env_checker", "render_mode")


def find_gymnasium_spec(gym_id: str):
    """Gymnasium's spec of ``gym_id`` (``"module:id"`` imports the module first), or a clear error."""
    import gymnasium
    from gymnasium.envs import registration

    find = getattr(registration, "_find_spec", gymnasium.spec)
    try:
        return find(gym_id)
    except gymnasium.error.UnregisteredEnv as error:
        raise type(error)(
            f"{error} ('gymnasium:{gym_id}': the id must be registered in this process before torchpool.make(), "
            "usually by importing the package that registers it (import minigrid, import gymnasium_robotics, "
            "your own module calling gymnasium.register), or named with its module, 'gymnasium:<module>:<id>', "
            "which imports <module> first; every worker process then knows it)") from None


def parent_registrations() -> dict[str, bytes]:
    """The ids registered in this process beyond Gymnasium's own, as ``{id: cloudpickled EnvSpec}``.

    Each spec is pickled alone: one that does not pickle (an entry point
    defined in a closure, say) is left out rather than failing the pool; a
    worker unpickles them only when it meets an id it does not know.
    """
    gymnasium = sys.modules.get("gymnasium")
    if gymnasium is None:
        return {}
    import cloudpickle

    registrations = {}
    for env_id, spec in list(gymnasium.registry.items()):
        entry_point = spec.entry_point
        if isinstance(entry_point, str) and entry_point.startswith(_GYMNASIUM_ENTRY_POINTS):
            continue
        try:
            registrations[env_id] = cloudpickle.dumps(spec)
        except Exception:
            continue
    return registrations


def _parameters(constructor: Callable) -> tuple[list[str], bool] | None:
    """The keyword names ``constructor`` takes and whether it takes any (``**kwargs``); None if unknown."""
    try:
        signature = inspect.signature(constructor)
    except (TypeError, ValueError):
        return None
    names, any_keyword = [], False
    for parameter in signature.parameters.values():
        if parameter.kind is parameter.VAR_KEYWORD:
            any_keyword = True
        elif parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            names.append(parameter.name)
    return names, any_keyword


def _gymnasium_parameters(gym_id: str) -> tuple[str, tuple[list[str], bool] | None]:
    from gymnasium.envs.registration import load_env_creator

    spec = find_gymnasium_spec(gym_id)
    creator = spec.entry_point if callable(spec.entry_point) else load_env_creator(spec.entry_point)
    found = _parameters(creator)
    if found is None:
        return spec.id, None
    names, any_keyword = found
    return spec.id, (list(dict.fromkeys(names + list(spec.kwargs) + list(_MAKE_KEYWORDS))), any_keyword)


def check_env_kwargs(env_fn: Any, env_fns: list, kwargs: dict, per_env_kwargs: list[dict]) -> None:
    """Raises ``TypeError`` for a keyword the constructor of some env would not take."""
    keywords = set(kwargs).union(*per_env_kwargs)
    if not keywords:
        return
    if isinstance(env_fn, str):
        name, found = _gymnasium_parameters(env_fn.split(":", 1)[1])
        constructors = [(f"gymnasium.make({name!r})", found)]
    else:
        originals = list(env_fn) if isinstance(env_fn, (list, tuple)) else [env_fn]
        constructors = [(getattr(fn, "__qualname__", None) or type(fn).__name__, _parameters(fn))
                        for fn in {id(fn): fn for fn in originals}.values()]
    for name, found in constructors:
        if found is None:  # a signature Python cannot read: the worker will say
            continue
        names, any_keyword = found
        for keyword in sorted(keywords):
            if keyword in names:
                continue
            ours = difflib.get_close_matches(keyword, TORCHPOOL_ARGUMENTS, n=1, cutoff=0.75)
            if any_keyword and not ours:
                continue
            theirs = difflib.get_close_matches(keyword, names, n=1, cutoff=0.75)
            guess = ours or theirs
            hint = f" Did you mean {guess[0]}?" if guess else ""
            raise TypeError(
                f"{keyword}= is neither an argument of torchpool.make() nor of the env constructor {name} "
                f"(which takes {', '.join(names) or 'no keywords'}).{hint} Keywords torchpool does not know go to "
                "the env's constructor; env_kwargs={...} says so explicitly")

