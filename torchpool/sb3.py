"""Stable-Baselines3 ``VecEnv`` over a torchpool ``Pool``: SB3's algorithms and wrappers run on any torchpool id.

    from stable_baselines3 import PPO
    import torchpool.sb3
    envs = torchpool.sb3.make_vec_env("CartPole-v1", n_envs=8, seed=0)   # was: sb3's make_vec_env(...)
    model = PPO("MlpPolicy", envs).learn(100_000)
    atari = VecFrameStack(torchpool.sb3.make_atari_env("PongNoFrameskip-v4", n_envs=8), 4)  # was: SB3's make_atari_env

A step returns what SB3's ``DummyVecEnv`` over Monitor-wrapped Gymnasium envs
returns (one ``Pool.step`` replaces its Python loop over envs):

* ``step(actions)`` -> ``(observations [N, ...], rewards float32 [N], dones
  bool [N], infos)``, ``infos`` a list of ``N`` dicts.
* Autoreset as SB3 does it: where ``dones[i]``, ``observations[i]`` is the
  first observation of env ``i``'s next episode and the last one of the ended
  episode is ``infos[i]["terminal_observation"]``. The pool's own
  ``autoreset="same_step"`` is exactly this (its ``final_observation``).
* ``infos[i]["TimeLimit.truncated"]`` is ``truncated and not terminated``
  (SB3 bootstraps the value only then), on every step, as ``DummyVecEnv`` sets it.
* ``infos[i]["episode"] = {"r", "l", "t"}`` where an episode ended, as SB3's
  ``Monitor`` (which SB3's ``make_vec_env`` always adds) puts there: return
  (the pool's float32 ``episode_return``, rounded to 6 decimals), length, and
  seconds since the VecEnv was made. ``monitor=False`` leaves it out.
  ``env_is_wrapped(Monitor)`` says ``True`` exactly when it is there, so
  ``evaluate_policy`` counts whole episodes from it.
  For Atari it is the whole game's unclipped return ("Atari games in
  Monitor's info", below).
* The family's extras (MuJoCo's ``x_velocity``..., Atari's ``lives``) are per-env
  info values of the step, as the Gymnasium envs put them in their ``info``.
* ``reset()`` returns the observations only; ``reset_infos[i]`` holds env
  ``i``'s extras after ``reset()``. It is ``{}`` after an autoreset: a same-step
  reset reports no info of its own (the row's extras are the ended step's).
* ``seed(s)`` / ``set_options()``: as every SB3 ``VecEnv``, the next
  ``reset()`` reseeds env ``i`` with ``s + i``. torchpool envs take no reset
  options: non-empty options raise at that ``reset()``.

Actions go to the pool as they come, nothing clipped (SB3's policies clip Box
actions; a torchpool env treats a value beyond the bounds as its reference
does): ``int64 [N]`` for ``Discrete`` spaces, ``float32 [N, *shape]`` (or
float64) for ``Box`` ones. ``step_async`` keeps them (SB3 calls ``step_wait``
right after it); ``step_wait`` steps every env at once on the pool's threads.

Outputs are NumPy views of the pool's output ring, not copies: the ring never
rewrites a block while anything (an array, a view of one, a
``terminal_observation`` row) still references it (NOTE [Output ring reuse] in
``torchpool/_held.py``), and SB3's buffers copy what they keep. Writing into
them is safe too (SB3's PPO adds the bootstrap value into the rewards it got,
in place): the pool only ever writes a block nobody holds. Observations
of named fields (``pool.observation_spec`` a ``DictSpec``) are dicts of arrays
over a Gymnasium ``Dict`` space, as SB3's ``MultiInputPolicy`` wants; a
scalar field (shape ``()``) comes as ``[N, 1]`` (a view still), its space of
shape ``(1,)``, since SB3's feature extractors flatten from dim 1.

Python envs (``torchpool.make(env_fns)``, ``"gymnasium:<id>"``; SB3's own tests run on them as
``DummyVecEnv``/``SubprocVecEnv``: ``tests/peers/sb3_plugin.py``) are served as SB3's VecEnvs serve
them: ``get_attr``, ``set_attr``, ``env_method``, ``env_is_wrapped`` reach each env's object where it
steps (``ProcessPool.get_attr``/``set_attr``/``call``/``is_wrapped``), ``set_options`` reaches the
next ``reset()``'s ``env.reset(options=...)``, ``render_mode`` is the envs' own and ``get_images`` calls
their ``render()``; the observation space is the env's own (a ``Tuple`` observation is a tuple of
arrays).

A torchpool C++ env has no Python object: ``get_attr`` serves ``render_mode`` (what
was asked: ``make_vec_env`` asks ``"rgb_array"`` where the pool renders,
``Pool.renders``: Atari, classic control, MuJoCo, as SB3's ``make_vec_env`` does, so
``VecVideoRecorder`` films them), ``spec``, ``metadata`` and the single-env spaces; ``env_method``
serves ``get_wrapper_attr``/``has_wrapper_attr``; anything else raises an
``AttributeError`` naming the call.

Actions of another dtype than the pool takes (SB3's ``MultiBinary`` samples are int8, a list of
ints may act in a float ``Box``) are converted: to int64 for discrete spaces, float64 for ``Box``.
A step before the first ``reset()`` resets every env first (a pool steps only envs it has reset;
SB3's ``DummyVecEnv`` steps whatever state the env's constructor left).
"""

