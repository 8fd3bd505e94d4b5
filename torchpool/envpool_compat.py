"""EnvPool-style ``make()``: CleanRL-style EnvPool scripts run on torchpool by changing one import.

    import torchpool.envpool_compat as envpool     # was: import envpool
    envs = envpool.make("CartPole-v1", env_type="gym", num_envs=8, seed=1)
    obs = envs.reset()                                             # float32[8, 4]
    obs, reward, done, info = envs.step(actions)                   # legacy gym 4-tuple

The returned object behaves as an EnvPool pool (``envpool/python/envpool.py``
and ``gym_envpool.py`` of EnvPool 0.8, the API those scripts were written for):

* ``env_type="gym"``: ``reset()`` returns the observations only (``(obs, info)``
  with ``gym_reset_return_info=True``), ``step()`` the 4-tuple
  ``(obs, reward, done, info)`` with ``info["TimeLimit.truncated"]``.
  Where the legacy ``gym`` package is installed, spaces are instances of both
  ``gym.spaces`` and ``gymnasium.spaces`` classes (NOTE [Spaces of both gym and
  Gymnasium] in ``specs.py``): a script's ``isinstance(envs.action_space,
  gym.spaces.Discrete)`` holds, as with EnvPool, and rl_games' EnvPool wrapper
  can still put them in a ``gymnasium.spaces.Dict``. Without ``gym`` they are
  Gymnasium's.
* ``env_type="gymnasium"``: ``reset()`` returns ``(obs, info)``, ``step()`` the
  5-tuple ``(obs, reward, terminated, truncated, info)``; Gymnasium spaces.
* next-step autoreset, as EnvPool: the step after an episode ends resets that
  env, ignores its action, and returns reward 0 and ``elapsed_step`` 0.
* ``send(action, env_id)`` / ``recv()`` / ``async_reset()`` for async pools
  (``batch_size < num_envs``), and ``step(action, env_id)``.
* ``observation_space`` / ``action_space`` are single-env spaces (EnvPool's
  convention); ``single_*_space``, ``num_envs`` and ``is_vector_env`` are plain
  attributes a script may overwrite, as CleanRL's scripts do.
* ``config`` (a dict) and ``spec`` (an :class:`EnvSpec`: ``config`` as a
  namedtuple, ``observation_space`` / ``action_space`` in gym's flavour, both
  libraries' where ``gym`` is installed, and ``gymnasium_observation_space`` /
  ``gymnasium_action_space``), as EnvPool's pools carry; every pool is an
  instance of ``envpool_compat.python.envpool.EnvPoolMixin``, the class
  EnvPool's pools share. With ``sys.modules["envpool"] = torchpool.envpool_compat``
  torchrl's ``MultiThreadedEnv`` and ``MultiThreadedEnvWrapper`` run on torchpool.

``info`` (all arrays ``[batch]``): ``env_id`` and ``elapsed_step`` (int32),
``players = {"env_id": ...}``, as EnvPool gives for every task; and, for every
family, the keys EnvPool's Atari tasks add and Atari scripts read: ``lives``
(int32; 0 for families without lives), ``reward`` (float32, the unclipped
reward) and ``terminated`` (int32, 1 where the game is over: Atari's
``game_over`` extra, so a life lost under ``episodic_life`` is not a game
over; elsewhere terminated with no lives left). Giving these to every family is a superset of EnvPool that
lets an Atari-shaped script (CleanRL's ``RecordEpisodeStatistics``) run on
any task.

Arrays are NumPy views of the pool's output ring: never copied, never
overwritten while a script holds them (NOTE [Output ring reuse]).
"""

from __future__ import annotations

import functools
import types
import warnings
from collections import namedtuple
from dataclasses import dataclass
from typing import Any, Literal

import gymnasium
import numpy as np
import torch
from tensordict import TensorDict

from . import registry
from ._workers import is_process_env
from .pool import FIXED_KEYS, Pool
from .pool import make as _make_pool
from .specs import BoxSpec, DictSpec, DiscreteSpec

