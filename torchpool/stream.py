"""torchpool.stream: rollout batches streamed onto the training device.

    stream = torchpool.stream("CartPole-v1", policy, num_envs=32, frames_per_batch=4096,
                              total_frames=1_000_000, device="cuda")
    for batch in stream:          # TensorDict [num_envs, T] on `device`
        loss = ...

How a step travels (NOTE [Stream data path]): C++ workers write each step's
outputs into the pool's pinned output block; one non-blocking copy of that
whole block (all keys at once, on a side CUDA stream) lands in a raw slot of
the rollout buffer on the device; a CUDA event per copy tells the stream when
the pinned block may be written again. Actions go back through a pinned
buffer. When a batch is complete, its raw slots are rearranged on the device
into torchrl's ``[num_envs, T]`` layout. No Python loop over envs, no host copy
besides the one DMA. On a machine without CUDA the same path runs on the CPU.

Overlap (NOTE [Env groups]): with ``split_envs=True`` (the default for an env
id) the envs form two pools of ``num_envs / 2``, stepped in turn: while the
workers step one group, the policy computes actions for the other.

Policy lag: the stream holds the policy by reference, so in-place weight
updates apply from the next action on. With two groups, the first action of
each batch for every group but the last is computed before the consumer sees
the previous batch: those actions lag one update behind.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Mapping
from typing import Any, Callable

import torch
from tensordict import TensorDict, TensorDictBase
from torch.utils.data import IterableDataset

from ._held import HeldWatch
from .pool import Pool


class _Group:
    """One pool of the stream and where its envs sit in the batch."""

    def __init__(self, pool: Pool, index: int, first_row: int):
        self.pool = pool
        self.index = index
        self.rows = slice(first_row, first_row + pool.num_envs)
        self.t = 0              # steps of the current batch already received
        self.slot_set = 0       # which of the two raw buffers the current batch uses
        self.batches_done = 0
        self.in_flight = False
        self.copy_events: deque = deque()
        self.host_action: torch.Tensor | None = None


class RolloutStream(IterableDataset):
    """An ``IterableDataset`` of rollout batches; see :func:`stream`."""

    def __init__(self, env: str | Pool, policy: Callable, *, num_envs: int = 8, frames_per_batch: int,
                 total_frames: int | None = None, device: str | torch.device | None = None,
                 split_envs: bool | None = None, progress: bool = False, **make_kwargs: Any):
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
        self.env = env
        self.policy = policy
        self.num_envs = num_envs
        self.frames_per_batch = frames_per_batch
        self.steps_per_batch = frames_per_batch // num_envs
        self.total_frames = total_frames
        self.device = torch.device(device) if device is not None else torch.device("cpu")
        if split_envs is None:
            split_envs = not isinstance(env, Pool) and num_envs >= 2 and num_envs % 2 == 0
        if split_envs and num_envs % 2:
            raise ValueError(f"split_envs needs an even num_envs, got {num_envs}")
        self.split_envs = split_envs
        self.progress = progress
        self.make_kwargs = make_kwargs
        self._cuda = self.device.type == "cuda"
        self._seconds = {"envs": 0.0, "policy": 0.0, "copies": 0.0, "consumer": 0.0}
        self._frames = 0
        self._wall = 0.0

    def __len__(self) -> int:
        if self.total_frames is None:
            raise TypeError("this stream has no total_frames, so no length")
        return math.ceil(self.total_frames / self.frames_per_batch)

    def __iter__(self):
        return self._collect()

    def stats(self) -> dict[str, Any]:
        """Where the time went: seconds waiting on envs, in the policy, in copies and in the consumer."""
        return {"frames": self._frames, "seconds": dict(self._seconds), "wall_seconds": self._wall,
                "frames_per_s": self._frames / self._wall if self._wall else 0.0}

    # ---- collection -----------------------------------------------------------

    def _open_pools(self) -> tuple[list[_Group], bool]:
        if isinstance(self.env, Pool):
            return [_Group(self.env, 0, 0)], False
        kwargs = dict(self.make_kwargs)
        seed = kwargs.pop("seed", 0)
        if not self.split_envs:
            return [_Group(Pool(self.env, num_envs=self.num_envs, seed=seed, **kwargs), 0, 0)], True
        half = self.num_envs // 2
        # Env i of the stream is seeded with seed + i whichever group it is in.
        return [_Group(Pool(self.env, num_envs=half, seed=seed + g * half, **kwargs), g, g * half)
                for g in range(2)], True

    def _collect(self):
        groups, owned = self._open_pools()
        batches_wanted = len(self) if self.total_frames is not None else None
        bar = None
        if self.progress:
            from tqdm import tqdm

            bar = tqdm(total=self.total_frames, unit="frame", desc="stream")
        try:
            self._start(groups)
            started = time.perf_counter()
            batches = 0
            while batches_wanted is None or batches < batches_wanted:
                for group in groups:
                    more = batches_wanted is None or group.batches_done + 1 < batches_wanted
                    self._advance(group, send_next_batch=more)
                if groups[-1].t != 0:
                    continue
                batch = self._assemble(1 - groups[-1].slot_set)
                batches += 1
                self._frames += self.frames_per_batch
                if bar is not None:
                    bar.update(self.frames_per_batch)
                self._wall = time.perf_counter() - started
                handed = time.perf_counter()
                yield batch
                del batch
                self._seconds["consumer"] += time.perf_counter() - handed
        finally:
            if bar is not None:
                bar.close()
            for group in groups:
                if group.in_flight and not group.pool.closed:
                    group.pool.recv()  # leaves a caller's pool idle and reusable
                    group.in_flight = False
                if owned:
                    group.pool.close()
            for group in groups:
                for event in group.copy_events:
                    event.synchronize()

    def _start(self, groups: list[_Group]) -> None:
        first = groups[0].pool
        self._layout = {name: (dtype, shape, offset) for name, dtype, shape, offset in first.output_layout()}
        self._group_size = first.num_envs
        reset = [group.pool.reset() for group in groups]
        nbytes = Pool.output_bytes(reset[0]).numel()
        T, G = self.steps_per_batch, len(groups)
        # Two sets of T + 1 raw slots: slot 0 holds the observation the batch
        # starts from (the previous batch's last), slots 1..T its steps.
        self._raw = [torch.empty((T + 1, G, nbytes), dtype=torch.uint8, device=self.device) for _ in range(2)]
        self._policy_outputs: list[dict[str, torch.Tensor]] | None = None
        self._out: HeldWatch | None = None
        self._copy_stream = torch.cuda.Stream(self.device) if self._cuda else None
        # The policy's input for slot t of group g, made once: [group_size, *obs_shape] views.
        self._observation_views = [
            [[column[t, g] for g in range(G)] for t in range(T + 1)]
            for column in (self._column(raw, "observation") for raw in self._raw)]
        for group, td in zip(groups, reset):
            group.t, group.slot_set, group.batches_done = 0, 0, 0
            self._copy_block(group, td, self._raw[0][0, group.index], wait=True)
            self._act(group)

    def _advance(self, group: _Group, send_next_batch: bool) -> None:
        """Receives one step of ``group``, files it, and sends its next action."""
        tick = time.perf_counter()
        td = group.pool.recv()
        group.in_flight = False
        self._seconds["envs"] += time.perf_counter() - tick
        raw = self._raw[group.slot_set]
        self._copy_block(group, td, raw[group.t + 1, group.index])
        del td
        group.t += 1
        if group.t == self.steps_per_batch:
            group.batches_done += 1
            group.t = 0
            group.slot_set ^= 1
            self._raw[group.slot_set][0, group.index].copy_(raw[self.steps_per_batch, group.index],
                                                             non_blocking=True)
            if not send_next_batch:
                return
        self._act(group)

    def _copy_block(self, group: _Group, td: TensorDict, destination: torch.Tensor, wait: bool = False) -> None:
        tick = time.perf_counter()
        source = Pool.output_bytes(td)
        if self._cuda:
            event = torch.cuda.Event()
            with torch.cuda.stream(self._copy_stream):
                destination.copy_(source, non_blocking=True)
                event.record(self._copy_stream)
            torch.cuda.current_stream(self.device).wait_event(event)
            if wait:
                event.synchronize()
            else:
                group.copy_events.append(event)
                # The pool rewrites the block received two recvs ago at the next
                # send (a sync pool has three blocks): its copy must be done.
                while len(group.copy_events) > 2:
                    group.copy_events.popleft().synchronize()
        else:
            destination.copy_(source)
        self._seconds["copies"] += time.perf_counter() - tick

    def _column(self, raw: torch.Tensor, key: str) -> torch.Tensor:
        """Key ``key`` of raw slots ``[S, G, bytes]`` as ``[S, G, group_size, *shape]`` (a view)."""
        dtype, shape, offset = self._layout[key]
        count = self._group_size * math.prod(shape)
        column = raw[..., offset:offset + count * dtype.itemsize].view(dtype)
        return column.view(*raw.shape[:2], self._group_size, *shape)

    def _act(self, group: _Group) -> None:
        """Computes the group's action for its current slot, files it and sends it."""
        tick = time.perf_counter()
        slot_set, t = group.slot_set, group.t
        observation = self._observation_views[slot_set][t][group.index]
        with torch.no_grad():
            action, extras = self._call_policy(observation)
        outputs = {"action": action, **extras}
        if self._policy_outputs is None:
            self._policy_outputs = [
                {key: torch.empty((self.steps_per_batch, self.num_envs, *value.shape[1:]), dtype=value.dtype,
                                  device=self.device) for key, value in outputs.items()} for _ in range(2)]
        for key, value in outputs.items():
            self._policy_outputs[slot_set][key][t, group.rows] = value
        self._seconds["policy"] += time.perf_counter() - tick
        if self._cuda:
            if group.host_action is None:
                group.host_action = torch.empty(action.shape, dtype=action.dtype, pin_memory=True)
            group.host_action.copy_(action, non_blocking=True)
            torch.cuda.current_stream(self.device).synchronize()
            action = group.host_action
        group.pool.send(action)
        group.in_flight = True

    def _call_policy(self, observation: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        policy = self.policy
        if hasattr(policy, "in_keys") and hasattr(policy, "out_keys"):  # a TensorDict module
            td = policy(TensorDict({"observation": observation}, batch_size=observation.shape[:1]))
            if "action" not in td.keys():
                raise KeyError(f"the policy module wrote {list(td.keys())} but no 'action'")
            extras = {key: td[key] for key in td.keys() if key not in ("observation", "action")}
            return td["action"], extras
        out = policy(observation)
        if isinstance(out, tuple):
            if len(out) != 2 or not isinstance(out[1], Mapping):
                raise TypeError("a policy returning a tuple must return (action, dict_of_extras)")
            return out[0], dict(out[1])
        if isinstance(out, (Mapping, TensorDictBase)):
            if "action" not in out.keys():
                raise KeyError(f"the policy returned {list(out.keys())} but no 'action'")
            return out["action"], {key: out[key] for key in out.keys() if key != "action"}
        if not isinstance(out, torch.Tensor):
            raise TypeError(f"the policy must return a tensor, (action, extras) or a dict; got {type(out).__name__}")
        return out, {}

    def _assemble(self, slot_set: int) -> TensorDict:
        """Rearranges a completed raw batch into torchrl's [num_envs, T] layout on the device."""
        tick = time.perf_counter()
        raw = self._raw[slot_set]
        if self._out is None or self._out.held():
            # Built by a helper so none of its temporaries inflate the baselines.
            self._out = HeldWatch(self._new_output())
        out = self._out.tensordict
        G, n, T = raw.shape[1], self._group_size, self.steps_per_batch

        def fill(destination: torch.Tensor, key: str, slots: slice) -> None:
            source = self._column(raw[slots], key)
            destination.view(G, n, T, *source.shape[3:]).copy_(source.movedim(0, 2), non_blocking=True)

        fill(out["observation"], "observation", slice(0, T))
        fill(out["next", "observation"], "final_observation", slice(1, T + 1))
        for key in ("reward", "done", "terminated", "truncated"):
            fill(out["next", key].squeeze(-1), key, slice(1, T + 1))
        for key in self._next_keys:
            fill(out["next", key], key, slice(1, T + 1))
        for key, value in self._policy_outputs[slot_set].items():
            out[key].copy_(value.transpose(0, 1), non_blocking=True)
        self._seconds["copies"] += time.perf_counter() - tick
        return out

    def _new_output(self) -> TensorDict:
        N, T = self.num_envs, self.steps_per_batch
        device = self.device
        obs_dtype, obs_shape, _ = self._layout["observation"]
        core = {"observation", "final_observation", "reward", "done", "terminated", "truncated", "env_id"}
        # episode_return, episode_length and the family's extras ride along under "next".
        self._next_keys = [key for key in self._layout if key not in core]
        flag = lambda: torch.zeros((N, T, 1), dtype=torch.bool, device=device)  # noqa: E731
        nxt = {"observation": torch.empty((N, T, *obs_shape), dtype=obs_dtype, device=device),
               "reward": torch.empty((N, T, 1), dtype=torch.float32, device=device),
               "done": flag(), "terminated": flag(), "truncated": flag()}
        for key in self._next_keys:
            dtype, shape, _ = self._layout[key]
            nxt[key] = torch.empty((N, T, *shape), dtype=dtype, device=device)
        out = {"observation": torch.empty((N, T, *obs_shape), dtype=obs_dtype, device=device),
               "env_id": torch.arange(N, device=device).unsqueeze(1).expand(N, T).clone(),
               # Same-step autoreset: an observation at the root never ends an episode.
               "done": flag(), "terminated": flag(), "truncated": flag(),
               "next": TensorDict(nxt, batch_size=[N, T], device=device)}
        for key, value in self._policy_outputs[0].items():
            out[key] = torch.empty((N, T, *value.shape[2:]), dtype=value.dtype, device=device)
        return TensorDict(out, batch_size=[N, T], device=device)


def stream(env: str | Pool, policy: Callable, *, num_envs: int = 8, frames_per_batch: int,
           total_frames: int | None = None, device: str | torch.device | None = None,
           split_envs: bool | None = None, progress: bool = False, **make_kwargs: Any) -> RolloutStream:
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
            policy inference (default: on for an even ``num_envs`` given by id).
        progress: show a tqdm progress bar over frames.

    Yields TensorDicts ``[num_envs, T]`` in torchrl's layout: ``observation``,
    ``action`` and the policy's extras at the root; ``("next", key)`` for
    ``observation`` (the true next observation, also at episode ends),
    ``reward`` ``float32[..., 1]``, ``done``/``terminated``/``truncated``
    ``bool[..., 1]``, ``episode_return``, ``episode_length`` and the family's
    extras; ``env_id`` ``int64``. A yielded batch is never overwritten while
    you hold it. With ``DataLoader``, use ``DataLoader(stream, batch_size=None,
    collate_fn=lambda b: b)``: batching is already done, and the default collate
    would copy the TensorDict; keep ``num_workers=0`` (the pool has its own threads).
    """
    return RolloutStream(env, policy, num_envs=num_envs, frames_per_batch=frames_per_batch,
                         total_frames=total_frames, device=device, split_envs=split_envs, progress=progress,
                         **make_kwargs)
