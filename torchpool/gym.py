"""Gymnasium ``VectorEnv`` over a torchpool ``Pool``, registered as ``torchpool/<EnvId>``.

    import gymnasium, torchpool.gym
    envs = gymnasium.make_vec("torchpool/CartPole-v1", num_envs=8)   # or torchpool.gym.VectorEnv("CartPole-v1", 8)
    obs, info = envs.reset(seed=0)                                    # obs: float32[8, 4] (NumPy)
    obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())

A step returns what Gymnasium 1.x's ``SyncVectorEnv`` returns in the same
autoreset mode (one ``Pool.step`` replaces its Python loop over envs):

* ``NEXT_STEP`` (the default, as Gymnasium's and EnvPool's): the step after an
  end resets the env, ignores its action and returns reward 0, not done.
  Gymnasium's vector wrappers (``NormalizeObservation``, ...) accept it.
* ``SAME_STEP`` (torchpool's own, on request): an env whose episode ends is
  reset inside the step; ``observation`` is the first of the new episode.
  When any env ended, ``info`` holds ``final_obs`` (NumPy: an object array with
  the true last observation where it ended and ``None`` elsewhere), the
  per-env info of the finishing step under ``final_info``, and their masks
  ``_final_obs`` / ``_final_info``. When none ended, there are no such keys.
* ``DISABLED``: the caller resets ended envs with
  ``reset(options={"reset_mask": mask})``; stepping one before that raises.

The family's extra outputs (``lives`` for Atari, ...) are per-env infos: in
``info[key]`` with the mask ``info["_" + key]``, as ``SyncVectorEnv`` batches
what its envs return. Classic control has none, so ``info`` is ``{}`` on
steps where no episode ends, as for Gymnasium's own classic-control envs.

A pool of Python envs (``VectorEnv(env_fns, num_envs=len(env_fns))``, or a
``"gymnasium:<id>"``) hands back, with NumPy outputs, what ``SyncVectorEnv``
does for any space: observations in their space's dtype and structure
(``Text``, ``Graph``, ``Sequence``, ``OneOf`` leaves as tuples of the envs'
values), each env's own ``info`` merged by ``_add_info``, ``final_obs`` as the
env returned it; ``reset(seed=None)`` passes None to the envs unless a ``seed=``
was given; ``np_random_seed``, ``get_attr``, ``set_attr`` and ``call`` reach the
envs (NOTE [Python objects] in torchpool/_workers/spaces.py, docs/python_envs.md).

Outputs are NumPy arrays by default and torch tensors with
``array_type="torch"`` (moved to ``device`` when one is given). They are views
of the pool's output ring, never copied and never overwritten while you hold
them (NOTE [Output ring reuse] in ``torchpool/_held.py``). Two deliberate
differences from ``SyncVectorEnv``: rewards are float32 (the pool's dtype;
``SyncVectorEnv`` widens them to float64), and ``reset(options=...)`` does not
pop ``reset_mask`` out of the caller's dict.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import gymnasium
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_differing_spaces, batch_space

from ._workers import is_process_env
from ._workers import spaces as _spaces
from .pool import FIXED_KEYS, Pool, make
from .registry import list_envs_unchecked

if TYPE_CHECKING:
    from tensordict import TensorDict

__all__ = ["VectorEnv", "register_envs", "NAMESPACE", "AUTORESET_TO_POOL"]

NAMESPACE = "torchpool"

# Gymnasium's autoreset modes and the Pool's names for the same behaviours.
AUTORESET_TO_POOL: dict[AutoresetMode, str] = {
    AutoresetMode.SAME_STEP: "same_step",
    AutoresetMode.NEXT_STEP: "next_step",
    AutoresetMode.DISABLED: "disabled",
}
_POOL_TO_AUTORESET = {name: mode for mode, name in AUTORESET_TO_POOL.items()}

# Anything that is not a fixed key is a family extra (``lives``, ``raw_reward``...) and goes to ``info``.
_POOL_KEYS = frozenset(FIXED_KEYS)


def _autoreset_mode(mode: AutoresetMode | str) -> AutoresetMode:
    """Accepts an ``AutoresetMode``, its value (``"SameStep"``) or the Pool's name (``"same_step"``)."""
    if isinstance(mode, AutoresetMode):
        return mode
    if isinstance(mode, str):
        if mode in _POOL_TO_AUTORESET:
            return _POOL_TO_AUTORESET[mode]
        try:
            return AutoresetMode(mode)
        except ValueError:
            pass
    choices = [m.value for m in AutoresetMode] + sorted(_POOL_TO_AUTORESET)
    raise ValueError(f"autoreset_mode must be a gymnasium AutoresetMode or one of {choices}, got {mode!r}")


class VectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` torchpool envs as one Gymnasium vector env.

    Args:
        env_id: a torchpool env id (``torchpool.list_envs()``), without the
            ``torchpool/`` namespace.
        num_envs: how many envs.
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default, as Gymnasium's),
            ``SAME_STEP`` or ``DISABLED``; strings (``"NextStep"`` or the Pool's ``"next_step"``)
            work too. ``make_kwargs["autoreset"]`` is accepted as an alias.
        array_type: ``"numpy"`` (default) or ``"torch"`` for the outputs.
        device: with ``array_type="torch"``, where outputs go (default: stay on
            the CPU, zero-copy).
        observation_mode: as Gymnasium's ``AsyncVectorEnv`` takes it: ``"same"`` (default; envs whose
            observation spaces differ raise Gymnasium's RuntimeError), ``"different"`` (Python envs whose
            spaces differ in their bounds: ``batch_differing_spaces``), or ``(observation_space,
            single_observation_space)`` to report.
        **make_kwargs: the rest of ``torchpool.make``'s arguments (``seed``,
            ``num_threads``, ``obs_dtype``, ``max_episode_steps``, task kwargs).
            ``batch_size`` must be ``num_envs``: a Gymnasium vector env is sync.

    Shapes, for ``N = num_envs``: observations ``[N, *single_observation_space.shape]``
    in the observation space's dtype (float32 for classic control, float64
    with ``obs_dtype=torch.float64``, uint8 frames for Atari); rewards
    float32 ``[N]``; terminations and truncations bool ``[N]``. Actions:
    ``[N, *single_action_space.shape]``, NumPy or torch, integer for discrete
    spaces and float32/float64 for boxes.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        env_id: str,
        num_envs: int = 8,
        autoreset_mode: AutoresetMode | str | None = None,
        array_type: Literal["numpy", "torch"] = "numpy",
        device: torch.device | str | None = None,
        observation_mode: str | tuple[gymnasium.Space, gymnasium.Space] = "same",
        **make_kwargs: Any,
    ):
        observation_mode = _observation_mode(observation_mode)
        if is_process_env(env_id):
            # The pool takes spaces whose bounds differ; "same" is checked below, with Gymnasium's error.
            make_kwargs["observation_mode"] = "different"
        pool_autoreset = make_kwargs.pop("autoreset", None)
        if autoreset_mode is None:
            autoreset_mode = AutoresetMode.NEXT_STEP if pool_autoreset is None else pool_autoreset
        elif pool_autoreset is not None and _autoreset_mode(pool_autoreset) != _autoreset_mode(autoreset_mode):
            raise ValueError(f"autoreset={pool_autoreset!r} contradicts autoreset_mode={autoreset_mode!r}; pass one")
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        if array_type not in ("numpy", "torch"):
            raise ValueError(f"array_type must be 'numpy' or 'torch', got {array_type!r}")
        if device is not None and array_type != "torch":
            raise ValueError("device= only applies to array_type='torch'; NumPy outputs live on the CPU")
        batch_size = make_kwargs.pop("batch_size", None)
        if batch_size not in (None, num_envs):
            raise ValueError(
                f"a Gymnasium VectorEnv steps every env at once: batch_size must be num_envs={num_envs}, "
                f"got {batch_size}; use torchpool.make() for an async pool")

        with warnings.catch_warnings():
            # A Python env's info keys that are not numbers reach info here (NOTE [Python objects])
            warnings.filterwarnings("ignore", message=r".*are not numbers of a fixed shape and are dropped")
            self._pool: Pool = make(env_id, num_envs=num_envs, autoreset=AUTORESET_TO_POOL[self.autoreset_mode],
                                    **make_kwargs)
        self.env_id = env_id
        self.num_envs = num_envs
        self.array_type = array_type
        self.device = None if device is None else torch.device(device)
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        self.single_observation_space = self._pool.observation_spec.to_gymnasium()
        self.single_action_space = self._pool.action_spec.to_gymnasium()
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        observation_spaces = getattr(self._pool, "observation_spaces", (self.single_observation_space,))
        if isinstance(observation_mode, tuple):
            self.observation_space, self.single_observation_space = observation_mode
        elif observation_mode == "different":
            self.observation_space = batch_differing_spaces(observation_spaces)
        elif any(space != observation_spaces[0] for space in observation_spaces[1:]):
            self._pool.close()
            # Gymnasium's message (SyncVectorEnv.__init__)
            raise RuntimeError(
                "VectorEnv(..., observation_mode='same') however the sub-environments observation spaces are not "
                f"equivalent. single_observation_space={self.single_observation_space}, sub-environment "
                f"observation_space={next(s for s in observation_spaces if s != observation_spaces[0])}. If this "
                "is intentional, use `observation_mode='different'` instead.")
        self._extra_keys = tuple(self._pool.extra_keys)
        # A pool of Python envs handed back as NumPy: what Gymnasium's own vector envs return, object leaves,
        # infos and space dtypes included (NOTE [Python objects] in torchpool/_workers/spaces.py).
        self._python = hasattr(self._pool, "objects") and array_type == "numpy"
        if self._python:
            self._observation_space = self._pool.observation_space
            self._columns = self._pool.observation_columns
            self._batch_observations = _spaces.observation_batcher(self._observation_space, self._columns)
            self._action_plan = self._pool.action_plan
            self._object_leaves: list = [()] * num_envs  # per env, the object leaves of its latest observation
            self._ended = np.zeros(num_envs, dtype=bool)  # NEXT_STEP: the envs the next step resets
        seed = self._pool.seed
        self._seeds: tuple = tuple(int(seed) + i for i in range(num_envs)) if isinstance(
            seed, (int, np.integer)) else tuple(seed)
        # Python envs made with no seed= reset as in Gymnasium's vector envs: reset(seed=None) passes None
        self._unseeded_resets = self._python and "seed" not in make_kwargs
        # The latest observation of every env ([N, ...], a view of the pool's
        # output), kept so a partial reset can return the whole batch.
        self._observation: Any = None  # a tensor or TensorDict; NumPy arrays (or a dict of them) after a NumPy step

    @property
    def pool(self) -> Pool:
        """The underlying :class:`torchpool.Pool`."""
        return self._pool

    @property
    def np_random_seed(self) -> tuple[int, ...]:
        """The seed of each env's latest seeding, as Gymnasium's vector envs report it: Python envs' own
        ``np_random_seed``; for torchpool's C++ envs, env ``i`` of ``reset(seed=s)`` has ``s + i``,
        ``reset(seed=None)`` keeps them, and before the first reset they are the pool's (``seed + i``)."""
        if hasattr(self._pool, "get_attr"):
            return self.get_attr("np_random_seed")
        return self._seeds

    @property
    def np_random(self) -> tuple[np.random.Generator, ...]:
        """Python envs' own ``np_random`` (a C++ env's generator is torchpool's, not NumPy's)."""
        return self._python_envs("np_random").get_attr("np_random")

    # ---- Gymnasium API --------------------------------------------------------

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """Resets every env, or those in ``options["reset_mask"]`` (bool ``[N]``).

        ``seed``: ``None`` continues each env's random stream; an int seeds env
        ``i`` with ``seed + i``; a list gives env ``i`` the seed ``seed[i]``
        (all ints or all ``None``). Returns ``(observations [N, ...], info)``;
        after a partial reset, rows outside the mask keep their last observation.
        """
        options = dict(options or {})
        mask = options.pop("reset_mask", None)
        if options:
            raise ValueError(f"torchpool envs take no reset options but 'reset_mask', got {sorted(options)}")
        if seed is not None and not isinstance(seed, (int, np.integer)):
            seed = list(seed)
            if len(seed) != self.num_envs:
                raise ValueError(f"got {len(seed)} seeds for num_envs={self.num_envs}")
            if all(s is None for s in seed):
                seed = None
            elif any(s is None for s in seed):
                raise ValueError("seeds must be all ints or all None: torchpool cannot mix reseeded and "
                                 "continued envs in one reset; reset them with two reset_masks")

        if mask is None:
            if seed is not None:
                self._seeds = tuple(seed) if isinstance(seed, list) else tuple(int(seed) + i
                                                                               for i in range(self.num_envs))
            if self._python:
                return self._reset_python(seed, None)
            td = self._pool.reset(seed=seed)
            self._observation = td["observation"]
            return self._output(self._observation), self._extras_info(td, None)

        ids = self._reset_ids(mask)
        if isinstance(seed, list):
            seed = [seed[i] for i in ids.tolist()]
        if self._observation is None and len(ids) < self.num_envs:
            raise RuntimeError("the first reset() must reset every env")
        if seed is not None:
            seeds = list(self._seeds)
            for row, env in enumerate(ids.tolist()):
                seeds[env] = seed[row] if isinstance(seed, list) else int(seed) + env
            self._seeds = tuple(seeds)
        if self._python:
            return self._reset_python(seed, ids)
        td = self._pool.reset(seed=seed, env_ids=ids)
        if len(ids) == self.num_envs:
            self._observation = td["observation"]
        else:
            observation = self._copy_as_tensors(self._observation)
            observation[ids] = td["observation"]
            self._observation = observation
        rows = torch.zeros(self.num_envs, dtype=torch.bool)
        rows[ids] = True
        return self._output(self._observation), self._extras_info(td, ids, rows)

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Steps every env; returns ``(observations, rewards, terminations, truncations, info)``.

        ``observations [N, ...]``, ``rewards`` float32 ``[N]``, ``terminations``
        and ``truncations`` bool ``[N]``; ``info`` as described in the module docstring.
        """
        _refuse_scalar_actions(actions)
        if self._python:
            return self._step_python(actions)
        if self.array_type == "numpy":
            return self._step_arrays(actions)
        td = self._pool.step(actions)
        self._observation = td["observation"]
        info = self._extras_info(td, None)
        if self.autoreset_mode is AutoresetMode.SAME_STEP:
            done = td["done"]
            if bool(done.any()):
                info = self._final_info(td, done) | info
        return (self._output(self._observation), self._output(td["reward"]), self._output(td["terminated"]),
                self._output(td["truncated"]), info)

    # Gymnasium's env-object calls, for a pool of Python envs (ProcessPool's NOTE [Env requests]); a C++
    # env has no Python object to reach.

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Each env's ``env.get_wrapper_attr(name)(*args, **kwargs)``, or that attribute if it is not
        callable, as ``SyncVectorEnv.call``."""
        pool = self._python_envs("call")
        try:
            return tuple(pool.call(name, *args, **kwargs))
        except TypeError as error:
            if "not callable" not in str(error):
                raise
            return tuple(pool.get_attr(name))

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Each env's attribute ``name`` (through its wrappers), as ``SyncVectorEnv.get_attr``."""
        return tuple(self._python_envs("get_attr").get_attr(name))

    def set_attr(self, name: str, values: list[Any] | tuple[Any, ...] | Any) -> None:
        """``env.set_wrapper_attr(name, value)`` on each env: ``values`` one per env, or one value for all,
        as ``SyncVectorEnv.set_attr``."""
        pool = self._python_envs("set_attr")
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError("Values must be a list or tuple with length equal to the number of environments. "
                             f"Got `{len(values)}` values for {self.num_envs} environments.")
        for env, value in enumerate(values):
            pool.call("set_wrapper_attr", name, value, env_ids=[env])

    def _python_envs(self, what: str) -> Any:
        if not hasattr(self._pool, "get_attr"):
            raise AttributeError(f"{what}: {self.env_id!r} is one of torchpool's C++ envs, with no Python env "
                                 "object to reach")
        return self._pool

    def close_extras(self, **kwargs: Any) -> None:
        self._pool.close()

    def __enter__(self) -> VectorEnv:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.spec is not None:
            return super().__repr__()
        return f"{type(self).__name__}({self.env_id!r}, num_envs={self.num_envs})"

    # ---- internals ------------------------------------------------------------

    # ---- a pool of Python envs (NOTE [Python objects]) --------------------------

    def _reset_python(self, seed: Any, ids: torch.Tensor | None) -> tuple[Any, dict[str, Any]]:
        """``reset()`` of a pool of Python envs: ``ids`` None resets every env."""
        env_ids = list(range(self.num_envs)) if ids is None else ids.tolist()
        if seed is None and self._unseeded_resets:
            self._pool.unseed_next_resets(env_ids)
        td = self._pool.reset(seed=seed) if ids is None else self._pool.reset(seed=seed, env_ids=ids)
        observation = self._output(td["observation"])
        if ids is not None and len(env_ids) < self.num_envs:  # the other rows keep their last observation
            kept = self._observation
            if isinstance(kept, dict):
                observation = {key: _with_rows(kept[key], env_ids, value) for key, value in observation.items()}
            else:
                observation = _with_rows(kept, env_ids, observation)
        self._observation = observation
        self._ended[env_ids] = False
        answers = self._pool.objects(_RESET_SLOT, None if ids is None else env_ids)
        extras = {key: td[key].numpy() for key in self._extra_keys}
        if answers is None:
            rows = torch.zeros(self.num_envs, dtype=torch.bool)
            rows[env_ids] = True
            info = self._extras_info(td, ids, rows)
        else:
            for env, answer in zip(env_ids, answers):
                self._object_leaves[env] = () if answer is None else answer[0]
            info = self._python_info(extras, env_ids, answers)
        return self._python_observation(observation), info

    def _step_python(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """``step()`` of a pool of Python envs: ``info`` built as SyncVectorEnv builds it from each env's."""
        columns = self._pool.step_arrays(self._pool_actions(actions))
        observation = columns["observation"]
        if isinstance(observation, dict):
            observation = dict(observation)  # the caller's own dict: the pool's is reused
        self._observation = observation
        done = columns["done"]
        mode = self.autoreset_mode
        if mode is AutoresetMode.NEXT_STEP:
            reset, self._ended = self._ended, done.copy()
        elif mode is AutoresetMode.SAME_STEP:
            reset = done
        else:
            reset = None
        extras = {key: columns[key] for key in self._extra_keys}
        if not self._pool.objects_written() and (mode is not AutoresetMode.SAME_STEP or True not in done.tolist()):
            # every env's info is its row of the extras (most steps of most envs: no pickle was written)
            info = self._extras_info({key: torch.from_numpy(value) for key, value in extras.items()}, None) \
                if extras else {}
        else:
            steps = self._pool.objects(_STEP_SLOT)
            reset_ids = [] if reset is None else np.flatnonzero(reset).tolist()
            resets = self._pool.objects(_RESET_SLOT, reset_ids) if reset_ids else None
            ended = reset_ids if mode is AutoresetMode.SAME_STEP else []
            answers = list(steps) if steps is not None else [None] * self.num_envs
            finals = {}
            for env, answer in zip(reset_ids, resets or [None] * len(reset_ids)):
                if env in ended:
                    finals[env] = answers[env]
                answers[env] = answer
            info = self._python_info(extras, range(self.num_envs), answers, finals, columns)
            for env, answer in enumerate(answers):
                if answer is not None:
                    self._object_leaves[env] = answer[0]
        return (self._python_observation(observation), columns["reward"], columns["terminated"],
                columns["truncated"], info)

    def _pool_actions(self, actions: Any) -> Any:
        """The actions as the pool takes them (spaces.action_plan's kinds)."""
        kind = self._action_plan.worker[0]
        if kind == "flat":
            return _spaces.flatten_actions(self._action_plan, self.single_action_space, actions, self.num_envs)
        if kind == "object":
            actions = list(gymnasium.vector.utils.iterate(self.action_space, actions))
            if len(actions) != self.num_envs:
                raise ValueError(f"got {len(actions)} actions for num_envs={self.num_envs}")
            self._pool.put_object_actions(actions)
            return torch.zeros(self.num_envs, dtype=torch.int64)
        if actions.__class__ is np.ndarray and actions.dtype not in _POOL_ACTION_DTYPES:
            # int8, uint16, bool... (a MultiDiscrete's or MultiBinary's own dtype): the pool takes these
            actions = actions.astype(np.float64 if actions.dtype.kind == "f" else np.int64)
        if kind == "discrete" and True in self._ended.tolist():
            # NEXT_STEP: these envs reset and ignore their action, which Gymnasium never checks
            actions = np.array(actions, copy=True)
            actions[self._ended] = 0
        return actions

    def _python_observation(self, observation: Any) -> Any:
        return self._batch_observations(observation, self._object_leaves)

    def _python_info(self, extras: dict[str, np.ndarray], env_ids: Sequence[int], answers: list,
                     finals: dict | None = None, columns: dict | None = None) -> dict[str, Any]:
        """Each env's info (its answer's, or its row of the extras when the extras hold it as it is), merged
        by ``VectorEnv._add_info`` as SyncVectorEnv merges them; ``finals``: env -> its last step's answer,
        for the envs whose episode ended in a SAME_STEP step (``final_obs``, ``final_info``)."""
        infos: dict[str, Any] = {}
        final_batch = None
        for row, env in enumerate(env_ids):
            if finals and env in finals:
                answer = finals[env]
                final_obs = None if answer is None else answer[2]
                if final_obs is None:  # too large for its slot, or an end the pool's time limit made
                    if final_batch is None:
                        final_batch = self._batch_observations(
                            columns["final_observation"],
                            [(() if answer is None else answer[0]) for answer in
                             (finals.get(e) for e in range(self.num_envs))])
                    final_obs = _spaces.row(self._observation_space, final_batch, env)
                final_info = {} if answer is None or answer[1] is None else answer[1]
                infos = self._add_info(infos, {"final_obs": final_obs, "final_info": final_info}, env)
            answer = answers[row]
            if answer is not None and answer[1] is not None:
                info = answer[1]
            else:
                info = {key: _scalar(values[row]) for key, values in extras.items()}
            infos = self._add_info(infos, info, env)
        return infos

    def _step_arrays(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """``step()`` for NumPy outputs: the pool's NumPy views (``Pool.step_arrays``), no TensorDict.

        At a few cheap Python envs a TensorDict lookup or a ``.numpy()`` each cost a
        sizeable share of the call.
        """
        columns = self._pool.step_arrays(actions)
        observation = columns["observation"]
        if isinstance(observation, dict):
            observation = dict(observation)  # the caller's own dict: the pool's is reused
        self._observation = observation
        # The rest as tensors viewing the same arrays, for the paths shared with array_type="torch".
        extras = {key: torch.from_numpy(columns[key]) for key in self._extra_keys}
        info = self._extras_info(extras, None) if extras else {}
        if self.autoreset_mode is AutoresetMode.SAME_STEP:
            done = columns["done"]
            if True in done.tolist():
                final = {"final_observation": _as_tensors(columns["final_observation"]), **extras}
                info = self._final_info(final, torch.from_numpy(done)) | info
        return observation, columns["reward"], columns["terminated"], columns["truncated"], info

    def _copy_as_tensors(self, observation: Any) -> torch.Tensor | TensorDict:
        """A copy of the kept observations as torch: a NumPy step keeps arrays (named fields: a dict of them)."""
        if isinstance(observation, (np.ndarray, dict)):
            observation = _as_tensors(observation)
            if isinstance(observation, dict):
                from tensordict import TensorDict

                observation = TensorDict(observation, batch_size=[self.num_envs])
        return observation.clone()

    def _output(self, tensor: torch.Tensor | TensorDict) -> Any:
        if not isinstance(tensor, torch.Tensor):  # named observation fields: a dict, as a Dict space's batch is
            return {key: self._output(value) for key, value in tensor.items()}
        if self.array_type == "numpy":
            return tensor.numpy()
        if self.device is None or self.device == tensor.device:
            return tensor
        # A blocking copy: the source is a view of a ring block that the pool
        # writes again a few steps later, and an asynchronous copy could still
        # be reading it then.
        return tensor.to(self.device)

    def _mask(self, rows: torch.Tensor) -> Any:
        """A fresh bool mask [N] (each info key gets its own, as in SyncVectorEnv)."""
        return rows.numpy().copy() if self.array_type == "numpy" else self._output(rows.clone())

    def _reset_ids(self, mask: Any) -> torch.Tensor:
        # The checks and messages of SyncVectorEnv.reset; a torch bool tensor is accepted too.
        if isinstance(mask, torch.Tensor):
            mask = mask.detach().cpu().numpy()
        if not isinstance(mask, np.ndarray):
            raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
        if mask.shape != (self.num_envs,):
            raise ValueError(f"`options['reset_mask']` must have shape `({self.num_envs},)`, got {mask.shape}")
        if mask.dtype != np.bool_:
            raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
        if not mask.any():
            raise ValueError(
                "`options['reset_mask']` must contain a boolean array with at least one True value, "
                f"got reset_mask={mask}")
        return torch.from_numpy(np.flatnonzero(mask))

    def _extras_info(self, td: TensorDict, ids: torch.Tensor | None,
                     rows: torch.Tensor | None = None) -> dict[str, Any]:
        """The family's extras of ``td`` as per-env infos with masks.

        ``ids``: the env of each row of ``td`` when it holds only some envs (a
        partial reset), whose rows ``rows`` (bool [N]) are then the mask.
        """
        info: dict[str, Any] = {}
        for key in td.keys():
            if key in _POOL_KEYS:
                continue
            values = td[key]
            if ids is None:
                info[key] = self._output(values)
                info["_" + key] = self._mask(torch.ones(self.num_envs, dtype=torch.bool))
            else:
                full = torch.zeros((self.num_envs, *values.shape[1:]), dtype=values.dtype)
                full[ids] = values
                info[key] = self._output(full)
                info["_" + key] = self._mask(rows)
        return info

    def _final_info(self, td: TensorDict, done: torch.Tensor) -> dict[str, Any]:
        """``final_obs``, ``final_info`` and their masks, as SyncVectorEnv's SAME_STEP mode builds them."""
        final_observation = td["final_observation"]
        if self.array_type == "numpy":
            # An object array with each ended env's own last observation, None
            # elsewhere: SyncVectorEnv._add_info's layout for "final_obs".
            rows = self._output(final_observation)
            final_obs = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(done.numpy()):
                final_obs[i] = {key: value[i] for key, value in rows.items()} if isinstance(rows, dict) else rows[i]
        else:
            # A batch tensor: the true last observation where `_final_obs`,
            # the current observation elsewhere.
            final_obs = self._output(final_observation)
        final_info: dict[str, Any] = {}
        for key in td.keys():
            if key in _POOL_KEYS:
                continue
            values = td[key]
            # Zero where the env did not end, as SyncVectorEnv._add_info fills.
            keep = done.view(-1, *([1] * (values.dim() - 1)))
            final_info[key] = self._output(torch.where(keep, values, torch.zeros((), dtype=values.dtype)))
            final_info["_" + key] = self._mask(done)
        return {"final_obs": final_obs, "_final_obs": self._mask(done),
                "final_info": final_info, "_final_info": self._mask(done)}


_RESET_SLOT, _STEP_SLOT = 1, 2  # worker.ObjectSlots.RESET and .STEP
_POOL_ACTION_DTYPES = frozenset(np.dtype(name) for name in ("float32", "float64", "int32", "int64", "uint8"))


def _observation_mode(mode: Any) -> str | tuple[gymnasium.Space, gymnasium.Space]:
    """``observation_mode`` as AsyncVectorEnv takes it, checked: ``"same"``, ``"different"``, or a tuple
    ``(observation_space, single_observation_space)`` to report."""
    if isinstance(mode, tuple) and len(mode) == 2:
        if not isinstance(mode[0], gymnasium.Space) or not isinstance(mode[1], gymnasium.Space):
            raise TypeError(f"Expected both elements of observation_mode to be Spaces, got {type(mode[0])} "
                            f"and {type(mode[1])}")
        return mode
    if isinstance(mode, str) and mode in ("same", "different"):
        return mode
    # Gymnasium's message (AsyncVectorEnv.__init__)
    raise ValueError("Invalid `observation_mode`, expected: 'same' or 'different' or tuple of single and batch "
                     f"observation space, actual got {mode}")


def _refuse_scalar_actions(actions: Any) -> None:
    """One number for all envs is refused with TypeError, as Gymnasium's vector envs refuse it."""
    if isinstance(actions, (int, float, np.generic)) or (
            isinstance(actions, (np.ndarray, torch.Tensor)) and actions.ndim == 0):
        raise TypeError(f"step() takes one action per env (a batch of the vector action space), "
                        f"got the scalar {actions!r}")


def _with_rows(kept: np.ndarray, env_ids: list[int], rows: np.ndarray) -> np.ndarray:
    full = np.array(kept, copy=True)
    full[env_ids] = rows
    return full


def _scalar(value: Any) -> Any:
    """A row of an extras column as an env's info held it: a bool as Python's (``_add_info`` batches a
    NumPy bool into an object array), numbers as NumPy's, arrays as they are."""
    return bool(value) if isinstance(value, np.bool_) else value


def _as_tensors(column: Any) -> Any:
    """A column of ``Pool.step_arrays`` (an array; named fields: a dict of them) as tensors of the same memory."""
    if isinstance(column, dict):
        return {key: torch.from_numpy(value) for key, value in column.items()}
    return torch.from_numpy(column)


def register_envs() -> list[str]:
    """Registers ``torchpool/<EnvId>`` with Gymnasium for every torchpool env; idempotent.

    Each id has only a ``vector_entry_point`` (this module's ``VectorEnv``), so
    ``gymnasium.make_vec(id, num_envs=...)`` builds a pool; extra ``make_vec``
    kwargs go to :class:`VectorEnv`. Returns the registered ids.
    """
    return [register_env(env_id) for env_id in list_envs_unchecked()]  # no ROM is read at import


def register_env(env_id: str) -> str:
    """Registers ``torchpool/<env_id>`` with Gymnasium (idempotent; make_vec checks the id); returns it.

    A Python env id, ``"gymnasium:<EnvId>"``, is registered as ``torchpool/gymnasium.<EnvId>``
    (Gymnasium reads a colon in an id as ``module:EnvId``), its envs stepped in worker processes:
    ``gymnasium.make_vec(torchpool.gym.register_env("gymnasium:LunarLander-v3"), num_envs=16)``.
    """
    gym_id = f"{NAMESPACE}/{env_id.replace(':', '.')}"
    if gym_id not in gymnasium.registry:
        gymnasium.register(id=gym_id, vector_entry_point=f"{__name__}:VectorEnv", kwargs={"env_id": env_id})
    return gym_id


register_envs()