__all__ = ["make", "make_gym", "make_gymnasium", "make_dm", "EnvPool", "DmEnvPool", "EnvSpec", "EnvPoolMixin"]

# Keys other than the fixed ones are family extras.
_POOL_KEYS = frozenset(FIXED_KEYS)
# Atari's extras that EnvPool exposes under other names: lives, reward (unclipped) and terminated (the game's
# end). Only the Atari family's (Pool.family): another pool's extras of those names stay as they are.
_ATARI_RENAMED_EXTRAS = frozenset({"lives", "raw_reward", "game_over"})
# env_type="dm" (NOTE [TimeSteps as EnvPool gives them]): the Control Suite's observation fields are float64
# in EnvPool, and its fish domain puts velocity before target (dm_control: target, then velocity).
_CONTROL_SUITE = frozenset(family for family, _, _ in registry.DMC_DOMAINS.values())
_ENVPOOL_FIELD_ORDER = {"DmcFish": ("joint_angles", "upright", "velocity", "target")}


def make(
    task_id: str,
    env_type: Literal["gym", "gymnasium", "dm"],
    num_envs: int = 1,
    batch_size: int | None = None,
    seed: int = 42,
    num_threads: int | None = None,
    max_episode_steps: int | None = None,
    thread_affinity_offset: int = -1,
    gym_reset_return_info: bool = False,
    max_num_players: int = 1,
    **task_kwargs: Any,
) -> EnvPool:
    """Makes an EnvPool-like vector env of ``task_id`` (a torchpool env id).

    Arguments keep EnvPool's names and defaults: ``batch_size`` ``0``/``None``
    is ``num_envs`` (sync), ``num_threads`` ``0``/``None`` picks a default,
    ``seed=42`` seeds env ``i`` with ``seed + i``. Other keyword arguments are
    the task's own (e.g. ``episodic_life``, ``reward_clip`` for Atari, if the
    torchpool family takes them); unknown ones raise, naming the valid ones.
    """
    if env_type not in ("gym", "gymnasium", "dm"):
        raise ValueError(f"env_type should be one of 'gym', 'gymnasium' or 'dm', got {env_type!r}")
    if max_num_players != 1:
        raise ValueError(f"torchpool envs are single-player; max_num_players must be 1, got {max_num_players}")
    if not is_process_env(task_id):  # threads are for torchpool's C++ envs; Python envs run in processes
        task_kwargs.update(num_threads=num_threads or None, thread_affinity_offset=thread_affinity_offset)
        if env_type == "dm" and registry.lookup(task_id).family in _CONTROL_SUITE:
            task_kwargs.setdefault("obs_dtype", torch.float64)  # NOTE [TimeSteps as EnvPool gives them]
    pool = _make_pool(
        task_id, num_envs=num_envs, batch_size=batch_size or None, seed=seed, autoreset="next_step",
        max_episode_steps=max_episode_steps, **task_kwargs)
    if env_type == "dm":
        return DmEnvPool(pool, env_type, True, seed)
    return EnvPool(pool, env_type, gym_reset_return_info or env_type == "gymnasium", seed)


def make_gym(task_id: str, **kwargs: Any) -> EnvPool:
    """``make(task_id, env_type="gym", ...)``, as EnvPool's ``make_gym``."""
    return make(task_id, env_type="gym", **kwargs)


def make_gymnasium(task_id: str, **kwargs: Any) -> EnvPool:
    """``make(task_id, env_type="gymnasium", ...)``, as EnvPool's ``make_gymnasium``."""
    return make(task_id, env_type="gymnasium", **kwargs)


def make_dm(task_id: str, **kwargs: Any) -> DmEnvPool:
    """``make(task_id, env_type="dm", ...)``, as EnvPool's ``make_dm``: batched ``dm_env.TimeStep``s."""
    return make(task_id, env_type="dm", **kwargs)


