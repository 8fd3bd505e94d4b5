"""Every bad input raises a clear Python exception naming the problem."""

import math

import numpy as np
import pytest
import torch

import torchpool


@pytest.fixture
def cartpole():
    with torchpool.make("CartPole-v1", num_envs=4) as pool:
        pool.reset()
        yield pool


def test_unknown_env_id_suggests_the_closest_names():
    with pytest.raises(ValueError, match=r"unknown env id 'CartPole-v0'\. Did you mean .*'CartPole-v1'.*"
                                         r"torchpool.make\('gymnasium:CartPole-v0', \.\.\.\) steps it in worker"):
        torchpool.make("CartPole-v0")
    with pytest.raises(ValueError, match="Did you mean 'Pendulum-v1'"):
        torchpool.make("pendulum")


def test_unknown_kwarg_is_rejected_with_suggestions():
    with pytest.raises(TypeError, match=r"Pendulum-v1 got an unknown kwarg 'gravity'.*Its task kwargs: g"):
        torchpool.make("Pendulum-v1", gravity=9.8)
    with pytest.raises(TypeError, match="Did you mean 'goal_velocity'"):
        torchpool.make("MountainCar-v0", goal_velocty=0.1)


def test_ill_typed_kwarg_is_rejected():
    with pytest.raises(TypeError, match="kwarg 'g' must be float, got 'strong'"):
        torchpool.make("Pendulum-v1", g="strong")
    with pytest.raises(TypeError, match="kwarg 'sutton_barto_reward' must be bool"):
        torchpool.make("CartPole-v1", sutton_barto_reward=1)
    with pytest.raises(TypeError, match="kwarg 'g' must be float"):
        torchpool.make("Pendulum-v1", g=True)
    assert torchpool.make("Pendulum-v1", num_envs=1, g=9).task_kwargs["g"] == 9.0, "an int is a fine float"


@pytest.mark.parametrize("kwargs, message", [
    (dict(num_envs=0), "num_envs must be a positive int"),
    (dict(num_envs=2.5), "num_envs must be a positive int"),
    (dict(num_envs=4, batch_size=5), "batch_size=5 is larger than num_envs=4"),
    (dict(num_envs=4, batch_size=0), "batch_size must be a positive int"),
    (dict(num_threads=0), "num_threads must be a positive int"),
    (dict(autoreset="sometimes"), "autoreset must be one of"),
    (dict(obs_dtype=torch.int32), "obs_dtype must be torch.float32 or torch.float64"),
    (dict(seed=-1), r"seed must be an int in \[0, 2\*\*63 - num_envs\)"),
    (dict(max_episode_steps=-3), "max_episode_steps must be a non-negative int"),
])
def test_bad_make_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        torchpool.make("CartPole-v1", **kwargs)


