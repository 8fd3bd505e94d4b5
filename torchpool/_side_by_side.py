"""Side-by-side steps/s of torchpool, EnvPool and Gymnasium's vector envs: ``python -m torchpool bench``.

Each runner builds one system, draws its actions before the timed loop, warms
up, then times ``calls`` step calls and returns a ``Result``. Outputs are
delivered as torch tensors by every system: the NumPy-based systems pay for
``torch.from_numpy`` inside the timed loop, as a PyTorch user would.

This is all of the benchmark code the package ships: an installed wheel has no
``benchmarks/`` folder. The benchmarks' harness (``benchmarks/harness``: rounds,
interleaving, CPU time, the machine, plots and RESULTS.md sections) times its
throughput cases with these same runners.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

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


def draw_actions(space_n: int | None, shape: tuple, num: int, count: int, seed: int = 0, numpy: bool = False):
    """``count`` batches of ``num`` random actions: indices below ``space_n``, or uniform in [-1, 1] of ``shape``."""
    rng = np.random.default_rng(seed)
    if space_n is not None:
        arrays = [rng.integers(0, space_n, size=(num,)) for _ in range(count)]
    else:
        arrays = [rng.uniform(-1, 1, size=(num, *shape)).astype(np.float32) for _ in range(count)]
    return arrays if numpy else [torch.from_numpy(a) for a in arrays]


def time_calls(call: Callable[[int], int], calls: int, warmup: int) -> tuple[float, float]:
    """Runs call(i) (returning env steps done) warmup + calls times; returns (steps/s, us/call)."""
    for i in range(warmup):
        call(i)
    steps = 0
    start = time.perf_counter()
    for i in range(calls):
        steps += call(i)
    elapsed = time.perf_counter() - start
    return steps / elapsed, elapsed / calls * 1e6


def run_torchpool(env_id: str, num_envs: int, calls: int, batch_size: int | None = None,
                  num_threads: int | None = None, warmup: int = 50, **make_kwargs) -> Result:
    pool = make(env_id, num_envs=num_envs, batch_size=batch_size, num_threads=num_threads, **make_kwargs)
    try:
        steps_per_s, us = time_calls(torchpool_calls(pool), calls, warmup)
    finally:
        pool.close()
    return Result("torchpool", "async" if pool.is_async else "sync", env_id, num_envs, pool.batch_size,
                  pool.num_threads, steps_per_s, us)


def torchpool_calls(pool: Pool) -> Callable[[int], int]:
    """Resets ``pool`` and returns call(i): one ``step`` (sync) or ``send`` + ``recv`` (async) with the
    i-th of 64 action batches drawn here; it returns the env steps done. Async keeps a batch in flight."""
    spec = pool.action_spec
    actions = draw_actions(getattr(spec, "n", None), spec.shape, pool.batch_size, 64)
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
    actions = draw_actions(n, space.shape, batch_size, 64, numpy=True)
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
    steps_per_s, us = time_calls(call, calls, warmup)
    env.close()
    # EnvPool's num_threads=0 means min(batch_size, hardware threads) (envpool/core/async_envpool.h).
    threads = num_threads or min(batch_size, available_cpus())
    return Result("envpool", "sync" if batch_size == num_envs else "async", env_id, num_envs, batch_size,
                  threads, steps_per_s, us)


def run_gymnasium(env_id: str, num_envs: int, calls: int, vectorization: str = "sync", warmup: int = 20,
                  **make_kwargs) -> Result:
    """``make_kwargs`` go to ``gymnasium.make_vec`` (``wrappers=[...]`` for each env, or the env's own kwargs)."""
    import gymnasium

    if env_id.startswith(("MiniGrid-", "BabyAI-")):
        # minigrid registers its ids when imported; its mission is a Text space no vector env batches, so
        # the image alone (ImgObsWrapper), as its users train on (an ImportError names minigrid)
        from minigrid.wrappers import ImgObsWrapper

        make_kwargs.setdefault("wrappers", [ImgObsWrapper])
    envs = gymnasium.make_vec(env_id, num_envs=num_envs, vectorization_mode=vectorization, **make_kwargs)
    space = envs.single_action_space
    n = int(space.n) if hasattr(space, "n") else None
    actions = draw_actions(n, space.shape, num_envs, 64, numpy=True)
    envs.reset(seed=0)

    def call(i):
        obs, reward, terminated, truncated, _ = envs.step(actions[i % 64])
        _tensors(obs), torch.from_numpy(reward), torch.from_numpy(terminated), torch.from_numpy(truncated)
        return num_envs

    steps_per_s, us = time_calls(call, calls, warmup)
    envs.close()
    workers = num_envs if vectorization == "async" else 1
    return Result(f"gymnasium-{vectorization}", "sync", env_id, num_envs, num_envs, workers, steps_per_s, us)


def envpool_available() -> bool:
    try:
        import envpool  # noqa: F401
    except Exception:
        return False
    return True
