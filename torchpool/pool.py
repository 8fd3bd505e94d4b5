"""Pool: a batch of C++ environments whose results arrive as TensorDicts.

The only Python module that talks to the extension (``torchpool._core``).
Python owns every output buffer; C++ workers write rows straight into them.

Two ways to drive a pool:

* sync (``batch_size == num_envs``, the default): ``step(action)`` steps every
  env and returns a batch ordered by env id;
* async (``batch_size < num_envs``): ``send(action, env_id)`` queues actions
  for any subset of envs and returns at once; ``recv()`` returns the first
  ``batch_size`` envs to finish, with their ``env_id``.

Keys of a step TensorDict (batch ``[n]``): ``observation``, ``reward``
(float32), ``terminated``, ``truncated``, ``done`` (bool), ``env_id`` (int64),
``episode_return`` (float32) and ``episode_length`` (int64) — the totals of the
episode that just ended where ``done``, running totals otherwise —
``final_observation`` with ``autoreset="same_step"`` (the true last
observation where ``done``, equal to ``observation`` elsewhere), and the
family's extras.
"""

from __future__ import annotations

import atexit
import collections
import dataclasses
import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from . import _core, _family_modules, errors, registry
from ._arguments import (
    checked_choice,
    checked_pin_memory,
    checked_seed,
    checked_sizes,
    checked_time_limit,
    is_process_env,
    positive_int,
    refuse_env_instances,
    seed_or_drawn,
)
from ._arguments import draw_seed as draw_seed  # torchpool.stream draws its seeds here
from ._cpus import available_cpus
from ._held import HeldWatch
from .output_targets import OutputTargets
from .specs import BoxSpec, DictSpec, DiscreteSpec, action_spec, observation_spec

if TYPE_CHECKING:  # tensordict is imported by the first pool: it pulls in torch._dynamo, ~1 s
    from tensordict import TensorDict

# The keys every step carries, whatever the family (the family's extras come after
# them), in column order; as the core's other shared constants, defined in C++ once.
FIXED_KEYS: tuple[str, ...] = tuple(_core.FIXED_KEYS)

# Bad input, raised before anything is queued (a ValueError).
InputError = _core.InputError

# The plug-in interface the core speaks (csrc/core/plugin_abi.h): a user's module must be built against it.
PLUGIN_ABI: int = _core.ABI

# torchpool.testing.crash_report's hook: on a fatal signal, the C++ stacks of every thread.
install_crash_report = _core.install_crash_report

# The core's dtype codes (csrc/core/spec.h, enum class Dtype), by the name torch gives each dtype.
DTYPE_CODES: dict[str, int] = dict(_core.DTYPE_CODES)
_DTYPES = {code: getattr(torch, name) for name, code in DTYPE_CODES.items()}
_CODES = {dtype: code for code, dtype in _DTYPES.items()}
_AUTORESET = dict(_core.AUTORESET_CODES)
# What a pool's ``autoreset`` may be: the core's modes (csrc/core/episode.h), by name.
AUTORESET_MODES: tuple[str, ...] = tuple(_AUTORESET)
_DISCRETE_ACTION_DTYPES = frozenset({torch.int64, torch.int32, torch.uint8})
_CONTINUOUS_ACTION_DTYPES = frozenset({torch.float32, torch.float64})

# How many pause instructions a waiting thread spins through before it sleeps
# (csrc/core/wait.h's SpinPolicy). Chosen with benchmarks/spin.py; override per pool.
DEFAULT_SPIN_POLLS: int = _core.DEFAULT_SPIN_POLLS
# How many output buffers the user holds (or held) that a pool keeps for reuse (NOTE [Lent buffers]).
_LENT_BUFFERS = 1024
_LENT_BYTES = 256 * 2**20

_live_pools: weakref.WeakSet[Pool] = weakref.WeakSet()
_core.set_env_error_factory(errors._from_core)


@atexit.register
def _close_live_pools() -> None:
    # Interpreter exit with work in flight must not hang: join the workers
    # while the interpreter is still whole.
    for pool in list(_live_pools):
        try:
            pool.close()
        except RuntimeError:  # another (daemon) thread is inside the pool: the process ends around it
            pass


def _key(column: str) -> str | tuple[str, str]:
    """The TensorDict key of a core column: "observation.position" is ("observation", "position")."""
    return tuple(column.split(".", 1)) if "." in column else column


def _column_views(data: torch.Tensor, layout: list, rows: int) -> dict[str, Any]:
    """Key -> tensor [rows, *shape] viewing its column of ``data``; named observation fields nest."""
    views: dict[str, Any] = {}
    for name, code, shape, offset in layout:
        dtype = _DTYPES[code]
        nbytes = rows * int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        view = data[offset:offset + nbytes].view(dtype).view(rows, *shape)
        key = _key(name)
        if isinstance(key, tuple):
            views.setdefault(key[0], {})[key[1]] = view
        else:
            views[key] = view
    return views


def _arrays_and_dicts(arrays: dict[str, Any]):
    """Every array and dict of ``_Buffer.arrays()``: a caller may keep any of them. A generator, so that no
    container of them is alive when the watch takes its baselines (it would count as a holder)."""
    yield arrays
    for value in arrays.values():
        yield value
        if isinstance(value, dict):
            yield from value.values()