def _gym_flavoured_space(spec: BoxSpec | DictSpec | DiscreteSpec) -> Any:
    """The space legacy-gym code expects: both libraries' (``spec.to_gym()``), or Gymnasium's without ``gym``."""
    try:
        return spec.to_gym()
    except ImportError:
        return spec.to_gymnasium()


@dataclass(frozen=True)
class EnvSpec:
    """EnvPool's ``pool.spec`` (``envpool/python/env_spec.py``): the task's config and single-env spaces.

    ``observation_space`` / ``action_space`` are gym-flavoured whatever the
    pool's ``env_type`` (EnvPool 0.8 gave gym's here; torchrl's EnvPool
    wrapper converts them under its "gym" backend); ``gymnasium_*`` are
    Gymnasium's.
    """

    config: tuple  # a namedtuple of EnvPool.config
    observation_space: Any
    action_space: Any
    gymnasium_observation_space: Any
    gymnasium_action_space: Any


class EnvPoolMixin:
    """The base EnvPool's pools share (``envpool.python.envpool.EnvPoolMixin``), which torchrl's wrapper checks for."""


# ``envpool.python.envpool.EnvPoolMixin``, by the same attribute path once this
# module stands in for ``envpool`` in ``sys.modules``. (Attributes only: there
# is no ``envpool.python`` entry to ``import`` from.)
python = types.ModuleType(f"{__name__}.python", "EnvPool's ``envpool.python`` package, as far as torchrl reads it.")
python.envpool = types.ModuleType(f"{__name__}.python.envpool", "EnvPool's ``envpool.python.envpool``.")
python.envpool.EnvPoolMixin = EnvPoolMixin


