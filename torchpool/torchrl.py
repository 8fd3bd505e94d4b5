"""TorchPoolEnv: a torchpool ``Pool`` as a torchrl ``EnvBase``, with exact episode boundaries.

    env = TorchPoolEnv("CartPole-v1", num_envs=8, seed=0)
    td = env.reset()                              # observation: float32[8, 4]
    td = env.rand_step(td)                        # ("next", "reward"): float32[8, 1]
    data = env.rollout(100, break_when_any_done=False)   # batch [8, 100]

A thin adapter over a *sync* pool (``batch_size == num_envs``) with
``autoreset="same_step"``: every ``step`` is one ``Pool.step`` and every
torchrl partial reset is answered from what that step already computed.

NOTE [Episode boundaries]
torchrl's contract for a transition at time ``t`` is ``(observation_t,
action_t) -> ("next", observation_{t+1}), reward, done``; when ``done``,
``EnvBase.step_and_maybe_reset`` calls ``reset`` with a ``"_reset"`` mask and
the root of step ``t+1`` holds the first observation of the new episode.
The pool's same-step autoreset already did that reset inside step ``t``: its
``observation`` is the new episode's first and ``final_observation`` the true
last one. So ``_step`` puts ``final_observation`` under ``("next",
"observation")`` and keeps ``observation`` aside; ``_reset`` with a mask
hands the kept observation back for envs the pool has already reset, without
calling C++. Only envs the pool has *not* reset (a user's partial reset, e.g.
``collector.reset(index)``) and full resets (no mask, or a ``seed``) reach
``Pool.reset``. Hence no transition is inserted at a boundary, no action is
ignored, and every reward belongs to the action that produced it — unlike an
EnvPool-style ``next_step`` autoreset, which spends one step (reward 0, action
ignored) on each reset.

NOTE [Device]
The pool it makes for a CUDA ``device`` writes into pinned host memory. With a CUDA
``device`` each output is copied with ``non_blocking=True`` and a CUDA event
is recorded after the copies; before the pool writes again (``step`` or
``reset``) the event is waited on, so C++ never overwrites host memory that a
pending copy still reads. On CPU the outputs are copies (see ``_export``).
"""

from __future__ import annotations

import functools
from typing import Any

import torch
from tensordict import TensorDict, TensorDictBase
from torchrl.data import Categorical, Composite, Unbounded
from torchrl.envs import EnvBase

from .pool import Pool, make
from .specs import BoxSpec, DictSpec

__all__ = ["TorchPoolEnv"]

# The adapter maps the fixed keys itself; any other key of a step is a family extra.
_DONE_KEYS = ("done", "terminated", "truncated")
_RESERVED_KEYS = ("observation", "action", "reward", *_DONE_KEYS, "episode_return", "episode_length")


