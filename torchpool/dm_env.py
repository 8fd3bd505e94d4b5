"""DeepMind's ``dm_env`` API over torchpool: one env as dm_control's ``suite.load`` gives it.

    from torchpool import dm_env as suite        # was: from dm_control import suite
    env = suite.load("walker", "walk", task_kwargs={"random": 1})
    timestep = env.reset()                       # StepType.FIRST, reward None, observation an OrderedDict
    timestep = env.step(action)                  # float reward, discount 1.0 (0.0 where a task terminates)

:class:`Environment` is a ``dm_env.Environment`` over a one-env :class:`torchpool.Pool` of any id
(observations in float64, as dm_control's): a step after ``LAST`` (or on a fresh environment) resets
and ignores its action, as ``control.Environment`` does. Batched ``dm_env`` timesteps, EnvPool's
``env_type="dm"``, are :func:`torchpool.envpool_compat.make_dm`'s.
"""

from __future__ import annotations

import collections
from typing import Any

import dm_env
import numpy as np
import torch
from dm_env import specs

from .families import dmc
from .pool import make as _make_pool
from .specs import BoxSpec, DictSpec, DiscreteSpec

__all__ = ["Environment", "load", "observation_spec", "action_spec"]


def observation_spec(spec: BoxSpec | DictSpec) -> Any:
    """A pool's observation spec as ``dm_env`` specs: an OrderedDict of ``Array`` by key for named
    fields (dm_control's unbounded observations), else one ``Array`` / ``BoundedArray`` named "observation"."""
    if isinstance(spec, DictSpec):
        return collections.OrderedDict((key, _array_spec(field, key)) for key, field in spec.fields.items())
    return _array_spec(spec, "observation")


def action_spec(spec: BoxSpec | DiscreteSpec) -> specs.Array:
    """A pool's action spec as ``dm_env``'s: a ``BoundedArray`` (float64, as dm_control's) or a ``DiscreteArray``."""
    if isinstance(spec, DiscreteSpec):
        return specs.DiscreteArray(int(spec.n), dtype=np.int64, name="action")
    return specs.BoundedArray(spec.shape, np.float64, spec.low.double().numpy(), spec.high.double().numpy(),
                              name="action")


def _array_spec(spec: BoxSpec, name: str) -> specs.Array:
    dtype = torch.empty((), dtype=spec.dtype).numpy().dtype
    if bool(torch.isinf(spec.low).all() and torch.isinf(spec.high).all()):
        return specs.Array(spec.shape, dtype, name=name)
    return specs.BoundedArray(spec.shape, dtype, _uniform(spec.low.numpy().astype(dtype)),
                              _uniform(spec.high.numpy().astype(dtype)), name=name)


def _uniform(bound: np.ndarray) -> np.ndarray:
    """A bound the same everywhere as one value (``maximum == 255`` reads as a bool, as in dm_control's and
    EnvPool's specs); else the array."""
    return bound.flat[0] if bound.size and (bound == bound.flat[0]).all() else bound


class Environment(dm_env.Environment):
    """One env of ``env_id`` behind the ``dm_env.Environment`` interface; see the module docstring."""

    def __init__(self, env_id: str, seed: int = 0, **make_kwargs: Any):
        make_kwargs.setdefault("obs_dtype", torch.float64)
        self._pool = _make_pool(env_id, num_envs=1, seed=seed, autoreset="disabled", **make_kwargs)
        self._observation_spec = observation_spec(self._pool.observation_spec)
        self._action_spec = action_spec(self._pool.action_spec)
        self._reset_next_step = True

    def reset(self) -> dm_env.TimeStep:
        self._reset_next_step = False
        return dm_env.restart(self._observation(self._pool.reset()))

    def step(self, action: Any) -> dm_env.TimeStep:
        if self._reset_next_step:
            return self.reset()
        action = torch.as_tensor(np.asarray(action))[None]
        td = self._pool.step(action)
        observation, reward = self._observation(td), float(td["reward"][0])
        if bool(td["terminated"][0]):
            self._reset_next_step = True
            return dm_env.termination(reward, observation)
        if bool(td["truncated"][0]):
            self._reset_next_step = True
            return dm_env.truncation(reward, observation)
        return dm_env.transition(reward, observation)

    def observation_spec(self) -> Any:
        return self._observation_spec

    def action_spec(self) -> specs.Array:
        return self._action_spec

    def close(self) -> None:
        self._pool.close()

    @property
    def pool(self):
        """The one-env :class:`torchpool.Pool` underneath (autoreset disabled)."""
        return self._pool

    def _observation(self, td) -> Any:
        observation = td["observation"]
        if isinstance(observation, torch.Tensor):
            return observation[0].numpy().copy()
        return collections.OrderedDict((key, value[0].numpy().copy()) for key, value in observation.items())


def load(domain_name: str, task_name: str, task_kwargs: dict | None = None,
         environment_kwargs: dict | None = None, **make_kwargs: Any) -> Environment:
    """dm_control's ``suite.load``: the Control Suite task as a :class:`Environment` (one env).

    ``task_kwargs={"random": seed}`` seeds it (an int; dm_control also takes a RandomState, which
    torchpool cannot follow); ``environment_kwargs={"flat_observation": True}`` gives one vector under
    the key "observations", as dm_control does. Other keywords go to :func:`torchpool.make`
    (e.g. ``frame_skip``).
    """
    task_kwargs = dict(task_kwargs or {})
    seed = task_kwargs.pop("random", None)
    if seed is not None and not isinstance(seed, (int, np.integer)):
        raise TypeError(f"task_kwargs['random'] must be an int seed for torchpool, got {type(seed).__name__}")
    if task_kwargs:
        raise ValueError(f"torchpool's Control Suite tasks take no task_kwargs but 'random', got {sorted(task_kwargs)}")
    environment_kwargs = dict(environment_kwargs or {})
    flat = bool(environment_kwargs.pop("flat_observation", False))
    if environment_kwargs:
        raise ValueError("torchpool's Control Suite tasks take no environment_kwargs but 'flat_observation', "
                         f"got {sorted(environment_kwargs)}")
    env_id = dmc.dmc_env_id(domain_name, task_name)
    if env_id not in dmc.DMC_IDS:
        raise ValueError(f"unknown Control Suite task ({domain_name!r}, {task_name!r}); torchpool has "
                         f"{sorted(dmc.DMC_IDS.values())}")
    env = Environment(env_id, seed=0 if seed is None else int(seed), flatten_obs=flat, **make_kwargs)
    if flat:
        env._observation_spec = collections.OrderedDict(observations=specs.Array(
            env._observation_spec.shape, env._observation_spec.dtype, name="observations"))
        env._observation = _flat(env._observation)
    return env


def _flat(observation):
    return lambda td: collections.OrderedDict(observations=observation(td))