from __future__ import annotations

import collections
import time
import warnings
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
import torch
from gymnasium.envs.registration import EnvSpec
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvObs, VecEnvStepReturn

from ._workers import is_process_env
from .pool import Pool
from .pool import make as _make_pool

# Atari games in Monitor's info.
# SB3's make_atari_env puts Monitor below AtariWrapper's EpisodicLifeEnv and
# ClipRewardEnv, so SB3 logs (ep_rew_mean) and evaluate_policy see whole games
# and unclipped scores, whatever those wrappers do. A torchpool Atari pool
# does both inside the env (episodic_life=, reward_clip=): with them on, its
# episode is one life and its episode_return is clipped. So for a family with
# the Atari family (Pool.family; not any pool whose extras happen to carry
# those names, e.g. a Python env's info) the VecEnv sums the raw_reward extra itself and
# puts infos[i]["episode"] only where the game ended (game_over, or a
# truncation): r is the game's unclipped return, l its length in agent steps,
# or, from make_atari_env, in emulator frames as Monitor over SB3's
# NoFrameskip env counts them (the episode_frame_number extra: ALE's count).
# Everything else (dones, terminal_observation, rewards) follows the pool's
# episodes, lives included, as AtariWrapper's do.

__all__ = ["PoolVecEnv", "make_atari_env", "make_vec_env"]

# SB3 make_vec_env's arguments that build Python envs, which a pool has none of.
_PYTHON_ENV_ARGS = {
    "wrapper_class": "wrap the VecEnv with SB3's VecEnvWrappers (VecNormalize, VecFrameStack, ...) instead",
    "wrapper_kwargs": "wrap the VecEnv with SB3's VecEnvWrappers instead",
    "vec_env_cls": "the pool is the vectorization: its C++ threads step the envs",
    "vec_env_kwargs": "the pool is the vectorization; pass torchpool.make's arguments (num_threads, ...)",
    "monitor_dir": "wrap the VecEnv with VecMonitor(envs, filename=...) to write a monitor file",
    "monitor_kwargs": "wrap the VecEnv with VecMonitor(envs, ...) instead",
    "start_index": "pass seed=seed + start_index",
}

# make_vec_env's default render_mode: "rgb_array" where the pool renders, as SB3's make_vec_env asks for it.
_IF_IT_RENDERS = "rgb_array if the pool renders"
# The action dtypes a pool takes as they are (Pool._coerce_action): others are converted (step_async).
_BOX_DTYPES = frozenset({np.dtype(np.float32), np.dtype(np.float64)})
_DISCRETE_DTYPES = frozenset({np.dtype(np.int64), np.dtype(np.int32), np.dtype(np.uint8)})


def _at_least_1d(space: gymnasium.Space) -> gymnasium.Space:
    """A scalar Box as a Box of shape (1,); any other space as it is."""
    if not isinstance(space, gymnasium.spaces.Box) or space.shape != ():
        return space
    return gymnasium.spaces.Box(low=space.low.reshape(1), high=space.high.reshape(1), shape=(1,), dtype=space.dtype)


