"""The checks of the arguments every pool takes, C++ envs' (``Pool``) and Python envs' (``ProcessPool``) alike,
and which of the two an env argument asks for (``make()`` dispatches on ``is_process_env``).

Each check returns the value as the pool keeps it, or raises ``ValueError`` /
``TypeError`` naming the argument and what it got. Both pools call them before
anything is built: ``ProcessPool`` before its first worker process starts,
``Pool.__init__`` again before the core is made (cheap, and the one place a
C++ pool checks). What only one kind of pool takes is checked there
(``Pool``: ``num_threads``, ``obs_dtype``; ``ProcessPool``: ``num_workers``,
``step_timeout``, ``steps_in``, and ``_workers/argument_checks.py`` for the
env constructors). This module imports no other of torchpool's.
"""

from __future__ import annotations

import sys
from collections.abc import Collection
from typing import Any

import numpy as np

# A Python env named by its Gymnasium id: "gymnasium:<EnvId>" (or "gymnasium:<module>:<EnvId>").
GYMNASIUM_PREFIX = "gymnasium:"


def is_process_env(env: Any) -> bool:
    """Whether ``torchpool.make(env)`` makes a process pool: a callable, a list of them, or ``"gymnasium:<id>"``."""
    if isinstance(env, str):
        return env.startswith(GYMNASIUM_PREFIX)
    return callable(env) or (isinstance(env, (list, tuple)) and len(env) > 0
                             and all(callable(f) for f in env))


def is_env_instance(env: Any) -> bool:
    """A ``gymnasium.Env`` or ``VectorEnv`` object (checked without importing Gymnasium)."""
    gymnasium = sys.modules.get("gymnasium")
    if gymnasium is None:
        return False
    return isinstance(env, (gymnasium.Env, gymnasium.vector.VectorEnv))


def refuse_env_instances(env: Any) -> None:
    """Raises ``TypeError`` for a ``gymnasium.Env`` instance (or a list of them) given to ``make()``."""
    items = env if isinstance(env, (list, tuple)) else [env]
    for item in items:
        if is_env_instance(item):
            raise TypeError(
                f"torchpool.make() got an env instance ({item}): pass a callable or an id, not an instance. "
                "A pool builds its own envs in worker processes, e.g. torchpool.make(lambda: "
                "gymnasium.make('CartPole-v1'), ...) or torchpool.make('gymnasium:CartPole-v1', ...)")


def positive_int(name: str, value: Any) -> int:
    """``value`` as an int, if it is an integer (not a bool) of at least 1."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


def checked_sizes(num_envs: Any, batch_size: Any) -> tuple[int, int]:
    """``num_envs`` and ``batch_size`` (``None``: ``num_envs``), checked."""
    num_envs = positive_int("num_envs", num_envs)
    batch_size = num_envs if batch_size is None else positive_int("batch_size", batch_size)
    if batch_size > num_envs:
        raise ValueError(f"batch_size={batch_size} is larger than num_envs={num_envs}")
    return num_envs, batch_size


def draw_seed(num_envs: int) -> int:
    """A fresh random seed for ``num_envs`` envs, from the OS's entropy as Gymnasium draws one.

    Every ``seed + i`` stays below 2**32: a Python env may hand its seed to an API that takes no more
    (``np.random.seed``, ``random.seed`` in old gym code), where Gymnasium's vector envs would run it.
    """
    return int(np.random.SeedSequence().entropy) % (2**32 - num_envs)


def checked_seed(seed: Any, num_envs: int) -> int:
    """An int seed such that every env's ``seed + i`` fits an int64."""
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or not 0 <= seed < 2**63 - num_envs:
        raise ValueError(f"seed must be an int in [0, 2**63 - num_envs) or None, got {seed!r}")
    return int(seed)


def seed_or_drawn(seed: Any, num_envs: int) -> int:
    """A pool's ``seed`` argument: checked, or drawn (``draw_seed``) where it is ``None``."""
    return checked_seed(draw_seed(num_envs) if seed is None else seed, num_envs)


def checked_time_limit(max_episode_steps: Any) -> int | None:
    """``max_episode_steps`` as given, if it is a non-negative int or None."""
    if max_episode_steps is not None and (not isinstance(max_episode_steps, int)
                                          or isinstance(max_episode_steps, bool) or max_episode_steps < 0):
        raise ValueError(f"max_episode_steps must be a non-negative int or None, got {max_episode_steps!r}")
    return max_episode_steps


def checked_choice(name: str, value: Any, choices: Collection[str]) -> str:
    """``value``, if it is one of the strings ``choices`` (``autoreset``: the core's modes)."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {value!r}")
    return value


def checked_pin_memory(pin_memory: Any) -> bool | None:
    """``pin_memory`` as given, if it is a bool or None."""
    if pin_memory is not None and not isinstance(pin_memory, bool):
        raise TypeError(f"pin_memory must be a bool or None, got {pin_memory!r}")
    return pin_memory
