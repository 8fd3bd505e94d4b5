"""torchpool.stream: rollout batches streamed onto the training device.

    stream = torchpool.stream("CartPole-v1", policy, num_envs=32, frames_per_batch=4096,
                              total_frames=1_000_000, device="cuda")
    for batch in stream:          # TensorDict [num_envs, T] on `device`
        loss = ...

How a step travels (NOTE [Stream data path]): ``Pool.step_into`` /
``send_into`` point the pool's output at memory of the stream's, so C++
workers write each step's outputs straight into it. On the CPU with one group
(the CPU default) that memory is the batch handed out: ``Pool.output_targets``
points every key at column ``t`` of its ``[num_envs, T]`` tensor, and only
the observation goes to a contiguous slot first, because the policy reads it
from there (a strided input would break policies that ``.view()`` it); that
slot and the policy's outputs are transposed into the batch once it is full.
Otherwise (two groups, or CUDA) the workers write whole blocks of bytes into
raw slots: on the CPU the slot itself, with CUDA one of a few pinned staging
rows per group, which one non-blocking copy on a side CUDA stream moves into
its raw slot on the device, with a CUDA event per row telling the stream when
the row may be written again. Actions go back through a pinned buffer. When a
batch is complete, its raw slots are rearranged on the device into torchrl's
``[num_envs, T]`` layout. No Python loop over envs, no host copy besides the
one DMA.

Overlap (NOTE [Env groups]): with ``split_envs=True`` the envs form two pools
of ``num_envs / 2``, stepped in turn: while the workers step one group, the
policy computes actions for the other. That can pay only when the policy runs
elsewhere than the env workers and the workers step envs in the background,
and it was measured to pay nowhere: on the CPU the policy competes with the
workers for the same cores (no gain on 2 cores), and on the H200 with 16
cores one group was faster in every row of benchmarks/gpu_stream.py
(HalfCheetah-v5 16 envs: 32.5k against 26.4k frames/s; docs/performance.md).
So the default (``None``) is one group everywhere; ``split_envs=True`` asks
for two.

Policy lag: the stream holds the policy by reference, so in-place weight
updates apply from the next action on. With one group every action of a batch
is computed after the consumer has seen the previous batch. With two groups,
the first action of each batch for the first group is computed before that
(to overlap), so it lags one update behind.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import torch
from torch.utils.data import IterableDataset

from . import registry
from ._held import HeldWatch
from ._stream.policy_call import call_policy, is_tensordict_module, policy_result, wrong_action_shape
from ._stream.prefetch import Prefetcher, policy_module, snapshot_policy
from ._stream.rollout_batch import (
    as_records,
    empty_batch,
    final_key,
    next_column,
    next_keys,
    observation_input,
    observation_keys,
    under_next,
)
from ._workers import is_process_env
from .output_targets import OutputTargets
from .pool import Pool, draw_seed, make

if TYPE_CHECKING:  # tensordict is imported with the first pool: it pulls in torch._dynamo (~1 s)
    from tensordict import TensorDict


# stream()'s own arguments: suggested when a kwarg matches no env kwarg (a typo of ``total_frames``).
_STREAM_ARGUMENTS = ("num_envs", "frames_per_batch", "total_frames", "device", "split_envs", "progress", "prefetch",
                     "actor_id", "policy_version")


class _Group:
    """One pool of the stream and where its envs sit in the batch."""

    def __init__(self, pool: Pool, index: int):
        self.pool = pool
        self.index = index  # the group's envs are rows [index * group_size, (index + 1) * group_size)
        self.t = 0              # steps of the current batch already received
        self.slot_set = 0       # which of the two raw buffers the current batch uses
        self.batches_done = 0
        self.in_flight = False
        self.host_action: torch.Tensor | None = None
        # CUDA only: pinned rows the workers write into, each row's event and whether it marks a copy not
        # yet waited for.
        self.staging: list[torch.Tensor] = []
        self.staging_events: list[torch.cuda.Event | None] = []
        self.staging_pending: list[bool] = []
        self.sends = 0


class _Stats:
    """One iterator's frames and time split: what ``RolloutStream.stats()`` reports."""

    def __init__(self, prefetch: bool):
        self.seconds = {"envs": 0.0, "policy": 0.0, "copies": 0.0, "consumer": 0.0}
        if prefetch:
            # The collector's "consumer" time is the time it waited for the consumer; what the
            # consumer waited for batches is the part of collection prefetch did not hide.
            self.seconds["consumer_waited"] = 0.0
        self.frames = 0
        self.wall = 0.0
        self.env_groups = 0  # 1 or 2 once iteration starts (NOTE [Env groups])

    def report(self) -> dict[str, Any]:
        return {"frames": self.frames, "seconds": dict(self.seconds), "wall_seconds": self.wall,
                "frames_per_s": self.frames / self.wall if self.wall else 0.0, "env_groups": self.env_groups}