def make_vec_env(env_id: str, n_envs: int = 8, seed: int | None = 0, env_kwargs: dict[str, Any] | None = None,
                 monitor: bool = True, **make_kwargs: Any) -> PoolVecEnv:
    """``n_envs`` torchpool envs as one SB3 ``VecEnv``; stands in for SB3's ``make_vec_env(env_id, n_envs, seed)``.

    Args:
        env_id: a torchpool env id (``torchpool.list_envs()``).
        n_envs: how many envs.
        seed: env ``i`` is seeded with ``seed + i`` (SB3's convention); ``None``
            draws a random seed.
        env_kwargs: the env's own kwargs, as SB3's ``env_kwargs`` (merged with
            ``make_kwargs``).
        monitor: put ``infos[i]["episode"]`` where an episode ends, as SB3's
            ``Monitor`` does (default, as SB3's ``make_vec_env`` always wraps one).
        **make_kwargs: the rest of ``torchpool.make``'s arguments
            (``num_threads``, ``obs_dtype``, ``max_episode_steps``, task kwargs).

    SB3's ``wrapper_class``, ``vec_env_cls``, ``monitor_dir``, ... build Python
    envs and raise a ``TypeError`` saying what to use instead.
    """
    for name, instead in _PYTHON_ENV_ARGS.items():
        if name in make_kwargs:
            raise TypeError(f"torchpool.sb3.make_vec_env takes no {name}= (SB3's make_vec_env argument): {instead}")
    overlap = sorted(set(env_kwargs or {}) & set(make_kwargs))
    if overlap:
        raise TypeError(f"{overlap} given both in env_kwargs and as keyword arguments; pass each once")
    kwargs = {**(env_kwargs or {}), **make_kwargs}
    if not is_process_env(env_id):
        kwargs.setdefault("render_mode", _IF_IT_RENDERS)
    return PoolVecEnv(env_id, n_envs, seed=seed, monitor=monitor, **kwargs)


# SB3's AtariWrapper arguments (wrapper_kwargs) -> torchpool Atari kwargs.
_ATARI_WRAPPER_KWARGS = {"noop_max": "noop_max", "frame_skip": "frame_skip", "terminal_on_life_loss": "episodic_life",
                         "clip_reward": "reward_clip", "action_repeat_probability": "repeat_action_probability"}


def make_atari_env(env_id: str, n_envs: int = 1, seed: int | None = None,
                   wrapper_kwargs: dict[str, Any] | None = None, env_kwargs: dict[str, Any] | None = None,
                   monitor: bool = True, **make_kwargs: Any) -> PoolVecEnv:
    """Stands in for SB3's ``make_atari_env``: the frames, rewards and episodes of its ``AtariWrapper``.

    Args:
        env_id: a torchpool Atari id (``"Pong-v5"``) or the Gymnasium id SB3 and
            the RL Zoo use (``"PongNoFrameskip-v4"``: the same game, no sticky actions).
        n_envs, seed, monitor, env_kwargs, **make_kwargs: as ``make_vec_env``.
        wrapper_kwargs: ``AtariWrapper``'s (``noop_max=30``, ``frame_skip=4``,
            ``screen_size=84``, ``terminal_on_life_loss=True``, ``clip_reward=True``,
            ``action_repeat_probability=0.0``).

    Observations are ``[n_envs, 1, 84, 84]`` uint8 frames (channel first, so
    SB3 adds no ``VecTransposeImage``): stack them with ``VecFrameStack`` as
    with SB3's own. The Atari kwarg ``preprocessing="sb3"`` makes them equal
    to ``AtariWrapper``'s (docs/parity.md, "Stable-Baselines3").
    """
    game = env_id.removeprefix("ALE/")
    if game.endswith("NoFrameskip-v4"):
        game = game[:-len("NoFrameskip-v4")] + "-v5"
    kwargs = {"preprocessing": "sb3", "stack_num": 1, "noop_max": 30, "frame_skip": 4, "episodic_life": True,
              "reward_clip": True, "use_fire_reset": True, "repeat_action_probability": 0.0}
    for name, value in (wrapper_kwargs or {}).items():
        if name == "screen_size":
            kwargs["img_height"] = kwargs["img_width"] = value
        elif name in _ATARI_WRAPPER_KWARGS:
            kwargs[_ATARI_WRAPPER_KWARGS[name]] = value
        else:
            raise TypeError(f"AtariWrapper takes no {name}= (its arguments: "
                            f"{sorted([*_ATARI_WRAPPER_KWARGS, 'screen_size'])})")
    kwargs.update(env_kwargs or {})
    envs = make_vec_env(game, n_envs, seed=seed, monitor=monitor, **kwargs, **make_kwargs)
    envs.lengths_in_frames = True  # Monitor sits below AtariWrapper: it counts emulator frames
    return envs


