"""A pytest plug-in that runs Gymnasium's own vector-env tests with ``AsyncVectorEnv`` swapped for torchpool's.

``pytest -p gymnasium_plugin`` (with this folder on ``sys.path``) replaces
``gymnasium.vector.AsyncVectorEnv``, and the same name in every Gymnasium module
that imported it (``gymnasium.envs.registration`` for ``make_vec(..., "async")``),
with :func:`AsyncVectorEnv` below, before any test module is imported: each
``AsyncVectorEnv(env_fns, ...)`` in Gymnasium's tests builds a
:class:`torchpool.gym.VectorEnv` over a pool of the same ``env_fns``, with the same
``autoreset_mode`` and ``observation_mode``. Gymnasium's test files run as they are
(run_gymnasium.sh takes them from Gymnasium's repository); ``SyncVectorEnv`` stays
Gymnasium's own, the reference the tests compare against.

The cases a drop-in cannot pass would be skipped in :data:`SKIPPED`, each with why: none at present
(Gymnasium 1.4.0's four files all pass, the envs in the calling process and in worker processes).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import pytest

# Test ids (as pytest names them, ``file::test[params]``, a prefix matches) that no drop-in can pass,
# with the reason. Empty: every case passes.
SKIPPED: dict[str, str] = {}


def AsyncVectorEnv(env_fns: Sequence[Callable[[], Any]], shared_memory: bool = True, copy: bool = True,  # noqa: N802
                   context: str | None = None, daemon: bool = True, worker: Any = None,
                   observation_mode: Any = "same", autoreset_mode: Any = None) -> Any:
    """``gymnasium.vector.AsyncVectorEnv``'s signature, making torchpool's ``VectorEnv``.

    ``shared_memory``, ``copy``, ``context`` and ``daemon`` are how Gymnasium's
    workers hand observations back; torchpool's pool always shares memory and
    returns views that stay valid (NOTE [Output ring reuse]), so they change
    nothing here. ``worker`` (a replacement of Gymnasium's worker loop) has no
    equivalent and is refused.
    """
    import torchpool.gym

    if worker is not None:
        raise TypeError("torchpool's VectorEnv has no replaceable worker function")
    kwargs: dict[str, Any] = {"observation_mode": observation_mode}
    if autoreset_mode is not None:
        kwargs["autoreset_mode"] = autoreset_mode
    env_fns = list(env_fns)
    # Where the envs step: "auto" (torchpool's choice: cheap test envs step in the calling process),
    # "caller" or "workers" (worker processes, as AsyncVectorEnv's), from TORCHPOOL_STEPS_IN.
    steps_in = os.environ.get("TORCHPOOL_STEPS_IN", "auto")
    return torchpool.gym.VectorEnv(env_fns, num_envs=len(env_fns), steps_in=steps_in, **kwargs)


def pytest_load_initial_conftests(early_config, parser, args) -> None:
    import gymnasium.vector

    original = gymnasium.vector.AsyncVectorEnv
    for module in list(sys.modules.values()):
        if getattr(module, "AsyncVectorEnv", None) is original and module.__name__.startswith("gymnasium"):
            module.AsyncVectorEnv = AsyncVectorEnv


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        for prefix, reason in SKIPPED.items():
            if item.nodeid.startswith(prefix):
                item.add_marker(pytest.mark.skip(reason=f"torchpool drop-in: {reason}"))
