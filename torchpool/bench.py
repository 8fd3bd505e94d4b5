"""Throughput runners shared by ``python -m torchpool bench`` and ``benchmarks/``.

Each runner builds one system, generates its actions before the timed loop,
warms up, then times ``calls`` step calls and returns env steps per second.
Outputs are delivered as torch tensors for every system: the NumPy-based
systems pay for ``torch.from_numpy`` inside the timed loop, as a PyTorch user
would.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ._cpus import available_cpus
from .pool import Pool, make


@dataclass(frozen=True)
class Result:
    system: str
    mode: str            # "sync" or "async"
    env_id: str
    num_envs: int
    batch_size: int
    num_threads: int
    steps_per_s: float   # env steps (one env advancing once) per second
    us_per_call: float   # wall time of one step()/recv() call


def _actions(space_n: int | None, shape: tuple, num: int, count: int, seed: int = 0, numpy: bool = False):
    rng = np.random.default_rng(seed)
    if space_n is not None:
        arrays = [rng.integers(0, space_n, size=(num,)) for _ in range(count)]
    else:
        arrays = [rng.uniform(-1, 1, size=(num, *shape)).astype(np.float32) for _ in range(count)]
    return arrays if numpy else [torch.from_numpy(a) for a in arrays]


def _time(call: Callable[[int], int], calls: int, warmup: int) -> tuple[float, float]:
    """Runs call(i) (returning env steps done) warmup + calls times; returns (steps/s, us/call)."""
    for i in range(warmup):
        call(i)
    steps = 0
    start = time.perf_counter()
    for i in range(calls):
        steps += call(i)
    elapsed = time.perf_counter() - start
    return steps / elapsed, elapsed / calls * 1e6


def timed_with_cpu(step: Callable[[int], int], seconds: float, warmup: float = 0.2) -> tuple[float, float]:
    """(env steps/s, this process's CPU seconds per env step) of ``step(i)`` (returning the env steps it made)
    over ``seconds``, after ``warmup`` seconds of it. The CPU time is what a busy host disturbs least (this
    process's work, not its waits for a core), and all of the work where the envs step in this process."""
    start, i = time.perf_counter(), 0
    while time.perf_counter() - start < warmup:
        step(i)
        i += 1
    wall, cpu, steps, i = time.perf_counter(), time.process_time(), 0, 0
    while time.perf_counter() - wall < seconds:
        steps += step(i)
        i += 1
    return steps / (time.perf_counter() - wall), (time.process_time() - cpu) / steps


def run_torchpool(env_id: str, num_envs: int, calls: int, batch_size: int | None = None,
                  num_threads: int | None = None, warmup: int = 50, **make_kwargs) -> Result:
    pool = make(env_id, num_envs=num_envs, batch_size=batch_size, num_threads=num_threads, **make_kwargs)
    try:
        steps_per_s, us = _time(torchpool_calls(pool), calls, warmup)
    finally:
        pool.close()
    return Result("torchpool", "async" if pool.is_async else "sync", env_id, num_envs, pool.batch_size,
                  pool.num_threads, steps_per_s, us)


def torchpool_calls(pool: Pool) -> Callable[[int], int]:
    """Resets ``pool`` and returns call(i): one ``step`` (sync) or ``send`` + ``recv`` (async) with the
    i-th of 64 action batches drawn here; it returns the env steps done. Async keeps a batch in flight."""
    spec = pool.action_spec
    actions = _actions(getattr(spec, "n", None), spec.shape, pool.batch_size, 64)
    if not pool.is_async:
        num_envs = pool.num_envs
        pool.reset()

        def call(i):
            pool.step(actions[i % 64])
            return num_envs
        return call

    pool.async_reset()
    last = [pool.recv()["env_id"]]

    def call(i):
        pool.send(actions[i % 64], last[0])
        last[0] = pool.recv()["env_id"]
        return pool.batch_size
    return call


def _tensors(obs):
    """A batch handed over as torch tensors: one array, or a dict of them (named fields)."""
    return {key: torch.from_numpy(value) for key, value in obs.items()} if isinstance(obs, dict) \
        else torch.from_numpy(obs)


def run_envpool(env_id: str, num_envs: int, calls: int, batch_size: int | None = None,
                num_threads: int | None = None, warmup: int = 50) -> Result:
    import envpool

    batch_size = batch_size or num_envs
    kwargs = {"num_threads": num_threads} if num_threads else {}
    env = envpool.make(env_id, env_type="gymnasium", num_envs=num_envs, batch_size=batch_size, **kwargs)
    space = env.action_space
    n = int(space.n) if hasattr(space, "n") else None
    actions = _actions(n, space.shape, batch_size, 64, numpy=True)
    if batch_size == num_envs:
        env.reset()

        def call(i):
            obs, reward, terminated, truncated, _ = env.step(actions[i % 64])
            _tensors(obs), torch.from_numpy(reward), torch.from_numpy(terminated), torch.from_numpy(truncated)
            return num_envs
    else:
        env.async_reset()
        last = [env.recv()[4]["env_id"]]

        def call(i):
            env.send(actions[i % 64], last[0])
            obs, reward, terminated, truncated, info = env.recv()
            _tensors(obs), torch.from_numpy(reward), torch.from_numpy(terminated), torch.from_numpy(truncated)
            last[0] = info["env_id"]
            return batch_size
    steps_per_s, us = _time(call, calls, warmup)
    env.close()
    # EnvPool's num_threads=0 means min(batch_size, hardware threads) (envpool/core/async_envpool.h).
    threads = num_threads or min(batch_size, available_cpus())
    return Result("envpool", "sync" if batch_size == num_envs else "async", env_id, num_envs, batch_size,
                  threads, steps_per_s, us)


def run_gymnasium(env_id: str, num_envs: int, calls: int, vectorization: str = "sync", warmup: int = 20) -> Result:
    import gymnasium

    envs = gymnasium.make_vec(env_id, num_envs=num_envs, vectorization_mode=vectorization)
    space = envs.single_action_space
    n = int(space.n) if hasattr(space, "n") else None
    actions = _actions(n, space.shape, num_envs, 64, numpy=True)
    envs.reset(seed=0)

    def call(i):
        obs, reward, terminated, truncated, _ = envs.step(actions[i % 64])
        torch.from_numpy(obs), torch.from_numpy(reward), torch.from_numpy(terminated), torch.from_numpy(truncated)
        return num_envs

    steps_per_s, us = _time(call, calls, warmup)
    envs.close()
    workers = num_envs if vectorization == "async" else 1
    return Result(f"gymnasium-{vectorization}", "sync", env_id, num_envs, num_envs, workers, steps_per_s, us)


def envpool_available() -> bool:
    try:
        import envpool  # noqa: F401
    except Exception:
        return False
    return True


# ---- recording results (benchmarks/RESULTS.md) ---------------------------------

RESULTS_HEADER = ("# torchpool benchmark results\n\n"
                  "Each section is written by one script in `benchmarks/`; rerun it to refresh its section.\n")


def machine(packages: tuple[str, ...] = ("envpool", "gymnasium")) -> dict[str, str]:
    """The machine and software a result was measured on: cpu, cores, ram, os, versions."""
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor() or "unknown CPU")
    ram_gib = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30
    os_name = platform.platform()
    if Path("/etc/os-release").exists():
        release = dict(line.rstrip().split("=", 1) for line in open("/etc/os-release") if "=" in line)
        os_name = f"{release.get('PRETTY_NAME', 'Linux').strip(chr(34))}, kernel {platform.release()}"
    from . import __version__

    versions = {"Python": platform.python_version(), "torch": torch.__version__, "torchpool": __version__}
    for package in packages:
        try:
            versions[package] = importlib.metadata.version(package)  # also for modules without __version__
        except importlib.metadata.PackageNotFoundError:
            try:  # a module whose distribution has another name (pufferlib from pufferlib-core)
                versions[package] = __import__(package).__version__
            except Exception:
                versions[package] = "not installed"
    return {"cpu": cpu, "cores": str(os.cpu_count()), "ram": f"{ram_gib:.0f} GiB", "os": os_name,
            "versions": ", ".join(f"{name} {version}" for name, version in versions.items())}


def record_section(path: Path, key: str, title: str, settings: list[str], body: list[str],
                   packages: tuple[str, ...] = ()) -> None:
    """Writes a dated section into RESULTS.md between ``<!-- key:begin -->`` and ``<!-- key:end -->``: the
    title, the date, the machine (with `packages`' versions), the settings' bullet lines, a blank line, the body."""
    info = machine(packages)
    begin, end = f"<!-- {key}:begin -->", f"<!-- {key}:end -->"
    section = "\n".join([
        begin, f"## {title}", "",
        f"- Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- Machine: {info['cpu']}, {info['cores']} cores, {info['ram']} RAM; {info['versions']}",
        *settings, "", *body, end])
    write_section(path, section, begin, end)


def write_section(path: Path, section: str, begin: str, end: str) -> None:
    """Puts ``section`` (which starts with ``begin`` and ends with ``end``) into RESULTS.md in place
    of the old one, or appends it; every other section stays as it was."""
    text = path.read_text() if path.exists() else RESULTS_HEADER
    if begin in text and end in text:
        text = text[:text.index(begin)] + section + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text)


def grouped_bars(ax, groups: list[str], series: dict[str, list[float]]) -> None:
    """Draws one bar per series in each group, side by side, with group ticks, a legend and a y grid.

    ``series[label][j]`` is that series' value in ``groups[j]``.
    """
    width = 0.8 / len(series)
    for i, (label, values) in enumerate(series.items()):
        offset = (i - (len(series) - 1) / 2) * width
        ax.bar([j + offset for j in range(len(groups))], values, width, label=label)
    ax.set_xticks(range(len(groups)), groups)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