class PoolVecEnv(VecEnv):
    """A sync, same-step-autoreset torchpool pool as an SB3 ``VecEnv``; see the module docstring.

    Shapes, for ``N = num_envs``: observations ``[N, *observation_space.shape]``
    in the observation space's dtype (float32 for classic control and MuJoCo,
    float64 with ``obs_dtype=torch.float64``, uint8 ``[N, 4, 84, 84]`` for
    Atari) or, for named fields, a dict of such arrays; rewards float32
    ``[N]``; dones bool ``[N]``. ``observation_space``/``action_space`` are
    single-env Gymnasium spaces, as SB3 wants.
    """

    def __init__(self, env_id: Any, num_envs: int = 8, seed: int | None = 0, monitor: bool = True,
                 **make_kwargs: Any):
        """``env_id``: a torchpool id, ``"gymnasium:<id>"``, or a callable (a list of them) returning a
        ``gymnasium.Env``, as ``torchpool.make`` takes; ``render_mode`` of a Python env goes to its
        constructor."""
        python_envs = is_process_env(env_id)
        render_mode = make_kwargs.pop("render_mode", None)
        if python_envs and render_mode not in (None, _IF_IT_RENDERS):
            make_kwargs["render_mode"] = render_mode  # the env's own business, as with SB3's VecEnvs
        elif render_mode not in (None, "rgb_array", _IF_IT_RENDERS):
            raise ValueError(f"render_mode={render_mode!r}: a torchpool VecEnv renders 'rgb_array' frames only")
        autoreset = make_kwargs.pop("autoreset", "same_step")
        if autoreset != "same_step":
            raise ValueError(f"an SB3 VecEnv resets an ended env inside the step: autoreset must be 'same_step', "
                             f"got {autoreset!r}")
        batch_size = make_kwargs.pop("batch_size", None)
        if batch_size not in (None, num_envs):
            raise ValueError(f"an SB3 VecEnv steps every env at once: batch_size must be num_envs={num_envs}, "
                             f"got {batch_size}")
        pool = _make_pool(env_id, num_envs=num_envs, seed=seed, autoreset="same_step", **make_kwargs)
        if render_mode == _IF_IT_RENDERS:
            render_mode = "rgb_array" if pool.renders else None
        if render_mode is not None and not python_envs and not pool.renders:
            pool.close()
            raise ValueError(f"render_mode='rgb_array': {env_id}'s family does not render")
        self._init(pool, monitor, render_mode)

    @classmethod
    def from_pool(cls, pool: Pool, monitor: bool = True) -> PoolVecEnv:
        """Wraps an existing sync pool made with ``autoreset="same_step"`` (the pool is closed with the VecEnv)."""
        if pool.is_async or pool.autoreset != "same_step":
            raise ValueError(f"PoolVecEnv needs a sync pool with autoreset='same_step', got batch_size="
                             f"{pool.batch_size} of num_envs={pool.num_envs}, autoreset={pool.autoreset!r}")
        envs = cls.__new__(cls)
        envs._init(pool, monitor, "rgb_array" if pool.renders else None)
        return envs

    def _init(self, pool: Pool, monitor: bool, render_mode: str | None) -> None:
        self._pool = pool
        self._render_mode = render_mode  # a C++ env's; a Python env has its own (get_attr)
        # Python envs: their objects answer get_attr, set_attr, env_method, env_is_wrapped (NOTE [Env requests]).
        self._python_envs = pool.family == "Process"
        self._reset_yet = False
        self.env_id = pool.env_id
        self.monitor = monitor
        self._extra_keys = pool.extra_keys
        # Atari: Monitor's episode is the whole game, unclipped ("Atari games in Monitor's info", above).
        self._games = pool.family == "Atari"
        # Monitor's l in emulator frames (make_atari_env), not agent steps.
        self.lengths_in_frames = False
        self._game_returns = np.zeros(pool.num_envs, dtype=np.float64)
        self._game_lengths = np.zeros(pool.num_envs, dtype=np.int64)
        self._actions: Any = None
        self._t_start = time.time()  # Monitor's clock for infos[i]["episode"]["t"]
        observation_space = pool.observation_spec.to_gymnasium()
        # SB3's feature extractors flatten from dim 1, so a scalar Box field (shape ()) of a C++ env is served
        # as shape (1,). A Python env's observations are served in its own space, as SB3's VecEnvs serve them.
        self._scalar_fields: frozenset[str] = frozenset()
        self._tuple_size = None
        if self._python_envs:
            observation_space = getattr(pool, "observation_space", observation_space)
            if isinstance(observation_space, gymnasium.spaces.Tuple):
                self._tuple_size = len(observation_space.spaces)
        elif isinstance(observation_space, gymnasium.spaces.Dict):
            self._scalar_fields = frozenset(key for key, space in observation_space.spaces.items()
                                            if isinstance(space, gymnasium.spaces.Box) and space.shape == ())
            observation_space = gymnasium.spaces.Dict(collections.OrderedDict(  # in field order, as specs.py
                (key, _at_least_1d(space)) for key, space in observation_space.spaces.items()))
        action_space = getattr(pool, "action_space", None) if self._python_envs else None
        action_space = action_space or pool.action_spec.to_gymnasium()
        self._action_dtypes = _BOX_DTYPES if isinstance(action_space, gymnasium.spaces.Box) else _DISCRETE_DTYPES
        self._action_cast = np.float64 if isinstance(action_space, gymnasium.spaces.Box) else np.int64
        self._structured_actions = None
        if isinstance(action_space, (gymnasium.spaces.Dict, gymnasium.spaces.Tuple)):
            self._structured_actions = self._pool_actions
        super().__init__(pool.num_envs, observation_space, action_space)

    @property
    def pool(self) -> Pool:
        """The underlying :class:`torchpool.Pool` (sync, same-step autoreset)."""
        return self._pool

    @property
    def envs(self) -> list[gymnasium.Env]:
        """Python envs stepped in this process (``steps_in="caller"``): their objects, as ``DummyVecEnv.envs``."""
        envs = getattr(self._pool, "local_envs", None)
        if envs is None:
            raise AttributeError(f"{self!r} has no env objects here: a C++ env has none, and Python envs in worker "
                                 "processes are reached with get_attr, set_attr and env_method")
        return envs

    # ---- SB3 VecEnv API -------------------------------------------------------

    def reset(self) -> VecEnvObs:
        """Resets every env (reseeding them if ``seed()`` was called since); returns the observations only."""
        if self._python_envs:
            if any(self._options):
                self._pool.set_reset_options([options or None for options in self._options])
        elif any(self._options):
            raise ValueError(f"torchpool envs take no reset options, but set_options() gave {self._options}")
        self._reset_yet = True
        seeds = self._seeds
        if all(seed is None for seed in seeds):
            td = self._pool.reset()
        elif any(seed is None for seed in seeds):
            raise ValueError(f"reset(): seeds must be all ints or all None, got {seeds}")
        else:
            td = self._pool.reset(seed=[int(seed) for seed in seeds])
        self._reset_seeds()
        self._reset_options()
        self._game_returns[:] = 0
        self._game_lengths[:] = 0
        self.reset_infos = self._extras(td)
        return self._numpy(td["observation"])

    def step_async(self, actions: np.ndarray) -> None:
        """Keeps ``actions`` (``int64 [N]`` or ``float32 [N, *shape]``; other dtypes and lists are converted)
        for ``step_wait``."""
        if self._structured_actions is not None:  # a Python env's Dict or Tuple action space
            self._actions = self._structured_actions(actions)
            return
        if not isinstance(actions, (np.ndarray, torch.Tensor)):
            actions = np.asarray(actions)  # SB3's tests step with a list of each env's action_space.sample()
        if (isinstance(actions, np.ndarray) and actions.dtype not in self._action_dtypes
                and actions.dtype.kind in "biuf"):
            actions = actions.astype(self._action_cast)  # MultiBinary's int8, ints for a float Box
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        """Steps every env; ``(observations, rewards float32 [N], dones bool [N], infos)``."""
        actions, self._actions = self._actions, None
        if actions is None:
            raise RuntimeError("step_wait() without step_async(actions) before it")
        if not self._reset_yet:  # a pool steps only envs it has reset
            self.reset()
        # NumPy views of the columns at once: a TensorDict lookup or a .numpy() costs
        # a microsecond or so each, a sizeable share of a cheap env's step.
        columns = self._pool.step_arrays(actions)
        done = columns["done"]
        terminated, truncated = columns["terminated"].tolist(), columns["truncated"].tolist()
        if self._extra_keys:
            infos = self._extras(columns)
            for info, term, trunc in zip(infos, terminated, truncated):
                info["TimeLimit.truncated"] = trunc and not term
        else:
            infos = [{"TimeLimit.truncated": trunc and not term} for term, trunc in zip(terminated, truncated)]
        ended = [i for i, end in enumerate(done.tolist()) if end]
        if self._games:
            self._game_returns += columns["raw_reward"]
            self._game_lengths += 1
        if ended:
            final_observation = self._served(columns["final_observation"])
            if self._games:
                returns, lengths = self._game_returns.tolist(), self._game_lengths.tolist()
                if self.lengths_in_frames:
                    lengths = columns["episode_frame_number"].tolist()
                game_over = (columns["game_over"] | columns["truncated"]).tolist()
            else:
                returns, lengths = columns["episode_return"].tolist(), columns["episode_length"].tolist()
            for i in ended:
                info = infos[i]
                if isinstance(final_observation, dict):
                    info["terminal_observation"] = {key: value[i] for key, value in final_observation.items()}
                elif isinstance(final_observation, tuple):
                    info["terminal_observation"] = tuple(value[i] for value in final_observation)
                else:
                    info["terminal_observation"] = final_observation[i]
                self.reset_infos[i] = {}
                if self._games:
                    if not game_over[i]:
                        continue  # a life lost under episodic_life: the game goes on
                    self._game_returns[i] = 0
                    self._game_lengths[i] = 0
                if self.monitor:
                    info["episode"] = {"r": round(returns[i], 6), "l": lengths[i],
                                       "t": round(time.time() - self._t_start, 6)}
        return self._served(columns["observation"]), columns["reward"], done, infos

    def close(self) -> None:
        self._pool.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """A Python env's attribute (through its wrappers, as SB3's VecEnvs); for a C++ env ``render_mode``,
        ``spec``, ``metadata``, ``observation_space``, ``action_space``, per env.

        A C++ env's ``render_mode`` is what was asked (``make_vec_env``: ``"rgb_array"`` where the pool renders).
        """
        if self._python_envs:
            return self._pool.get_attr(attr_name, self._env_ids(indices))
        count = len(list(self._get_indices(indices)))
        if attr_name == "render_mode":
            value: Any = self._render_mode
        elif attr_name == "spec":
            value = self._spec()
        elif attr_name == "metadata":
            value = {"render_modes": ["rgb_array"] if self._pool.renders else []}
        elif attr_name in ("observation_space", "action_space"):
            value = getattr(self, attr_name)
        else:
            raise AttributeError(
                f"get_attr({attr_name!r}): a torchpool env is C++, with no Python attribute {attr_name!r}; "
                "get_attr serves render_mode, spec, metadata, observation_space and action_space")
        return [value] * count

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """A Python env's ``setattr(env, attr_name, value)`` (its outermost wrapper's, as SB3's VecEnvs)."""
        if self._python_envs:
            return self._pool.set_attr(attr_name, value, self._env_ids(indices))
        raise AttributeError(f"set_attr({attr_name!r}, ...): a torchpool env is C++ and has no Python attributes "
                             "to set; pass its kwargs to make_vec_env")

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        """A Python env's method (through its wrappers); for a C++ env ``get_wrapper_attr(name)`` and
        ``has_wrapper_attr(name)`` (as ``get_attr``/``has_attr``)."""
        if self._python_envs:
            return self._pool.call(method_name, *method_args, env_ids=self._env_ids(indices), **method_kwargs)
        if method_name == "get_wrapper_attr":
            return self.get_attr(*method_args, indices=indices, **method_kwargs)
        if method_name == "has_wrapper_attr":
            return [self.has_attr(*method_args, **method_kwargs)] * len(list(self._get_indices(indices)))
        raise AttributeError(f"env_method({method_name!r}): a torchpool env is C++, with no Python method "
                             f"{method_name!r}; env_method serves get_wrapper_attr and has_wrapper_attr")

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        """A Python env's own wrappers, and ``Monitor`` where ``monitor=True`` (its ``episode`` info is there)."""
        wrapped = self.monitor and issubclass(Monitor, wrapper_class)
        if self._python_envs:
            return [wrapped or own for own in self._pool.is_wrapped(wrapper_class, self._env_ids(indices))]
        return [wrapped] * len(list(self._get_indices(indices)))

    def get_images(self) -> Sequence[np.ndarray | None]:
        """Each env's current screen, ``uint8 [H, W, 3]`` (what ``render()`` tiles and ``VecVideoRecorder`` films)."""
        if self._python_envs:  # as SB3's VecEnvs: each env's render(), if it renders rgb_array frames
            if self.render_mode != "rgb_array":
                warnings.warn(f"the render mode is {self.render_mode!r}, not 'rgb_array': no images", stacklevel=2)
                return [None] * self.num_envs
            return self._pool.call("render")
        if not self._pool.renders:
            raise NotImplementedError(f"get_images(): {self.env_id}'s family does not render")
        return [self._pool.render(i).numpy() for i in range(self.num_envs)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.env_id!r}, num_envs={self.num_envs})"

    # ---- internals ------------------------------------------------------------

    def _env_ids(self, indices: VecEnvIndices) -> list[int]:
        return list(self._get_indices(indices))

    def _pool_actions(self, actions: Any) -> Any:
        """A Dict or Tuple space's actions (a list of each env's, as SB3's VecEnvs take them, or already batched)
        as the pool takes them (its ``action_plan``: flat rows, or objects)."""
        from ._workers import spaces

        kind = self._pool.action_plan.worker[0]
        if kind == "object":
            self._pool.put_object_actions(list(actions))
            return np.zeros(self.num_envs, dtype=np.int64)
        if isinstance(actions, (list, tuple)) and len(actions) == self.num_envs:
            batched = gymnasium.vector.utils.create_empty_array(self.action_space, self.num_envs)
            actions = gymnasium.vector.utils.concatenate(self.action_space, actions, batched)
        return spaces.flatten_actions(self._pool.action_plan, self.action_space, actions, self.num_envs)

    def _numpy(self, observation: Any) -> Any:
        """A reset's observation (a tensor, or a TensorDict of named fields) as NumPy views, served as a step's."""
        if isinstance(observation, torch.Tensor):
            return observation.numpy()
        return self._served({key: value.numpy() for key, value in observation.items()})

    def _served(self, observation: Any) -> Any:
        """An observation of ``step_arrays()`` as SB3 takes it: named fields in a dict of the caller's own (the
        pool's is reused), scalar ones as ``[N, 1]``."""
        if self._tuple_size is not None and isinstance(observation, dict):  # a Python env's Tuple space
            return tuple(observation[str(position)] for position in range(self._tuple_size))
        if isinstance(observation, dict):
            return {key: value[:, None] if key in self._scalar_fields else value for key, value in observation.items()}
        return observation

    def _extras(self, columns: Any) -> list[dict[str, Any]]:
        """One dict per env of the family's extras, as Python numbers (lists for array-valued ones)."""
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for key in self._extra_keys:
            for info, value in zip(infos, columns[key].tolist()):  # 4x cheaper than NumPy scalars
                info[key] = value
        return infos

    def _spec(self) -> EnvSpec:
        """A Gymnasium ``EnvSpec`` of this env: its id, time limit and kwargs (the reference's entry point, if any)."""
        reference = gymnasium.registry.get(self.env_id)
        return EnvSpec(
            id=self.env_id,
            entry_point=None if reference is None else reference.entry_point,
            reward_threshold=None if reference is None else reference.reward_threshold,
            max_episode_steps=self._pool.max_episode_steps or None,
            kwargs=dict(self._pool.task_kwargs))
