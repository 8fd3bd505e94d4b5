"""A pytest plug-in that runs Stable-Baselines3's own VecEnv tests on torchpool's ``PoolVecEnv``.

Loaded with ``-p sb3_plugin`` (this folder on ``PYTHONPATH``; ``tests/peers/run_sb3.sh`` does it), it
replaces SB3's ``DummyVecEnv`` and ``SubprocVecEnv`` before SB3's test modules import them: every
module of ``stable_baselines3`` that holds either name (``stable_baselines3.common.vec_env``, its
submodules, ``env_util``'s ``make_vec_env``, the algorithms' single-env wrapping) gets torchpool's
stand-in instead. SB3's assertions run unchanged.

* ``DummyVecEnv(env_fns)``: ``PoolVecEnv`` over ``torchpool.make(env_fns, steps_in="caller")``, the
  envs built and stepped in this process, as SB3's.
* ``SubprocVecEnv(env_fns, start_method=None)``: the same with ``steps_in="workers"``, torchpool's
  worker processes (as many as the cores, at most one per env; ``start_method`` is checked as SB3
  checks it, then unused: torchpool starts its own workers).

Both are unseeded until ``seed()``, as SB3's (``seed=None``: the pool draws one) and take no
Monitor of their own (``monitor=False``): SB3's tests wrap the envs they want monitored.
"""

from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Callable

import cloudpickle
import gymnasium
import stable_baselines3  # noqa: F401  (loads the modules whose names are swapped below)
import stable_baselines3.common.env_util  # noqa: F401
import stable_baselines3.common.vec_env as sb3_vec_env

from torchpool.sb3 import PoolVecEnv

ORIGINALS = {"DummyVecEnv": sb3_vec_env.DummyVecEnv, "SubprocVecEnv": sb3_vec_env.SubprocVecEnv}


class PoolDummyVecEnv(PoolVecEnv):
    """SB3's ``DummyVecEnv(env_fns)``: the envs of ``env_fns`` stepped in this process by a torchpool pool."""

    def __init__(self, env_fns: list[Callable[[], gymnasium.Env]]):
        super().__init__(list(env_fns), num_envs=len(env_fns), seed=None, monitor=False, steps_in="caller")


class PoolSubprocVecEnv(PoolVecEnv):
    """SB3's ``SubprocVecEnv(env_fns, start_method)``: the envs of ``env_fns`` in torchpool's worker processes."""

    def __init__(self, env_fns: list[Callable[[], gymnasium.Env]], start_method: str | None = None):
        if start_method is not None:
            multiprocessing.get_context(start_method)  # an unknown method raises ValueError, as SB3's does
        super().__init__(list(env_fns), num_envs=len(env_fns), seed=None, monitor=False, steps_in="workers")


STAND_INS = {"DummyVecEnv": PoolDummyVecEnv, "SubprocVecEnv": PoolSubprocVecEnv}


def swap_vec_envs() -> list[str]:
    """Puts the stand-ins where any loaded ``stable_baselines3`` module holds SB3's classes; the names swapped."""
    swapped = []
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith("stable_baselines3"):
            continue
        for name, original in ORIGINALS.items():
            if getattr(module, name, None) is original:
                setattr(module, name, STAND_INS[name])
                swapped.append(f"{module_name}.{name}")
    return swapped


SWAPPED = swap_vec_envs()


def pytest_runtest_setup(item) -> None:
    """SB3's test modules travel to torchpool's workers by value: a worker that unpickled their envs by
    reference would import the test module, and with it SB3 and torch, seconds per worker (SB3's own
    tests wrapped in its Monitor still import SB3 there, as in SB3's SubprocVecEnv)."""
    module = getattr(item, "module", None)
    if module is not None and module.__name__ in sys.modules:
        cloudpickle.register_pickle_by_value(module)


def pytest_report_header(config) -> str:
    return (f"torchpool sb3_plugin: SB3's DummyVecEnv and SubprocVecEnv are torchpool's PoolVecEnv "
            f"({len(SWAPPED)} names)")
