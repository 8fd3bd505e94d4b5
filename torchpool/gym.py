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

Outputs are NumPy arrays by default and torch tensors with
``array_type="torch"`` (moved to ``device`` when one is given). They are views
of the pool's output ring, never copied and never overwritten while you hold
them (NOTE [Output ring reuse] in ``torchpool/_held.py``). Two deliberate
differences from ``SyncVectorEnv``: rewards are float32 (the pool's dtype;
``SyncVectorEnv`` widens them to float64), and ``reset(options=...)`` does not
pop ``reset_mask`` out of the caller's dict.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import gymnasium
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

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
        **make_kwargs: Any,
    ):
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
        self._extra_keys = tuple(self._pool.extra_keys)
        # The latest observation of every env ([N, ...], a view of the pool's
        # output), kept so a partial reset can return the whole batch.
        self._observation: Any = None  # a tensor or TensorDict; NumPy arrays (or a dict of them) after a NumPy step

    @property
    def pool(self) -> Pool:
        """The underlying :class:`torchpool.Pool`."""
        return self._pool

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
            td = self._pool.reset(seed=seed)
            self._observation = td["observation"]
            return self._output(self._observation), self._extras_info(td, None)

        ids = self._reset_ids(mask)
        if isinstance(seed, list):
            seed = [seed[i] for i in ids.tolist()]
        if self._observation is None and len(ids) < self.num_envs:
            raise RuntimeError("the first reset() must reset every env")
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
