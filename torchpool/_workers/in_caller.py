"""Envs stepped in the calling process: NOTE [Answers in the caller] (csrc/envs/process/shared_region.h).

For envs too cheap to ship to another process (or when there are no cores
to spare for workers; NOTE [Where envs step] in process_pool.py) the pool
builds its envs here and starts no worker. The core runs the pool as for any
process pool; only, an env that finds its request unanswered calls
``AnswersInCaller.callback`` (a ctypes function whose address is in the
region's header), which answers every waiting request at once, exactly as a
worker's loop does (``worker.EnvAnswers`` and a ``WorkerChannel`` on this
process's own mapping). So a call steps its envs one after the other in the
calling thread with no hand-off at all, as Gymnasium's SyncVectorEnv does,
and everything else (episodes, autoreset, EnvError) is the core's.

Ctrl-C: the envs' Python code runs in the caller's thread, where the
KeyboardInterrupt of a Ctrl-C surfaces. ctypes would print and drop it, so
the callback records it, fails that env (and, without stepping them, the
call's other waiting envs), and the pool raises KeyboardInterrupt as the
call returns (``process_pool._raises_interrupts_from_the_caller``), giving
back first a batch that ``recv()`` took, or an async pool would lose its envs.
"""

from __future__ import annotations

import ctypes
import threading
import time
import traceback

import numpy as np

from . import worker

_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int64)
# Offset of RegionHeader::answer_in_caller; words (uint32) of EnvControl, 64 bytes per env.
_HEADER_CALLBACK_OFFSET = 16
_WORDS_PER_ENV, _REQUEST, _DONE = 16, 0, 1


class AnswersInCaller:
    """Answers every env's requests in this process; ``install()`` hands the core its callback."""

    def __init__(self, process, region, region_address: int, plan: dict, envs: list):
        self._region = region
        self.answers = worker.EnvAnswers(region, plan, envs, None, 0, process.OP_STEP)  # NOTE [Env requests]
        self._run = self.answers.run
        self._channel = process.WorkerChannel(region_address, plan["layout"], 0, 0)
        self._requests = np.zeros((plan["num_envs"], 4), dtype=np.int64)
        self._address = self._requests.ctypes.data
        offset = plan["offsets"]["envs"]
        self._view = memoryview(region)
        self._control = self._view[offset:offset + plan["num_envs"] * 64].cast("I")
        self._error_bytes = plan["layout"][4]
        # The core's thread may collect an env (an autoreset) while the caller collects another.
        self._lock = threading.Lock()
        self.envs = envs
        self.interrupted = False
        self.callback = _CALLBACK(self._answer)  # kept alive as long as the pool

    def install(self) -> None:
        address = ctypes.cast(self.callback, ctypes.c_void_p).value
        np.ndarray((1,), dtype=np.uint64, buffer=self._region, offset=_HEADER_CALLBACK_OFFSET)[0] = address

    def _answer(self, env: int) -> None:
        try:
            self._answer_waiting(env)
        except KeyboardInterrupt:  # between two envs' steps
            self.interrupted = True

    def _answer_waiting(self, env: int) -> None:
        with self._lock:
            words = env * _WORDS_PER_ENV
            if self._control[words + _DONE] == self._control[words + _REQUEST]:
                return  # answered meanwhile, with the others of its push
            run, finish = self._run, self._channel.finish
            count = self._channel.take(self._address)  # at once: this env's request waits
            for env, op, seed, index in self._requests[:count].tolist():
                try:
                    if self.interrupted:
                        raise KeyboardInterrupt("not run: Ctrl-C interrupted this call")
                    reward, term, trunc = run(env, op, seed, index)
                    finish(env, reward, term, trunc)
                except BaseException as error:
                    if isinstance(error, KeyboardInterrupt):
                        self.interrupted = True
                    self._channel.fail(env, worker.error_text(traceback.format_exc(), self._error_bytes))

    def close(self) -> None:
        """Closes the envs and lets go of the region (the pool unmaps it next)."""
        self._run = self._channel = self.answers = None
        self._control.release()
        self._view.release()
        for env in self.envs:
            try:
                env.close()
            except Exception:
                pass
        self.envs = []


def step_cost_ns(env, steps: int = 32, budget_s: float = 0.05) -> float:
    """The median time of an env's step, from up to ``steps`` random steps of ``env`` (a throwaway one).

    An env that raises (its steps are the pool's business, not this probe's)
    is timed by the steps it made, or by its reset if none.
    """
    start = time.perf_counter_ns()
    env.reset(seed=0)
    times = [time.perf_counter_ns() - start]
    deadline = time.perf_counter() + budget_s
    try:
        env.action_space.seed(0)
        for step in range(steps):
            action = env.action_space.sample()
            start = time.perf_counter_ns()
            _, _, terminated, truncated, _ = env.step(action)
            if step == 0:
                times = []
            times.append(time.perf_counter_ns() - start)
            if terminated or truncated:
                env.reset()
            if time.perf_counter() > deadline:
                break
    except Exception:
        pass
    return float(np.median(times))
