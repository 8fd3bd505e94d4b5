"""Every public input, fuzzed: it works or raises a clear TypeError/ValueError naming it; the pool stays usable.

The process never crashes: a crash would take pytest down with it.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import torchpool

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64]
ODD = [0.0, -0.0, 1.0, -1.0, 0.5, 1e300, -1e300, 2**63, -(2**63), math.inf, -math.inf, math.nan, 1e-320, 3.0, 7.0]


def values(shape, dtype, draw_values):
    data = torch.tensor(draw_values, dtype=torch.float64).reshape(-1)
    total = int(np.prod(shape)) if shape else 1
    data = data.repeat(total // max(len(data), 1) + 1)[:total].reshape(shape)
    with np.errstate(all="ignore"):
        return data.to(dtype) if dtype != torch.bool else data != 0


@pytest.fixture(scope="module", params=["CartPole-v1", "Pendulum-v1", "HalfCheetah-v5"])
def pool(request):
    with torchpool.make(request.param, num_envs=4, batch_size=2) as pool:
        pool.async_reset()
        yield pool


def usable(pool):
    """One valid round trip: the pool still answers, with every env in flight again."""
    td = pool.recv()
    ids = td["env_id"].clone()
    spec = pool.action_spec
    action = torch.zeros(len(ids), dtype=torch.int64) if hasattr(spec, "n") else torch.zeros(len(ids), *spec.shape)
    pool.send(action, ids)
    assert pool.in_flight == pool.num_envs


def check_message(error, *names):
    text = str(error)
    assert any(name in text for name in names), f"{type(error).__name__} names none of {names}: {text}"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dtype=st.sampled_from(DTYPES), extra_dims=st.lists(st.integers(0, 3), max_size=2),
       count=st.integers(0, 3), draw_values=st.lists(st.sampled_from(ODD), min_size=1, max_size=6))
def test_fuzzed_actions_work_or_raise_naming_the_action(pool, dtype, extra_dims, count, draw_values):
    td = pool.recv()
    ids = td["env_id"].clone()
    spec = pool.action_spec
    shape = (count, *(() if hasattr(spec, "n") else spec.shape), *extra_dims)
    action = values(shape, dtype, draw_values)
    try:
        pool.send(action, ids)
    except (TypeError, ValueError) as error:
        check_message(error, "action")
        discrete = hasattr(spec, "n")
        fallback = torch.zeros(len(ids), dtype=torch.int64) if discrete else torch.zeros(len(ids), *spec.shape)
        pool.send(fallback, ids)
    usable(pool)


ENV_ID_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float32, torch.bool]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dtype=st.sampled_from(ENV_ID_DTYPES), raw=st.lists(st.integers(-300, 300), min_size=0, max_size=5),
       as_numpy=st.booleans(), two_d=st.booleans())
def test_fuzzed_env_ids_work_or_raise_naming_the_env_id(pool, dtype, raw, as_numpy, two_d):
    td = pool.recv()
    idle = td["env_id"].tolist()
    with np.errstate(all="ignore"):
        ids = torch.tensor(raw, dtype=torch.int64).to(dtype)
    if two_d:
        ids = ids.reshape(1, -1)
    if as_numpy:
        ids = ids.numpy()
    spec = pool.action_spec

    def zeros(n):
        return torch.zeros(n, dtype=torch.int64) if hasattr(spec, "n") else torch.zeros(n, *spec.shape)

    try:
        pool.send(zeros(len(raw)), ids)
        idle = [i for i in idle if i not in torch.as_tensor(ids).reshape(-1).tolist()]  # those were sent
    except (TypeError, ValueError, RuntimeError) as error:  # all or nothing: none was sent
        check_message(error, "env id", "env_id", "action", "no env ids")
    if idle:
        pool.send(zeros(len(idle)), torch.tensor(idle))
    assert pool.in_flight == pool.num_envs
    usable(pool)


KWARG_VALUES = [None, "x", 1.5, -1, 0, 10**30, [1, 2], {"a": 1}, True, float("nan"), b"bytes", torch.zeros(2)]


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(["num_envs", "batch_size", "num_threads", "seed", "autoreset", "obs_dtype",
                             "max_episode_steps", "pin_memory", "g", "max_speed", "bogus_kwarg"]),
       value=st.sampled_from(KWARG_VALUES))
def test_fuzzed_make_kwargs_work_or_raise_naming_the_kwarg(name, value):
    try:
        pool = torchpool.make("Pendulum-v1", **{name: value})
    except (TypeError, ValueError) as error:
        check_message(error, name)
        return
    with pool:
        pool.reset()
        pool.step(torch.zeros(pool.num_envs, 1)) if not pool.is_async else None


@settings(max_examples=60, deadline=None)
@given(seed=st.one_of(st.none(), st.integers(-5, 2**70), st.floats(allow_nan=True), st.text(max_size=3),
                      st.lists(st.integers(-3, 2**64), max_size=5)),
       env_ids=st.one_of(st.none(), st.lists(st.integers(-2, 6), max_size=5)))
def test_fuzzed_reset_arguments_work_or_raise_naming_them(seed, env_ids):
    with torchpool.make("CartPole-v1", num_envs=4) as pool:
        try:
            pool.reset(seed=seed, env_ids=env_ids)
        except (TypeError, ValueError, OverflowError, RuntimeError) as error:
            check_message(error, "seed", "env id", "env_id", "appears twice", "no env ids", "overflow", "Overflow")
        pool.reset()
        assert pool.step(torch.zeros(4, dtype=torch.int64)).batch_size[0] == 4
