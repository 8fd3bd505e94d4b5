"""RLlib's env creator for torchpool: each env runner's vector env is one pool.

    from ray.rllib.algorithms.ppo import PPOConfig
    import torchpool.rllib

    config = (PPOConfig()
              .environment(torchpool.rllib.VectorEnv, env_config={"env_id": "CartPole-v1", "num_threads": 1})
              .env_runners(num_env_runners=2, num_envs_per_env_runner=16,
                           gym_env_vectorize_mode="vector_entry_point"))

RLlib's new API stack (tested with Ray 2.60.0) builds each env runner's env with
``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")`` from the
class given to ``.environment(env=...)``, calling it with one plain dict: the
``env_config`` plus ``"num_envs"`` (``num_envs_per_env_runner``). It steps what that
returns with NumPy actions and expects NumPy outputs and next-step autoreset,
which :class:`torchpool.gym.VectorEnv`'s defaults are. ``torchpool.rllib.VectorEnv``
is only the bridge from that dict to it, plus one change to seeding (below). (RLlib
takes an env class or a registered name there, not a function; ``torchpool.gym.VectorEnv``
itself cannot take the dict.)

Seeds. RLlib seeds env runner ``k`` with ``config.seed + k`` (evaluation runners
``+ 1e6``) at its first reset, and a Gymnasium vector env seeds env ``i`` of
``reset(seed=s)`` with ``s + i``: runner ``k``'s env ``i + 1`` and runner ``k + 1``'s
env ``i`` would start from the same seed (they do under RLlib's own vectorization).
Here env ``i`` of ``reset(seed=s)`` gets ``s * num_envs + i``, so no two envs of a run
share a seed, whatever the number of runners. ``reset(seed=None)`` continues each
env's stream, as ``VectorEnv`` does.

Copies. ``reset`` and ``step`` hand RLlib copies of the pool's outputs (NumPy arrays of their own, as
Gymnasium's ``SyncVectorEnv``, ``copy=True``, hands it), not views of the pool's output ring. RLlib keeps
each observation row in its episode objects, and a ring block a row of which is still held cannot be
written again (NOTE [Output ring reuse] in torchpool/_held.py): with views, the pool builds a fresh
buffer (a TensorDict, the watch's baselines: a few hundred us, and objects for the garbage collector) at
nearly every step of a runner's first ``sample()``, until its lent buffers (NOTE [Lent buffers] in
torchpool/pool.py) cover how long RLlib holds rows (about one ``sample()``: ~500 buffers at 4,000 steps of
8 envs), then swaps one every step. That made the first ``sample()`` of CartPole-v1 at 8 envs ~25% slower
than on RLlib's own ``SyncVectorEnv``; a copy of a CartPole batch is about a microsecond
(benchmarks/rllib_sampling.py).

torchpool does not import Ray: this module only shapes what RLlib calls. RLlib
itself goes in an environment of its own (``ray[rllib]==2.60.0`` pins
``gymnasium==1.2.2``; docs/distributed.md, "RLlib").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from . import gym

__all__ = ["VectorEnv"]


class VectorEnv(gym.VectorEnv):
    """One env runner's vector env, built from RLlib's env config: pass the class as ``.environment(env=...)``.

    ``config``: ``"env_id"`` (a torchpool id, ``torchpool.list_envs()``), ``"num_envs"`` (RLlib adds it:
    ``num_envs_per_env_runner``), and any other :class:`torchpool.gym.VectorEnv` / ``torchpool.make``
    keyword (``num_threads``, ``max_episode_steps``, task kwargs...). ``array_type`` and ``autoreset_mode``
    are refused: RLlib steps NumPy outputs with next-step autoreset, ``torchpool.gym.VectorEnv``'s defaults.

    Everything is ``torchpool.gym.VectorEnv``'s (observations ``[num_envs, ...]`` as NumPy arrays, rewards
    float32 ``[num_envs]``, terminations and truncations bool ``[num_envs]``) but seeding: ``reset(seed=s)``
    with an int seeds env ``i`` with ``s * num_envs + i``, and the outputs are copies, not views of the
    pool's output ring (the module docstring says why of both).
    """

    def __init__(self, config: Mapping[str, Any]):
        kwargs = dict(config)
        try:
            env_id = kwargs.pop("env_id")
        except KeyError:
            raise ValueError("torchpool.rllib.VectorEnv needs env_config={'env_id': ...}, a torchpool env id") \
                from None
        for refused in ("array_type", "autoreset_mode", "autoreset"):
            if refused in kwargs:
                raise ValueError(f"RLlib steps NumPy outputs with next-step autoreset: {refused}= cannot be set")
        super().__init__(env_id, num_envs=int(kwargs.pop("num_envs", 1)), **kwargs)

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        if isinstance(seed, (int, np.integer)):
            seed = [int(seed) * self.num_envs + i for i in range(self.num_envs)]
        observation, info = super().reset(seed=seed, options=options)
        return _copy(observation), _copy_info(info)

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        observation, reward, terminated, truncated, info = super().step(actions)
        return _copy(observation), _copy(reward), _copy(terminated), _copy(truncated), _copy_info(info)


def _copy(value: Any) -> Any:
    """``value`` with each NumPy array in it (a batch; named fields: a dict of them; a Python env's Tuple
    space: a tuple) copied; anything else as it is."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {key: _copy(leaf) for key, leaf in value.items()}
    if isinstance(value, tuple):
        return tuple(_copy(leaf) for leaf in value)
    return value


def _copy_info(info: dict[str, Any]) -> dict[str, Any]:
    """``info`` with the family's extras (``lives``...) copied; their masks (``_lives``) are fresh already."""
    if not info:
        return info
    return {key: value if key.startswith("_") else _copy(value) for key, value in info.items()}