class _Buffer:
    """One caller-owned output buffer (a ring block or the reset buffer) and its tensor views.

    Every output field is a column view of one byte buffer; see NOTE [Output
    ring reuse] in torchpool/_held.py for when a buffer may be written again.
    """

    __slots__ = ("data", "_watch", "_held", "_address", "_arrays")

    def __init__(self, nbytes: int, layout: list, rows: int, pin: bool):
        from tensordict import TensorDict

        self.data = torch.empty(nbytes, dtype=torch.uint8, pin_memory=pin)
        self._watch = HeldWatch(TensorDict(_column_views(self.data, layout, rows), batch_size=[rows]),
                                anchors=[self.data]).arm()
        self._held = self._watch.held  # bound once: asked before every write, on the hot path
        self._address = self.data.data_ptr()
        self._arrays: dict[str, Any] | None = None  # made by the first arrays()

    def arrays(self) -> dict[str, Any]:
        """NumPy views of the columns, as the TensorDict's keys (named fields: a dict), made once.

        Called only right after a call filled this buffer, when nobody but the pool holds it: the watch
        then counts the arrays too (a user holding one holds the buffer) from that baseline.
        """
        if self._arrays is None:
            self._arrays = {key: value.numpy() if isinstance(value, torch.Tensor)
                            else {field: leaf.numpy() for field, leaf in value.items()}
                            for key, value in self._watch.tensordict.items()}
            self._watch.watch_also(_arrays_and_dicts(self._arrays))
        return self._arrays

    @property
    def tensordict(self) -> TensorDict:
        return self._watch.tensordict

    def reusable(self) -> bool:
        """Whether the pool may write here again (NOTE [Output ring reuse], NOTE [Moved storage])."""
        return self.data.data_ptr() == self._address and not self._held()

    def moved(self) -> bool:
        return self.data.data_ptr() != self._address


@dataclasses.dataclass(frozen=True)
class FamilyEnvs:
    """Envs of a family module the registry does not name, given to ``Pool.__init__`` in place of an id.

    The seam through which ``ProcessPool`` (torchpool/_workers/) makes the
    ``Pool`` of its Python envs once its worker processes serve: ``Pool``
    checks the arguments, makes the core of ``family`` from ``plugin`` (the
    family module's ``TorchpoolPlugin`` capsule) with ``kwargs``, and builds
    its buffers around it, as for an id. ``observation_spec``,
    ``action_spec`` and ``action_dtypes`` (the dtypes ``send()`` takes),
    where given, replace what the core's spec says: a Python env's own spaces
    say more than the core's columns.
    """

    plugin: Any
    family: str
    kwargs: Mapping[str, Any]
    env_id: str  # what the pool reports as its ``env_id``
    task_kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # and as its ``task_kwargs``
    observation_spec: BoxSpec | DictSpec | None = None
    action_spec: BoxSpec | DiscreteSpec | Any = None
    action_dtypes: frozenset[torch.dtype] | None = None


