"""ProcessPool: Python envs (any ``gymnasium.Env``) stepped in worker processes, behind ``Pool``'s API.

A process pool is a ``Pool`` of the C++ family ``Process`` (csrc/envs/process/):
each of its envs is a proxy whose step hands the action to the worker
process that owns the env, through a shared memory region, and collects the
answer. So the queue, the ring, the episode rules, autoreset, EnvError and
Ctrl-C work exactly as for the C++ families; only what a step does differs.
See docs/design.md, "Python envs in worker processes".

``ProcessPool`` checks its arguments (torchpool/_arguments.py, as ``Pool``
does), starts its workers, then makes its ``Pool`` through ``Pool.__init__``
with a ``FamilyEnvs``; beyond that it uses ``Pool``'s public API and the
seam ``Pool._SUBCLASS_SEAM`` names, nothing else of ``Pool``'s internals.
"""

from __future__ import annotations

import functools
import os
import statistics
import sys
import threading
import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._arguments import (
    GYMNASIUM_PREFIX,
    checked_choice,
    checked_pin_memory,
    checked_sizes,
    checked_time_limit,
    positive_int,
    refuse_env_instances,
    seed_or_drawn,
)
from .._cpus import available_cpus
from ..errors import EnvError
from ..pool import AUTORESET_MODES, DEFAULT_SPIN_POLLS, FIXED_KEYS, FamilyEnvs, Pool
from . import argument_checks, in_caller, interrupts, launch, spaces
from . import worker as worker_script
from .supervisor import Supervisor

# Bytes of traceback text an env's error keeps.
_ERROR_BYTES = 16384
# The step cost the family declares to the core's schedule: a cheap one, so
# the calling thread collects the answers itself while it waits (mode
# "caller_runs_items", one core thread): no thread hand-off per call. The
# workers' steps run in parallel whoever collects; measured against the
# "workers" and "caller_as_worker" modes in benchmarks/python_envs.py
# (--modes). Ctrl-C is then raised once the steps under way have answered.
_STEP_COST_NS = 1000.0
_THREADS = 1
# Yields before a waiting side sleeps: the parent for an answer, a worker for
# a request (NOTE [Yielding spins] in csrc/envs/process/shared_region.h).
# benchmarks/python_envs.py --spins compares settings.
_PARENT_SPIN_POLLS = 1000
_WORKER_SPIN_POLLS = 1000
# Workers pay when a call's env work (num_envs x the median step) is at least
# this, and this many cores are idle (NOTE [Where envs step], ProcessPool).
_WORKERS_PAY_ABOVE_NS = 30e3
# With fewer idle cores (threads runnable elsewhere, _runnable_elsewhere), each
# hand-off waits for a turn of the scheduler, milliseconds on a busy VM: on
# the 2-core test host at load 6-8, workers lost to the caller even for
# MuJoCo's Ant and 0.1-2 ms steps (benchmarks/python_envs.py --versus-sync).
_WORKERS_NEED_IDLE_CORES = 1.5


def _checked_step_timeout(step_timeout: float | None) -> float | None:
    if step_timeout is None:
        return None
    if isinstance(step_timeout, bool) or not isinstance(step_timeout, (int, float)) or not step_timeout > 0:
        raise ValueError(f"step_timeout must be a positive number of seconds or None, got {step_timeout!r}")
    return float(step_timeout)


def _runnable_elsewhere(samples: int = 5) -> float:
    """Threads runnable on the machine besides the calling one: the median of a few looks at
    /proc/loadavg's fourth field (runnable/total), 1 ms apart; the 1-minute load average if unreadable."""
    try:
        counts = []
        for sample in range(samples):
            if sample:
                time.sleep(0.001)
            with open("/proc/loadavg") as loadavg:
                counts.append(int(loadavg.read().split()[3].split("/")[0]))
        return max(statistics.median(counts) - 1.0, 0.0)
    except (OSError, ValueError, IndexError):
        return max(os.getloadavg()[0] - 1.0, 0.0)


def _process_module():
    from .. import _process

    return _process


# Bytes of each env's three object slots (NOTE [Python objects] in spaces.py): a pickle of an observation's
# Text, Graph or Sequence parts, or of an info, must fit. Pages never written take no memory.
_OBJECT_SLOT_BYTES = 1 << 20

# How long close() waits for the workers to exit before it kills those still running (stuck in a step).
_EXIT_GRACE_S = 2.0

