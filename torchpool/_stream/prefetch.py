"""Prefetch for torchpool.stream: batch k+1 is collected while the consumer trains on batch k.

NOTE [Prefetch and policy lag]: the collection runs on one background thread
(env workers and the policy's inference, as without prefetch); the consumer
gets batch k and trains on it while that thread collects batch k+1. Acting
with the very module the consumer is updating would read weights half-way
through an optimizer step, so the collector acts with a snapshot of the
policy's module, refreshed from the live one each time a batch is handed
out (looked up by name each time, so a reassigned tensor is followed: NOTE
[Following the live module]). Batch k+1 is thus collected by the weights as
they were when batch k was handed out: exactly one update behind, for every
action of the batch (without prefetch: none behind). The batch's
``sample_log_prob`` (and any other extra the policy returns) is that of the
snapshot that acted, so PPO's ratio pi_new / pi_behaviour stays exact; only
its value estimates are one update older.

Whatever stops the consumer (the loop ending, ``break``, an exception,
Ctrl-C) stops the collector once the batch it is collecting is complete (its
pools are closed on its own thread, and the extra batch is dropped); a
collector error is raised in the consumer at its next batch.
"""

from __future__ import annotations

import copy
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

_GO, _STOP = object(), object()


def policy_module(policy: Callable) -> nn.Module:
    """The module a prefetching stream copies: the policy itself, or the module a method is bound to."""
    module = policy if isinstance(policy, nn.Module) else getattr(policy, "__self__", None)
    if not isinstance(module, nn.Module):
        raise ValueError("prefetch=True needs the policy to be an nn.Module or a method of one (e.g. agent.act), "
                         f"so the collector can act with a snapshot of its weights; got {policy!r}")
    return module


def snapshot_policy(policy: Callable) -> tuple[Callable, Callable[[], None]]:
    """A copy of the policy to act with and a function that refreshes its weights from the live one.

    NOTE [Following the live module]: each refresh looks the live module's
    parameters and buffers up by name (non-persistent buffers too), so a
    tensor the user reassigns (``self.mean = new_mean``, a submodule replaced,
    the module moved to another device) is followed: copied into the twin's
    in place, or, where its shape, dtype or device changed, or it no longer
    shares the memory of another name's, copied anew into the twin. A tensor
    added or removed since the snapshot is refused, naming it: the twin would
    not act as the live module does.
    """
    module = policy_module(policy)
    twin = copy.deepcopy(module)
    twin.requires_grad_(False)
    copies = _tensors(twin)

    @torch.no_grad()
    def refresh() -> None:
        live = _tensors(module)
        if live.keys() != copies.keys():
            added, gone = sorted(live.keys() - copies.keys()), sorted(copies.keys() - live.keys())
            raise ValueError(f"prefetch=True: the policy's module has {'tensors ' + str(added) if added else 'none'} "
                             f"that it had not when the stream began, and lacks {gone or 'none'}: the collector's "
                             "copy of it (NOTE [Prefetch and policy lag], torchpool/_stream/prefetch.py) cannot "
                             "follow a parameter or buffer added or removed; make the stream after registering it, "
                             "and reassign it rather than delete it")
        written: dict[int, torch.Tensor] = {}  # twin tensor -> the live one copied into it (tied weights)
        for name, source in live.items():
            destination = copies[name]
            done = written.get(id(destination))
            if done is source:
                continue
            if (done is None and destination.shape == source.shape and destination.dtype == source.dtype
                    and destination.device == source.device):
                destination.copy_(source)
            else:
                destination = copies[name] = _take_copy(twin, name, source)
            written[id(destination)] = source

    acting = twin if policy is module else getattr(twin, policy.__name__)
    return acting, refresh


def _tensors(module: nn.Module) -> dict[str, torch.Tensor]:
    """Every parameter and buffer of ``module`` by name, non-persistent buffers and every name of a tied one."""
    return {**dict(module.named_parameters(remove_duplicate=False)),
            **dict(module.named_buffers(remove_duplicate=False))}


def _take_copy(twin: nn.Module, name: str, source: torch.Tensor) -> torch.Tensor:
    """Puts a copy of ``source`` in the twin's slot ``name`` (a parameter stays a parameter); returns it."""
    owner_name, _, attribute = name.rpartition(".")
    owner = twin.get_submodule(owner_name)
    taken = source.detach().clone()
    if attribute in owner._parameters:
        taken = nn.Parameter(taken, requires_grad=False)
    setattr(owner, attribute, taken)
    return taken


class Prefetcher:
    """Runs ``batches()`` on a background thread, one batch ahead of the consumer.

    ``seconds``: a time split to which the consumer's waits for a batch are added, as ``"consumer_waited"``.
    """

    def __init__(self, batches: Callable[[], Iterator[Any]], refresh: Callable[[], None], seconds: dict[str, float]):
        self._batches = batches
        self._refresh = refresh
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        self._results: queue.SimpleQueue = queue.SimpleQueue()
        self._seconds = seconds
        self._thread = threading.Thread(target=self._run, name="torchpool-prefetch", daemon=True)

    def _run(self) -> None:
        generator = None
        try:
            generator = self._batches()
            while self._requests.get() is _GO:
                try:
                    batch = next(generator)
                except StopIteration:
                    self._results.put(("end", None))
                    return
                self._results.put(("batch", batch))
                del batch
        except BaseException as error:  # noqa: BLE001 - handed to the consumer, raised there
            self._results.put(("error", error))
        finally:
            try:
                if generator is not None:
                    generator.close()  # closes the pools, on the thread that made them
            finally:
                # Said even when closing failed (that failure goes to threading.excepthook): the
                # consumer waits for it.
                self._results.put(("closed", None))

    def __iter__(self) -> Iterator[Any]:
        self._refresh()
        self._thread.start()
        self._requests.put(_GO)
        try:
            while True:
                tick = time.perf_counter()
                kind, value = self._results.get()
                self._seconds["consumer_waited"] += time.perf_counter() - tick
                if kind == "error":
                    raise value
                if kind != "batch":
                    return
                self._refresh()  # the weights batch k+1 is collected with (NOTE [Prefetch and policy lag])
                self._requests.put(_GO)
                yield value
                del value
        finally:
            self._requests.put(_STOP)
            while self._thread.is_alive():
                # The collector finishes its step, closes its pools and says so; a
                # second Ctrl-C here only repeats the wait.
                try:
                    if self._results.get()[0] == "closed":
                        break
                except KeyboardInterrupt:
                    continue
            self._thread.join()