class Pool:
    """A batch of ``num_envs`` environments stepped by C++ worker threads.

    Args:
        env_id: a registered id (``torchpool.list_envs()``); a subclass's ``FamilyEnvs``.
        num_envs: how many envs.
        batch_size: envs per ``recv()`` batch; ``None`` (default) is ``num_envs``
            (a sync pool). Smaller values make an async pool.
        num_threads: worker threads; default ``min(CPUs this process may use, num_envs)``
            (its affinity and cgroup quota, ``torchpool.available_cpus()``).
            The calling thread also runs queued work while it waits.
        seed: env ``i`` is seeded with ``seed + i`` (Gymnasium's convention); ``None``
            draws a random seed (``pool.seed`` tells which).
        autoreset: ``"same_step"`` (default), ``"next_step"`` or ``"disabled"``.
        obs_dtype: ``torch.float32`` (default for continuous observations) or
            ``torch.float64`` for bit-for-bit parity with Gymnasium.
        max_episode_steps: time limit for truncation; ``None`` uses the
            reference's, ``0`` disables it.
        thread_affinity_offset: pin worker ``i`` to core ``offset + i``; ``-1``
            (default) leaves scheduling to the OS.
        spin_polls: how long waiters spin before sleeping (advanced).
        pin_memory: allocate the output buffers in pinned memory (faster copies
            to a GPU). Default off: a CPU-only process never touches CUDA.
            ``torchpool.stream(device="cuda")`` and ``TorchPoolEnv(device="cuda")``
            turn it on for the pools they make.
        **task_kwargs: the env's own kwargs (e.g. Pendulum's ``g``).
    """

    # Before __init__ has made the core (or if it failed): closed. ProcessPool's close() may run then.
    _core = None

    def __init__(
        self,
        env_id: str | FamilyEnvs,
        num_envs: int = 8,
        batch_size: int | None = None,
        num_threads: int | None = None,
        seed: int | None = 0,
        autoreset: str = "same_step",
        obs_dtype: torch.dtype | None = None,
        max_episode_steps: int | None = None,
        thread_affinity_offset: int = -1,
        spin_polls: int = DEFAULT_SPIN_POLLS,
        pin_memory: bool | None = None,
        _schedule_off: int = 0,
        **task_kwargs: Any,
    ):
        self._lent: collections.deque[_Buffer] = collections.deque()  # NOTE [Lent buffers]
        if isinstance(env_id, FamilyEnvs):
            if task_kwargs:
                raise TypeError(f"a pool of FamilyEnvs takes its kwargs in them, got {sorted(task_kwargs)}")
            entry = None
        else:
            entry = registry.lookup(env_id)
            checked = registry.checked_kwargs(entry, task_kwargs)  # the user's, as task_kwargs keeps them
            kwargs = registry.prepared(entry, checked)
        num_envs, batch_size = checked_sizes(num_envs, batch_size)
        if num_threads is None:
            num_threads = min(available_cpus(), num_envs)
        num_threads = positive_int("num_threads", num_threads)
        checked_choice("autoreset", autoreset, AUTORESET_MODES)
        seed = seed_or_drawn(seed, num_envs)
        obs_dtype = _resolve_obs_dtype(entry, obs_dtype)
        max_episode_steps = -1 if checked_time_limit(max_episode_steps) is None else max_episode_steps
        checked_pin_memory(pin_memory)

        envs = env_id if entry is None else FamilyEnvs(_family_modules.plugin(entry.family), entry.family, kwargs,
                                                       env_id, checked)
        self.env_id = envs.env_id
        self.task_kwargs = dict(envs.task_kwargs)
        self._open(envs, num_envs, batch_size, num_threads, seed, autoreset, obs_dtype, max_episode_steps,
                   thread_affinity_offset, spin_polls, pin_memory, _schedule_off)

    def _open(self, envs: FamilyEnvs, num_envs: int, batch_size: int, num_threads: int, seed: int, autoreset: str,
              obs_dtype: torch.dtype, max_episode_steps: int, thread_affinity_offset: int, spin_polls: int,
              pin_memory: bool | None, schedule_off: int) -> None:
        """Makes the core of ``envs.family`` (from its module's plug-in) and the pool's buffers around it."""
        family = envs.family
        self._family = family
        self.seed = seed
        self.num_envs = num_envs
        self.batch_size = batch_size
        self.num_threads = num_threads
        self.autoreset = autoreset
        self.is_async = batch_size < num_envs
        # K blocks with K * batch_size > num_envs + batch_size: rows in flight
        # never reach the block being handed out (csrc/core/output_ring.h).
        num_blocks = num_envs // batch_size + 2
        self._core = _core.make(
            envs.plugin, family, dict(envs.kwargs), num_envs, batch_size, num_blocks, num_threads,
            thread_affinity_offset, seed, _AUTORESET[autoreset], _CODES[obs_dtype], max_episode_steps, spin_polls,
            schedule_off,  # benchmarks/schedule_ab.py switches modes off (csrc/core/schedule.h, ScheduleOff)
        )
        spec = self._core.spec()
        self.max_episode_steps = int(spec["max_episode_steps"])
        self.observation_spec: BoxSpec | DictSpec = observation_spec(
            [dict(field, dtype=_DTYPES[field["dtype"]]) for field in spec["observation"]]
        ) if envs.observation_spec is None else envs.observation_spec
        self.action_spec: BoxSpec | DiscreteSpec = (action_spec(spec["action"]) if envs.action_spec is None
                                                    else envs.action_spec)

        # Pinning is only worth it (and only possible) with CUDA; asked for without it, memory stays plain.
        self.pin_memory = bool(pin_memory) and torch.cuda.is_available()
        self._block_layout = self._core.block_layout()
        # NOTE [Interrupt-safe bookkeeping]. KeyboardInterrupt can surface
        # between any two Python statements, most often right after a core
        # call returns. So the core keeps the counts of rows sent and received
        # and, per block, the object that owns the memory it writes (it keeps
        # it alive and returns it from the call that filled the block); what
        # Python keeps is only a hint that is safe when stale:
        # _handed_out[b] may be True for a block nobody holds (one more
        # held() check), never False for one the user may hold, since it is
        # set before the call that hands the block out.
        self._home = [self._new_buffer() for _ in range(num_blocks)]  # each block's own buffer
        for block, buffer in enumerate(self._home):
            self._core.set_block(block, buffer.data.data_ptr(), buffer)
        self._handed_out = [False] * num_blocks
        self._copied: list[torch.cuda.Event | None] = [None] * num_blocks  # NOTE [Pinned copies]
        self._lent_limit = max(1, min(_LENT_BUFFERS, _LENT_BYTES // max(self._core.block_bytes, 1)))
        self._all_ids = torch.arange(num_envs, dtype=torch.int64)

        discrete = isinstance(self.action_spec, DiscreteSpec)
        self._action_dtypes = ((_DISCRETE_ACTION_DTYPES if discrete else _CONTINUOUS_ACTION_DTYPES)
                               if envs.action_dtypes is None else envs.action_dtypes)
        self._action_shape = self.action_spec.shape
        # Expected action shapes by count: building a torch.Size per send() is
        # a visible share of an async recv()/send() round trip on a cheap env.
        self._action_shapes = {num_envs: torch.Size((num_envs, *self._action_shape))}
        self._full_shape = self._action_shapes[num_envs]
        _live_pools.add(self)

    # ---- public API ---------------------------------------------------------

    def reset(self, seed: int | Sequence[int] | None = None, env_ids: Any = None) -> TensorDict:
        """Resets ``env_ids`` (default: all), waits, and returns their first observations.

        ``seed``: ``None`` continues each env's random stream; an int reseeds
        env ``i`` with ``seed + i``; a sequence gives one seed per env in
        ``env_ids``. Returns a TensorDict of batch ``[len(env_ids)]`` in the
        order of ``env_ids``, with the same keys as a step (zero reward, no
        flags set).
        """
        core = self._live_core()
        ids = self._env_ids(env_ids)
        seeds = self._seeds(seed, ids)
        self._free_reset_buffer(core)
        tensordict = core.reset(ids.data_ptr(), len(ids), 0 if seeds is None else seeds.data_ptr()).tensordict
        if len(ids) == self.num_envs:
            return tensordict
        return tensordict[: len(ids)]

    def _free_reset_buffer(self, core: Any) -> None:
        """Points the core's reset buffer (reset() and partial sync steps land there) at memory nobody holds."""
        buffer = core.reset_owner()
        if buffer is None or not buffer.reusable():
            buffer = _Buffer(core.reset_bytes, core.reset_layout(), self.num_envs, self.pin_memory)
            core.set_reset_buffer(buffer.data.data_ptr(), buffer)

    def step(self, action: Any, env_id: Any = None) -> TensorDict:
        """Sync step: applies ``action`` (``[num_envs, *action_shape]``) to every env.

        Returns a TensorDict of batch ``[num_envs]`` ordered by env id. On a
        sync pool, ``step(action, env_id)`` steps only the envs in ``env_id``
        (``action``: ``[len(env_id), ...]``) and returns their rows in that
        order, as EnvPool's sync pools do. On an async pool it is
        ``send(action, env_id)`` followed by ``recv()``.
        """
        if env_id is not None or self.is_async:
            if env_id is None:
                raise ValueError(
                    f"this pool is async (batch_size={self.batch_size} < num_envs={self.num_envs}): "
                    "use send()/recv(), or step(action, env_id)")
            ids = self._env_ids(env_id)
            if not self.is_async and ids.shape[0] < self.num_envs:
                return self._step_some(action, ids)
            if self.in_flight + ids.shape[0] < self.batch_size:
                # Refused before anything is queued: sent, those envs could not be received, and the pool would
                # refuse every step after.
                raise ValueError(
                    f"step(action, env_id) with {ids.shape[0]} envs ({self.in_flight} in flight) cannot fill a "
                    f"batch of batch_size={self.batch_size}: step more envs, or make the pool async with a smaller "
                    "batch_size")
            self.send(action, ids)
            return self.recv()
        return self._step_block(action).tensordict

    def _step_some(self, action: Any, ids: torch.Tensor) -> TensorDict:
        """A sync step of the envs in ``ids`` alone: their rows land in the reset buffer, in ``ids`` order."""
        core = self._live_core()
        count = ids.shape[0]
        action = self._coerce_action(action, count)
        self._free_reset_buffer(core)
        return core.step_some(action.data_ptr(), _CODES[action.dtype], ids.data_ptr(), count).tensordict[:count]

    def step_arrays(self, action: Any) -> dict[str, Any]:
        """Sync pools: ``step(action)`` with the batch as NumPy arrays, not a TensorDict.

        Returns ``{key: ndarray [num_envs, *shape]}`` with the TensorDict's keys
        (named observation fields: a dict of arrays), views of the same memory
        under the same rule (NOTE [Output ring reuse]): arrays the caller still
        holds are never written again. For adapters that hand NumPy on (SB3):
        it skips building a dict from the TensorDict and one ``.numpy()`` per key.
        """
        if self.is_async:
            raise ValueError(f"step_arrays() steps every env at once: this pool is async "
                             f"(batch_size={self.batch_size} < num_envs={self.num_envs})")
        return self._step_block(action).arrays()

    def _step_block(self, action: Any) -> _Buffer:
        """The body of a sync step: the buffer the batch landed in."""
        core = self._core
        if core is None:
            raise RuntimeError("the pool is closed")
        # Inlined _full_action / _hand_out: between two steps this Python runs
        # on caches the envs have just evicted, where each call costs a few hundred ns.
        if not (action.__class__ is torch.Tensor and action.shape == self._full_shape
                and action.dtype in self._action_dtypes and action.is_cpu and action.is_contiguous()):
            action = self._coerce_action(action, self.num_envs)
        block = core.next_block
        if self._handed_out[block]:
            self._reclaim(core, block)
        self._handed_out[block] = True  # NOTE [Interrupt-safe bookkeeping]
        return core.step(action.data_ptr(), _CODES[action.dtype], 0)

    def send(self, action: Any, env_id: Any = None) -> None:
        """Queues one action per env in ``env_id`` (default: all) and returns at once."""
        core = self._live_core()
        ids = self._env_ids(env_id)
        count = ids.shape[0]  # not len(): Tensor.__len__ costs a microsecond
        action = self._full_action(action) if env_id is None else self._coerce_action(action, count)
        self._prepare_rows(core, count)
        core.send(action.data_ptr(), _CODES[action.dtype], ids.data_ptr(), count)

    def recv(self) -> TensorDict:
        """Waits for the next ``batch_size`` results and returns them (with ``env_id``)."""
        core = self._live_core()
        block = core.next_block
        # send_into() needs a sync pool, so only there can the next block be a caller's.
        if not self.is_async and core.owner(block).__class__ is not _Buffer and core.in_flight:
            raise RuntimeError("the step in flight was sent with send_into(): collect it with recv_into()")
        marked, self._handed_out[block] = self._handed_out[block], True  # NOTE [Interrupt-safe bookkeeping]
        try:
            return core.recv().tensordict
        except errors.EnvError:
            raise  # its batch was handed out with the error
        except RuntimeError:
            # Refused (too few envs in flight) before anything was handed out:
            # marked, the block rows are about to land in would be re-pointed.
            self._handed_out[block] = marked
            raise
        except KeyboardInterrupt:
            # Surfaced after the core handed the batch over, it would be lost
            # with its envs idle and unknown to the caller: give it back.
            core.undo_recv()
            raise

    def send_into(self, action: Any, out: torch.Tensor | OutputTargets) -> None:
        """Low-level, sync pools: ``send(action)`` to every env, with the results written into ``out``.

        ``out`` is either a contiguous CPU ``uint8`` tensor of ``output_nbytes``
        bytes (pinned if it will be copied to a GPU), laid out as
        ``output_layout()`` describes, or an ``output_targets(...)`` of one
        tensor per key. The workers write this step's outputs straight into it,
        so a rollout buffer receives them without a copy; ``recv_into()`` waits
        for them. ``out`` must stay untouched until then.
        """
        core, block, action = self._redirect(action, out, "send_into")
        core.send(action.data_ptr(), _CODES[action.dtype], 0, self.num_envs)

    def step_into(self, action: Any, out: torch.Tensor | OutputTargets) -> torch.Tensor | OutputTargets:
        """Low-level, sync pools: ``send_into(action, out)`` then ``recv_into()`` in one call; returns ``out``."""
        core, block, action = self._redirect(action, out, "step_into")
        return core.step(action.data_ptr(), _CODES[action.dtype], 0)

    def output_targets(self, tensors: Mapping[str, torch.Tensor]) -> OutputTargets:
        """Low-level: checks one tensor per output key as destinations of ``send_into``/``step_into``.

        Each is ``[num_envs, *shape]`` with the key's dtype and shape from
        ``output_layout()``, on the CPU, every env's row contiguous; the rows
        themselves may be strided (e.g. ``rollout[:, t]``). Checked once here,
        so a step into them costs no more than into one byte buffer.
        """
        return OutputTargets.for_step(weakref.ref(self), self.output_layout(), self.num_envs, tensors)

    def output_target_columns(self, columns: Mapping[str, torch.Tensor]) -> list[OutputTargets]:
        """Low-level: ``output_targets`` of column ``t`` of each ``[num_envs, T, *shape]`` tensor, for every ``t``.

        Checked once for all ``T`` steps: the targets of a whole rollout buffer.
        """
        return OutputTargets.for_columns(weakref.ref(self), self.output_layout(), self.num_envs, columns)

    def step_into_trusted(self, action: torch.Tensor, out: torch.Tensor | OutputTargets,
                          record: int = 0) -> torch.Tensor | OutputTargets:
        """Low-level: ``step_into`` for a caller that vouches for its arguments.

        The caller has checked, once, what ``step_into`` checks every call: a
        sync pool with every env idle, ``takes_as_is(action)``, and ``out`` a
        destination ``step_into`` accepted. ``torchpool.stream`` does, and saves
        a microsecond a step, a third of a cheap step. ``record``: an address
        the core copies the accepted actions to (their bytes as given), or 0.
        """
        core = self._live_core()
        self._point(core, core.next_block, out)
        return core.step(action.data_ptr(), _CODES[action.dtype], record)

    def _redirect(self, action: Any, out: Any, caller: str) -> tuple[Any, int, torch.Tensor]:
        """Checks a send_into()/step_into() and points the next block at ``out``: (core, block, action)."""
        core = self._live_core()
        if self.is_async:
            raise RuntimeError(f"{caller}() needs a sync pool (batch_size == num_envs)")
        if core.in_flight:
            raise RuntimeError(f"{caller}() needs every env idle, but some are in flight; recv() them first")
        if out.__class__ is OutputTargets:
            if out.pool() is not self:
                raise ValueError("these output targets were made by another pool's output_targets()")
            moved = out.moved()
            if moved is not None:  # NOTE [Moved storage]: the table holds the old, freed addresses
                raise ValueError(f"output target {moved!r} has moved to other memory since output_targets() "
                                 "checked it (share_memory_(), resize_() or set_() on its storage): make the "
                                 "targets again")
        elif (out.__class__ is not torch.Tensor or out.dtype != torch.uint8 or not out.is_cpu
                or not out.is_contiguous() or out.numel() != core.block_bytes):
            raise ValueError(f"out must be a contiguous CPU uint8 tensor of output_nbytes={core.block_bytes} "
                             f"bytes or this pool's output_targets(), got {_describe(out)}")
        action = self._full_action(action)
        block = core.next_block
        self._point(core, block, out)
        return core, block, action

    def _point(self, core, block: int, out: torch.Tensor | OutputTargets) -> None:
        # The pool's own buffer of this block is not written, so it needs no
        # reclaiming now; the next plain send through the block points it home
        # and reclaims it then (_reclaim). Marked first (NOTE [Interrupt-safe bookkeeping]).
        self._handed_out[block] = True
        if out.__class__ is OutputTargets:
            core.set_block_targets(block, out.address, out)
        else:
            core.set_block(block, out.data_ptr(), out)

    def recv_into(self) -> torch.Tensor | OutputTargets:
        """Low-level: waits for the results of the last ``send_into()`` and returns its ``out``."""
        core = self._live_core()
        if not core.in_flight or core.owner(core.next_block).__class__ is _Buffer:
            raise RuntimeError("recv_into() collects a send_into(), but none is in flight")
        try:
            return core.recv()
        except KeyboardInterrupt:
            core.undo_recv()  # as in recv()
            raise

    def async_reset(self) -> None:
        """Starts a reset of every env and returns at once; ``recv()`` collects the results."""
        core = self._live_core()
        self._prepare_rows(core, self.num_envs)
        core.async_reset(self._all_ids.data_ptr(), self.num_envs)

    def close(self) -> None:
        """Stops and joins the workers. Idempotent; work in flight is dropped."""
        core, self._core = self._core, None
        if core is not None:
            core.close()
            self._lent.clear()
        renderer = self.__dict__.pop("_renderer", None)
        if renderer is not None:
            renderer.close()

    def output_layout(self) -> list[tuple[str | tuple[str, str], torch.dtype, tuple[int, ...], int]]:
        """Low-level: ``(key, dtype, per-env shape, byte offset)`` of each column of a batch.

        A named observation field's key is a tuple, ``("observation", name)``
        (and ``("final_observation", name)``), as TensorDict nests it.

        Every TensorDict that ``step()``/``recv()`` returns views one byte buffer
        (``output_bytes(td)``, pinned with ``pin_memory=True``) in which key ``k``
        occupies ``batch_size * prod(shape) * dtype.itemsize`` bytes from its
        offset. ``torchpool.stream`` copies whole batches with one DMA this way.
        """
        return [(_key(name), _DTYPES[code], tuple(shape), offset) for name, code, shape, offset in self._block_layout]

    @property
    def output_nbytes(self) -> int:
        """Low-level: bytes of one batch's buffer (``output_bytes(td).numel()``; ``send_into``'s ``out``)."""
        return self._live_core().block_bytes

    @staticmethod
    def output_bytes(td: TensorDict) -> torch.Tensor:
        """Low-level: the uint8 buffer a TensorDict from ``step()``/``recv()`` views (no copy)."""
        return torch.empty(0, dtype=torch.uint8).set_(td["env_id"].untyped_storage())

    @property
    def output_spec(self) -> dict[str, tuple[torch.dtype, tuple[int, ...]]]:
        """``{key: (dtype, per-env shape)}`` of every output a step returns: ``FIXED_KEYS`` then the extras."""
        return {name: (dtype, shape) for name, dtype, shape, _ in self.output_layout()}

    @property
    def extra_keys(self) -> tuple[str, ...]:
        """The family's extra output keys (its info values: MuJoCo's, Atari's ``lives``…), in column order."""
        return tuple(key for key in self.output_spec if isinstance(key, str) and key not in FIXED_KEYS)

    def takes_as_is(self, action: Any) -> bool:
        """Whether ``step()``/``step_into()`` would send ``action`` to every env as it is (no conversion, no copy)."""
        return self._full_action(action) is action

    @property
    def schedule(self) -> dict[str, Any]:
        """How this pool's work is spread over threads: the plan of ``csrc/core/schedule.h``, read-only.

        ``mode`` is one of ``"caller_runs_items"`` (cheap envs: the calling thread
        runs chunks of them while it waits), ``"caller_only"`` (no worker thread),
        ``"caller_as_worker"`` (the caller takes one worker's place) or ``"workers"``
        (workers step, the caller sleeps); the other keys are the plan's settings
        (docs/design.md, "Scheduling").
        """
        return dict(self._live_core().schedule())

    def steps_in_background(self, num_envs: int | None = None) -> bool:
        """Whether a step of ``num_envs`` envs (default all) runs on the worker threads.

        Envs cheap enough are stepped on the calling thread instead, where
        waking a worker would cost more than the step (docs/design.md, scheduling).
        """
        count = self.num_envs if num_envs is None else positive_int("num_envs", num_envs)
        return bool(self._live_core().wakes_workers(count))

    @property
    def family(self) -> str:
        """The C++ family that steps these envs: ``"Atari"``, ``"CartPole"``, ``"DmcWalker"``, ``"Process"``
        (Python envs)... Adapters ask it, not the extras' names, what kind of env this is."""
        return self._family

    @property
    def renders(self) -> bool:
        """Whether ``render()`` shows this family's envs (Atari, classic control, MuJoCo; not Python envs)."""
        return bool(self._live_core().renders) or self._reference_renderer() is not None

    def render(self, env_id: int = 0) -> torch.Tensor:
        """Env ``env_id``'s current screen: ``uint8 [H, W, 3]`` RGB.

        Atari: the emulator's screen (210 x 160). Classic control and MuJoCo:
        what the Gymnasium reference env draws for the env's state
        (torchpool/_render.py; pygame or an OpenGL backend needed). The env
        must be idle (no step of it sent and not yet received); a family that
        does not render raises ``InputError`` (see ``renders``).
        """
        if not isinstance(env_id, (int, np.integer)) or isinstance(env_id, bool):
            raise InputError(f"env_id must be an int, got {env_id!r}")
        core = self._live_core()
        renderer = None if core.renders else self._reference_renderer()
        if renderer is not None:
            return torch.from_numpy(renderer(core.get_state(int(env_id))))
        pixels, shape = core.render(int(env_id))
        return torch.frombuffer(bytearray(pixels), dtype=torch.uint8).reshape(shape)

    def _reference_renderer(self):
        if not hasattr(self, "_renderer"):
            from ._render import reference_renderer

            self._renderer = reference_renderer(self.env_id, bool(self._live_core().has_state))
        return self._renderer

    @property
    def closed(self) -> bool:
        return self._core is None

    @property
    def in_flight(self) -> int:
        """Envs sent (or async-reset) whose results are not yet received."""
        return self._live_core().in_flight

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return (f"Pool({self.env_id!r}, num_envs={self.num_envs}, batch_size={self.batch_size}, "
                f"num_threads={self.num_threads}, autoreset={self.autoreset!r})")

    # ---- for subclasses -------------------------------------------------------
    # A pool of envs the registry does not name (ProcessPool, torchpool/_workers/) is made through
    # __init__ with a FamilyEnvs and builds on Pool's public API and _SUBCLASS_SEAM, nothing else of
    # what follows an underscore here (tests/test_process_pool.py checks).
    _SUBCLASS_SEAM = ("_undo_recv",)

    def _undo_recv(self) -> bool:
        """Gives back the batch the last ``recv()``/``recv_into()`` returned: the next one returns it again (and
        raises its ``EnvError`` again). For an exception raised after that call returned, which would lose the
        batch with its envs idle and unknown to the caller (NOTE [Interrupt-safe bookkeeping]); False where
        another call came between and there is nothing to give back."""
        return bool(self._live_core().undo_recv())

    # ---- internals ----------------------------------------------------------

    def _live_core(self):
        core = self._core
        if core is None:
            raise RuntimeError("the pool is closed")
        return core

    def _new_buffer(self) -> _Buffer:
        return _Buffer(self._core.block_bytes, self._block_layout, self.batch_size, self.pin_memory)

    # NOTE [Lent buffers]. A loop that keeps each step's outputs (a rollout
    # list, CleanRL-style code holding last step's arrays) holds the block's
    # buffer, so the block needs another (NOTE [Output ring reuse]). Building
    # one (an allocation, a view per key, a TensorDict, the watch's baselines)
    # costs tens of times a cheap env's step. So the held buffer is lent, not
    # forgotten: it joins a FIFO, and the next block that needs a buffer takes
    # the oldest lent one if the user has let go of it by then (a rollout list
    # dropped, an array overwritten), which is the usual case. Only the oldest
    # is checked, so a user who keeps everything pays one held() a step; the
    # FIFO is capped (_LENT_BUFFERS, _LENT_BYTES): past the cap the oldest is
    # forgotten and stays the user's. Reuse hands out the same TensorDict
    # object again, as the ring does.
    def _replacement(self, held: _Buffer) -> _Buffer:
        """A buffer for a block whose own one the user holds, or whose memory moved."""
        lent = self._lent
        if lent and lent[0].moved():  # NOTE [Moved storage]: never written again, so never lent back
            lent.popleft()
        buffer = lent.popleft() if lent and lent[0].reusable() else self._new_buffer()
        if not held.moved():
            lent.append(held)
        if len(lent) > self._lent_limit:
            lent.popleft()
        return buffer

    def _reclaim(self, core, block: int) -> None:
        """Points ``block`` at a buffer nobody else holds, at the address it was made with, before rows land in it."""
        if self.pin_memory:
            self._wait_for_copies(block)
        home = self._home[block]
        # home.reusable(), inlined: this runs before every step of a cheap env.
        if home.data.data_ptr() != home._address or home._held():  # NOTE [Output ring reuse], [Moved storage]
            home = self._home[block] = self._replacement(home)
        if core.owner(block) is not home:  # a fresh buffer, or back home from a send_into()
            core.set_block(block, home.data.data_ptr(), home)
        self._handed_out[block] = False

    # NOTE [Pinned copies]. A pinned output is made to be copied to the GPU
    # with non_blocking=True, and the user may drop it right after queueing the
    # copy, which then runs later; were the block rewritten before, the GPU
    # would receive the next batch. So each call of a pinned pool that
    # prepares a block records a CUDA event on the current stream, after any
    # copy the user queued from the blocks handed out before it, and a block
    # is not rewritten before its event completes (it has, in practice: a
    # sync block comes round K - 1 calls later). Copies queued on the current
    # stream before the pool's next call are covered; a later one needs the
    # output kept. The caller-side check costs unpinned pools nothing.
    def _wait_for_copies(self, block: int) -> None:
        event = torch.cuda.Event()
        event.record()
        copied = self._copied
        for handed_out, index in zip(self._handed_out, range(len(copied))):
            if handed_out and copied[index] is None:
                copied[index] = event
        copied[block].synchronize()  # block is handed out: it has an event now
        copied[block] = None

    def _prepare_rows(self, core, count: int) -> None:
        """Makes every block that rows [sent, sent + count) are the first to land in safe to write.

        A block that rows already in flight land in was prepared with its first
        row and is left alone: pointing it elsewhere now would split its rows
        between two buffers (the core refuses that too).
        """
        sent = core.rows_sent
        first = -(-sent // self.batch_size)
        last = (sent + count - 1) // self.batch_size
        for index in range(first, last + 1):
            block = index % len(self._home)
            if self._handed_out[block]:
                self._reclaim(core, block)

    def _env_ids(self, env_ids: Any) -> torch.Tensor:
        if env_ids is None:
            return self._all_ids
        # The async hot path: the env_id column of the last recv() passes
        # with attribute checks only (as_tensor + to + contiguous would cost
        # more than a cheap env's step).
        if (env_ids.__class__ is torch.Tensor and env_ids.dtype is torch.int64 and env_ids.dim() == 1
                and env_ids.is_cpu and env_ids.is_contiguous()):
            return env_ids
        if isinstance(env_ids, (int, np.integer)) and not isinstance(env_ids, bool):
            env_ids = [int(env_ids)]
        try:
            ids = torch.as_tensor(env_ids)
        except (TypeError, ValueError, RuntimeError, OverflowError) as error:
            raise TypeError(f"env_id must be an int or a 1-D sequence of ints, got {env_ids!r}") from error
        if ids.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8, torch.int8):
            raise TypeError(f"env_id must hold integers, got dtype {ids.dtype}")
        if ids.dim() != 1:
            ids = ids.reshape(-1) if ids.dim() == 0 else ids
            if ids.dim() != 1:
                raise ValueError(f"env_id must be 1-D, got shape {tuple(ids.shape)}")
        return ids.to(device="cpu", dtype=torch.int64).contiguous()

    def _seeds(self, seed: Any, ids: torch.Tensor) -> torch.Tensor | None:
        if seed is None:
            return None
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            return (ids + checked_seed(seed, self.num_envs)).to(torch.int64).contiguous()
        try:
            seeds = torch.as_tensor(seed)
        except (TypeError, ValueError, RuntimeError, OverflowError) as error:
            raise TypeError(f"seed must be an int or a 1-D sequence of ints in [0, 2**63), got {seed!r}") from error
        if seeds.dtype.is_floating_point or seeds.dtype == torch.bool or seeds.dim() != 1:
            raise TypeError(f"seed must be an int or a 1-D sequence of ints, got {seed!r}")
        if len(seeds) != len(ids):
            raise ValueError(f"got {len(seeds)} seeds for {len(ids)} envs")
        if bool((seeds < 0).any()):
            raise ValueError("seeds must be non-negative")
        return seeds.to(torch.int64).contiguous()

    def _full_action(self, action: Any) -> torch.Tensor:
        return self._coerce_action(action, self.num_envs)

    def _coerce_action(self, action: Any, count: int) -> torch.Tensor:
        expected = self._action_shapes.get(count)
        if expected is None:
            expected = self._action_shapes[count] = torch.Size((count, *self._action_shape))
        # The hot path: a CPU tensor of the right shape and dtype passes with
        # attribute checks only.
        if (action.__class__ is torch.Tensor and action.shape == expected and action.dtype in self._action_dtypes
                and action.is_cpu and action.is_contiguous()):
            return action
        # The NumPy adapters' hot path (SB3, Gymnasium's vector env): a contiguous array of the right shape
        # and dtype is used in place. (A read-only one goes the long way: from_numpy would warn of it.)
        if action.__class__ is np.ndarray and action.flags.c_contiguous and action.flags.writeable:
            tensor = torch.from_numpy(action)
            if tensor.shape == expected and tensor.dtype in self._action_dtypes:
                return tensor
        if not isinstance(action, torch.Tensor):
            if isinstance(action, np.ndarray):
                # A read-only array (np.broadcast_to's, a buffer of another library) is copied: a tensor
                # viewing it would be writable in torch's eyes, and from_numpy warns of that.
                action = torch.from_numpy(action if action.flags.writeable else action.copy())
            else:
                action = torch.as_tensor(action)
        if action.shape != expected:
            raise ValueError(
                f"{self.env_id}: action must have shape {tuple(expected)} "
                f"(one action per env), got {tuple(action.shape)}")
        if action.dtype not in self._action_dtypes:
            allowed = ", ".join(sorted(str(d) for d in self._action_dtypes))
            raise TypeError(f"{self.env_id}: action dtype must be one of {allowed}, got {action.dtype}")
        return action.detach().to("cpu").contiguous()


def _inject_interrupts(every: int) -> None:
    """Test hook: every ``every``-th Ctrl-C poll of a waiting call raises KeyboardInterrupt (0: off)."""
    _core._inject_interrupts(every)


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return (f"{value.dtype} tensor of {value.numel()} elements on {value.device}"
                f"{'' if value.is_contiguous() else ', not contiguous'}")
    return type(value).__name__


def _resolve_obs_dtype(entry: registry.EnvEntry | None, obs_dtype: torch.dtype | None) -> torch.dtype:
    if entry is not None and entry.observation == "image":
        if obs_dtype not in (None, torch.uint8):
            raise ValueError(f"{entry.env_id} observations are uint8 frames; obs_dtype cannot be {obs_dtype}")
        return torch.uint8
    if obs_dtype is None:
        return torch.float32
    if obs_dtype not in (torch.float32, torch.float64):
        raise ValueError(f"obs_dtype must be torch.float32 or torch.float64, got {obs_dtype!r}")
    return obs_dtype


def make(env_id: Any, num_envs: int = 8, batch_size: int | None = None, num_threads: int | None = None,
         seed: int | None = 0, autoreset: str = "same_step", obs_dtype: torch.dtype | None = None,
         pin_memory: bool | None = None, num_workers: int | None = None, env_kwargs: Sequence[dict] | None = None,
         **task_kwargs: Any) -> Pool:
    """Makes a :class:`Pool`; see its docstring for every argument.

    ``env_id`` may also be a Python env: a callable returning a ``gymnasium.Env``,
    a list of ``num_envs`` of them, or ``"gymnasium:<EnvId>"``. That makes a
    ``ProcessPool`` (the same API) whose envs step in ``num_workers`` worker
    processes; ``env_kwargs`` gives env ``i`` its own constructor kwargs.
    """
    refuse_env_instances(env_id)
    if is_process_env(env_id):
        # ProcessPool builds on Pool (torchpool/_workers/ imports this module), so it is imported here, when a
        # pool of Python envs is asked for: never while this module loads (tests/test_process_pool.py checks).
        from ._workers.process_pool import ProcessPool

        if num_threads is not None or obs_dtype is not None:
            raise ValueError("num_threads and obs_dtype apply to torchpool's C++ envs; a pool of Python envs "
                             "takes num_workers (its processes) and keeps each observation's own dtype")
        return ProcessPool(env_id, num_envs=num_envs, batch_size=batch_size, num_workers=num_workers, seed=seed,
                           autoreset=autoreset, env_kwargs=env_kwargs, pin_memory=pin_memory, **task_kwargs)
    if num_workers is not None or env_kwargs is not None:
        raise ValueError(f"num_workers and env_kwargs apply to pools of Python envs (a callable or "
                         f"'gymnasium:<EnvId>'); {env_id!r} is one of torchpool's C++ envs, stepped by threads")
    return Pool(env_id, num_envs=num_envs, batch_size=batch_size, num_threads=num_threads, seed=seed,
                autoreset=autoreset, obs_dtype=obs_dtype, pin_memory=pin_memory, **task_kwargs)
