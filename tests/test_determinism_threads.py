"""Results do not depend on num_threads, with envs the worker threads really step.

Each env has its own RNG (reset noise, sticky actions, random failures), so
which thread steps an env, and in which order envs finish, must not change a
bit of any env's trajectory: sync batches are compared whole, async ones env
by env.
"""

import pytest
import torch

import torchpool

CASES = [
    ("HalfCheetah-v5", {"max_episode_steps": 40}),        # reset noise from the env's RNG
    ("Pong-v5", {"repeat_action_probability": 0.25}),      # sticky actions from the env's RNG
    ("_Probe-v0", {"max_busy_us": 100.0, "fail_probability": 0.1}),  # RNG-drawn failures, busy steps
]
KEYS = ("observation", "reward", "terminated", "truncated", "episode_return", "episode_length")


def action_for(pool, env_ids: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """A deterministic action per (env, its step count)."""
    spec = pool.action_spec
    if hasattr(spec, "n"):
        return (env_ids * 7 + counts * 3) % spec.n
    phase = (env_ids * 0.37 + counts * 0.11).unsqueeze(1) + torch.arange(spec.shape[0]) * 0.5
    return torch.sin(phase).to(torch.float32)


def step_or_failed(call):
    try:
        return call()
    except torchpool.EnvError as error:
        return error.batch


def sync_trajectory(env_id, kwargs, threads, steps=60):
    with torchpool.make(env_id, num_envs=6, num_threads=threads, seed=3, **kwargs) as pool:
        assert pool.num_threads == threads
        rows = [pool.reset().clone()]
        ids = torch.arange(6)
        for t in range(steps):
            action = action_for(pool, ids, torch.full((6,), t))
            rows.append(step_or_failed(lambda: pool.step(action)).clone())  # noqa: B023 (called at once)
        return rows


def async_trajectories(env_id, kwargs, threads, rounds=80):
    with torchpool.make(env_id, num_envs=8, batch_size=3, num_threads=threads, seed=3, **kwargs) as pool:
        per_env = {i: [] for i in range(8)}
        counts = torch.zeros(8, dtype=torch.int64)
        pool.async_reset()
        for _ in range(rounds):
            td = step_or_failed(pool.recv)
            ids = td["env_id"].clone()
            for row, env in enumerate(ids.tolist()):
                per_env[env].append({key: td[key][row].clone() for key in KEYS})
            pool.send(action_for(pool, ids, counts[ids]), ids)
            counts[ids] += 1
        return per_env


@pytest.mark.parametrize("env_id, kwargs", CASES, ids=[c[0] for c in CASES])
def test_sync_batches_are_bit_identical_for_1_2_and_4_threads(env_id, kwargs):
    reference = sync_trajectory(env_id, kwargs, 1)
    for threads in (2, 4):
        other = sync_trajectory(env_id, kwargs, threads)
        for t, (a, b) in enumerate(zip(reference, other)):
            for key in KEYS:
                assert torch.equal(a[key], b[key]), f"{threads} threads, step {t}, {key} differs"


@pytest.mark.parametrize("env_id, kwargs", CASES, ids=[c[0] for c in CASES])
def test_async_trajectories_are_bit_identical_env_by_env_for_1_2_and_4_threads(env_id, kwargs):
    reference = async_trajectories(env_id, kwargs, 1)
    for threads in (2, 4):
        other = async_trajectories(env_id, kwargs, threads)
        compared = 0
        for env in range(8):
            for t, (a, b) in enumerate(zip(reference[env], other[env])):
                for key in KEYS:
                    assert torch.equal(a[key], b[key]), f"{threads} threads, env {env} row {t}, {key} differs"
                compared += 1
        assert compared >= 8 * 10