# How long a request may run in a worker before the pool kills that worker (NOTE [Step timeout]).
DEFAULT_STEP_TIMEOUT_S = 60.0


class ProcessPool(Pool):
    """``num_envs`` Python envs, stepped in ``num_workers`` worker processes or in the calling process,
    with ``Pool``'s API.

    Args:
        env_fn: a callable returning a ``gymnasium.Env`` (a function, class,
            ``functools.partial``, lambda or closure: pickled with cloudpickle),
            a list of ``num_envs`` of them, or ``"gymnasium:<id>"``
            (``gymnasium.make(<id>, **kwargs)`` in the workers; Gymnasium's
            ``"module:EnvId"`` form imports the module first).
        num_envs, batch_size, seed, autoreset, pin_memory: as for ``Pool``.
        num_workers: worker processes, default ``available_cpus()`` (at most
            ``num_envs``); envs are split between them in contiguous runs.
        env_kwargs: keyword arguments of the env constructor: a dict for
            every env, or a list of ``num_envs`` dicts (env ``i`` is built with
            ``env_fn(**kwargs, **env_kwargs[i])``).
        max_episode_steps: a time limit the core applies on top of the env's
            own (for ``"gymnasium:"`` ids it also replaces Gymnasium's).
        step_timeout: seconds a reset or step may run in its worker (default
            60; ``None``: no limit). A request that runs longer makes its step
            raise ``EnvError``; its worker is killed and restarted, and its
            envs start new episodes.
        **kwargs: passed to every ``env_fn`` call (to ``gymnasium.make`` for
            ids), checked against the constructor's signature first: an
            unknown keyword raises ``TypeError`` before any process starts
            (with "did you mean" for a near-miss of torchpool's own arguments).

        observation_mode: ``"same"`` (default): every env has env 0's observation space;
            ``"different"``: their bounds may differ, not their leaves, shapes or dtypes (as
            Gymnasium's vector envs take it; ``observation_spaces`` holds each env's).
        steps_in: ``"auto"`` (default), ``"caller"`` or ``"workers"``: where the
            envs step (NOTE [Where envs step]; ``schedule["steps_in"]`` says
            what "auto" chose). ``num_workers`` given means ``"workers"``.

    ``info``: the numeric entries (numbers and numeric arrays) of the
    ``info`` of an extra env built like env 0, reset with ``seed`` by ``make()``
    and closed (no env of the pool is reset), become extras of every step
    (``info_keys``; an entry missing at a later step reads 0); the others are
    dropped, named once in a warning. Every env must have env 0's spaces.
    A worker process that dies is restarted; its envs raise ``EnvError`` and
    reset. ``close()`` ends every worker and frees the shared memory.
    """

    def __init__(self, env_fn: Any, num_envs: int = 8, batch_size: int | None = None,
                 num_workers: int | None = None, seed: int | None = 0, autoreset: str = "same_step",
                 env_kwargs: Sequence[dict] | None = None, max_episode_steps: int | None = None,
                 pin_memory: bool | None = None, spin_polls: int = DEFAULT_SPIN_POLLS,
                 step_timeout: float | None = DEFAULT_STEP_TIMEOUT_S, steps_in: str = "auto",
                 observation_mode: str = "same", **kwargs: Any):
        if not sys.platform.startswith("linux"):
            raise NotImplementedError("pools of Python envs need Linux (memfd, pidfd and shared futexes); "
                                      f"this is {sys.platform}")
        self._workers: list[launch.Worker] = []
        self._supervisor: Supervisor | None = None
        self._in_caller: in_caller.AnswersInCaller | None = None
        self._region_fd = -1
        self._owner = os.getpid()
        self._env_requests = threading.Lock()  # one request about env objects at a time (NOTE [Env requests])
        # Everything the core would refuse is refused here, before a process starts or a region is
        # registered with the core (a pool whose Pool.__init__ fails leaves nothing behind).
        num_envs, batch_size = checked_sizes(num_envs, batch_size)
        checked_choice("autoreset", autoreset, AUTORESET_MODES)
        checked_pin_memory(pin_memory)
        if observation_mode not in ("same", "different"):
            raise ValueError(f"observation_mode must be 'same' or 'different', got {observation_mode!r}")
        self._observation_mode = observation_mode
        if steps_in not in ("auto", "caller", "workers"):
            raise ValueError(f"steps_in must be 'auto', 'caller' or 'workers', got {steps_in!r}")
        if num_workers is not None:
            if steps_in == "caller":
                raise ValueError("num_workers applies to steps_in='workers' (or 'auto'); steps_in='caller' "
                                 "steps every env in this process")
            steps_in = "workers"  # asked for: NOTE [Where envs step]
        num_workers = min(available_cpus(), num_envs) if num_workers is None else positive_int("num_workers",
                                                                                                num_workers)
        num_workers = min(num_workers, num_envs)
        seed = seed_or_drawn(seed, num_envs)
        checked_time_limit(max_episode_steps)
        self.step_timeout = _checked_step_timeout(step_timeout)
        per_env_kwargs = self._env_kwargs(env_kwargs, num_envs)
        env_fns, name = self._constructors(env_fn, num_envs, kwargs, max_episode_steps)
        argument_checks.check_env_kwargs(env_fn, env_fns, kwargs, per_env_kwargs)
        self._registrations = argument_checks.parent_registrations()
        self.env_id = name
        self.task_kwargs = dict(kwargs)
        self.num_workers = num_workers

        # Everything is pickled before the first process starts: a constructor
        # that does not pickle fails here, with nothing to clean up.
        ranges = [(w * num_envs // num_workers, (w + 1) * num_envs // num_workers - w * num_envs // num_workers)
                  for w in range(num_workers)]
        self._payloads = [self._payload(env_fns, per_env_kwargs, first, count, self._registrations)
                          for first, count in ranges]
        self._module_path = _process_module().__file__
        try:
            self._steps_in, self._measured_step_ns, probed_info = self._where_envs_step(
                steps_in, env_fns[0], per_env_kwargs[0], num_envs, num_workers, seed)
            if self._steps_in == "caller":
                self.num_workers = 0
                ranges = [(0, num_envs)]
            self._start(ranges, batch_size, seed, autoreset, max_episode_steps, pin_memory, spin_polls,
                        env_fns, per_env_kwargs, probed_info)
        except BaseException:
            self._shut_down_workers()
            raise

    # ---- making -----------------------------------------------------------

    @staticmethod
    def _constructors(env_fn: Any, num_envs: int, kwargs: dict, max_episode_steps: int | None):
        """Per env, what the worker calls: a callable, or ``("gymnasium", <id>, kwargs)`` for an id
        (data, so that the worker imports no torchpool module, worker.make_env)."""
        refuse_env_instances(env_fn)
        if isinstance(env_fn, str):
            if not env_fn.startswith(GYMNASIUM_PREFIX) or len(env_fn) == len(GYMNASIUM_PREFIX):
                raise ValueError(f"a Python env id is written 'gymnasium:<EnvId>', got {env_fn!r}")
            gym_id = env_fn[len(GYMNASIUM_PREFIX):]
            argument_checks.find_gymnasium_spec(gym_id)  # an unknown id fails here, with what to import
            if max_episode_steps is not None:
                kwargs = dict(kwargs, max_episode_steps=max_episode_steps)
            return [("gymnasium", gym_id, dict(kwargs))] * num_envs, env_fn
        if isinstance(env_fn, (list, tuple)):
            if len(env_fn) != num_envs:
                raise ValueError(f"env_fn is a list of {len(env_fn)} constructors, but num_envs={num_envs}")
            if not all(callable(fn) for fn in env_fn):
                raise TypeError("env_fn must be a callable, a list of callables or 'gymnasium:<EnvId>'")
            fns = list(env_fn)
        elif callable(env_fn):
            fns = [env_fn] * num_envs
        else:
            raise TypeError(f"env_fn must be a callable returning a gymnasium.Env, a list of them or "
                            f"'gymnasium:<EnvId>', got {type(env_fn).__name__}")
        if kwargs:
            fns = [functools.partial(fn, **kwargs) for fn in fns]
        named = fns[0].func if isinstance(fns[0], functools.partial) else fns[0]
        return fns, getattr(named, "__name__", None) or type(named).__name__

    @staticmethod
    def _env_kwargs(env_kwargs: Sequence[dict] | None, num_envs: int) -> list[dict]:
        if env_kwargs is None:
            return [{} for _ in range(num_envs)]
        if isinstance(env_kwargs, dict):
            return [dict(env_kwargs) for _ in range(num_envs)]
        if isinstance(env_kwargs, dict) or len(env_kwargs) != num_envs or not all(
                isinstance(k, dict) for k in env_kwargs):
            raise ValueError(f"env_kwargs must be a dict (for every env) or a list of num_envs={num_envs} dicts, "
                             "one per env")
        return [dict(k) for k in env_kwargs]

    @staticmethod
    def _payload(env_fns: list, env_kwargs: list, first: int, count: int, registrations: dict) -> bytes:
        import cloudpickle

        payload = {"env_fns": env_fns[first:first + count], "env_kwargs": env_kwargs[first:first + count],
                   "first_env": first, "registrations": registrations}
        try:
            return cloudpickle.dumps(payload)
        except Exception as error:
            raise TypeError(f"env_fn cannot be pickled for the worker processes ({type(error).__name__}: "
                            f"{error}); define it at module level or close over picklable values only") from None

    # NOTE [Where envs step]. Shipping a step to a worker process and its
    # answer back costs tens of microseconds of wake-ups and copies per call
    # and worker, more on a VM and far more when other processes hold the
    # cores (each wait for a turn of the scheduler). Workers pay when a call's
    # env work is large against that and there are cores to run them on; else
    # the envs step in the calling process, as in Gymnasium's SyncVectorEnv,
    # with no hand-off at all (in_caller.py). "auto" decides from the median
    # step time of a throwaway env (also the one whose seeded reset gives the
    # info keys: no env of the pool is reset), the cores available and the
    # threads runnable elsewhere now: workers when a call's env work is at
    # least _WORKERS_PAY_ABOVE_NS and 1.5 cores are idle, else the caller. On
    # an oversubscribed machine the workers would not get the cores anyway.
    # Not the load average: it lags by a minute and counts the workers of
    # pools closed since (on the 2-core host, CartPole x16 in workers went
    # from 1.6x the caller to 0.5x within a minute as other work started).
    # benchmarks/python_envs.py --where measures the two against each other.
    # An explicit num_workers means workers.

    @staticmethod
    def _where_envs_step(steps_in: str, env_fn, kwargs: dict, num_envs: int, num_workers: int, seed: int):
        """(``"caller"`` or ``"workers"``, the measured step time in ns or None, the probe's info or None)."""
        if steps_in == "workers":
            return "workers", None, None
        probe = worker_script.make_env(env_fn, kwargs, {})
        if not isinstance(probe, worker_script.gymnasium_env_class()):
            raise TypeError(f"env_fn returned a {type(probe).__module__}.{type(probe).__qualname__}, "
                            "not a gymnasium.Env")
        try:
            _, info = probe.reset(seed=seed)
            cost = in_caller.step_cost_ns(probe) if steps_in == "auto" else None
        finally:
            probe.close()
        if steps_in == "caller":
            return "caller", None, info
        cores = available_cpus()
        idle_cores = cores - _runnable_elsewhere()
        workers_pay = (cores >= 2 and num_workers >= 2 and idle_cores >= _WORKERS_NEED_IDLE_CORES
                       and cost * num_envs >= _WORKERS_PAY_ABOVE_NS)
        return ("workers" if workers_pay else "caller"), cost, (None if workers_pay else info)

    def _build_in_caller(self, env_fns: list, env_kwargs: list, info: dict) -> tuple[list, dict]:
        envs = worker_script.build_envs({"env_fns": env_fns, "env_kwargs": env_kwargs, "first_env": 0,
                                         "registrations": {}})
        try:
            report = worker_script.describe(envs, None, None)
        except BaseException:
            for env in envs:
                env.close()
            raise
        report["info"] = info
        return envs, report

    def _start(self, ranges, batch_size, seed, autoreset, max_episode_steps, pin_memory, spin_polls,
               env_fns, env_kwargs, probed_info) -> None:
        process = _process_module()
        envs_here: list = []
        if self._steps_in == "caller":
            envs_here, first = self._build_in_caller(env_fns, env_kwargs, probed_info)
            reports = [("built", first)]
        else:
            for w, (first, count) in enumerate(ranges):  # one at a time: a failed start leaves the others to close
                # Worker 0 also resets an extra env once, for its info keys; a replacement of it does not.
                worker = launch.start(w, first, self._payloads[w], self._module_path,
                                      probe_seed=seed if w == 0 else None)
                worker.env_count = count
                self._workers.append(worker)
            reports = [launch.built(worker) for worker in self._workers]
        for worker, (kind, report) in zip(self._workers, reports):
            if kind != "built":
                first, last = worker.first_env, worker.first_env + worker.env_count - 1
                raise RuntimeError(f"worker process {worker.index} could not build envs {first}-{last} "
                                   f"({self.env_id}):\n{report}")
        first = reports[0][1]
        for worker, (_, report) in zip(self._workers[1:], reports[1:]):
            if report["action_space"] != first["action_space"]:
                raise ValueError(f"env {worker.first_env} has another action space than env 0 "
                                 f"({report['action_space']} vs {first['action_space']}): every env of a pool "
                                 "must have the same spaces")
        self.observation_spaces = tuple(space for _, report in reports for space in report["observation_spaces"])
        spaces.check_observation_spaces(self.observation_spaces, self._observation_mode)
        columns = spaces.observation_columns(first["observation_space"])
        action = spaces.action_plan(first["action_space"])
        reserved = set(FIXED_KEYS) | {"observation", "final_observation"}
        extras, dropped = spaces.info_extras(first["info"], reserved)
        if dropped:
            warnings.warn(f"{self.env_id}: info keys {dropped} are not numbers of a fixed shape and are dropped; "
                          "the numeric ones present at the first reset become extras of every step "
                          f"({[key for key, _, _ in extras]})", stacklevel=4)
        self.info_keys = tuple(key for key, _, _ in extras)

        layout_args = (sum(count for _, count in ranges), len(ranges), action.size,
                       [c.row_bytes for c in columns]
                       + [int(np.prod(shape, dtype=np.int64)) * dtype.itemsize for _, dtype, shape in extras],
                       _ERROR_BYTES)
        offsets = process.layout(layout_args)
        # NOTE [Python objects] (spaces.py): the object slots follow the core's region, untouched pages cost nothing
        offsets["objects"] = -(-offsets["total"] // 4096) * 4096
        offsets["total"] = offsets["objects"] + worker_script.ObjectSlots.area_bytes(layout_args[0],
                                                                                   _OBJECT_SLOT_BYTES)
        self._region_fd = os.memfd_create("torchpool-process-pool", os.MFD_CLOEXEC)
        os.ftruncate(self._region_fd, offsets["total"])
        import mmap

        self._region = mmap.mmap(self._region_fd, offsets["total"])
        self._region_address = np.frombuffer(self._region, dtype=np.uint8).ctypes.data
        self._layout_args = layout_args
        process.init_region(self._region_address, layout_args, ranges)
        # RegionHeader.step_timeout_ms (shared_region.h), for the message of an env past it
        self._header_words = np.ndarray((4,), dtype=np.uint32, buffer=self._region)
        self._header_words[2] = 0 if self.step_timeout is None else min(round(self.step_timeout * 1000), 2**32 - 1)
        # (request, done) of every env: EnvControl's first two words, 64 bytes apart (NOTE [Step timeout])
        self._control_words = np.ndarray((layout_args[0], 2), dtype=np.uint32, buffer=self._region,
                                         offset=offsets["envs"], strides=(64, 4))
        for worker in self._workers:
            process.set_worker_pid(self._region_address, layout_args, worker.index, worker.pid)
        self._plan = {"layout": layout_args, "offsets": offsets, "num_envs": layout_args[0],
                      "action_size": action.size, "action": action.worker,
                      "fields": [(c.path, c.dtype.name, c.shape) for c in columns],
                      "extras": [(key, dtype.name, shape) for key, dtype, shape in extras],
                      "spin_polls": _WORKER_SPIN_POLLS,
                      "objects": {"slot_bytes": _OBJECT_SLOT_BYTES, "same_step": autoreset == "same_step",
                                  "paths": spaces.object_paths(first["observation_space"])}}
        self._objects = worker_script.ObjectSlots(self._region, offsets["objects"], layout_args[0],
                                                  _OBJECT_SLOT_BYTES)
        self._answer_lengths = self._objects.lengths[:, 1:]
        self._no_answers = bytes(self._answer_lengths.nbytes)
        self.observation_columns = columns
        self.action_plan = action
        if self._steps_in == "caller":  # NOTE [Answers in the caller]
            self._in_caller = in_caller.AnswersInCaller(process, self._region, self._region_address, self._plan,
                                                        envs_here)
            self._in_caller.install()
        for worker in self._workers:
            launch.send_region(worker, self._region_fd, self._plan)
        for worker in self._workers:
            if not launch.ready(worker):
                raise RuntimeError(f"worker process {worker.index} exited while starting")

        key = process.register_region(
            self._region_address, layout_args, [c.core_field() for c in columns], action.core,
            [(key, spaces._CODES[dtype.name], list(shape)) for key, dtype, shape in extras],
            0 if max_episode_steps is None else max_episode_steps, _STEP_COST_NS, _PARENT_SPIN_POLLS)
        envs = FamilyEnvs(process.family_plugin, "Process", {"region": int(key)}, self.env_id, self.task_kwargs,
                          observation_spec=spaces.observation_spec(first["observation_space"], columns),
                          action_spec=action.spec, action_dtypes=action.dtypes)
        try:
            # The time limit is the region's (register_region above), not the core's.
            super().__init__(envs, num_envs=layout_args[0], batch_size=batch_size, num_threads=_THREADS, seed=seed,
                             autoreset=autoreset, spin_polls=spin_polls, pin_memory=pin_memory)
        except BaseException:
            process.forget_region(int(key))  # a pool that was not made leaves no registry entry behind
            raise
        self.observation_space = first["observation_space"]
        self.action_space = first["action_space"]
        if self._workers:
            self._supervisor = Supervisor(self._workers, self, self.step_timeout)
            interrupts.listen(self)  # NOTE [Ctrl-C while workers step]

    # ---- workers ------------------------------------------------------------

    # The supervisor's calls (supervisor.Restarts).

    def _start_worker(self, index: int) -> launch.Worker:
        dead = self._workers[index]
        worker = launch.start(index, dead.first_env, self._payloads[index], self._module_path)
        worker.env_count = dead.env_count
        _process_module().set_worker_pid(self._region_address, self._layout_args, index, worker.pid)
        return worker

    def _connect_worker(self, worker: launch.Worker) -> bool:
        """The restart's handshake; False when the new process died meanwhile (or could not be spoken to,
        and was killed: its pidfd reports it to the supervisor either way)."""
        try:
            launch.built(worker)  # a worker that cannot rebuild its envs answers every request with why
            launch.send_region(worker, self._region_fd, self._plan)
            if launch.ready(worker):
                return True
        except Exception:
            pass
        worker.process.kill()
        return False

    def _interrupt_waits(self) -> None:
        """A Ctrl-C (interrupts.py): RegionHeader.interrupts += 1, NOTE [Ctrl-C while workers step]."""
        if self._region_fd >= 0:
            self._header_words[3] += 1

    def _unanswered(self) -> list[tuple[int, int]]:
        """(env, request) of each env whose worker has not answered its last request yet."""
        words = self._control_words.copy()
        return [(int(env), int(words[env, 0])) for env in np.flatnonzero(words[:, 0] != words[:, 1])]

    def _mark_dead(self, index: int, status: int) -> None:
        _process_module().mark_worker_dead(self._region_address, self._layout_args, index, status)

    @property
    def schedule(self) -> dict[str, Any]:
        """The core's plan (``Pool.schedule``) and the worker processes: their pids and envs."""
        plan = super().schedule
        plan["processes"] = [{"worker": w.index, "pid": w.pid, "envs": list(range(w.first_env,
                                                                                     w.first_env + w.env_count))}
                             for w in self._workers]
        plan["envs_per_process"] = [w.env_count for w in self._workers]
        plan["steps_in"] = self._steps_in  # NOTE [Where envs step]
        plan["measured_step_ns"] = self._measured_step_ns
        plan["restarts"] = self._supervisor.restarts if self._supervisor else 0
        plan["step_timeouts"] = self._supervisor.timeouts if self._supervisor else 0
        return plan

    def objects(self, slot: int, env_ids: Sequence[int] | None = None) -> list | None:
        """NOTE [Python objects] (spaces.py): per env of ``env_ids`` (default: all), its last reset's
        (``slot`` 1) or step's (2) ``(object leaves of the observation, info or None, final observation
        or None)``, None where the answer had none of them; None for all when none had."""
        lengths = self._objects.lengths[:, slot] if env_ids is None else self._objects.lengths[env_ids, slot]
        if not lengths.any():
            return None
        read = self._objects.read
        return [read(env, slot) for env in (range(self.num_envs) if env_ids is None else env_ids)]

    def objects_written(self) -> bool:
        """Whether any env's last reset or step answer holds Python objects (``objects()`` would return any)."""
        answers = self._answer_lengths  # (tobytes and a compare: a tenth of ndarray.any()'s cost at 8 envs)
        return answers.tobytes() != self._no_answers

    def unseed_next_resets(self, env_ids: Sequence[int]) -> None:
        """The next reset of each env of ``env_ids`` passes ``seed=None`` to ``env.reset``, even where it is
        the env's first (which the pool otherwise seeds with ``seed + i``): Gymnasium's ``reset(seed=None)``."""
        self._objects.lengths[list(env_ids), worker_script.ObjectSlots.RESET] = worker_script.ObjectSlots.UNSEEDED

    def put_object_actions(self, actions: Sequence[Any]) -> None:
        """Each env's action of an ``"object"`` action space (``action_plan.worker[0]``), for the next
        ``step()``, whose action tensor is then a dummy (zeros of ``[num_envs]``)."""
        for env, action in enumerate(actions):
            self._objects.write(env, worker_script.ObjectSlots.ACTION, action)

    @property
    def worker_pids(self) -> list[int]:
        return [worker.pid for worker in self._workers]

    # ---- the env objects (NOTE [Env requests] in worker.py) -----------------

    @property
    def local_envs(self) -> list | None:
        """The env objects (as their constructors returned them) where they step in this process
        (``schedule["steps_in"] == "caller"``); None where they step in worker processes."""
        return None if self._in_caller is None else list(self._in_caller.envs)

    def get_attr(self, name: str, env_ids: int | Sequence[int] | None = None) -> list[Any]:
        """Each env's attribute ``name``, found through its wrappers (``env.get_wrapper_attr(name)``), for
        the envs ``env_ids`` (default: all; negative ids count from the end), in that order."""
        return self._env_request("get", env_ids, name)

    def set_attr(self, name: str, value: Any, env_ids: int | Sequence[int] | None = None) -> None:
        """``setattr(env, name, value)`` on each env of ``env_ids`` (default: all), the object its
        constructor returned (an outer wrapper's attribute; ``call("set_wrapper_attr", name, value)``
        sets it where a wrapper or the env has it)."""
        self._env_request("set", env_ids, name, value)

    def call(self, name: str, *args: Any, env_ids: int | Sequence[int] | None = None, **kwargs: Any) -> list[Any]:
        """Each env's method ``name`` (found through its wrappers) called with ``args`` and ``kwargs``;
        the results, for the envs ``env_ids`` (default: all) in that order."""
        return self._env_request("call", env_ids, name, args, kwargs)

    def is_wrapped(self, wrapper_class: type, env_ids: int | Sequence[int] | None = None) -> list[bool]:
        """Per env of ``env_ids`` (default: all): whether a ``wrapper_class`` is among its wrappers."""
        return self._env_request("is_wrapped", env_ids, wrapper_class)

    def set_reset_options(self, options: dict | Sequence[dict | None] | None,
                          env_ids: int | Sequence[int] | None = None) -> None:
        """The ``options`` (a dict, or one per env of ``env_ids``) passed to ``env.reset`` at the next reset
        of each env of ``env_ids`` (default: all), whether ``reset()`` or an autoreset; later resets take
        none again."""
        ids = self._request_ids(env_ids)
        if options is None or isinstance(options, dict):
            options = [options] * len(ids)
        elif len(options) != len(ids):
            raise ValueError(f"set_reset_options: {len(options)} options for {len(ids)} envs")
        self._env_request("reset_options", ids, list(options))

    def _request_ids(self, env_ids: Any) -> list[int]:
        if env_ids is None:
            return list(range(self.num_envs))
        ids = [env_ids] if isinstance(env_ids, (int, np.integer)) else list(env_ids)
        for env in ids:
            if not -self.num_envs <= int(env) < self.num_envs:
                raise IndexError(f"env id {env} out of range for num_envs={self.num_envs}")
        return [int(env) % self.num_envs for env in ids]

    def _env_request(self, op: str, env_ids: Any, *arguments: Any) -> list[Any]:
        """NOTE [Env requests]: ``op`` on the envs ``env_ids``, answered where they live; their answers in order."""
        ids = self._request_ids(env_ids)
        with self._env_requests:
            if self.closed:
                raise RuntimeError("this pool is closed")
            if self.in_flight:
                raise RuntimeError(f"{op} on env objects while {self.in_flight} envs step: receive their steps "
                                   "first (recv())")
            if self._in_caller is not None:
                answers = [worker_script.answer_env_request(self._in_caller.answers, (op, ids, *arguments))]
                asked = [(ids, range(len(ids)))]
            else:
                import cloudpickle  # the arguments may be classes or values defined in __main__ or a test

                asked = []
                for worker in list(self._workers):
                    mine = [(position, env) for position, env in enumerate(ids)
                            if worker.first_env <= env < worker.first_env + worker.env_count]
                    if mine:
                        request = (op, [env for _, env in mine], *arguments)
                        if op == "reset_options":
                            request = (op, request[1], [arguments[0][position] for position, _ in mine])
                        data = cloudpickle.dumps(request)
                        worker.sock.sendall(len(data).to_bytes(8, "little") + data)
                        asked.append((worker, [position for position, _ in mine]))
                answers = []
                for worker, _ in asked:
                    try:
                        answers.append(worker_script.receive_message(worker.sock))
                    except (EOFError, ConnectionError) as error:
                        answers.append(("error", RuntimeError(f"worker process {worker.index} ended before "
                                                              f"answering {op}: {error}"), ""))
        results: list[Any] = [None] * len(ids)
        for answer, (_, positions) in zip(answers, asked):
            if answer[0] == "error":
                raise answer[1]
            for position, result in zip(positions, answer[1]):
                results[position] = result
        return results

    def close(self) -> None:
        """Stops the core, then the worker processes; frees the shared region. Idempotent."""
        super().close()
        if os.getpid() != self._owner:  # a fork's copy: the workers are the parent's
            return
        self._shut_down_workers()

    def _shut_down_workers(self) -> None:
        interrupts.forget(self)  # before the region is unmapped
        supervisor, self._supervisor = self._supervisor, None
        if supervisor is not None:
            supervisor.stop()  # from here on it starts no process; all it started are in self._workers
        workers = self._workers
        if self._region_fd >= 0:
            _process_module().shut_down(self._region_address, self._layout_args)
        # Told to exit together, given one grace together: a worker stuck in an env's step is killed once it
        # has passed, however many are stuck (one grace each would add up).
        deadline = time.monotonic() + _EXIT_GRACE_S
        for worker in list(workers):
            if self._region_fd < 0:  # told nothing yet: it exits when its socket closes
                worker.sock.close()
        for worker in list(workers):
            worker.close(timeout=max(0.0, deadline - time.monotonic()))
        self._workers = []
        if supervisor is not None:
            supervisor.join()  # a replacement's handshake ended with its process
        answers, self._in_caller = self._in_caller, None
        if answers is not None:
            answers.close()
        if self._region_fd >= 0:
            os.close(self._region_fd)
            self._region_fd = -1
            self._objects = self._answer_lengths = None  # views of the region
            self._region.close()

    def __repr__(self) -> str:
        return (f"ProcessPool({self.env_id!r}, num_envs={self.num_envs}, batch_size={self.batch_size}, "
                f"num_workers={self.num_workers}, autoreset={self.autoreset!r})")



def _raises_interrupts_from_the_caller(name: str):
    """NOTE [Answers in the caller]: a Ctrl-C caught in an env stepped by the core's call surfaces here.

    A ``recv()`` or ``recv_into()`` that took a batch (returned it, or raised the ``EnvError`` that carries it)
    gives it back first (``Pool._undo_recv``), as ``Pool.recv`` does for a KeyboardInterrupt of its own: raised
    over it, the batch would be lost, and with an async pool its ``batch_size`` envs, idle and unknown to the
    caller, never sent again. The next ``recv()`` returns it.
    """
    method = getattr(Pool, name)
    receives = name in ("recv", "recv_into")

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        took_batch = False
        try:
            result = method(self, *args, **kwargs)
            took_batch = receives
            return result
        except EnvError:
            took_batch = receives
            raise
        finally:
            answers = self._in_caller
            if answers is not None and answers.interrupted:
                answers.interrupted = False
                if took_batch:
                    self._undo_recv()
                raise KeyboardInterrupt  # noqa: B012  (replaces the EnvError of the envs it failed)

    return call


for _name in ("reset", "step", "step_arrays", "send", "recv", "send_into", "step_into", "step_into_trusted",
              "recv_into", "async_reset"):
    setattr(ProcessPool, _name, _raises_interrupts_from_the_caller(_name))