def test_action_of_wrong_shape(cartpole):
    with pytest.raises(ValueError, match=r"action must have shape \(4,\).*got \(3,\)"):
        cartpole.step(torch.zeros(3, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"got \(4, 1\)"):
        cartpole.step(torch.zeros(4, 1, dtype=torch.int64))


def test_action_of_wrong_dtype(cartpole):
    with pytest.raises(TypeError, match="action dtype must be one of .*got torch.float32"):
        cartpole.step(torch.zeros(4))
    with pytest.raises(TypeError, match="action dtype"):
        torchpool.make("Pendulum-v1", num_envs=2).step(torch.zeros(2, 1, dtype=torch.int64))


def test_numpy_actions_are_checked_as_tensors_are(cartpole, monkeypatch):
    # NumPy actions have a fast path of their own (Pool._coerce_action): only right ones take it.
    with pytest.raises(ValueError, match=r"action must have shape \(4,\).*got \(3,\)"):
        cartpole.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(TypeError, match="action dtype must be one of .*got torch.float32"):
        cartpole.step(np.zeros(4, dtype=np.float32))
    with pytest.raises(ValueError, match=r"action 2 for env 1 is not a valid index in \[0, 2\)"):
        cartpole.step(np.array([0, 2, 0, 0]))
    read_only = np.ones(4, dtype=np.int64)
    read_only.flags.writeable = False
    strided = np.ones(8, dtype=np.int64)[::2]
    broadcast = np.broadcast_to(np.int64(1), (4,))  # read-only, stride 0
    # torch warns once per process of a tensor viewing a read-only array: such arrays must be copied first.
    from_numpy = torch.from_numpy

    def from_writable_numpy(array):
        assert array.flags.writeable, "the pool handed torch a read-only array"
        return from_numpy(array)

    monkeypatch.setattr(torch, "from_numpy", from_writable_numpy)
    # Right ones, on either path, step exactly as the same actions given as tensors.
    with torchpool.make("CartPole-v1", num_envs=4) as reference:
        cartpole.reset(seed=[0, 1, 2, 3])
        reference.reset(seed=[0, 1, 2, 3])
        for action in (np.ones(4, dtype=np.int64), np.zeros(4, dtype=np.int32), read_only, strided, broadcast):
            want = reference.step(torch.tensor(action, dtype=torch.int64))["observation"]
            assert torch.equal(cartpole.step(action)["observation"], want), f"{action.dtype} {action.flags}"


@pytest.mark.parametrize("bad", [2, -1])
def test_discrete_action_out_of_range(cartpole, bad):
    action = torch.zeros(4, dtype=torch.int64)
    action[2] = bad
    with pytest.raises(ValueError, match=rf"action {bad} for env 2 is not a valid index in \[0, 2\)"):
        cartpole.step(action)
    cartpole.step(torch.zeros(4, dtype=torch.int64))  # the pool is unharmed


def test_non_finite_continuous_action():
    with torchpool.make("Pendulum-v1", num_envs=2) as pool:
        pool.reset()
        with pytest.raises(ValueError, match="action for env 1 is not finite"):
            pool.step(torch.tensor([[0.0], [math.nan]]))
        with pytest.raises(ValueError, match="action for env 0 is not finite"):
            pool.step(torch.tensor([[math.inf], [0.0]]))


def test_continuous_actions_out_of_bounds_are_clipped_like_the_reference():
    pools = [torchpool.make("Pendulum-v1", num_envs=1, seed=1, obs_dtype=torch.float64) for _ in range(2)]
    for pool in pools:
        pool.reset()
    a = pools[0].step(torch.tensor([[50.0]]))
    b = pools[1].step(torch.tensor([[2.0]]))
    assert torch.equal(a["observation"], b["observation"])


def test_env_id_out_of_range():
    with torchpool.make("CartPole-v1", num_envs=4, batch_size=2) as pool:
        pool.async_reset()
        pool.recv()
        pool.recv()
        with pytest.raises(ValueError, match=r"env id 7 is out of range \[0, 4\)"):
            pool.send(torch.zeros(1, dtype=torch.int64), torch.tensor([7]))
        with pytest.raises(ValueError, match=r"env id -1 is out of range"):
            pool.send(torch.zeros(1, dtype=torch.int64), [-1])


def test_duplicate_env_ids_in_one_send():
    with torchpool.make("CartPole-v1", num_envs=4, batch_size=2) as pool:
        pool.reset()
        with pytest.raises(ValueError, match="env id 1 appears twice in one call"):
            pool.send(torch.zeros(3, dtype=torch.int64), torch.tensor([1, 0, 1]))
        pool.send(torch.zeros(2, dtype=torch.int64), torch.tensor([1, 0]))  # nothing was left marked
        assert sorted(pool.recv()["env_id"].tolist()) == [0, 1]


def test_second_action_for_an_env_in_flight():
    with torchpool.make("CartPole-v1", num_envs=4, batch_size=2) as pool:
        pool.reset()
        pool.send(torch.zeros(2, dtype=torch.int64), [0, 1])
        with pytest.raises(ValueError, match="env 1 already has an action in flight"):
            pool.send(torch.zeros(2, dtype=torch.int64), [2, 1])


def test_recv_with_nothing_in_flight(cartpole):
    with pytest.raises(RuntimeError, match=r"recv\(\) needs batch_size=4 envs in flight, but 0 are"):
        cartpole.recv()


def test_step_before_reset():
    with torchpool.make("CartPole-v1", num_envs=2) as pool:
        with pytest.raises(ValueError, match=r"env 0 was never reset; call reset\(\) before stepping"):
            pool.step(torch.zeros(2, dtype=torch.int64))


def test_step_without_env_id_on_an_async_pool():
    with torchpool.make("CartPole-v1", num_envs=4, batch_size=2) as pool:
        pool.reset()
        with pytest.raises(ValueError, match=r"this pool is async.*use send\(\)/recv\(\)"):
            pool.step(torch.zeros(4, dtype=torch.int64))


def test_reset_with_mismatched_seed_list(cartpole):
    with pytest.raises(ValueError, match="got 2 seeds for 4 envs"):
        cartpole.reset(seed=[1, 2])
    with pytest.raises(TypeError, match="seed must be an int or a 1-D sequence of ints"):
        cartpole.reset(seed=1.5)


def test_every_call_after_close_raises():
    pool = torchpool.make("CartPole-v1", num_envs=2)
    pool.reset()
    pool.close()
    calls = [lambda: pool.reset(), lambda: pool.step(torch.zeros(2, dtype=torch.int64)),
             lambda: pool.send(torch.zeros(2, dtype=torch.int64)), pool.recv, pool.async_reset]
    for call in calls:
        with pytest.raises(RuntimeError, match="the pool is closed"):
            call()


def test_non_integer_env_ids():
    with torchpool.make("CartPole-v1", num_envs=4, batch_size=2) as pool:
        pool.reset()
        with pytest.raises(TypeError, match="env_id must hold integers"):
            pool.send(torch.zeros(2, dtype=torch.int64), np.array([0.0, 1.0]))


def test_a_mistyped_id_suggests_only_the_near_ids():
    with pytest.raises(ValueError, match=r"Did you mean 'CartPole-v1'\? torchpool"):
        torchpool.make("Cartpole-v1")  # not also 'Earthworld-v5' and 'Carnival-v5'
    with pytest.raises(ValueError, match=r"Did you mean 'SpaceInvaders-v5'\? torchpool"):
        torchpool.make("spaceinvaders-v5")


def test_a_mistyped_make_argument_is_suggested_among_the_task_kwargs():
    with pytest.raises(TypeError, match=r"unknown kwarg 'num_env'\. Did you mean 'num_envs'\?"):
        torchpool.make("CartPole-v1", num_env=4)


def test_list_into_a_closed_pipe_prints_no_traceback():
    import subprocess
    import sys

    result = subprocess.run(f"{sys.executable} -m torchpool list | head -1", shell=True, capture_output=True,
                            text=True, timeout=120)
    assert result.stdout.startswith("Acrobot-v1")
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr, result.stderr