class TorchPoolEnv(EnvBase):
    """``num_envs`` torchpool environments as one torchrl env of batch size ``[num_envs]``.

    Args:
        env_id: a registered id (``torchpool.list_envs()``).
        num_envs: how many envs; the env's ``batch_size`` is ``[num_envs]``.
        device: where outputs live and specs point (default CPU). With CUDA,
            outputs are copied from the pool's pinned buffers without blocking.
        **make_kwargs: passed to ``torchpool.make`` (``seed``, ``num_threads``,
            ``obs_dtype``, ``max_episode_steps``, task kwargs, ...).
            ``batch_size`` must be ``None`` or ``num_envs`` and ``autoreset``
            ``"same_step"`` (see NOTE [Episode boundaries]).

    Keys (``N = num_envs``; ``obs`` the env's observation shape and dtype)::

        reset / root:  observation: obs[N, ...] (named fields, e.g. the Control Suite's: one key each,
                       position: [N, 8], height: [N, 1], ..., as torchrl's DMControlEnv names them)
                       episode_return: float32[N, 1]
                       episode_length: int64[N, 1]   done, terminated, truncated: bool[N, 1]
                       family extras (MuJoCo's x_position, ..., Atari's lives): [N, ...]
        step input:    action: int64[N] (discrete) or float32[N, *action_shape]
        ("next", ...): observation or its fields (the true last observation where done),
                       reward: float32[N, 1], done, terminated, truncated: bool[N, 1],
                       episode_return, episode_length: the finished episode's totals
                       where done, running totals otherwise; the family extras.

    ``episode_return``/``episode_length`` at the root of a new episode are 0.
    Family extras are what the pool reports for a step, so under ``"next"``
    they describe that step (where done, the episode's last). At the root of
    an episode the pool started by itself they repeat the finished episode's
    last values: the pool does not report the extras of a same-step reset
    (only a full or user-requested reset gives the new episode's own).

    Seeding: ``seed=s`` in ``make_kwargs`` seeds env ``i`` with ``s + i``
    (NOTE [Seeds of copies]). Without ``seed=`` the env is unseeded: its pool draws
    a random seed (``env.pool.seed`` tells which), as torchrl's ``GymEnv`` and
    Gymnasium do, so envs a factory builds in each of a collector's workers
    never step the same episodes. (``torchpool.make`` itself keeps its default
    ``seed=0``.) ``set_seed(s)`` reseeds and resets every env at once (as
    torchrl's ``GymEnv`` does) and the next full ``reset()`` returns those
    first observations; ``reset(seed=s)`` does both in one call;
    ``collector.set_seed(s)`` reseeds every worker's env with its own seed
    (torchrl chains them), so a run repeats.

    Pickling (collectors spawning workers) rebuilds the env from its
    constructor arguments; the live pool is never pickled. Copies get
    distinct seeds: the first copy of an env made with ``seed=s`` is seeded
    ``s`` like the original, copy ``k`` seeds its env ``i`` with
    ``s + k * num_envs + i``, as if the copies were slices of one pool of
    ``(k + 1) * num_envs`` envs; copies of an unseeded env each draw their own.
    """

    def __init__(self, env_id: str, num_envs: int, device: torch.device | str | None = None,
                 *, _pool: Pool | None = None, **make_kwargs: Any):
        if _pool is None:
            _check_make_kwargs(num_envs, make_kwargs)
            pinned = device is not None and torch.device(device).type == "cuda"  # a pool that feeds a GPU pins
            # Unseeded means a random seed (NOTE [Seeds of copies]), not torchpool.make's default 0.
            pool = make(env_id, num_envs=num_envs, **{"pin_memory": pinned, "seed": None, **make_kwargs})
            self._constructor = (env_id, num_envs, device, dict(make_kwargs))
            self._copies = 0  # pickled copies made so far; NOTE [Seeds of copies]
        else:
            pool = _pool
            self._constructor = None  # see __reduce__
        device = torch.device("cpu") if device is None else torch.device(device)
        super().__init__(device=device, batch_size=torch.Size([pool.num_envs]))
        self._pool = pool
        self._copy_done: torch.cuda.Event | None = None   # NOTE [Device]

        self._extra_keys = pool.extra_keys
        # NOTE [Named observation fields at the root]: a pool with named observation fields (the Control
        # Suite's position, velocity, ...) gives each its own root key, as torchrl's DMControlEnv (and
        # GymEnv for a Dict space) does; scalar fields get torchrl's trailing singleton ([N, 1]).
        spec = pool.observation_spec
        self._fields = list(spec.fields) if isinstance(spec, DictSpec) else None
        clashes = sorted(set(self._fields or ()) & {*_RESERVED_KEYS, *self._extra_keys})
        if clashes:
            raise ValueError(f"{env_id}: observation fields {clashes} would collide with TorchPoolEnv's own keys")
        self._root_keys = (*(self._fields or ["observation"]), *self._extra_keys)
        self._fresh: TensorDictBase | None = None  # a real reset nothing has stepped since, to hand out
        # After a step: the pool's post-autoreset observation and extras, and
        # which envs the pool reset inside that step (None when none did).
        self._autoreset: torch.Tensor | None = None
        self._autoreset_root: dict[str, torch.Tensor] = {}
        self._make_specs()
        self.is_closed = False

    @classmethod
    def from_pool(cls, pool: Pool, device: torch.device | str | None = None) -> TorchPoolEnv:
        """Wraps an existing sync ``pool`` with ``autoreset="same_step"``; the env then owns it.

        The pool is reset once (to learn its keys); ``env.close()`` closes it.
        Do not step the pool directly afterwards: the env keeps state between
        its calls (NOTE [Episode boundaries]). Such an env cannot be pickled
        (a Pool keeps no record of every argument it was made with); give collectors a constructor.
        """
        if not isinstance(pool, Pool):
            raise TypeError(f"from_pool() needs a torchpool.Pool, got {type(pool).__name__}")
        if pool.closed:
            raise ValueError("from_pool() got a closed pool")
        if pool.is_async:
            raise ValueError(
                f"from_pool() needs a sync pool (batch_size == num_envs): torchrl steps every env in every "
                f"call, but this pool has batch_size={pool.batch_size} < num_envs={pool.num_envs}")
        if pool.autoreset != "same_step":
            raise ValueError(
                f"from_pool() needs autoreset='same_step', got {pool.autoreset!r}: with 'next_step' every "
                "episode end would cost one transition with reward 0 and an ignored action")
        return cls(pool.env_id, pool.num_envs, device, _pool=pool)

    # ---- specs --------------------------------------------------------------

    def _make_specs(self) -> None:
        # NOTE [Specs on the env's device]: every spec is built on the CPU, then moved as a whole to the
        # env's device. A Composite on cuda:0 refuses sub-specs on the CPU (torchrl 0.12 and later check
        # each one as it is set), and a bounded spec's bounds are tensors that must live on that device too.
        pool, batch, device = self._pool, self.batch_size, self.device
        column = torch.Size((*batch, 1))  # torchrl's trailing singleton for rewards, flags and stats
        spec = pool.observation_spec
        if self._fields is None:
            observation = {"observation": spec.to_torchrl(tuple(batch))}
        else:
            observation = {name: (field if field.shape else BoxSpec((1,), field.dtype, field.low.reshape(1),
                                                                       field.high.reshape(1))).to_torchrl(tuple(batch))
                           for name, field in spec.fields.items()}
        observation |= {
            "episode_return": Unbounded(shape=column, dtype=torch.float32),
            "episode_length": Unbounded(shape=column, dtype=torch.int64),
        }
        output_spec = pool.output_spec
        for key in self._extra_keys:
            observation[key] = _extra_spec(*output_spec[key], batch)
        self.observation_spec = Composite(observation, shape=batch).to(device)
        self.action_spec = pool.action_spec.to_torchrl(tuple(batch)).to(device)
        self.reward_spec = Unbounded(shape=column, dtype=torch.float32).to(device)
        self.done_spec = Composite(
            {key: Categorical(2, shape=column, dtype=torch.bool) for key in _DONE_KEYS}, shape=batch).to(device)

    # ---- EnvBase hooks ------------------------------------------------------

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        """One ``Pool.step`` of every env; see NOTE [Episode boundaries]."""
        partial = tensordict.get("_step", None)
        if partial is not None and not bool(partial.all()):
            raise NotImplementedError(
                "TorchPoolEnv steps all its envs in every call and cannot step a subset ('_step' mask); "
                "use rollout(break_when_any_done=True) or break_when_any_done=False, not break_when_all_done")
        action = tensordict.get("action", None)
        if action is None:
            raise KeyError(
                f"TorchPoolEnv.step() needs an 'action' entry in the tensordict, got keys "
                f"{sorted(map(str, tensordict.keys()))}; set td['action'] (a policy writes it, or env.rand_action(td))")
        if action.device.type != "cpu":
            action = action.cpu()  # blocks until the policy's action exists: nothing to overlap with
        self._wait_for_copies()
        out = dict(self._pool.step(action).items())  # a plain dict: cheaper lookups than the TensorDict's
        self._fresh = None
        done = out["done"]
        next_td = {
            # The true last observation where done, the current one elsewhere.
            **self._observation_entries(out["final_observation"]),
            "reward": out["reward"].unsqueeze(-1),
            "done": done.unsqueeze(-1),
            "terminated": out["terminated"].unsqueeze(-1),
            "truncated": out["truncated"].unsqueeze(-1),
            "episode_return": out["episode_return"].unsqueeze(-1),
            "episode_length": out["episode_length"].unsqueeze(-1),
        }
        for key in self._extra_keys:
            next_td[key] = out[key]
        if bool(done.any()):
            # The pool reset these envs inside the step: keep the new episodes'
            # first observations (and extras) for the "_reset" that follows.
            self._autoreset = done.clone()  # a copy: _reset edits it, the ring's tensor is the user's
            root = self._observation_entries(out["observation"])
            root.update((key, out[key]) for key in self._extra_keys)
            self._autoreset_root = self._export(root)
        else:
            self._autoreset, self._autoreset_root = None, {}
        return TensorDict(self._export(next_td), batch_size=self.batch_size, device=self.device)

    def _reset(self, tensordict: TensorDictBase | None = None, seed: int | None = None,
               **kwargs: Any) -> TensorDictBase:
        """A full reset (no ``"_reset"`` mask), or the masked envs; see NOTE [Episode boundaries].

        ``seed`` (an int) reseeds env ``i`` with ``seed + i`` before resetting it.
        """
        if kwargs:
            raise TypeError(f"TorchPoolEnv.reset() got unexpected keyword arguments {sorted(kwargs)}")
        if self._pool.closed:
            raise RuntimeError("the env is closed")
        if seed is not None:
            seed = _check_seed(seed)
        mask = None if tensordict is None else tensordict.get("_reset", None)
        if mask is None:
            return self._full_reset(seed)
        mask = mask.reshape(self.batch_size).cpu()
        if seed is None and self._autoreset is not None:
            from_pool = mask & ~self._autoreset  # envs the pool has not reset by itself
        else:
            from_pool = mask
        root = dict(self._autoreset_root) if self._autoreset is not None else {}
        if bool(from_pool.any()):
            self._fresh = None  # those envs moved on: a later full reset must be a real one
            env_ids = from_pool.nonzero().squeeze(-1)
            self._wait_for_copies()
            reset = self._pool.reset(seed=seed, env_ids=env_ids)
            exported = self._export({**self._observation_entries(reset["observation"]),
                                     **{key: reset[key] for key in self._extra_keys}})
            for key, value in exported.items():
                # Rows outside the mask are ignored by torchrl (it keeps the
                # caller's values there), so zeros are as good as any.
                full = root[key].clone() if key in root else value.new_zeros((*self.batch_size, *value.shape[1:]))
                full[env_ids.to(full.device)] = value
                root[key] = full
        if self._autoreset is not None:
            self._autoreset &= ~mask
            if not bool(self._autoreset.any()):
                self._autoreset, self._autoreset_root = None, {}
        for key in self._root_keys:
            if key not in root:  # an empty mask with nothing kept: torchrl ignores these rows anyway
                root[key] = self.observation_spec[key].zero()
        return self._reset_output(root)

    def _full_reset(self, seed: int | None) -> TensorDictBase:
        if self._fresh is not None and seed is None:
            reset = self._fresh  # nothing has stepped since that real reset: hand it out
        else:
            self._wait_for_copies()
            reset = self._pool.reset(seed=seed)
        self._fresh = None
        self._autoreset, self._autoreset_root = None, {}
        root = {**self._observation_entries(reset["observation"]), **{key: reset[key] for key in self._extra_keys}}
        return self._reset_output(self._export(root))

    def _observation_entries(self, observation: torch.Tensor | TensorDictBase) -> dict[str, torch.Tensor]:
        """The root entries of an observation batch: ``observation``, or one per named field (NOTE above)."""
        if self._fields is None:
            return {"observation": observation}
        return {name: value if value.dim() > 1 else value.unsqueeze(-1)
                for name, value in ((name, observation[name]) for name in self._fields)}

    def _reset_output(self, root: dict[str, torch.Tensor]) -> TensorDictBase:
        """Root of a new episode: ``root`` plus zero stats and flags (fresh tensors: callers may keep them)."""
        column = (*self.batch_size, 1)
        source = dict(root)
        source["episode_return"] = torch.zeros(column, dtype=torch.float32, device=self.device)
        source["episode_length"] = torch.zeros(column, dtype=torch.int64, device=self.device)
        for key in _DONE_KEYS:
            source[key] = torch.zeros(column, dtype=torch.bool, device=self.device)
        return TensorDict(source, batch_size=self.batch_size, device=self.device)

    def _set_seed(self, seed: int | None) -> None:
        """Reseeds env ``i`` with ``seed + i`` and resets every env now (torchrl's ``GymEnv`` does the same).

        The next full ``reset()`` returns these first observations; a collector
        already running keeps its last observations, so seed before collecting
        (or pass ``seed=`` to the constructor).
        """
        if seed is None:
            return
        seed = _check_seed(seed)
        self._wait_for_copies()
        self._fresh = self._pool.reset(seed=seed)
        self._autoreset, self._autoreset_root = None, {}

    # ---- device -------------------------------------------------------------

    def _export(self, tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The pool's output tensors -> tensors of our own on ``self.device``; NOTE [Device].

        Collectors keep every step's outputs until the batch is complete. Were
        they views of the pool's output ring, the ring would see its blocks
        held and allocate a fresh block per step (a buffer and a TensorDict of
        views: far dearer than copying these few small tensors).
        """
        if self.device.type != "cuda":
            return {key: value.clone() for key, value in tensors.items()}
        moved = {key: value.to(self.device, non_blocking=True) for key, value in tensors.items()}
        event = torch.cuda.Event()
        event.record(torch.cuda.current_stream(self.device))
        self._copy_done = event
        return moved

    def _wait_for_copies(self) -> None:
        event, self._copy_done = self._copy_done, None
        if event is not None:
            event.synchronize()

    # ---- lifecycle ----------------------------------------------------------

    @property
    def pool(self) -> Pool:
        """The wrapped pool (read its ``env_id``, specs, ``num_threads``; do not step it)."""
        return self._pool

    def close(self, *, raise_if_closed: bool = True) -> None:
        """Closes the pool (idempotent)."""
        pool = self.__dict__.get("_pool")
        if pool is not None:
            pool.close()
        self._fresh, self._autoreset, self._autoreset_root = None, None, {}
        super().close(raise_if_closed=raise_if_closed)

    def __reduce__(self):
        # Collectors spawn workers and pickle the env: rebuild it there from
        # its constructor arguments; a pool (threads, C++ state) never travels.
        if self._constructor is None:
            raise TypeError(
                "a TorchPoolEnv made with from_pool() cannot be pickled (a Pool keeps no record of every "
                "argument it was made with); "
                "give collectors TorchPoolEnv(env_id, num_envs, **make_kwargs) or a function that builds one")
        env_id, num_envs, device, make_kwargs = self._constructor
        # NOTE [Seeds of copies]: collectors make one env per worker, and
        # envs with the same seed step the same episodes and collect the same
        # data, silently (torchrl seeds workers only when told to:
        # collector.set_seed). Two ways in, both kept apart:
        # * a factory (MultiSyncCollector([make_env] * 2, ...)) is called
        #   afresh in each worker: an unseeded TorchPoolEnv draws a random
        #   seed (as torchrl's GymEnv and Gymnasium do), so copies differ;
        #   collector.set_seed(s) makes the run repeat. Only a factory that
        #   passes the same seed= everywhere repeats itself, as asked.
        # * an instance (MultiSyncCollector([env, env], ...)) is pickled once
        #   per worker: copy k of an env seeded s starts where copy k - 1's
        #   seeds end, s + k * num_envs. Workers are pickled in order, so a
        #   seeded run stays reproducible; copies of an unseeded env each draw
        #   a random seed of their own.
        copy, self._copies = self._copies, self._copies + 1
        seed = make_kwargs.get("seed")
        if copy and seed is not None:
            make_kwargs = {**make_kwargs, "seed": int(seed) + copy * num_envs}
        return functools.partial(TorchPoolEnv, env_id, num_envs, device, **make_kwargs), ()

    def __repr__(self) -> str:
        pool = self._pool
        return (f"TorchPoolEnv({pool.env_id!r}, num_envs={pool.num_envs}, num_threads={pool.num_threads}, "
                f"device={self.device})")


def _check_make_kwargs(num_envs: int, make_kwargs: dict[str, Any]) -> None:
    batch_size = make_kwargs.get("batch_size")
    if batch_size is not None and batch_size != num_envs:
        raise ValueError(
            f"TorchPoolEnv needs a sync pool: torchrl steps every env in every call, so batch_size must be None "
            f"or num_envs={num_envs}, got {batch_size!r}")
    autoreset = make_kwargs.get("autoreset", "same_step")
    if autoreset != "same_step":
        raise ValueError(
            f"TorchPoolEnv needs autoreset='same_step', got {autoreset!r}: torchrl's partial resets are answered "
            "from the pool's same-step reset (see torchpool.torchrl, NOTE [Episode boundaries])")


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    return seed


def _extra_spec(dtype: torch.dtype, shape: tuple[int, ...], batch: torch.Size):
    """A spec for a family extra of the pool's output spec, over the env's batch."""
    full = torch.Size((*batch, *shape))
    if dtype == torch.bool:
        return Categorical(2, shape=full, dtype=torch.bool)
    return Unbounded(shape=full, dtype=dtype)