# A gymnasium.Env, as EnvPool's own classes are (gymnasium.Wrapper refuses anything
# else); legacy gym.Wrapper takes any object.
class EnvPool(EnvPoolMixin, gymnasium.Env):
    """An EnvPool-compatible face of a next-step-autoreset :class:`torchpool.Pool`; see the module docstring.

    Shapes, for a batch of ``B`` rows (``num_envs`` for ``step()``/``reset()``
    on a sync pool, ``batch_size`` for ``recv()``): ``obs [B, *observation_space.shape]``
    in its dtype, ``reward`` float32 ``[B]``, ``done``/``terminated``/
    ``truncated`` bool ``[B]``.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, pool: Pool, env_type: str, reset_return_info: bool, seed: int):
        self._pool = pool
        self.env_type = env_type
        self._reset_return_info = reset_return_info
        self._seed = seed
        if env_type == "gym":
            observation_space = _gym_flavoured_space(pool.observation_spec)
            action_space = _gym_flavoured_space(pool.action_spec)
        else:
            observation_space = pool.observation_spec.to_gymnasium()
            action_space = pool.action_spec.to_gymnasium()
        self.observation_space = observation_space
        self.action_space = action_space
        # Plain attributes: CleanRL's scripts assign all three after make().
        self.single_observation_space = observation_space
        self.single_action_space = action_space
        self.num_envs = pool.num_envs
        self.is_vector_env = True
        self._action_dtype = torch.empty((), dtype=pool.action_spec.dtype).numpy().dtype
        self._all_env_ids = np.arange(pool.num_envs, dtype=np.int32)

    # ---- EnvPool API ------------------------------------------------------------

    @property
    def config(self) -> dict[str, Any]:
        """EnvPool's config dict: ``num_envs``, ``batch_size``, ``num_threads``, ``seed``, ``max_episode_steps``,
        task kwargs."""
        pool = self._pool
        return {"num_envs": pool.num_envs, "batch_size": pool.batch_size, "num_threads": pool.num_threads,
                "max_num_players": 1, "seed": self._seed, "max_episode_steps": pool.max_episode_steps,
                "gym_reset_return_info": self._reset_return_info, **pool.task_kwargs}

    # gymnasium.Env.spec is a class attribute (a Gymnasium EnvSpec or None);
    # EnvPool's pools put their own EnvSpec there.
    @functools.cached_property
    def spec(self) -> EnvSpec:  # type: ignore[override]
        """EnvPool's spec: ``config`` as a namedtuple, gym-flavoured and Gymnasium spaces; see :class:`EnvSpec`."""
        # Made on first use: for env_type="gymnasium" it imports gym, which
        # costs a Gymnasium-only script a third of a second.
        pool, config = self._pool, self.config
        return EnvSpec(
            config=namedtuple("Config", config)(**config),
            observation_space=_gym_flavoured_space(pool.observation_spec),
            action_space=_gym_flavoured_space(pool.action_spec),
            gymnasium_observation_space=pool.observation_spec.to_gymnasium(),
            gymnasium_action_space=pool.action_spec.to_gymnasium())

    @property
    def pool(self) -> Pool:
        """The underlying :class:`torchpool.Pool` (next-step autoreset)."""
        return self._pool

    @property
    def all_env_ids(self) -> np.ndarray:
        """``arange(num_envs)`` as int32."""
        return self._all_env_ids

    @property
    def is_async(self) -> bool:
        return self._pool.is_async

    def __len__(self) -> int:
        return self._pool.num_envs

    def reset(self, env_id: Any = None, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        """Resets ``env_id`` (default: all) and waits; ``obs`` (legacy gym) or ``(obs, info)``.

        ``seed`` (an int: env ``i`` gets ``seed + i``) reseeds, where EnvPool
        ignores it; ``options={"reset_mask": bool [num_envs]}`` picks the envs
        as Gymnasium's vector envs do.
        """
        options = dict(options or {})
        mask = options.pop("reset_mask", None)
        if options:
            raise ValueError(f"torchpool envs take no reset options but 'reset_mask', got {sorted(options)}")
        if mask is not None:
            if env_id is not None:
                raise ValueError("Pass either env_id or options['reset_mask'], not both.")
            env_id = np.flatnonzero(np.asarray(mask, dtype=bool))
        td = self._pool.reset(seed=seed, env_ids=None if env_id is None else np.asarray(env_id, dtype=np.int64))
        return self._to(td, reset=True, return_info=self._reset_return_info)

    def step(self, action: Any, env_id: Any = None) -> tuple:
        """``send(action, env_id)`` then ``recv()``: the 4-tuple (gym) or 5-tuple (gymnasium)."""
        if env_id is None and not self._pool.is_async:
            return self._to(self._pool.step(self._action(action)), reset=False, return_info=True)
        self.send(action, env_id)
        return self.recv()

    def send(self, action: Any, env_id: Any = None) -> None:
        """Queues one action per env in ``env_id`` (default: all) and returns at once."""
        self._pool.send(self._action(action), None if env_id is None else np.asarray(env_id, dtype=np.int64))

    def recv(self, reset: bool = False, return_info: bool = True) -> Any:
        """The next ``batch_size`` results, in the step format (``reset=True``: the reset format)."""
        return self._to(self._pool.recv(), reset=reset, return_info=return_info)

    def async_reset(self) -> None:
        """Starts a reset of every env; ``recv()`` collects them (reward 0, not done)."""
        self._pool.async_reset()

    def seed(self, seed: Any = None) -> None:
        warnings.warn("The `seed` function in envpool is abandoned. You can set seed by "
                      "envpool.make(..., seed=seed) instead.", stacklevel=2)

    def close(self, **kwargs: Any) -> None:
        self._pool.close()

    def xla(self) -> None:
        raise RuntimeError("XLA is not supported by torchpool.envpool_compat")

    def __repr__(self) -> str:
        config = ", ".join(f"{k}={v!r}" for k, v in self.config.items())
        return f"{type(self).__name__}({self._pool.env_id!r}, env_type={self.env_type!r}, {config})"

    __str__ = __repr__

    # ---- internals ------------------------------------------------------------

    def _action(self, action: Any) -> Any:
        # EnvPool casts NumPy actions to the action dtype (CleanRL sends int64
        # or float32 arrays); torch tensors go to the pool as they are.
        if isinstance(action, np.ndarray) and action.dtype != self._action_dtype:
            return action.astype(self._action_dtype)
        return action

    def _info(self, td: TensorDict) -> dict[str, Any]:
        env_id = td["env_id"].numpy().astype(np.int32)
        info: dict[str, Any] = {
            "env_id": env_id,
            "players": {"env_id": env_id},
            "elapsed_step": td["episode_length"].numpy().astype(np.int32),
        }
        keys = set(td.keys())
        terminated = td["terminated"].numpy()
        atari = self._pool.family == "Atari"
        if atari:  # the real end of the game, also under episodic_life; the unclipped reward
            lives = td["lives"].numpy().astype(np.int32)
            game_over = td["game_over"].numpy()
            renamed = _ATARI_RENAMED_EXTRAS
        elif "lives" in keys:
            lives = td["lives"].numpy().astype(np.int32)
            game_over = terminated & (lives == 0)
            renamed = {"lives"}
        else:
            lives = np.zeros(len(env_id), dtype=np.int32)
            game_over = terminated
            renamed = set()
        info["lives"] = lives
        info["reward"] = td["raw_reward" if atari else "reward"].numpy()
        info["terminated"] = game_over.astype(np.int32)
        for key in keys - _POOL_KEYS - renamed:
            info[key] = td[key].numpy()
        return info

    def _to(self, td: TensorDict, reset: bool, return_info: bool) -> Any:
        """A pool batch in EnvPool's return format (``_to_gym`` / ``_to_gymnasium``)."""
        obs = td["observation"]
        # Named observation fields: a dict of arrays, as EnvPool gives its obs:<name> keys.
        obs = obs.numpy() if isinstance(obs, torch.Tensor) else {key: value.numpy() for key, value in obs.items()}
        if reset and not return_info:
            return obs
        info = self._info(td)
        if reset:
            return obs, info
        reward = td["reward"].numpy()
        terminated = td["terminated"].numpy()
        truncated = td["truncated"].numpy()
        if self.env_type == "gymnasium":
            return obs, reward, terminated, truncated, info
        # gym < 0.26's TimeLimit: truncated only where the time limit ended an
        # episode that did not also terminate (no value bootstrap otherwise).
        info["TimeLimit.truncated"] = truncated & ~terminated
        return obs, reward, td["done"].numpy(), info


class DmEnvPool(EnvPool):
    """EnvPool's ``env_type="dm"`` face (``envpool/python/dm_envpool.py``): ``reset()``, ``step()`` and
    ``recv()`` return one batched ``dm_env.TimeStep``:

    * ``step_type`` int32 ``[B]``: ``FIRST`` (0) for a row that starts an episode (a reset, or the
      next-step autoreset after ``LAST``), ``LAST`` (2) where the episode ended, else ``MID`` (1);
    * ``reward``, ``discount`` float32 ``[B]``: discount 0 where the task terminated, else 1 (a time
      limit keeps 1); a ``FIRST`` row has reward 0 and discount 1 (EnvPool's reward there is stale);
    * ``observation``: a namedtuple ``State``, laid out as EnvPool 1.2 lays it out (NOTE [TimeSteps as
      EnvPool gives them]): ``env_id`` int32, ``players`` (a namedtuple of ``env_id``), the observation's
      fields (``obs`` for an unnamed one), the family's extras (Atari's as EnvPool names them: ``lives``
      int32, ``reward`` float32 unclipped, ``terminated`` int32 the game's end), then ``elapsed_step``
      int32, which EnvPool's ``State`` does not have.

    ``observation_spec()`` / ``action_spec()`` are ``dm_env.specs``: the namedtuple of the fields' specs,
    and a ``BoundedArray`` (float) or ``DiscreteArray``.

    NOTE [TimeSteps as EnvPool gives them]
    Scripts written for EnvPool's ``dm`` pools unpack ``State`` by position and size their networks from
    its dtypes. So the order is EnvPool's (``env_id``, ``players``, fields, extras), our own additions come
    last, and the Control Suite's fields are float64, as EnvPool's are (``make`` asks the pool for
    ``obs_dtype=torch.float64``: the physics' own values, not a cast). The fields are the task's, in
    EnvPool's order (the fish domain's differs from dm_control's). EnvPool also declares, for every task of
    a domain, the fields its other tasks have (QuadrupedWalk's ``ball_state``, FishUpright's ``target``)
    and fills them with zeros; torchpool gives the task's own fields only, so those are missing here.
    tests/test_envpool_compat.py checks every Control Suite task against the installed EnvPool.
    """

    def __init__(self, pool: Pool, env_type: str, reset_return_info: bool, seed: int):
        super().__init__(pool, env_type, reset_return_info, seed)
        from . import dm_env as _dm

        fields = _dm.observation_spec(pool.observation_spec)
        if isinstance(fields, dict):
            order = _ENVPOOL_FIELD_ORDER.get(pool.family, ())
            self._field_names = sorted(fields, key=lambda name: order.index(name) if name in order else len(order))
        else:
            self._field_names = ["obs"]
        extras = pool.output_spec
        # (name in State, the pool's key, NumPy dtype or None to keep the pool's)
        self._extras: list[tuple[str, str, Any]] = []
        if pool.family == "Atari":
            self._extras = [("lives", "lives", np.int32), ("reward", "raw_reward", np.float32),
                            ("terminated", "game_over", np.int32)]
        taken = {source for _, source, _ in self._extras}
        self._extras += [(key, key, None) for key in pool.extra_keys if key not in taken]
        names = ["env_id", "players", *self._field_names, *[name for name, _, _ in self._extras], "elapsed_step"]
        self._state = namedtuple("State", names)
        self._players = namedtuple("Players", ["env_id"])
        import dm_env
        from dm_env import specs

        def int_spec(name: str) -> specs.Array:
            return specs.Array((), np.int32, name=name)

        def extra_spec(name: str, source: str, dtype: Any) -> specs.Array:
            pool_dtype, shape = extras[source]
            return specs.Array(shape, dtype or torch.empty((), dtype=pool_dtype).numpy().dtype, name=name)

        field_specs = [fields[name] for name in self._field_names] if isinstance(fields, dict) else [fields]
        self._observation_spec = self._state(
            int_spec("env_id"), self._players(int_spec("env_id")), *field_specs,
            *[extra_spec(*extra) for extra in self._extras], int_spec("elapsed_step"))
        self._action_spec = _dm.action_spec(pool.action_spec)
        self._dm_env = dm_env

    def observation_spec(self) -> tuple:
        """The ``State`` namedtuple of one env's ``dm_env.specs``."""
        return self._observation_spec

    def action_spec(self) -> Any:
        return self._action_spec

    def _to(self, td: TensorDict, reset: bool, return_info: bool) -> Any:
        obs = td["observation"]
        fields = [obs.numpy()] if isinstance(obs, torch.Tensor) else [obs[key].numpy() for key in self._field_names]
        env_id = td["env_id"].numpy().astype(np.int32)
        elapsed = td["episode_length"].numpy().astype(np.int32)
        terminated = td["terminated"].numpy()
        StepType = self._dm_env.StepType
        step_type = np.where(elapsed == 0, StepType.FIRST,
                             np.where(td["done"].numpy(), StepType.LAST, StepType.MID)).astype(np.int32)
        extras = [td[source].numpy() if dtype is None else td[source].numpy().astype(dtype)
                  for _, source, dtype in self._extras]
        observation = self._state(env_id, self._players(env_id), *fields, *extras, elapsed)
        return self._dm_env.TimeStep(step_type=step_type, reward=td["reward"].numpy(),
                                     discount=(~terminated).astype(np.float32), observation=observation)
