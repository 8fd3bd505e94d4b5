"""Timing a case: for how long, how often, in which order, and what the rounds say together.

A case is anything hashable that a script knows how to measure (a system at a
size, a variant, one side of an A/B). The harness decides the rest:

- ``time_calls(call, calls, warmup)``, in the harness with the runners: a
  fixed number of calls (``torchpool._side_by_side``'s timer, which
  ``python -m torchpool bench`` uses too) -> (steps/s, us/call);
- ``rate_for(step, seconds, warmup)``: calls for a fixed wall time -> ``Rate``,
  with this process's CPU time per step (what a busy host disturbs least);
- ``pilot(cases, us_per_call, seconds)``: the calls that make one measurement
  of each case last about ``seconds``, from a brief run of it;
- ``interleaved`` / ``measure_rounds`` / ``round_order``: every case once per round, the order
  alternating (A B, B A, ...) or rotating (A B C, B C A, ...), so that a slow
  stretch of a shared machine falls on every case alike;
- ``spread``, ``paired``, ``quartiles``: what the rounds say together;
- ``run_child``: one measurement in a fresh interpreter (start-up costs,
  builds compared side by side, runs that must not share a process).

This module imports nothing of torchpool, so a child interpreter timing
another build of it can import it alone (``benchmarks/ab_step.py``).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["ORDERS", "ChildFailed", "Paired", "Rate", "Skip", "interleaved", "measure_rounds", "paired", "pilot",
           "quartiles", "rate_for", "round_order", "run_child", "spread"]

Case = TypeVar("Case", bound=Hashable)
Value = TypeVar("Value")


@dataclass(frozen=True)
class Rate:
    """What ``rate_for`` measured."""

    steps_per_s: float     # steps (as ``step`` counted them) per wall second
    us_per_call: float     # wall microseconds per ``step`` call
    cpu_s_per_step: float  # this process's CPU seconds per step: its own work, not its waits for a core
    calls: int


def rate_for(step: Callable[[int], int], seconds: float, warmup: float = 0.2) -> Rate:
    """Calls ``step(i)`` (which returns the steps it made: env steps, samples, frames) for ``warmup`` seconds
    untimed, then for ``seconds`` timed; ``i`` counts on across both."""
    i, start = 0, time.perf_counter()
    while time.perf_counter() - start < warmup:
        step(i)
        i += 1
    steps, calls = 0, 0
    wall, cpu = time.perf_counter(), time.process_time()
    while (elapsed := time.perf_counter() - wall) < seconds or calls == 0:
        steps += step(i + calls)
        calls += 1
    cpu_seconds = time.process_time() - cpu
    return Rate(steps / elapsed, elapsed / calls * 1e6, cpu_seconds / max(steps, 1), calls)


class Skip(Exception):  # noqa: N818  (a case to leave out, not an error)
    """Raised by a pilot to leave its case out; the message says why."""


def pilot(cases: Iterable[Case], us_per_call: Callable[[Case], float], seconds: float,
          least: int = 10) -> tuple[dict[Case, int], dict[Case, str]]:
    """({case: calls}, {case: why it was left out}): the calls that make one measurement of each case last
    about ``seconds`` (at least ``least``), from ``us_per_call(case)``, a brief run of it. A case whose brief
    run raised ``Skip`` or failed is left out, with the reason."""
    calls: dict[Case, int] = {}
    skipped: dict[Case, str] = {}
    for case in cases:
        try:
            calls[case] = max(least, round(seconds * 1e6 / us_per_call(case)))
        except Skip as reason:
            skipped[case] = str(reason)
        except Exception as error:  # e.g. AsyncVectorEnv out of processes: leave the case out, say why
            skipped[case] = f"pilot failed: {type(error).__name__}: {error}"
    return calls, skipped


ORDERS = ("alternate", "rotate", "same")


def round_order(cases: Sequence[Case], index: int, order: str = "alternate") -> list[Case]:
    """The cases in the order round ``index`` takes them. ``alternate`` reverses the order every other round
    (A B, B A, ...); ``rotate`` starts each round one case later (A B C, B C A, C A B, ...); ``same`` keeps it."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    cases = list(cases)
    if order == "alternate" and index % 2:
        return cases[::-1]
    if order == "rotate":
        return cases[index % len(cases):] + cases[:index % len(cases)]
    return cases


def interleaved(cases: Sequence[Case], rounds: int, order: str = "alternate") -> Iterator[tuple[int, Case]]:
    """(round, case): every case once per round, in ``round_order``."""
    for index in range(rounds):
        for case in round_order(cases, index, order):
            yield index, case


def measure_rounds(cases: Sequence[Case], rounds: int, measure: Callable[[Case], Value], order: str = "alternate",
                   progress: str | None = None,
                   after_round: Callable[[int], None] | None = None) -> dict[Case, list[Value]]:
    """{case: [measure(case) of each round]}, the cases taken in ``interleaved`` order; ``after_round(index)``
    runs at the end of each round; ``progress`` names a progress bar (none without it)."""
    from tqdm import tqdm

    results: dict[Case, list[Value]] = {case: [] for case in cases}
    with tqdm(total=rounds * len(results), desc=progress, unit="run", disable=progress is None) as bar:
        for done, (index, case) in enumerate(interleaved(list(results), rounds, order), 1):
            bar.set_postfix_str(f"round {index + 1}: {case}"[:70])
            results[case].append(measure(case))
            bar.update()
            if after_round is not None and done % len(results) == 0:
                after_round(index)
    return results


def spread(values: Sequence[float]) -> float:
    """(max - min) / median: how far the rounds disagree."""
    return (max(values) - min(values)) / statistics.median(values)


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """(first quartile, median, third quartile)."""
    if len(values) < 2:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


@dataclass(frozen=True)
class Paired:
    """Two cases measured in the same rounds: the median of their per-round ratios, and who won how often."""

    ratio: float  # median over rounds of a / b
    wins: int     # rounds where a > b
    rounds: int


def paired(a: Sequence[float], b: Sequence[float]) -> Paired:
    """``a`` against ``b``, round by round (both measured once per round, interleaved)."""
    return Paired(statistics.median(x / y for x, y in zip(a, b)), sum(x > y for x, y in zip(a, b)), len(a))


class ChildFailed(RuntimeError):
    """A fresh interpreter's measurement exited with an error; ``stderr`` holds what it printed there."""

    def __init__(self, message: str, stderr: str):
        super().__init__(message)
        self.stderr = stderr


def run_child(argv: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | None = None,
              timeout: float | None = None) -> dict:
    """One measurement in a fresh interpreter: runs ``python *argv`` (this Python) and returns the JSON object
    its stdout's last line holds (the child prints it when done)."""
    done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
        raise ChildFailed(f"python {' '.join(argv)[:80]} exited {done.returncode}: {last}", done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])
