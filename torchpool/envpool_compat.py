"""EnvPool-style ``make()``: EnvPool scripts run on torchpool by changing one import.

    import torchpool.envpool_compat as envpool     # was: import envpool
    envs = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=8, seed=1)
    obs, info = envs.reset()                                       # float32[8, 4]
    obs, reward, terminated, truncated, info = envs.step(actions)

The returned object behaves as a pool of EnvPool 1.2.5 (``envpool/python/``), the release whose own tests
run on it (benchmarks/peers/run_envpool.sh; docs/adapters.md lists what differs and why):

* ``env_type="gymnasium"`` (``make_gymnasium``): ``reset()`` returns ``(obs, info)``, ``step()`` the
  5-tuple ``(obs, reward, terminated, truncated, info)``; Gymnasium spaces.
* ``env_type="gym"`` (``make_gym``) follows the installed ``gym`` (NOTE [The gym API follows the
  installed gym]): below 0.26 (CleanRL's EnvPool scripts declare 0.23) ``reset()`` returns the
  observations only (``(obs, info)`` with ``gym_reset_return_info=True``) and ``step()`` the 4-tuple
  ``(obs, reward, done, info)`` with ``info["TimeLimit.truncated"]``; with gym 0.26 or newer, or none,
  Gymnasium's API, as EnvPool 1.2's ``make_gym``. Where ``gym`` is installed, spaces are instances of
  both ``gym.spaces`` and ``gymnasium.spaces`` classes (NOTE [Spaces of both gym and Gymnasium] in
  ``specs.py``): a script's ``isinstance(envs.action_space, gym.spaces.Discrete)`` holds, and rl_games'
  EnvPool wrapper can still put them in a ``gymnasium.spaces.Dict``.
* ``env_type="dm"`` (``make_dm``): batched ``dm_env.TimeStep``s (:class:`DmEnvPool`).
* Pools are ``gymnasium.vector.VectorEnv`` and ``gymnasium.Env`` instances (``dm`` pools
  ``dm_env.Environment`` ones), as EnvPool 1.2's; next-step autoreset (``metadata["autoreset_mode"]``):
  the step after an episode ends resets that env, ignores its action, and returns reward 0 and
  ``elapsed_step`` 0. A pool never reset may be stepped: that step resets it, as EnvPool's.
* ``step(action, env_id)`` steps only those envs, also on a sync pool (their rows in ``env_id``'s
  order); ``send(action, env_id)`` / ``recv()`` / ``async_reset()`` for async pools (``batch_size <
  num_envs``); actions may be EnvPool's dict, ``{"action": ..., "env_id": ...}``.
* ``observation_space`` / ``action_space`` are single-env spaces (EnvPool's
  convention); ``single_*_space``, ``num_envs`` and ``is_vector_env`` are plain
  attributes a script may overwrite, as CleanRL's scripts do.
* ``config`` (a dict) and ``spec`` (an :class:`EnvSpec`: ``config`` as a namedtuple, the
  gym-flavoured and Gymnasium spaces, ``reward_threshold``, ``state_array_spec`` /
  ``action_array_spec`` and the ``dm`` specs), as EnvPool's pools carry; ``make_spec``,
  ``list_all_envs``, ``__version__`` as EnvPool's module has them. Every pool is an instance of
  ``envpool_compat.python.envpool.EnvPoolMixin``, the class EnvPool's pools share. With
  ``sys.modules["envpool"] = torchpool.envpool_compat`` torchrl's ``MultiThreadedEnv`` and
  ``MultiThreadedEnvWrapper`` run on torchpool.
* EnvPool's options beyond the task's kwargs: ``frame_stack`` (each env's last observations, oldest
  first: ``torchpool/_frame_stack.py``), ``render_mode="rgb_array"`` with ``render(env_ids)``, and, for
  Atari, ``mode``, ``difficulty`` and ``info["ram"]``. Ids EnvPool lists under other names
  (``CartPole-v0``, ``phys2d/CartPole-v1``) are taken. A bad id or seed raises
  :class:`InvalidArgument`, a ``ValueError`` that is also the ``AssertionError`` EnvPool raises.

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

import dataclasses
import functools
import types
import warnings
from collections import namedtuple
from dataclasses import dataclass
from typing import Any, Literal

import gymnasium
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from tensordict import TensorDict

from . import registry
from ._frame_stack import FrameStack, stacked_spec
from ._workers import is_process_env
from .families import dmc
from .pool import FIXED_KEYS, Pool
from .pool import make as _make_pool
from .specs import BoxSpec, DictSpec, DiscreteSpec

__all__ = ["make", "make_dm", "make_gym", "make_gymnasium", "make_spec", "list_all_envs", "EnvSpec", "EnvPool",
           "DMEnvPool", "GymnasiumEnvPool", "DmEnvPool", "EnvPoolMixin", "ArraySpec", "InvalidArgument"]

# The EnvPool release whose API this module follows (scripts compare it to pick a code path).
__version__ = "1.2.5"

# Keys other than the fixed ones are family extras.
_POOL_KEYS = frozenset(FIXED_KEYS)
# Atari's extras that EnvPool exposes under other names: lives, reward (unclipped) and terminated (the game's
# end). Only the Atari family's (Pool.family): another pool's extras of those names stay as they are.
_ATARI_RENAMED_EXTRAS = frozenset({"lives", "raw_reward", "game_over"})
# env_type="dm" (NOTE [TimeSteps as EnvPool gives them]): the Control Suite's observation fields are float64
# in EnvPool, its fish domain puts velocity before target (dm_control: target, then velocity) and its humanoid
# domain position before velocity (the domain's fields, _domain_fields).
_CONTROL_SUITE = frozenset(family for family, _, _ in dmc.DMC_DOMAINS.values())
_ENVPOOL_FIELD_ORDER = {"DmcFish": ("joint_angles", "upright", "velocity", "target"),
                        "DmcHumanoid": ("joint_angles", "head_height", "extremities", "torso_vertical",
                                        "com_velocity", "position", "velocity")}


# EnvPool's registrations give these (envpool/classic_control/registration.py); its other tasks have none.
_REWARD_THRESHOLDS = {"CartPole-v0": 195.0, "phys2d/CartPole-v0": 195.0, "CartPole-v1": 475.0,
                      "phys2d/CartPole-v1": 475.0}
# Ids EnvPool lists that are torchpool's under another name: (torchpool's id, EnvPool's defaults for it).
# EnvPool's older MuJoCo ids (-v3, and -v2 where gym had no -v3) are its -v4 tasks
# (envpool/mujoco/gym/registration.py), Ant-v3 with contact forces. (EnvPool's Humanoid-v3 also charges
# gym v3's contact cost, which Gymnasium's Humanoid-v4, and so torchpool's, does not.)
_ALIASES = {"CartPole-v0": ("CartPole-v1", {"max_episode_steps": 200}),
            "phys2d/CartPole-v0": ("CartPole-v1", {"max_episode_steps": 200}),
            "phys2d/CartPole-v1": ("CartPole-v1", {}),
            "phys2d/Pendulum-v0": ("Pendulum-v0", {}),
            "Ant-v3": ("Ant-v4", {"use_contact_forces": True}),
            **{f"{task}-v3": (f"{task}-v4", {})
               for task in ("HalfCheetah", "Hopper", "Walker2d", "Humanoid", "Swimmer")},
            **{f"{task}-v2": (f"{task}-v4", {}) for task in ("HumanoidStandup", "InvertedDoublePendulum",
                                                             "InvertedPendulum", "Pusher", "Reacher")}}


class InvalidArgument(ValueError, AssertionError):
    """A bad id or argument: a ValueError, and an AssertionError as EnvPool raises for them (its checks are
    asserts, which scripts and EnvPool's own tests expect)."""


def make(
    task_id: str,
    env_type: Literal["gym", "gymnasium", "dm"],
    num_envs: int = 1,
    batch_size: int | None = None,
    seed: int = 42,
    num_threads: int | None = None,
    max_episode_steps: int | None = None,
    thread_affinity_offset: int = -1,
    gym_reset_return_info: bool | None = None,
    max_num_players: int = 1,
    render_mode: str | None = None,
    **task_kwargs: Any,
) -> GymnasiumEnvPool | DMEnvPool:
    """Makes an EnvPool-like vector env of ``task_id`` (a torchpool env id).

    Arguments keep EnvPool's names and defaults: ``batch_size`` ``0``/``None``
    is ``num_envs`` (sync), ``num_threads`` ``0``/``None`` picks a default,
    ``seed=42`` seeds env ``i`` with ``seed + i``. Other keyword arguments are
    the task's own (e.g. ``episodic_life``, ``reward_clip`` for Atari, if the
    torchpool family takes them); unknown ones raise, naming the valid ones.
    ``render_mode`` ``"rgb_array"`` (or ``None``) is checked against what the
    family renders (``Pool.renders``); ``render()`` returns its frames.

    NOTE [The gym API follows the installed gym]
    ``env_type="gym"`` is EnvPool's legacy face: reset gives the observations
    only and step the 4-tuple ``(obs, reward, done, info)`` where the
    installed ``gym`` is older than 0.26 (CleanRL's EnvPool scripts declare
    0.23), as EnvPool 0.8 decided; with gym 0.26 or newer, or none, it is
    Gymnasium's API (``(obs, info)``, the 5-tuple), as EnvPool 1.2's
    ``make_gym`` always is. ``gym_reset_return_info=True`` asks for
    ``(obs, info)`` from a legacy reset too.
    """
    if env_type not in ("gym", "gymnasium", "dm"):
        raise ValueError(f"env_type should be one of 'gym', 'gymnasium' or 'dm', got {env_type!r}")
    if max_num_players != 1:
        raise ValueError(f"torchpool envs are single-player; max_num_players must be 1, got {max_num_players}")
    if render_mode not in (None, "rgb_array"):
        raise ValueError(f"render_mode must be 'rgb_array' or None, got {render_mode!r}")
    legacy = env_type == "gym" and _gym_is_legacy()
    if legacy:
        gym_reset_return_info = bool(gym_reset_return_info)
    elif gym_reset_return_info is False:
        raise ValueError("gym_reset_return_info=False asks for the legacy gym API, which torchpool (as EnvPool) "
                         "gives only where the installed gym is older than 0.26; reset() returns (obs, info)")
    if not (isinstance(seed, (int, np.integer)) and -(2**31) <= seed < 2**31):
        raise InvalidArgument(f"seed must be an int32, as EnvPool's, got {seed!r}")
    asked_for = task_id
    task_id, alias_defaults = _ALIASES.get(task_id, (task_id, {}))
    alias_defaults = dict(alias_defaults)
    if max_episode_steps is None:
        max_episode_steps = alias_defaults.pop("max_episode_steps", None)
    task_kwargs = {**alias_defaults, **task_kwargs}
    if not is_process_env(task_id):  # threads are for torchpool's C++ envs; Python envs run in processes
        try:
            family = registry.lookup(task_id).family
        except ValueError as error:  # an unknown id, the closest named
            raise InvalidArgument(str(error)) from None
        task_kwargs.update(num_threads=num_threads or None, thread_affinity_offset=thread_affinity_offset)
        if env_type == "dm" and family in _CONTROL_SUITE:
            task_kwargs.setdefault("obs_dtype", torch.float64)  # NOTE [TimeSteps as EnvPool gives them]
        if family == "MiniGrid":  # EnvPool's MiniGrid mission: the text's bytes, 96 of them
            task_kwargs.setdefault("mission_bytes", 96)
    frame_stack = task_kwargs.pop("frame_stack", 1)
    if isinstance(frame_stack, bool) or not isinstance(frame_stack, (int, np.integer)) or frame_stack < 1:
        raise ValueError(f"frame_stack must be an int >= 1, got {frame_stack!r}")
    pool = _make_pool(
        task_id, num_envs=num_envs, batch_size=batch_size or None, seed=seed, autoreset="next_step",
        max_episode_steps=max_episode_steps, **task_kwargs)
    if render_mode is not None and not pool.renders:
        pool.close()
        raise ValueError(f"render_mode='rgb_array': {task_id}'s family does not render")
    if env_type == "dm":
        return DmEnvPool(pool, env_type, True, seed, render_mode, frame_stack=int(frame_stack), task_id=asked_for)
    return EnvPool(pool, env_type, not legacy or gym_reset_return_info, seed, render_mode, legacy, int(frame_stack),
                   task_id=asked_for)


def _gym_is_legacy() -> bool:
    """Whether the installed ``gym`` predates 0.26 (NOTE [The gym API follows the installed gym])."""
    try:
        import gym
    except ImportError:
        return False
    major_minor = tuple(int(part) for part in gym.__version__.split(".")[:2] if part.isdigit())
    return major_minor < (0, 26)


def make_gym(task_id: str, **kwargs: Any) -> GymnasiumEnvPool:
    """``make(task_id, env_type="gym", ...)``, as EnvPool's ``make_gym`` (NOTE [The gym API follows the installed
    gym])."""
    return make(task_id, env_type="gym", **kwargs)


def make_gymnasium(task_id: str, **kwargs: Any) -> GymnasiumEnvPool:
    """``make(task_id, env_type="gymnasium", ...)``, as EnvPool's ``make_gymnasium``."""
    return make(task_id, env_type="gymnasium", **kwargs)


def make_dm(task_id: str, **kwargs: Any) -> DMEnvPool:
    """``make(task_id, env_type="dm", ...)``, as EnvPool's ``make_dm``: batched ``dm_env.TimeStep``s."""
    return make(task_id, env_type="dm", **kwargs)


def make_spec(task_id: str, **kwargs: Any) -> EnvSpec:
    """EnvPool's ``make_spec``: the :class:`EnvSpec` a pool made with these arguments would carry.

    Arguments are ``make``'s (``env_type`` aside); they are checked as ``make`` checks them.
    """
    kwargs.pop("env_type", None)
    num_envs = kwargs.pop("num_envs", 1)
    batch_size = kwargs.pop("batch_size", None) or num_envs
    pool = make(task_id, "gymnasium", num_envs=1, **kwargs)
    try:
        config = {**pool.config, "num_envs": num_envs, "batch_size": batch_size}
        return pool.spec._replace_config(config)
    finally:
        pool.close()


# Ids torchpool registers that EnvPool's catalogue has not: make() takes them, list_all_envs() lists EnvPool's
# (its own tests count a family's ids: make_test.py's 81 MiniGrid ids).
_IDS_ENVPOOL_LACKS = frozenset({"MiniGrid-MultiRoom-N4-S5-v1"})


def list_all_envs() -> list[str]:
    """EnvPool's ``list_all_envs``: the ids of EnvPool's catalogue ``make`` takes (``torchpool.list_envs()`` but
    the few EnvPool lacks, and EnvPool's aliases)."""
    return sorted([*(env_id for env_id in registry.list_envs() if env_id not in _IDS_ENVPOOL_LACKS), *_ALIASES])


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
    reward_threshold: float | None = None  # EnvPool's: CartPole's only, among the families torchpool has
    # EnvPool's raw specs by key: "obs" (or "obs:<field>"), "info:<extra>", "reward", "done", ... / "action", ...
    state_array_spec: dict[str, ArraySpec] = dataclasses.field(default_factory=dict, repr=False)
    action_array_spec: dict[str, ArraySpec] = dataclasses.field(default_factory=dict, repr=False)
    dm_specs: tuple = dataclasses.field(default=(None, None), repr=False)  # (State of dm_env specs, action spec)

    def observation_spec(self) -> tuple:
        """The ``dm`` pool's ``State`` of ``dm_env`` specs (NOTE [TimeSteps as EnvPool gives them])."""
        return self.dm_specs[0]

    def action_spec(self) -> Any:
        """The ``dm`` pool's action spec: a ``dm_env`` ``BoundedArray`` or ``DiscreteArray``."""
        return self.dm_specs[1]

    def _replace_config(self, config: dict[str, Any]) -> EnvSpec:
        return dataclasses.replace(self, config=namedtuple("Config", config)(**config))


class ArraySpec:
    """EnvPool's spec of one array (``envpool.python.protocol.ArraySpec``): per env, ``-1`` for a player axis."""

    def __init__(self, dtype: Any, shape: list[int], minimum: Any, maximum: Any, is_discrete: bool = False):
        self.dtype, self.shape, self.minimum, self.maximum, self.is_discrete = (
            np.dtype(dtype), shape, minimum, maximum, is_discrete)

    def __repr__(self) -> str:
        return f"ArraySpec(shape={self.shape}, dtype={self.dtype}, minimum={self.minimum}, maximum={self.maximum})"


def _array_specs(pool: Pool, observation: BoxSpec | DictSpec, layout: Any) -> tuple[dict, dict]:
    """EnvPool's ``state_array_spec`` and ``action_array_spec`` of a pool (as EnvPool's keys and bounds)."""
    int32, float32 = np.iinfo(np.int32), np.finfo(np.float32)

    def ints(shape: list[int]) -> ArraySpec:
        return ArraySpec(np.int32, shape, int(int32.min), int(int32.max))

    def box(spec: BoxSpec) -> ArraySpec:
        low, high = spec.low.numpy(), spec.high.numpy()
        return ArraySpec(torch.empty((), dtype=spec.dtype).numpy().dtype, list(spec.shape),
                         low.item() if low.size == 1 else low, high.item() if high.size == 1 else high)

    state = {"info:env_id": ints([]), "info:players.env_id": ints([-1]), "elapsed_step": ints([]),
             "done": ArraySpec(np.bool_, [], False, True), "reward": ArraySpec(np.float32, [-1], float32.tiny,
                                                                                  float32.max),
             "discount": ArraySpec(np.float32, [-1], 0.0, 1.0), "step_type": ints([]),
             "trunc": ArraySpec(np.bool_, [], False, True)}
    if isinstance(observation, DictSpec):
        state.update({f"obs:{name}": box(field) for name, field in observation.fields.items()})
    else:
        state["obs"] = box(observation)
    if layout is not None:
        for name, spec in zip(layout.observation_spec._fields[2 + len(layout.field_names):],
                              layout.observation_spec[2 + len(layout.field_names):]):
            state[f"info:{name}"] = ArraySpec(spec.dtype, list(spec.shape) or [-1], *_bounds(spec.dtype))
    action = pool.action_spec
    if isinstance(action, DiscreteSpec):
        chosen = ArraySpec(np.int32, [-1], 0, int(action.n) - 1, is_discrete=True)
    else:
        chosen = box(action)
    return state, {"env_id": ints([]), "players.env_id": ints([-1]), "action": chosen}


def _bounds(dtype: np.dtype) -> tuple[Any, Any]:
    if np.dtype(dtype) == np.bool_:
        return False, True
    info = np.iinfo(dtype) if np.issubdtype(dtype, np.integer) else np.finfo(dtype)
    return (info.min, info.max) if np.issubdtype(dtype, np.integer) else (info.tiny, info.max)


class EnvPoolMixin:
    """The base EnvPool's pools share (``envpool.python.envpool.EnvPoolMixin``), which torchrl's wrapper checks for."""


# ``envpool.python.envpool.EnvPoolMixin``, by the same attribute path once this
# module stands in for ``envpool`` in ``sys.modules``. (Attributes only: there
# is no ``envpool.python`` entry to ``import`` from.)
python = types.ModuleType(f"{__name__}.python", "EnvPool's ``envpool.python`` package, as far as torchrl reads it.")
python.envpool = types.ModuleType(f"{__name__}.python.envpool", "EnvPool's ``envpool.python.envpool``.")
python.envpool.EnvPoolMixin = EnvPoolMixin


# A Gymnasium VectorEnv and a gymnasium.Env, as EnvPool 1.2's own classes are (Gymnasium's vector
# wrappers take the one, gymnasium.Wrapper refuses anything but the other); legacy gym.Wrapper takes any object.
class EnvPool(EnvPoolMixin, gymnasium.vector.VectorEnv, gymnasium.Env):
    """An EnvPool-compatible face of a next-step-autoreset :class:`torchpool.Pool`; see the module docstring.

    Shapes, for a batch of ``B`` rows (``num_envs`` for ``step()``/``reset()``
    on a sync pool, ``batch_size`` for ``recv()``): ``obs [B, *observation_space.shape]``
    in its dtype, ``reward`` float32 ``[B]``, ``done``/``terminated``/
    ``truncated`` bool ``[B]``.
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, pool: Pool, env_type: str, reset_return_info: bool, seed: int, render_mode: str | None = None,
                 legacy: bool = False, frame_stack: int = 1, task_id: str | None = None):
        self._pool = pool
        self._env_id = task_id or pool.env_id  # the id asked for (an alias of EnvPool's: its own)
        self._frame_stack = FrameStack(frame_stack, pool.num_envs) if frame_stack > 1 else None
        self._stacked_spec = stacked_spec(pool.observation_spec, frame_stack)
        self.env_type = env_type
        self._reset_return_info = reset_return_info
        self._legacy = legacy  # the legacy gym API's 4-tuple (NOTE [The gym API follows the installed gym])
        self._seed = seed
        self.render_mode = render_mode
        # EnvPool steps an env that was never reset: that step resets it (next-step autoreset's first step).
        self._never_reset = True
        if env_type == "gym":
            observation_space = _gym_flavoured_space(self._stacked_spec)
            action_space = _gym_flavoured_space(pool.action_spec)
        else:
            observation_space = self._stacked_spec.to_gymnasium()
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
                "gym_reset_return_info": self._reset_return_info,
                "frame_stack": 1 if self._frame_stack is None else self._frame_stack.depth, **pool.task_kwargs}

    # gymnasium.Env.spec is a class attribute (a Gymnasium EnvSpec or None);
    # EnvPool's pools put their own EnvSpec there.
    @functools.cached_property
    def spec(self) -> EnvSpec:  # type: ignore[override]
        """EnvPool's spec: ``config`` as a namedtuple, gym-flavoured and Gymnasium spaces; see :class:`EnvSpec`."""
        # Made on first use: for env_type="gymnasium" it imports gym, which
        # costs a Gymnasium-only script a third of a second.
        pool, config = self._pool, self.config
        layout = self._dm_layout()
        state_array_spec, action_array_spec = _array_specs(pool, self._stacked_spec, layout)
        return EnvSpec(
            config=namedtuple("Config", config)(**config),
            observation_space=_gym_flavoured_space(self._stacked_spec),
            action_space=_gym_flavoured_space(pool.action_spec),
            gymnasium_observation_space=self._stacked_spec.to_gymnasium(),
            gymnasium_action_space=pool.action_spec.to_gymnasium(),
            reward_threshold=_REWARD_THRESHOLDS.get(self._env_id),
            state_array_spec=state_array_spec, action_array_spec=action_array_spec,
            dm_specs=(None, None) if layout is None else (layout.observation_spec, layout.action_spec))

    def _dm_layout(self) -> _DmLayout | None:
        """The ``dm`` face's layout (NOTE [TimeSteps as EnvPool gives them]); None without dm_env."""
        if not _DM_ENV_BASES:
            return None
        if getattr(self, "_layout", None) is None:
            self._layout = _DmLayout(self._pool, self._stacked_spec,
                                     1 if self._frame_stack is None else self._frame_stack.depth)
        return self._layout

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
        if env_id is None:
            self._never_reset = False
        return self._to(td, reset=True, return_info=self._reset_return_info)

    def step(self, action: Any, env_id: Any = None) -> tuple:
        """``send(action, env_id)`` then ``recv()``: the 4-tuple (legacy gym) or 5-tuple.

        ``action`` may also be EnvPool's dict form, ``{"action": ..., "env_id": ...}``. On a pool never
        reset, the first step resets every env and returns their first observations (reward 0, not done),
        as EnvPool's does.
        """
        action, env_id = self._unpack(action, env_id)
        if self._pool.is_async:
            self.send(action, env_id)
            return self.recv()
        ids = None if env_id is None else np.asarray(env_id, dtype=np.int64).reshape(-1)
        if self._never_reset:
            self._never_reset = False
            td = self._pool.reset()
            return self._to(td if ids is None else td[torch.from_numpy(ids)], reset=False, return_info=True)
        # A sync pool steps the envs in env_id alone (Pool.step), their rows in env_id's order, as EnvPool's.
        return self._to(self._pool.step(self._action(action), ids), reset=False, return_info=True)

    def send(self, action: Any, env_id: Any = None) -> None:
        """Queues one action per env in ``env_id`` (default: all) and returns at once (dict actions as
        ``step``'s). Sent to a pool never reset, it resets every env first."""
        action, env_id = self._unpack(action, env_id)
        if self._never_reset:
            self.reset()
        self._pool.send(self._action(action), None if env_id is None else np.asarray(env_id, dtype=np.int64))

    def recv(self, reset: bool = False, return_info: bool = True) -> Any:
        """The next ``batch_size`` results, in the step format (``reset=True``: the reset format)."""
        return self._to(self._pool.recv(), reset=reset, return_info=return_info)

    def async_reset(self) -> None:
        """Starts a reset of every env; ``recv()`` collects them (reward 0, not done)."""
        self._never_reset = False
        self._pool.async_reset()

    def render(self, env_ids: Any = None) -> np.ndarray:
        """``uint8 [len(env_ids), H, W, 3]``: the frames of ``env_ids`` (default: env 0), as EnvPool's."""
        ids = [0] if env_ids is None else np.asarray(env_ids, dtype=np.int64).reshape(-1).tolist()
        return np.stack([self._pool.render(int(i)).numpy() for i in ids])

    def seed(self, seed: Any = None) -> None:
        warnings.warn("The `seed` function in envpool is abandoned. You can set seed by "
                      "envpool.make(..., seed=seed) instead.", stacklevel=2)

    def close(self, **kwargs: Any) -> None:
        self._pool.close()

    def xla(self) -> None:
        raise RuntimeError("XLA is not supported by torchpool.envpool_compat")

    def __repr__(self) -> str:
        config = ", ".join(f"{k}={v!r}" for k, v in self.config.items())
        return f"{type(self).__name__}({self._env_id!r}, env_type={self.env_type!r}, {config})"

    __str__ = __repr__

    # ---- internals ------------------------------------------------------------

    @staticmethod
    def _unpack(action: Any, env_id: Any) -> tuple[Any, Any]:
        """EnvPool's dict actions: ``{"action": ..., "env_id": ...}`` (``players.env_id`` is one player's)."""
        if isinstance(action, dict):
            unknown = set(action) - {"action", "env_id", "players.env_id"}
            if "action" not in action or unknown:
                raise KeyError(f"a dict action has the keys 'action' and (optionally) 'env_id', got {sorted(action)}")
            if env_id is None:
                env_id = action.get("env_id")
            action = action["action"]
        return action, env_id

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
        for key in keys - _POOL_KEYS - renamed - _NOT_ENVPOOLS:
            info[key] = td[key].numpy()
        return info

    def _observation(self, td: TensorDict) -> Any:
        """The batch's observations as arrays (a dict of them for named fields, as EnvPool gives its obs:<name>
        keys), stacked if ``frame_stack`` asked for it."""
        obs = td["observation"]
        obs = obs.numpy() if isinstance(obs, torch.Tensor) else {key: value.numpy() for key, value in obs.items()}
        if self._frame_stack is not None:
            obs = self._frame_stack(obs, td["env_id"].numpy(), td["episode_length"].numpy() == 0)
        return obs

    def _to(self, td: TensorDict, reset: bool, return_info: bool) -> Any:
        """A pool batch in EnvPool's return format (``_to_gym`` / ``_to_gymnasium``)."""
        obs = self._observation(td)
        if reset and not return_info:
            return obs
        info = self._info(td)
        if reset:
            return obs, info
        reward = td["reward"].numpy()
        terminated = td["terminated"].numpy()
        truncated = td["truncated"].numpy()
        if not self._legacy:
            return obs, reward, terminated, truncated, info
        # gym < 0.26's TimeLimit: truncated only where the time limit ended an
        # episode that did not also terminate (no value bootstrap otherwise).
        info["TimeLimit.truncated"] = truncated & ~terminated
        return obs, reward, td["done"].numpy(), info


# Extras of torchpool's own that EnvPool's State and info do not have.
_NOT_ENVPOOLS = frozenset({"unstable", "episode_frame_number"})
# Each Control Suite domain's observation fields, all its tasks' (NOTE [TimeSteps as EnvPool gives them]).
_DOMAIN_FIELDS: dict[str, dict[str, BoxSpec]] = {}


def _domain_fields(pool: Pool) -> dict[str, BoxSpec]:
    """The fields EnvPool declares for every task of ``pool``'s Control Suite domain, in its order: each task's
    own fields, the domain's tasks in registry order (a 1-env pool of each, once per process)."""
    if pool.family not in _DOMAIN_FIELDS:
        fields: dict[str, BoxSpec] = {}
        domain = next(domain for domain, (family, _, _) in dmc.DMC_DOMAINS.items() if family == pool.family)
        for task in dmc.DMC_DOMAINS[domain][2]:
            sibling = _make_pool(dmc.dmc_env_id(domain, task), num_envs=1, obs_dtype=torch.float64)
            for name, spec in sibling.observation_spec.fields.items():
                fields.setdefault(name, spec)
            sibling.close()
        # EnvPool's order where it differs from the order of first appearance (stable: the rest keep theirs).
        order = _ENVPOOL_FIELD_ORDER.get(pool.family, ())
        names = sorted(fields, key=lambda name: order.index(name) if name in order else len(order))
        _DOMAIN_FIELDS[pool.family] = {name: fields[name] for name in names}
    return _DOMAIN_FIELDS[pool.family]


class _DmLayout:
    """Where each entry of EnvPool's ``State`` comes from, and its ``dm_env`` specs.

    NOTE [TimeSteps as EnvPool gives them]
    Scripts written for EnvPool's ``dm`` pools unpack ``State`` by position, concatenate all of its fields
    and size their networks from its dtypes. So ``State`` holds exactly EnvPool's entries, in its order:
    ``env_id``, ``players``, the observation's fields (``obs`` for an unnamed one), then the family's
    extras (Atari's as EnvPool names them: ``lives`` int32, ``reward`` float32 unclipped, ``terminated``
    int32 the game's end, ``ram`` uint8 [128]); torchpool's own extras (``unstable``,
    ``episode_frame_number``) are left out. The Control Suite's fields are float64, as EnvPool's are
    (``make`` asks the pool for ``obs_dtype=torch.float64``: the physics' own values, not a cast), and
    EnvPool declares for every task of a domain the fields its other tasks have (QuadrupedWalk's
    ``ball_state``, FishUpright's ``target``): they are here too, zeros for a task that does not give them
    (EnvPool fills a few with values dm_control's task does not compute: QuadrupedWalk's ``origin``).
    """

    def __init__(self, pool: Pool, observation: BoxSpec | DictSpec, frame_stack: int):
        from dm_env import specs

        from . import dm_env as _dm

        if isinstance(observation, DictSpec):
            fields = dict(observation.fields)
            if pool.family in _CONTROL_SUITE:  # the domain's fields in EnvPool's order, the task's own specs kept
                fields = {name: fields.get(name) or stacked_spec(spec, frame_stack)
                          for name, spec in _domain_fields(pool).items()}
            self.field_names = list(fields)
            field_specs = [_dm.observation_spec(DictSpec({name: fields[name]}))[name] for name in self.field_names]
        else:
            self.field_names = ["obs"]
            field_specs = [_dm.observation_spec(observation)]
        # (name in State, the pool's key, NumPy dtype or None to keep the pool's)
        self.extras: list[tuple[str, str, Any]] = []
        if pool.family == "Atari":
            self.extras = [("lives", "lives", np.int32), ("reward", "raw_reward", np.float32),
                           ("terminated", "game_over", np.int32), ("ram", "ram", None)]
        taken = {source for _, source, _ in self.extras}
        self.extras += [(key, key, None) for key in pool.extra_keys if key not in taken | _NOT_ENVPOOLS]
        self._state = namedtuple("State", ["env_id", "players", *self.field_names, *[n for n, _, _ in self.extras]])
        self._players = namedtuple("Players", ["env_id"])
        output = pool.output_spec

        def extra_spec(name: str, source: str, dtype: Any) -> specs.Array:
            pool_dtype, shape = output[source]
            return specs.Array(shape, dtype or torch.empty((), dtype=pool_dtype).numpy().dtype, name=name)

        int_spec = specs.Array((), np.int32, name="env_id")
        self.observation_spec = self._state(int_spec, self._players(int_spec), *field_specs,
                                            *[extra_spec(*extra) for extra in self.extras])
        self.action_spec = _dm.action_spec(pool.action_spec)
        self.field_specs = dict(zip(self.field_names, field_specs))

    def state(self, td: TensorDict, obs: Any, env_id: np.ndarray) -> tuple:
        """One batch's ``State``: ``obs`` (the batch's observation arrays) and ``td``'s extras."""
        rows = len(env_id)
        if isinstance(obs, np.ndarray):
            fields = [obs]
        else:
            fields = [obs[name] if name in obs else np.zeros((rows, *spec.shape), spec.dtype)
                      for name, spec in self.field_specs.items()]
        extras = [td[source].numpy() if dtype is None else td[source].numpy().astype(dtype)
                  for _, source, dtype in self.extras]
        return self._state(env_id, self._players(env_id), *fields, *extras)


try:  # EnvPool's dm pools are dm_env.Environment instances, where dm_env is installed
    import dm_env as _dm_env

    _DM_ENV_BASES: tuple[type, ...] = (_dm_env.Environment,)
except ImportError:
    _DM_ENV_BASES = ()


class DmEnvPool(EnvPool, *_DM_ENV_BASES):
    """EnvPool's ``env_type="dm"`` face (``envpool/python/dm_envpool.py``): ``reset()``, ``step()`` and
    ``recv()`` return one batched ``dm_env.TimeStep``:

    * ``step_type`` int32 ``[B]``: ``FIRST`` (0) for a row that starts an episode (a reset, or the
      next-step autoreset after ``LAST``), ``LAST`` (2) where the episode ended, else ``MID`` (1);
    * ``reward``, ``discount`` float32 ``[B]``: discount 0 where the task terminated, else 1 (a time
      limit keeps 1); a ``FIRST`` row has reward 0 and discount 1 (EnvPool's reward there is stale);
    * ``observation``: a namedtuple ``State``, laid out as EnvPool 1.2 lays it out (NOTE [TimeSteps as
      EnvPool gives them]): ``env_id`` int32, ``players`` (a namedtuple of ``env_id``), the observation's
      fields (``obs`` for an unnamed one; the Control Suite's: every field of the task's domain), the
      family's extras (Atari's as EnvPool names them: ``lives`` int32, ``reward`` float32 unclipped,
      ``terminated`` int32 the game's end, ``ram``).

    ``observation_spec()`` / ``action_spec()`` are ``dm_env.specs``: the namedtuple of the fields' specs,
    and a ``BoundedArray`` (float) or ``DiscreteArray``.

    The layout of ``State``: NOTE [TimeSteps as EnvPool gives them] (``_DmLayout``).
    """

    def __init__(self, pool: Pool, env_type: str, reset_return_info: bool, seed: int, render_mode: str | None = None,
                 frame_stack: int = 1, task_id: str | None = None):
        super().__init__(pool, env_type, reset_return_info, seed, render_mode, frame_stack=frame_stack,
                         task_id=task_id)
        import dm_env

        self._layout = self._dm_layout()
        self._dm_env = dm_env

    def observation_spec(self) -> tuple:
        """The ``State`` namedtuple of one env's ``dm_env.specs``."""
        return self._layout.observation_spec

    def action_spec(self) -> Any:
        return self._layout.action_spec

    def _to(self, td: TensorDict, reset: bool, return_info: bool) -> Any:
        env_id = td["env_id"].numpy().astype(np.int32)
        elapsed = td["episode_length"].numpy()
        terminated = td["terminated"].numpy()
        StepType = self._dm_env.StepType
        step_type = np.where(elapsed == 0, StepType.FIRST,
                             np.where(td["done"].numpy(), StepType.LAST, StepType.MID)).astype(np.int32)
        observation = self._layout.state(td, self._observation(td), env_id)
        return self._dm_env.TimeStep(step_type=step_type, reward=td["reward"].numpy(),
                                     discount=(~terminated).astype(np.float32), observation=observation)


# EnvPool 1.2's public class names (envpool.python.protocol).
DMEnvPool = DmEnvPool
GymnasiumEnvPool = EnvPool