class RolloutStream(IterableDataset):
    """An ``IterableDataset`` of rollout batches; see :func:`stream`.

    NOTE [State per iterator]: the stream holds only its settings. Each
    ``iter(stream)`` makes a ``_Collection`` that owns everything one pass
    needs (its pools, raw slots, output buffers, policy views, the policy
    snapshot with prefetch, its time split), as a ``DataLoader``'s iterator
    holds the state of its pass, so two live iterators never write into each
    other's buffers. An existing ``Pool`` cannot be given to two passes at
    once: its envs have one state, which both would step and reset, so a second
    live iterator over it is refused. ``stats()`` reports the iterator started
    last (with one loop at a time, that loop's).
    """

    def __init__(self, env: str | Pool, policy: Callable, *, num_envs: int = 8, frames_per_batch: int,
                 total_frames: int | None = None, device: str | torch.device | None = None,
                 split_envs: bool | None = None, progress: bool = False, prefetch: bool = False,
                 actor_id: int | None = None, policy_version: int | None = None, **make_kwargs: Any):
        if isinstance(env, Pool):
            if make_kwargs:
                raise TypeError(f"make kwargs {sorted(make_kwargs)} given with an existing Pool")
            if env.is_async or env.autoreset != "same_step":
                raise ValueError("stream() needs a sync pool (batch_size == num_envs) with autoreset='same_step'")
            if split_envs:
                raise ValueError("split_envs needs an env id: an existing Pool cannot be split")
            num_envs = env.num_envs
        if not isinstance(frames_per_batch, int) or frames_per_batch < 1 or frames_per_batch % num_envs:
            raise ValueError(f"frames_per_batch must be a positive multiple of num_envs={num_envs}, "
                             f"got {frames_per_batch!r}")
        if total_frames is not None and (not isinstance(total_frames, int) or total_frames < 1):
            raise ValueError(f"total_frames must be a positive int or None, got {total_frames!r}")
        if not callable(policy):
            raise TypeError(f"policy must be callable, got {type(policy).__name__}")
        if not isinstance(env, Pool) and not is_process_env(env):  # an unknown id or kwarg: an error now
            entry = registry.lookup(env)
            task_kwargs = {k: v for k, v in make_kwargs.items() if k not in registry.MAKE_ARGUMENTS}
            registry.resolve_kwargs(entry, task_kwargs, callers_arguments=_STREAM_ARGUMENTS)
        device = torch.device(device) if device is not None else torch.device("cpu")
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device={str(device)!r}, but CUDA is not available to this process "
                             "(torch.cuda.is_available() is False); use device='cpu'")
        self.env = env
        self.policy = policy
        self.prefetch = bool(prefetch)
        if self.prefetch:
            policy_module(policy)  # raises now, not on the background thread, if there is nothing to copy
        self.num_envs = num_envs
        self.frames_per_batch = frames_per_batch
        self.steps_per_batch = frames_per_batch // num_envs
        self.total_frames = total_frames
        self.device = device
        if split_envs and num_envs % 2:
            raise ValueError(f"split_envs needs an even num_envs, got {num_envs}")
        self.split_envs = split_envs
        self.progress = progress
        self.make_kwargs = make_kwargs
        self._cuda = self.device.type == "cuda"
        # Workers write into pinned staging rows copied to the device (CUDA), or
        # straight into the rollout buffer (CPU). Tests set it on the CPU to run
        # the staging path's bookkeeping without a GPU.
        self._staged = self._cuda
        for name, value in (("actor_id", actor_id), ("policy_version", policy_version)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise TypeError(f"{name} must be an int or None, got {value!r}")
        # NOTE [Where a batch comes from]. A learner fed by many actors (Ray actors, torch.distributed ranks)
        # bounds or corrects their lag (IMPALA's V-trace, Sebulba) only if each batch says which actor made it and
        # with which weights. So with actor_id or policy_version set, each batch carries them as int64
        # [num_envs, T] stride-0 views of one scalar, read once per batch: the version as the batch began
        # (the consumer had received every earlier batch, so any update it made is in), or, under prefetch, as
        # the previous batch was handed out, which is when the collector's snapshot was refreshed. Unset,
        # nothing is read or added: the default path costs nothing.
        self.actor_id = actor_id
        self.policy_version = policy_version  # the learner sets it (stream.policy_version += 1) after each update
        self._stats = _Stats(self.prefetch)  # the latest iterator's (NOTE [State per iterator])
        self._pool_in_use = False  # an existing Pool's: whether a live iterator steps it

    def __len__(self) -> int:
        if self.total_frames is None:
            raise TypeError("this stream has no total_frames, so no length")
        return math.ceil(self.total_frames / self.frames_per_batch)

    def __iter__(self) -> Iterator[TensorDict]:
        stats = self._stats = _Stats(self.prefetch)
        if not self.prefetch:
            return _Collection(self, self.policy, stats).batches()
        acting, refresh = snapshot_policy(self.policy)
        collection = _Collection(self, acting, stats)

        def refresh_and_version() -> None:
            # The version is read with the weights it names, on the consumer's thread, before the
            # collector is told to go: a bump after the hand-off belongs to the next batch.
            refresh()
            collection.version = self.policy_version

        return iter(Prefetcher(collection.batches, refresh_and_version, stats.seconds))

    def stats(self) -> dict[str, Any]:
        """Where the time went: seconds waiting on envs, in the policy, in copies and in the consumer.

        Also frames so far, frames/s and ``env_groups``: how many groups the envs were split into.
        With ``prefetch``, ``seconds["consumer_waited"]``: what the consumer waited for batches.
        All of the iterator started last: several live iterators each keep their own
        (NOTE [State per iterator]).
        """
        return self._stats.report()


class _Collection:
    """One pass over a stream (NOTE [State per iterator]): its pools, buffers and policy views."""

    def __init__(self, stream: RolloutStream, acting: Callable, stats: _Stats):
        self.stream = stream
        self._acting = acting  # what acts: the policy, or its snapshot with prefetch
        self.stats = stats
        self._seconds = stats.seconds  # the hot paths add to it
        self.num_envs = stream.num_envs
        self.frames_per_batch = stream.frames_per_batch
        self.steps_per_batch = stream.steps_per_batch
        self.total_frames = stream.total_frames
        self.device = stream.device
        self._cuda = stream._cuda
        self._staged = stream._staged
        self.version = stream.policy_version  # with prefetch, set at each hand-off instead (RolloutStream.__iter__)

    def _open_pools(self) -> tuple[list[_Group], bool]:
        stream = self.stream
        if isinstance(stream.env, Pool):
            if stream._pool_in_use:
                raise RuntimeError(
                    "this stream steps an existing Pool, which one iterator at a time can step: finish or close() "
                    "the other iterator first (a stream made from an env id gives each iterator pools of its own)")
            stream._pool_in_use = True
            return [_Group(stream.env, 0)], False
        kwargs = dict(stream.make_kwargs)
        kwargs.setdefault("pin_memory", self._cuda)  # pools that feed a GPU pin their buffers
        seed = kwargs.pop("seed", 0)
        if seed is None:  # one draw for the whole stream: env i is still seed + i in either group
            seed = draw_seed(self.num_envs)
        half = self.num_envs // 2

        def one_group() -> tuple[list[_Group], bool]:
            return [_Group(make(stream.env, num_envs=self.num_envs, seed=seed, **kwargs), 0)], True

        if not stream.split_envs or self.num_envs % 2:  # NOTE [Env groups]: one group unless asked
            return one_group()
        # Env i of the stream is seeded with seed + i whichever group it is in.
        first = make(stream.env, num_envs=half, seed=seed, **kwargs)
        try:
            second = make(stream.env, num_envs=half, seed=seed + half, **kwargs)
        except BaseException:
            first.close()
            raise
        return [_Group(first, 0), _Group(second, 1)], True

    def batches(self) -> Iterator[TensorDict]:
        groups, owned = self._open_pools()
        self.stats.env_groups = len(groups)
        batches_wanted = len(self.stream) if self.total_frames is not None else None
        bar = None
        try:
            if self.stream.progress:
                from tqdm import tqdm

                bar = tqdm(total=self.total_frames, unit="frame", desc="stream")
            # Grad mode is switched off once per batch, not per policy call
            # (that costs microseconds a step), and is the consumer's again at each yield.
            with torch.no_grad():
                self._start(groups)
            started = time.perf_counter()
            batches = 0
            actor_id = self.stream.actor_id
            while batches_wanted is None or batches < batches_wanted:
                if not self.stream.prefetch:
                    self.version = self.stream.policy_version  # the consumer has seen every earlier batch
                version = self.version
                with torch.no_grad():
                    batch = self._next_batch(groups, batches_wanted)
                if actor_id is not None or version is not None:
                    self._label(batch, actor_id, version)
                batches += 1
                self.stats.frames += self.frames_per_batch
                if bar is not None:
                    bar.update(self.frames_per_batch)
                self.stats.wall = time.perf_counter() - started
                handed = time.perf_counter()
                yield batch
                del batch
                self._seconds["consumer"] += time.perf_counter() - handed
        except BaseException as error:  # GeneratorExit too: the consumer stopped early
            self._release(groups, owned, stopped_by=error)
            raise
        else:
            self._release(groups, owned)
        finally:
            if bar is not None:
                bar.close()

    def _label(self, batch: TensorDict, actor_id: int | None, version: int | None) -> None:
        """Stamps ``batch`` with its actor and policy version: int64 ``[num_envs, T]`` views of one scalar each."""
        for key, value in (("actor_id", actor_id), ("policy_version", version)):
            if value is not None:
                # Stride-0 views: nothing per frame is written, and a reused output buffer's storages
                # (NOTE [Stream data path]) are not touched.
                batch.set(key, torch.tensor(value, dtype=torch.int64, device=self.device).expand(batch.shape))

    def _release(self, groups: list[_Group], owned: bool, stopped_by: BaseException | None = None) -> None:
        """Collects each group's step in flight, closes the pools this pass made and waits for its copies.

        NOTE [Closing a stream]: each of these runs whatever an earlier one
        raised, so a pool that fails to drain leaves no other pool open. The
        error that stopped the stream (the policy's, Ctrl-C) is the one the
        caller sees; a failure while closing rides along as a note on it, and
        is raised itself only when nothing else stopped the stream (the end,
        or ``break``/``close()``, whose ``GeneratorExit`` the caller never sees).
        """
        failures: list[BaseException] = []

        def attempt(action: Callable[[], Any]) -> None:
            try:
                action()
            except BaseException as failure:  # noqa: BLE001 - raised or noted once every pool is closed
                failures.append(failure)

        for group in groups:
            pool = group.pool
            # A step in flight: sent by _act (send_into), its recv_into not yet
            # called or cut short by Ctrl-C. Collecting it leaves a caller's pool idle and reusable.
            if not pool.closed and pool.in_flight:
                attempt(pool.recv_into)
            group.in_flight = False
            if owned:
                attempt(pool.close)
        for group in groups:
            for event, pending in zip(group.staging_events, group.staging_pending):
                if pending:
                    attempt(event.synchronize)
        if not owned:
            self.stream._pool_in_use = False
        if not failures:
            return
        if stopped_by is None or isinstance(stopped_by, GeneratorExit):
            raise failures[0]
        if hasattr(stopped_by, "add_note"):  # Python 3.11+
            for failure in failures:
                stopped_by.add_note(f"while the stream closed, this was raised too: "
                                    f"{type(failure).__name__}: {failure}")

    def _next_batch(self, groups: list[_Group], batches_wanted: int | None) -> TensorDict:
        if self._direct:
            return self._direct_batch(groups[0])
        if len(groups) == 1:  # one group, staged: each step is sent and received in one call
            while not self._step(groups[0]):
                pass
            return self._assemble(1 - groups[0].slot_set)
        # Two groups (NOTE [Env groups]): the first group's next step was sent
        # before the previous batch was handed out; the last group's is computed
        # now, with the consumer's updated weights.
        last = groups[-1]
        if not last.in_flight:
            self._act(last)
        while True:
            for group in groups:
                completed = self._receive(group)
                more = batches_wanted is None or group.batches_done < batches_wanted
                if completed and (group is last or not more):
                    continue
                self._act(group)
            if last.t == 0:
                return self._assemble(1 - last.slot_set)

    def _start(self, groups: list[_Group]) -> None:
        first = groups[0].pool
        self._layout = {name: (dtype, shape, offset) for name, dtype, shape, offset in first.output_layout()}
        self._next_keys = next_keys(self._layout)
        self._group_size = first.num_envs
        reset = [group.pool.reset() for group in groups]
        nbytes = Pool.output_bytes(reset[0]).numel()
        T, G = self.steps_per_batch, len(groups)
        self._num_groups = G
        self._policy_is_module = is_tensordict_module(self._acting)
        self._policy_outputs: list[dict[str, torch.Tensor]] | None = None
        self._policy_views: list | None = None
        self._action_checked = False
        self._outs: list[tuple[HeldWatch, Any]] = []  # output buffers and how each is filled
        self._copy_stream = torch.cuda.Stream(self.device) if self._cuda else None
        # One group on the CPU: the workers write straight into the batch (NOTE [Stream data path]).
        self._direct = G == 1 and not self._staged
        self._observation_keys = observation_keys(self._layout)
        n = self._group_size
        if self._direct:
            # The policy's inputs, contiguous, per observation key: slot 0 holds the
            # observation the batch starts from (the previous batch's last), slot t + 1 step t's.
            self._direct_observations = {
                key: torch.empty((T + 1, n, *self._layout[key][1]), dtype=self._layout[key][0])
                for key in self._observation_keys}
            for key, slots in self._direct_observations.items():
                slots[0].copy_(reset[0][key])
            views = [[observation_input({key: slots[t] for key, slots in self._direct_observations.items()}, n)]
                     for t in range(T + 1)]
            self._observation_views = [views, views]  # one slot set: slot_set stays 0
            self._raw = self._slot_views = None
        else:
            # Two sets of T + 1 raw slots: slot 0 holds the observation the batch
            # starts from (the previous batch's last), slots 1..T its steps.
            self._raw = [torch.empty((T + 1, G, nbytes), dtype=torch.uint8, device=self.device) for _ in range(2)]
            # Made once: the policy's input for slot t of group g ([group_size, *obs_shape]
            # views) and the raw slot each step lands in ([bytes] views).
            self._observation_views = []
            for raw in self._raw:
                columns = {key: self._column(raw, key) for key in self._observation_keys}
                self._observation_views.append([
                    [observation_input({key: column[t, g] for key, column in columns.items()}, n) for g in range(G)]
                    for t in range(T + 1)])
            self._slot_views = [[[raw[t, g] for g in range(G)] for t in range(T + 1)] for raw in self._raw]
        for group, td in zip(groups, reset):
            group.t, group.slot_set, group.batches_done, group.sends = 0, 0, 0, 0
            if self._staged:
                group.staging = [torch.empty(nbytes, dtype=torch.uint8, pin_memory=self._cuda)
                                 for _ in range(self._STAGING_ROWS)]
                # Made once and recorded again per copy: an event made per step is a CUDA call more.
                group.staging_events = [torch.cuda.Event() if self._cuda else None for _ in range(self._STAGING_ROWS)]
                group.staging_pending = [False] * self._STAGING_ROWS
            if not self._direct:
                self._raw[0][0, group.index].copy_(Pool.output_bytes(td))  # once per stream: no need to be quick
        for group in groups[:-1]:  # the last group acts at the start of each batch (_next_batch)
            self._act(group)

    # Pinned rows per group with CUDA: a row is written again two sends after
    # its copy was queued, so that copy has had a whole step to finish.
    _STAGING_ROWS = 3

    def _receive(self, group: _Group) -> bool:
        """Two groups: waits for the group's step in flight and files it; True when it completed a batch."""
        tick = time.perf_counter()
        group.in_flight = False  # even if recv_into raises: a failed step is consumed
        landed = group.pool.recv_into()
        self._seconds["envs"] += time.perf_counter() - tick
        return self._file(group, landed)

    def _step(self, group: _Group) -> bool:
        """One group, staged: acts, steps and files in one go; True when the step completed a batch."""
        action = self._policy_action(group)
        destination = self._destination(group)
        tick = time.perf_counter()
        if self._action_checked:  # NOTE [Checked once]
            landed = group.pool.step_into_trusted(action, destination)
        else:
            landed = group.pool.step_into(action, destination)
        group.sends += 1
        self._seconds["envs"] += time.perf_counter() - tick
        return self._file(group, landed)

    def _direct_batch(self, group: _Group) -> TensorDict:
        """One group on the CPU: the workers write each step straight into the batch handed out."""
        start = 0
        if self._policy_views is None:  # the policy's first outputs shape its buffers, which the batch needs
            first_action = self._policy_action(group)
            start = 1
        watch, (targets, pairs) = self._output_buffer(lambda: self._new_direct_output(group.pool))
        if start:
            group.pool.step_into(first_action, targets[0])
        self._fill_direct(group, targets, start)
        tick = time.perf_counter()
        for destination, source in pairs:
            destination.copy_(source)
        for slots in self._direct_observations.values():
            slots[0].copy_(slots[self.steps_per_batch])
        self._seconds["copies"] += time.perf_counter() - tick
        group.batches_done += 1
        return watch.tensordict

    def _fill_direct(self, group: _Group, targets: list[OutputTargets], start: int) -> None:
        """Steps ``start..T-1`` of a direct batch: the policy, then one step into each step's targets.

        NOTE [The CPU hot loop]: with cheap envs (CartPole: ~3 us a step of 8
        envs) every Python call per step is a visible share of the rate, so
        this loop holds what ``_policy_action`` looks up per step in locals
        and skips its calls; it must file exactly what ``_policy_action`` files.
        """
        observations = [views[0] for views in self._observation_views[0]]
        policy_rows = [views[0] for views in self._policy_views[0]]
        stored_actions = [rows["action"] for rows in policy_rows]
        stored_addresses = [stored.data_ptr() for stored in stored_actions]
        action_shape, action_dtype = stored_actions[0].shape, stored_actions[0].dtype
        fast = self._action_checked
        step = group.pool.step_into_trusted if fast else group.pool.step_into
        policy, clock = self._acting, time.perf_counter
        module = self._policy_is_module  # else a bare tensor back skips call_policy
        policy_seconds = env_seconds = 0.0
        try:
            for t in range(start, self.steps_per_batch):
                tick = clock()
                if not module:
                    action = policy(observations[t])
                    extras = None
                    if action.__class__ is not torch.Tensor:
                        action, extras = policy_result(action)
                else:
                    action, extras = call_policy(policy, observations[t], True)
                if extras:
                    rows = policy_rows[t]
                    for key, value in extras.items():
                        rows[key].copy_(value)
                # An action exactly like the stored rows is sent as it is, and
                # the core copies it into its row once accepted: a torch copy
                # less per step, a visible share of a cheap env's step.
                if (fast and action.__class__ is torch.Tensor and action.dtype is action_dtype and action.is_cpu
                        and action.shape == action_shape and action.is_contiguous()):
                    tock = clock()
                    policy_seconds += tock - tick
                    step(action, targets[t], stored_addresses[t])
                else:
                    stored = stored_actions[t]
                    if action.shape != action_shape:
                        wrong_action_shape(action, observations[t], action_shape)
                    stored.copy_(action)
                    tock = clock()
                    policy_seconds += tock - tick
                    step(stored, targets[t])
                env_seconds += clock() - tock
        finally:
            self._seconds["policy"] += policy_seconds
            self._seconds["envs"] += env_seconds

    def _file(self, group: _Group, landed: torch.Tensor) -> bool:
        """Files a received step of ``group``; True when it completed the group's batch."""
        group.t += 1
        if self._staged:
            self._copy_row(group, landed, self._slot_views[group.slot_set][group.t][group.index])
        if group.t < self.steps_per_batch:
            return False
        self._finish_batch(group)
        return True

    def _finish_batch(self, group: _Group) -> None:
        group.batches_done += 1
        group.t = 0
        group.slot_set ^= 1
        # The batch's last observation is the next batch's first.
        self._slot_views[group.slot_set][0][group.index].copy_(
            self._slot_views[1 - group.slot_set][self.steps_per_batch][group.index], non_blocking=True)

    def _copy_row(self, group: _Group, row: torch.Tensor, destination: torch.Tensor) -> None:
        """Staged: one DMA of a pinned staging row into its raw slot.

        With one group the copy goes on the current stream, where the policy's
        kernels read it next: ordered without an event wait, and two CUDA calls
        a step (the copy, the row's event), the fewest that keep the pinned row
        safe. With two groups it goes on the side stream, so it can overlap the
        other group's policy, which then waits for it with an event.
        """
        tick = time.perf_counter()
        index = (group.sends - 1) % self._STAGING_ROWS
        if self._cuda:
            event = group.staging_events[index]
            if self._num_groups == 1:
                destination.copy_(row, non_blocking=True)
                event.record()
            else:
                with torch.cuda.stream(self._copy_stream):
                    destination.copy_(row, non_blocking=True)
                    event.record(self._copy_stream)
                torch.cuda.current_stream(self.device).wait_event(event)
            group.staging_pending[index] = True
        else:
            destination.copy_(row)
        self._seconds["copies"] += time.perf_counter() - tick

    def _destination(self, group: _Group) -> torch.Tensor:
        """Where the workers write the group's next step: its raw slot, or a free pinned row."""
        if not self._staged:
            return self._slot_views[group.slot_set][group.t + 1][group.index]
        row = group.sends % self._STAGING_ROWS
        if group.staging_pending[row]:
            group.staging_events[row].synchronize()  # the row's previous copy must be done before it is rewritten
            group.staging_pending[row] = False
        return group.staging[row]

    def _column(self, raw: torch.Tensor, key: str) -> torch.Tensor:
        """Key ``key`` of raw slots ``[S, G, bytes]`` as ``[S, G, group_size, *shape]`` (a view)."""
        dtype, shape, offset = self._layout[key]
        count = self._group_size * math.prod(shape)
        column = raw[..., offset:offset + count * dtype.itemsize].view(dtype)
        return column.view(*raw.shape[:2], self._group_size, *shape)

    def _act(self, group: _Group) -> None:
        """Two groups: computes the group's action for its current slot and sends it."""
        action = self._policy_action(group)
        group.pool.send_into(action, self._destination(group))
        group.sends += 1
        group.in_flight = True

    def _policy_action(self, group: _Group) -> torch.Tensor:
        """Calls the policy for the group's current slot, files its outputs; returns the action to send."""
        tick = time.perf_counter()
        slot_set, t = group.slot_set, group.t
        observation = self._observation_views[slot_set][t][group.index]
        action, extras = call_policy(self._acting, observation, self._policy_is_module)
        if self._policy_views is None:
            self._new_policy_outputs(action, extras)
            # NOTE [Checked once]: the stream sends its own action rows: each has
            # the first action's dtype and the group's shape, contiguous, on the
            # CPU or in a pinned buffer. If the pool takes such a row as it is
            # (no conversion), every later one passes its checks too, and the
            # steps skip them. Otherwise every step goes through the checks
            # (and raises the pool's error, or converts).
            row = self._policy_views[slot_set][t][group.index]["action"]
            self._action_checked = row.is_cpu and group.pool.takes_as_is(row)
        rows = self._policy_views[slot_set][t][group.index]
        stored = rows["action"]
        if action.shape != stored.shape:  # copy_ would broadcast it
            wrong_action_shape(action, observation, stored.shape)
        stored.copy_(action)
        for key, value in extras.items():
            rows[key].copy_(value)
        self._seconds["policy"] += time.perf_counter() - tick
        if self._cuda:
            if group.host_action is None:
                group.host_action = torch.empty(action.shape, dtype=action.dtype, pin_memory=True)
            group.host_action.copy_(stored, non_blocking=True)
            torch.cuda.current_stream(self.device).synchronize()
            return group.host_action
        return stored

    def _new_policy_outputs(self, action: torch.Tensor, extras: dict[str, torch.Tensor]) -> None:
        """Buffers [T, num_envs, ...] for the policy's outputs, shaped by its first call, and their row views."""
        outputs = {"action": action, **extras}
        self._policy_outputs = [
            {key: torch.empty((self.steps_per_batch, self.num_envs, *value.shape[1:]), dtype=value.dtype,
                              device=self.device) for key, value in outputs.items()} for _ in range(2)]
        n = self._group_size
        self._policy_views = [
            [[{key: buffer[t, g * n:(g + 1) * n] for key, buffer in slot.items()}
              for g in range(self._num_groups)] for t in range(self.steps_per_batch)]
            for slot in self._policy_outputs]

    def _assemble(self, slot_set: int) -> TensorDict:
        """Rearranges a completed raw batch into torchrl's [num_envs, T] layout on the device."""
        tick = time.perf_counter()
        watch, assembly = self._output_buffer(self._new_output)
        for destination, source in assembly[slot_set]:
            destination.copy_(source, non_blocking=True)
        self._seconds["copies"] += time.perf_counter() - tick
        return watch.tensordict

    def _output_buffer(self, make: Callable[[], tuple[TensorDict, Any]]) -> tuple[HeldWatch, Any]:
        """A batch buffer nobody holds, with how it is filled (``make()`` builds a new one)."""
        # A for-loop still holds the previous batch while the next is made, so
        # two output buffers take turns; more only while the consumer keeps batches.
        # A batch whose memory moved (shared with another process, NOTE [Moved
        # storage]) is forgotten: its targets point at memory it no longer has.
        self._outs = [(watch, plan) for watch, plan in self._outs if not watch.moved()]
        for watch, plan in self._outs:
            if not watch.held():
                return watch, plan
        out, plan = make()  # a helper: none of its temporaries inflate the baselines
        watch = HeldWatch(out)
        del out
        watch.arm()
        self._outs = self._outs[-1:] + [(watch, plan)]  # older ones are left to the consumer
        return watch, plan

    def _new_direct_output(self, pool: Pool) -> tuple[TensorDict, tuple[list[OutputTargets], list]]:
        """A batch, where each step's outputs go in it, and what is copied in once it is full."""
        out = self._empty_batch()
        T = self.steps_per_batch
        columns = {"env_id": out["env_id"]}
        pairs = []
        for key, slots in self._direct_observations.items():
            # Step t's observation is the policy's input at t + 1 (NOTE [Stream data path]).
            columns[key] = slots[1:].transpose(0, 1)
            columns[final_key(key)] = out[under_next(key)]
            pairs.append(as_records(out[key], slots[:T].transpose(0, 1), 2))
        for key in ("reward", "done", "terminated", "truncated", *self._next_keys):
            columns[key] = next_column(out, key)
        targets = pool.output_target_columns(columns)
        pairs += self._policy_pairs(out, 0)
        # Made before the HeldWatch takes its baselines: these views count as ours.
        return out, (targets, pairs)

    def _assembly_pairs(self, out: TensorDict, slot_set: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """(destination, source) views that move raw set ``slot_set`` into ``out``, made once per buffer."""
        raw = self._raw[slot_set]
        G, n, T = raw.shape[1], self._group_size, self.steps_per_batch
        pairs = []

        def add(destination: torch.Tensor, key: str, slots: slice) -> None:
            source = self._column(raw[slots], key)
            pairs.append(as_records(destination.view(G, n, T, *source.shape[3:]), source.movedim(0, 2), 3))

        for key in self._observation_keys:
            add(out[key], key, slice(0, T))
            add(out[under_next(key)], final_key(key), slice(1, T + 1))
        for key in ("reward", "done", "terminated", "truncated", *self._next_keys):
            add(next_column(out, key), key, slice(1, T + 1))
        return pairs + self._policy_pairs(out, slot_set)

    def _policy_pairs(self, out: TensorDict, slot_set: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """(destination, source) views that move the policy's outputs [T, num_envs, ...] into ``out``."""
        outputs = self._policy_outputs[slot_set]
        return [as_records(out[key], value.transpose(0, 1), 2) for key, value in outputs.items()]

    def _new_output(self) -> tuple[TensorDict, list]:
        out = self._empty_batch()
        # Made before the HeldWatch takes its baselines: these views count as ours.
        return out, [self._assembly_pairs(out, slot_set) for slot_set in range(2)]

    def _empty_batch(self) -> TensorDict:
        return empty_batch(self.num_envs, self.steps_per_batch, self._layout, self._policy_outputs[0], self.device)


def stream(env: str | Pool, policy: Callable, *, num_envs: int = 8, frames_per_batch: int,
           total_frames: int | None = None, device: str | torch.device | None = None,
           split_envs: bool | None = None, progress: bool = False, prefetch: bool = False,
           actor_id: int | None = None, policy_version: int | None = None, **make_kwargs: Any) -> RolloutStream:
    """Rollout batches of ``env`` under ``policy``, as an ``IterableDataset``.

    Args:
        env: an env id (then ``num_envs`` and ``**make_kwargs`` build the pools) or an
            existing sync ``Pool`` with ``autoreset="same_step"``.
        policy: maps observations ``[n, *obs_shape]`` on ``device`` to actions
            ``[n, *action_shape]``; may return ``(action, extras_dict)`` or a dict with
            ``"action"``, or be a TensorDict module writing ``"action"``. Called under
            ``torch.no_grad()``; held by reference (in-place updates apply).
        frames_per_batch: env steps per batch (a multiple of ``num_envs``); each
            batch is ``[num_envs, frames_per_batch // num_envs]``.
        total_frames: stop after ``ceil(total_frames / frames_per_batch)`` batches;
            ``None`` streams forever.
        device: where batches (and the policy's inputs) live; default CPU.
        split_envs: two groups of envs stepped in turn so env stepping overlaps
            policy inference (an even ``num_envs`` given by id). Default: off, since
            one group was faster wherever it was measured (NOTE [Env groups]).
        progress: show a tqdm progress bar over frames.
        prefetch: collect batch k+1 on a background thread while the consumer
            trains on batch k. The collector acts with a snapshot of the policy's
            module refreshed at each hand-off, so every action of a batch lags
            exactly one update; the batch's log-probs are those of the snapshot
            that acted (NOTE [Prefetch and policy lag] in prefetch.py). Needs the
            policy to be an ``nn.Module`` or a method of one.
        actor_id: when given, each batch has ``actor_id`` int64 ``[num_envs, T]``
            (every entry this value): which actor collected it, for a learner that
            gathers batches from many (Ray actors, torch.distributed ranks).
        policy_version: the starting value of ``stream.policy_version``, which
            the learner (or the actor that receives its weights) sets after each
            weight update. When it is not ``None``, each batch has
            ``policy_version`` int64 ``[num_envs, T]``: the value when the batch
            began (the consumer had received every earlier batch), or with
            ``prefetch`` the value when the previous batch was handed out, which
            is the snapshot's that acted. Both are read once per batch and stored
            as stride-0 views of one scalar (``clone()`` before writing into
            them); left ``None``, neither key exists and nothing is read. With
            ``split_envs``, the first group's first action of a batch precedes the
            batch's start (see Policy lag above): it may be one version older.

    Yields TensorDicts ``[num_envs, T]`` in torchrl's layout: ``observation``,
    ``action`` and the policy's extras at the root; ``("next", key)`` for
    ``observation`` (the true next observation, also at episode ends),
    ``reward`` ``float32[..., 1]``, ``done``/``terminated``/``truncated``
    ``bool[..., 1]``, ``episode_return`` ``float32[..., 1]``, ``episode_length``
    ``int64[..., 1]`` and the family's extras; ``env_id`` ``int64``. A yielded batch is never overwritten while
    you hold it. With ``DataLoader``, use ``DataLoader(stream, batch_size=None,
    collate_fn=lambda b: b)``: batching is already done, and the default collate
    would copy the TensorDict; ``num_workers=0`` is enough (the pool has its own
    threads). In a worker process (``num_workers >= 1``, fork) the pool is made
    in the worker and each batch sent moves to shared memory, which the stream
    notices and never writes again (NOTE [Moved storage]). Each ``iter(stream)`` is a pass of its own,
    with its own pools and buffers; ``stats()`` reports the pass started last (NOTE [State per iterator]).
    """
    return RolloutStream(env, policy, num_envs=num_envs, frames_per_batch=frames_per_batch,
                         total_frames=total_frames, device=device, split_envs=split_envs, progress=progress,
                         prefetch=prefetch, actor_id=actor_id, policy_version=policy_version, **make_kwargs)
