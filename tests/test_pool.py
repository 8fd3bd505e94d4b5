"""Pool behaviour: outputs, autoreset modes, seeding, determinism, buffer reuse, errors from workers."""

import time

import numpy as np
import pytest
import torch
from threads import started_since, torchpool_threads

import torchpool
from torchpool.pool import Pool

STEP_KEYS = {"observation", "reward", "terminated", "truncated", "done", "env_id",
             "episode_return", "episode_length"}


def probe(num_envs=4, **kwargs):
    """Probe observations: [steps in episode, last action, resets so far, total steps]."""
    return torchpool.make("_Probe-v0", num_envs=num_envs, **kwargs)


@pytest.mark.parametrize("env_id, obs_shape", [("CartPole-v1", (4,)), ("Pendulum-v1", (3,)), ("Acrobot-v1", (6,))])
def test_step_returns_documented_keys_shapes_and_dtypes(env_id, obs_shape):
    with torchpool.make(env_id, num_envs=5) as pool:
        td = pool.reset()
        assert set(td.keys()) == STEP_KEYS | {"final_observation"}
        action = torch.zeros((5, *pool.action_spec.shape), dtype=pool.action_spec.dtype)
        td = pool.step(action)
        assert td.batch_size == torch.Size([5])
        assert td["observation"].shape == (5, *obs_shape) and td["observation"].dtype == torch.float32
        assert td["final_observation"].shape == (5, *obs_shape)
        assert td["reward"].dtype == torch.float32 and td["reward"].shape == (5,)
        for key in ("terminated", "truncated", "done"):
            assert td[key].dtype == torch.bool, key
        assert td["env_id"].dtype == torch.int64 and td["episode_length"].dtype == torch.int64
        assert td["episode_return"].dtype == torch.float32


def test_obs_dtype_float64_gives_float64_observations():
    with torchpool.make("Pendulum-v1", num_envs=2, obs_dtype=torch.float64) as pool:
        assert pool.reset()["observation"].dtype == torch.float64
        assert pool.observation_spec.dtype == torch.float64


def test_sync_step_rows_are_ordered_by_env_id():
    with probe(num_envs=16, max_sleep_us=300.0, num_threads=2) as pool:
        pool.reset()
        td = pool.step(torch.arange(16))
        assert torch.equal(td["env_id"], torch.arange(16))
        assert torch.equal(td["observation"][:, 1], torch.arange(16, dtype=torch.float32)), "row i holds env i's action"


def test_same_step_autoreset_returns_final_observation_and_new_episode():
    with probe(num_envs=2, episode_length=3) as pool:
        pool.reset()
        for _ in range(1, 4):
            td = pool.step(torch.tensor([5, 7]))
        assert td["done"].all() and td["terminated"].all() and not td["truncated"].any()
        assert torch.equal(td["final_observation"][:, 0], torch.tensor([3.0, 3.0])), "true last obs: 3 steps in"
        assert torch.equal(td["observation"][:, 0], torch.tensor([0.0, 0.0])), "obs is the new episode's first"
        assert torch.equal(td["observation"][:, 2], torch.tensor([2.0, 2.0])), "reset happened in the same step"
        assert torch.equal(td["episode_return"], torch.tensor([15.0, 21.0]))
        assert torch.equal(td["episode_length"], torch.tensor([3, 3]))
        td = pool.step(torch.tensor([1, 1]))
        assert not td["done"].any()
        assert torch.equal(td["observation"][:, 0], torch.tensor([1.0, 1.0]))
        assert torch.equal(td["final_observation"], td["observation"]), "equals observation where not done"
        assert torch.equal(td["episode_return"], torch.tensor([1.0, 1.0])), "running total of the new episode"


def test_next_step_autoreset_resets_on_the_following_step_and_ignores_its_action():
    with probe(num_envs=1, episode_length=2, autoreset="next_step") as pool:
        pool.reset()
        pool.step(torch.tensor([4]))
        td = pool.step(torch.tensor([4]))
        assert td["done"].item() and td["observation"][0, 0].item() == 2.0, "last obs stays in place"
        assert "final_observation" not in td.keys()
        td = pool.step(torch.tensor([9]))
        assert not td["done"].item()
        assert td["reward"].item() == 0.0 and td["observation"][0].tolist() == [0.0, -1.0, 2.0, 2.0]
        assert td["episode_length"].item() == 0


def test_disabled_autoreset_requires_an_explicit_reset():
    with probe(num_envs=2, episode_length=1, autoreset="disabled") as pool:
        pool.reset()
        assert pool.step(torch.tensor([1, 1]))["done"].all()
        with pytest.raises(ValueError, match="autoreset is 'disabled'"):
            pool.step(torch.tensor([1, 1]))
        td = pool.reset(env_ids=[1, 0])
        assert td["env_id"].tolist() == [1, 0]
        td = pool.step(torch.tensor([1, 1]))
        assert td["observation"][:, 0].tolist() == [1.0, 1.0], "a fresh episode's first step"


def test_terminated_and_truncated_are_reported_independently():
    with probe(num_envs=1, episode_length=3, max_episode_steps=3) as pool:
        pool.reset()
        for _ in range(3):
            td = pool.step(torch.tensor([0]))
        assert td["terminated"].item() and td["truncated"].item() and td["done"].item()
    with probe(num_envs=1, episode_length=10, max_episode_steps=2) as pool:
        pool.reset()
        pool.step(torch.tensor([0]))
        td = pool.step(torch.tensor([0]))
        assert td["truncated"].item() and not td["terminated"].item() and td["done"].item()


def test_time_limit_defaults_to_the_reference_and_can_be_overridden():
    assert torchpool.make("CartPole-v1", num_envs=1).max_episode_steps == 500
    assert torchpool.make("Pendulum-v1", num_envs=1).max_episode_steps == 200
    assert torchpool.make("MountainCarContinuous-v0", num_envs=1).max_episode_steps == 999
    assert torchpool.make("CartPole-v1", num_envs=1, max_episode_steps=7).max_episode_steps == 7


def test_seeding_at_make_and_reset_agree():
    first = torchpool.make("CartPole-v1", num_envs=6, seed=3).reset()["observation"].clone()
    pool = torchpool.make("CartPole-v1", num_envs=6, seed=0)
    other = pool.reset()["observation"].clone()
    assert not torch.equal(first, other), "different seeds give different starts"
    assert torch.equal(pool.reset(seed=3)["observation"], first), "reset(seed=s) equals make(seed=s)"
    assert torch.equal(pool.reset(seed=[3 + i for i in range(6)])["observation"], first), "per-env seed list"
    assert not torch.equal(pool.reset()["observation"], first), "no seed continues the stream"


def _async_trajectories(num_threads):
    """Per-env observation sequences of an async pool whose envs finish in random order."""
    pool = probe(num_envs=12, batch_size=4, num_threads=num_threads, max_sleep_us=200.0, episode_length=4, seed=5)
    trajectories = {env: [] for env in range(12)}
    pool.async_reset()
    for _ in range(30):
        td = pool.recv()
        for env, obs in zip(td["env_id"].tolist(), td["observation"].tolist()):
            trajectories[env].append(obs)
        pool.send(td["env_id"] * 3 % 1000, td["env_id"])
    pool.close()
    return trajectories


def test_async_trajectories_do_not_depend_on_num_threads_or_timing():
    reference = _async_trajectories(1)
    result = _async_trajectories(3)
    for env in range(12):
        shared = min(len(reference[env]), len(result[env]))
        assert shared > 0
        assert reference[env][:shared] == result[env][:shared], f"env {env} diverged"


def test_held_outputs_are_never_overwritten():
    with torchpool.make("CartPole-v1", num_envs=4) as pool:
        pool.reset()
        action = torch.ones(4, dtype=torch.int64)
        held_td = pool.step(action)
        held_copy = held_td.clone()
        held_obs = pool.step(action)["observation"]
        held_obs_copy = held_obs.clone()
        held_slice = pool.step(action)["reward"][1:]
        held_slice_copy = held_slice.clone()
        for _ in range(10):
            pool.step(action)
        assert (held_td == held_copy).all()
        assert torch.equal(held_obs, held_obs_copy)
        assert torch.equal(held_slice, held_slice_copy)


@pytest.mark.parametrize("hold", ["array", "numpy slice", "dict"])
def test_held_step_arrays_are_never_overwritten_and_dropped_ones_reused(hold):
    with torchpool.make("CartPole-v1", num_envs=4) as pool, torchpool.make("CartPole-v1", num_envs=4) as twin:
        pool.reset()
        twin.reset()
        action = torch.ones(4, dtype=torch.int64)
        arrays = pool.step_arrays(action)
        expected = twin.step(action)
        assert set(arrays) == set(expected.keys()) and all(
            np.array_equal(arrays[key], expected[key].numpy()) for key in arrays), "not the step's batch"
        kept = {"array": lambda a: a["observation"], "numpy slice": lambda a: a["observation"][1:],
                "dict": lambda a: a}[hold](arrays)
        snapshot = np.array(kept["observation"] if hold == "dict" else kept)  # a copy: holds nothing
        del arrays
        for _ in range(10):
            pool.step_arrays(action)
        now = kept["observation"] if hold == "dict" else kept
        assert np.array_equal(now, snapshot), f"a held {hold} was overwritten"
        del now
        del kept
        pool.step_arrays(action)
        buffers = [block.data.data_ptr() for block in pool._home]
        for _ in range(20):
            pool.step_arrays(action)
        assert [block.data.data_ptr() for block in pool._home] == buffers, "dropped arrays' buffers are not reused"


def test_step_arrays_refuses_async_pools_by_name():
    with torchpool.make("CartPole-v1", num_envs=4, batch_size=2) as pool:
        with pytest.raises(ValueError, match=r"step_arrays\(\) steps every env at once: this pool is async"):
            pool.step_arrays(torch.ones(4, dtype=torch.int64))


def test_a_loop_that_drops_its_outputs_allocates_nothing():
    with torchpool.make("CartPole-v1", num_envs=4) as pool:
        pool.reset()
        action = torch.ones(4, dtype=torch.int64)
        for _ in range(5):
            pool.step(action)
        buffers = [block.data.data_ptr() for block in pool._home]
        for _ in range(50):
            pool.step(action)
        assert [block.data.data_ptr() for block in pool._home] == buffers


def _buffer_address(td) -> int:
    return torchpool.Pool.output_bytes(td).data_ptr()


def test_a_loop_that_keeps_rollouts_reuses_the_buffers_of_the_rollout_it_dropped():
    # NOTE [Lent buffers]: the second rollout lands in the first one's memory, and no kept output changes.
    with torchpool.make("CartPole-v1", num_envs=4, seed=1) as pool:
        pool.reset()
        action = torch.ones(4, dtype=torch.int64)
        first = [pool.step(action) for _ in range(20)]
        first_addresses = {_buffer_address(td) for td in first}
        assert len(first_addresses) == 20, "every kept step has a buffer of its own"
        del first
        second = [pool.step(action) for _ in range(20)]
        copies = [td.clone() for td in second]
        reused = {_buffer_address(td) for td in second} & first_addresses
        assert len(reused) >= 15, f"only {len(reused)} of 20 steps reused a dropped buffer"
        for _ in range(30):  # keeps nothing: never writes a buffer the list holds
            pool.step(action)
        for step, (td, copy) in enumerate(zip(second, copies)):
            assert (td == copy).all(), f"kept step {step} was overwritten"


def test_a_lent_buffer_still_held_is_never_reused(monkeypatch):
    monkeypatch.setattr(torchpool.pool, "_LENT_BUFFERS", 4)
    with torchpool.make("CartPole-v1", num_envs=4) as pool:
        assert pool._lent_limit == 4
        pool.reset()
        action = torch.ones(4, dtype=torch.int64)
        kept = [pool.step(action) for _ in range(40)]  # past the cap: the oldest are forgotten, not reused
        observations = [td["observation"].clone() for td in kept]
        del kept[1::2]  # let go of every other one
        more = [pool.step(action) for _ in range(40)]
        assert len(pool._lent) <= 4
        assert len({_buffer_address(td) for td in kept + more}) == len(kept) + len(more), "two outputs share memory"
        for td, observation in zip(kept, observations[0::2]):
            assert torch.equal(td["observation"], observation)


def test_reset_of_a_subset_returns_rows_in_the_order_given():
    with probe(num_envs=6) as pool:
        pool.reset()
        pool.step(torch.ones(6, dtype=torch.int64))
        td = pool.reset(env_ids=torch.tensor([4, 1]))
        assert td["env_id"].tolist() == [4, 1]
        assert td["observation"][:, 2].tolist() == [2.0, 2.0], "those two were reset a second time"
        assert pool.step(torch.ones(6, dtype=torch.int64))["observation"][:, 0].tolist() == [2, 1, 2, 2, 1, 2]


def test_async_recv_returns_batch_size_distinct_envs():
    with probe(num_envs=10, batch_size=4, max_sleep_us=100.0) as pool:
        pool.async_reset()
        seen = []
        for _ in range(2):
            td = pool.recv()
            assert td.batch_size == torch.Size([4])
            ids = td["env_id"].tolist()
            assert len(set(ids)) == 4
            seen += ids
        assert len(set(seen)) == 8


def test_worker_exception_is_raised_with_the_env_id_and_the_pool_keeps_working():
    with probe(num_envs=3, fail_at_step=2) as pool:
        pool.reset()
        pool.step(torch.zeros(3, dtype=torch.int64))
        expected = r"env 0: probe failure at step 2(.|\n)*env 1: probe failure"
        with pytest.raises(torchpool.EnvError, match=expected) as error:
            pool.step(torch.zeros(3, dtype=torch.int64))
        assert error.value.env_ids == [0, 1, 2]
        assert error.value.batch["truncated"].tolist() == [True, True, True]
        # NOTE [Env failures]: the next step resets the failed envs (their action is ignored) ...
        td = pool.step(torch.full((3,), 7, dtype=torch.int64))
        assert td["observation"][:, 0].tolist() == [0.0, 0.0, 0.0]  # steps in the new episode
        assert td["observation"][:, 2].tolist() == [2.0, 2.0, 2.0]  # resets so far
        assert td["reward"].tolist() == [0.0, 0.0, 0.0]
        # ... and the one after steps them again.
        td = pool.step(torch.zeros(3, dtype=torch.int64))
        assert td["observation"][:, 3].tolist() == [3.0, 3.0, 3.0]


def test_async_worker_exception_is_raised_from_recv():
    with probe(num_envs=4, batch_size=2, fail_at_step=1) as pool:
        pool.async_reset()
        pool.recv()
        td = pool.recv()
        pool.send(torch.zeros(2, dtype=torch.int64), td["env_id"])
        with pytest.raises(RuntimeError, match="probe failure at step 1"):
            pool.recv()


def test_close_is_idempotent_and_the_pool_is_a_context_manager():
    with torchpool.make("CartPole-v1", num_envs=2) as pool:
        pool.reset()
    assert pool.closed
    pool.close()
    pool.close()


def test_actions_accept_numpy_lists_and_int32():
    """Each form of action reaches the envs as the same values: the probe's observation holds its last action
    (values past 255 and 65535 would show an int32 read as another width); Pendulum's step is compared with
    that of a twin pool given the same values as the canonical float32 tensor."""
    with probe(num_envs=3) as pool:
        pool.reset()
        for action in (np.array([7, 300, 999]), [5, 0, 12], torch.tensor([511, 2, 998], dtype=torch.int32),
                       np.array([998, 1, 256], dtype=np.int32)):
            reached = pool.step(action)["observation"][:, 1].tolist()
            assert reached == [float(a) for a in action], f"{type(action).__name__} {action!r} reached as {reached}"
    with torchpool.make("Pendulum-v1", num_envs=2, seed=3) as pool, \
            torchpool.make("Pendulum-v1", num_envs=2, seed=3) as reference:
        pool.reset()
        reference.reset()
        for action in (np.array([[1.5], [-2.0]]), torch.tensor([[0.5], [-1.25]], dtype=torch.float64),
                       [[2.0], [-0.75]]):
            expected = reference.step(torch.as_tensor(action, dtype=torch.float32))
            got = pool.step(action)
            for key in ("observation", "reward"):
                assert torch.equal(got[key], expected[key]), f"{type(action).__name__} {action!r}: {key} differs"


def _affinity(tid: int) -> str:
    with open(f"/proc/self/task/{tid}/status") as status:
        return next(line.split()[1] for line in status if line.startswith("Cpus_allowed_list"))


def test_thread_affinity_offset_pins_each_worker_to_one_core():
    import os

    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs two cores")
    before = torchpool_threads()
    with torchpool.make("CartPole-v1", num_envs=4, num_threads=2, thread_affinity_offset=0) as pool:
        pool.reset()
        pinned = sorted(_affinity(tid) for tid in torchpool_threads() - before)
        assert pinned == ["0", "1"], f"the pool's workers' affinities: {pinned}"


def test_the_gil_is_released_while_waiting():
    import threading

    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)
            stop.wait(0.001)

    with probe(num_envs=2, max_sleep_us=200000.0, num_threads=2) as pool:
        counter = threading.Thread(target=count)
        counter.start()
        while not ticks:  # the counter runs before the reset starts
            time.sleep(0.001)
        before = len(ticks)
        pool.reset()  # waits in C++ for the envs' naps (seeded: tens of ms at least)
        during = len(ticks) - before
        stop.set()
        counter.join()
    # Holding the GIL, reset() would have let the counter tick not once.
    assert during > 0, "no other Python thread ran while reset() waited: the GIL was held"


@pytest.mark.parametrize("env_id, num_envs, batch_size, num_threads, mode, worker_threads", [
    ("CartPole-v1", 8, None, 2, "caller_runs_items", 2),
    ("Pong-v5", 4, None, 1, "caller_only", 0),
    ("Pong-v5", 4, None, 2, "caller_as_worker", 1),
    ("Pong-v5", 8, 4, 2, "workers", 2),
])
def test_pool_schedule_names_the_mode_and_the_threads_it_starts(env_id, num_envs, batch_size, num_threads, mode,
                                                                worker_threads):
    before = torchpool_threads()
    with torchpool.make(env_id, num_envs=num_envs, batch_size=batch_size, num_threads=num_threads) as pool:
        schedule = pool.schedule
        assert schedule["mode"] == mode, schedule
        assert schedule["worker_threads"] == worker_threads
        assert started_since(before, settle_to=worker_threads) == worker_threads, \
            "pool.schedule's worker_threads are the OS threads"
        assert (schedule["caller_last_items_spin_us"] > 0) == (mode == "caller_as_worker"), schedule
        assert schedule["caller_runs_items"] == (mode != "workers"), schedule
        assert schedule["split_tail_substeps"] == 0, "ALE cannot split a step"
        schedule["mode"] = "changed"
        assert pool.schedule["mode"] == mode, "pool.schedule is read-only: a copy"


def test_pool_schedule_of_a_mujoco_sync_pool_holds_a_split_tail():
    with torchpool.make("HalfCheetah-v5", num_envs=8, num_threads=2) as pool:
        schedule = pool.schedule
    assert schedule["mode"] == "caller_as_worker" and schedule["split_tail_substeps"] == 5, schedule


def test_pool_schedule_of_a_closed_pool_raises():
    pool = torchpool.make("CartPole-v1", num_envs=2)
    pool.close()
    with pytest.raises(RuntimeError, match="closed"):
        _ = pool.schedule


def test_the_caller_takes_a_workers_place_in_sync_pools_and_short_async_batches_of_costly_envs():
    # _Probe-v0 with sleeps declares ~25 us a step: costly. Sync, and async
    # batches of 3 (~38 us over 2 threads): the calling thread steps envs as
    # one of num_threads (a sync pool of 1 thread has no worker left). Async
    # batches of 16 (~200 us) keep every worker.
    kwargs = dict(num_envs=6, num_threads=2, max_sleep_us=50.0, episode_length=7, seed=4)
    before = torchpool_threads()
    rng = np.random.default_rng(0)
    actions = [torch.from_numpy(rng.integers(0, 1000, size=6)) for _ in range(30)]
    with torchpool.make("_Probe-v0", **kwargs) as sync:
        assert started_since(before, settle_to=1) == 1
        sync.reset()
        helped = [sync.step(a)["observation"].clone() for a in actions]
    with torchpool.make("_Probe-v0", **{**kwargs, "num_threads": 1}) as alone:
        assert started_since(before, settle_to=0) == 0  # no worker: the caller steps every env
        alone.reset()
        for t, (a, expected) in enumerate(zip(actions, helped)):
            if t % 2:
                torch.testing.assert_close(alone.step(a)["observation"], expected)
            else:  # send() only queues; recv() runs the steps
                alone.send(a)
                torch.testing.assert_close(alone.recv()["observation"], expected)
    with torchpool.make("_Probe-v0", batch_size=3, **kwargs) as short:
        assert started_since(before, settle_to=1) == 1
        short.reset()
        for a, expected in zip(actions, helped):
            short.send(a[:3], env_id=[0, 1, 2])
            short.send(a[3:], env_id=[3, 4, 5])
            got = torch.empty_like(expected)
            for _ in range(2):
                out = short.recv()
                got[out["env_id"]] = out["observation"]
            torch.testing.assert_close(got, expected)
    with torchpool.make("_Probe-v0", **{**kwargs, "num_envs": 32, "batch_size": 16}):
        assert started_since(before, settle_to=2) == 2


def test_a_sync_send_wakes_the_workers_so_envs_step_while_the_caller_is_away():
    # A sync pool of costly envs runs "the caller as a worker" (NOTE [The
    # caller as a worker]): one worker fewer, and every push wakes the
    # workers, so a send() steps envs in the background (how fast is
    # benchmarks/schedule_ab.py's question, not a test's). Each step sleeps
    # up to 19 ms (declared ~9.5 ms: costly, still run by the caller).
    with torchpool.make("_Probe-v0", num_envs=8, num_threads=2, max_sleep_us=19000.0, seed=1) as pool:
        schedule = pool.schedule
        assert schedule["mode"] == "caller_as_worker" and schedule["worker_threads"] == 1, schedule
        assert pool.steps_in_background(8), "a push of every env does not wake the worker"
        pool.reset()
        for t in range(3):
            pool.send(torch.full((8,), t, dtype=torch.int64))
            out = pool.recv()
            assert out["env_id"].tolist() == list(range(8))
            assert (out["observation"][:, 1] == t).all(), "a row of another step"


def columns(pool, data: torch.Tensor) -> dict[str, torch.Tensor]:
    """The step outputs in a buffer laid out as ``pool.output_layout()`` (padding between columns left out)."""
    out = {}
    for key, dtype, shape, offset in pool.output_layout():
        count = pool.num_envs * int(np.prod(shape, dtype=np.int64))
        out[key] = data[offset:offset + count * dtype.itemsize].view(dtype).view(pool.num_envs, *shape)
    return out


def assert_same_step(pool, got: torch.Tensor, expected: torch.Tensor, where: str) -> None:
    got, expected = columns(pool, got), columns(pool, expected)
    for key in expected:
        assert torch.equal(got[key], expected[key]), f"{where}: {key}"


@pytest.mark.parametrize("fused", [False, True])  # send_into + recv_into, or step_into
def test_send_into_writes_the_step_straight_into_the_callers_buffer(fused):
    actions = [torch.randint(0, 2, (4,)) for _ in range(30)]
    with torchpool.make("CartPole-v1", num_envs=4, seed=5) as plain, \
            torchpool.make("CartPole-v1", num_envs=4, seed=5) as redirected:
        plain.reset()
        redirected.reset()
        outs = [torch.full((redirected.output_nbytes,), 0xAB, dtype=torch.uint8) for _ in range(2)]
        for t, action in enumerate(actions):
            expected = Pool.output_bytes(plain.step(action))
            out = outs[t % 2]
            if t % 3 == 2:  # plain steps in between use the pool's own blocks again
                got = Pool.output_bytes(redirected.step(action))
                assert got.data_ptr() not in {o.data_ptr() for o in outs}
                assert_same_step(redirected, got, expected, f"step {t}")
                continue
            before_other = outs[(t + 1) % 2].clone()
            if fused:
                assert redirected.step_into(action, out) is out
            else:
                redirected.send_into(action, out)
                assert redirected.recv_into() is out
            assert_same_step(redirected, out, expected, f"step {t}")
            assert torch.equal(outs[(t + 1) % 2], before_other), "only the given buffer is written"


def test_step_into_refuses_misuse():
    with torchpool.make("CartPole-v1", num_envs=4) as pool:
        pool.reset()
        action = torch.zeros(4, dtype=torch.int64)
        outs = [torch.empty(pool.output_nbytes, dtype=torch.uint8) for _ in range(2)]
        pool.step_into(action, outs[0])
        with pytest.raises(RuntimeError, match="none is in flight"):
            pool.recv_into()
        with pytest.raises(ValueError, match=f"output_nbytes={pool.output_nbytes}"):
            pool.step_into(action, outs[0][1:])
        with pytest.raises(ValueError, match="action"):
            pool.step_into(torch.tensor([0, 7, 0, 0]), outs[0])
        pool.send_into(action, outs[0])
        with pytest.raises(RuntimeError, match="step_into.*some are in flight"):
            pool.step_into(action, outs[1])


def test_step_into_raises_a_worker_exception_and_the_pool_keeps_working():
    with probe(num_envs=2, fail_at_step=2) as pool:
        pool.reset()
        out = torch.empty(pool.output_nbytes, dtype=torch.uint8)
        action = torch.zeros(2, dtype=torch.int64)
        pool.step_into(action, out)
        with pytest.raises(torchpool.EnvError, match="probe failure at step 2") as error:
            pool.step_into(action, out)
        assert error.value.batch is out
        assert pool.step(action)["observation"][:, 2].tolist() == [2.0, 2.0]  # the failed envs were reset
        assert pool.step(action)["observation"][:, 3].tolist() == [3.0, 3.0]


def rollout_targets(pool, T: int, by_columns: bool):
    """One [num_envs, T, *shape] tensor per key, and the targets of each step t (column t)."""
    columns = {name: torch.zeros((pool.num_envs, T, *shape), dtype=dtype)
               for name, dtype, shape, _ in pool.output_layout()}
    if by_columns:
        return columns, pool.output_target_columns(columns)
    return columns, [pool.output_targets({name: c[:, t] for name, c in columns.items()}) for t in range(T)]


@pytest.mark.parametrize("by_columns", [False, True])
def test_output_targets_put_each_step_in_its_column_of_a_rollout(by_columns):
    T = 40
    actions = [torch.randint(0, 2, (4,)) for _ in range(T)]
    with torchpool.make("CartPole-v1", num_envs=4, seed=5) as plain, \
            torchpool.make("CartPole-v1", num_envs=4, seed=5) as direct:
        plain.reset()
        direct.reset()
        columns, targets = rollout_targets(direct, T, by_columns)
        expected = []
        for t, action in enumerate(actions):
            expected.append(plain.step(action).clone())
            if t % 2:
                assert direct.step_into(action, targets[t]) is targets[t]
            else:
                direct.send_into(action, targets[t])
                assert direct.recv_into() is targets[t]
        assert torch.stack([td["done"] for td in expected], 1).any(), "the rollout crosses episode ends"
        for name, column in columns.items():
            assert torch.equal(column, torch.stack([td[name] for td in expected], 1)), name
        td = direct.step(actions[0])  # plain steps use the pool's own buffers again
        assert td["env_id"].tolist() == [0, 1, 2, 3]


def test_output_targets_refuse_what_the_workers_could_not_write_safely():
    with torchpool.make("CartPole-v1", num_envs=4) as pool, torchpool.make("CartPole-v1", num_envs=4) as other:
        pool.reset()
        good = {name: torch.zeros((4, *shape), dtype=dtype) for name, dtype, shape, _ in pool.output_layout()}
        cases = [
            ({k: v for k, v in good.items() if k != "reward"}, r"missing \['reward'\]"),
            ({**good, "extra": torch.zeros(4)}, r"unknown \['extra'\]"),
            ({**good, "reward": torch.zeros(4, dtype=torch.float64)}, "'reward' must be a CPU torch.float32"),
            ({**good, "observation": torch.zeros(4, 3)}, r"shape \(4, 4\)"),
            ({**good, "observation": torch.zeros(4, 8)[:, ::2]}, "row must be contiguous"),
            ({**good, "observation": torch.zeros(4).unsqueeze(1).expand(4, 4)}, "row must be contiguous"),
            ({**good, "reward": torch.zeros(1).expand(4)}, "'reward' has stride 0 along its env dimension"),
            ({**good, "observation": torch.zeros(10).as_strided((4, 4), (2, 1))},
             r"'observation': rows overlap \(env stride 8 bytes < 16 bytes per row\)"),
            ({**good, "reward": [0.0] * 4}, "got list"),
        ]
        for tensors, message in cases:
            with pytest.raises(ValueError, match=message):
                pool.output_targets(tensors)
        with pytest.raises(ValueError, match=r"output target 'observation': each env's row must be contiguous"):
            pool.output_target_columns({name: torch.zeros((4, 3, *shape), dtype=dtype).transpose(0, 1)
                                        .contiguous().transpose(0, 1) if not shape else
                                        torch.zeros((4, 3, 8), dtype=dtype)[:, :, ::2]
                                        for name, dtype, shape, _ in pool.output_layout()})
        with pytest.raises(ValueError, match=r"\[num_envs, T, \*shape\] tensors"):
            pool.output_target_columns({**good, "observation": torch.zeros(4)})
        with pytest.raises(ValueError, match="another pool"):
            pool.step_into(torch.zeros(4, dtype=torch.int64), other.output_targets(good))
        # Aliased targets give garbage in the caller's memory, never a crash:
        # the pool does not read env ids back from its targets.
        aliased = {**good, "env_id": good["episode_length"]}
        for _ in range(30):
            pool.step_into(torch.zeros(4, dtype=torch.int64), pool.output_targets(aliased))
        assert pool.step(torch.zeros(4, dtype=torch.int64))["env_id"].tolist() == [0, 1, 2, 3]


def test_output_target_columns_refuse_steps_that_share_memory():
    """A column of an expand()ed tensor (stride 0) once passed: every step wrote the same cells."""
    with torchpool.make("CartPole-v1", num_envs=4) as pool:
        rollout = {name: torch.zeros((4, 3, *shape), dtype=dtype) for name, dtype, shape, _ in pool.output_layout()}
        for reward, message in [
            (torch.zeros(4, 1).expand(4, 3), "'reward' has stride 0 along its step dimension .* every step would "
                                             "write the same memory"),
            (torch.zeros(6).as_strided((4, 3), (1, 1)), r"'reward': rows overlap \(env stride 4 bytes < the 12 "
                                                        r"bytes its steps span\)"),
        ]:
            with pytest.raises(ValueError, match=message):
                pool.output_target_columns({**rollout, "reward": reward})


def test_send_into_and_recv_into_refuse_misuse():
    with torchpool.make("CartPole-v1", num_envs=4) as pool:
        pool.reset()
        action = torch.zeros(4, dtype=torch.int64)
        good = torch.empty(pool.output_nbytes, dtype=torch.uint8)
        for bad, what in [(torch.empty(pool.output_nbytes - 1, dtype=torch.uint8), "elements"),
                          (torch.empty(pool.output_nbytes, dtype=torch.int8), "torch.int8"),
                          (torch.empty(2 * pool.output_nbytes, dtype=torch.uint8)[::2], "not contiguous"),
                          (good.numpy(), "ndarray")]:
            with pytest.raises(ValueError, match=f"output_nbytes={pool.output_nbytes}.*{what}"):
                pool.send_into(action, bad)
        with pytest.raises(RuntimeError, match="none is in flight"):
            pool.recv_into()
        pool.send_into(action, good)
        with pytest.raises(RuntimeError, match="collect it with recv_into"):
            pool.recv()
        with pytest.raises(RuntimeError, match="some are in flight"):
            pool.send_into(action, good)
        pool.recv_into()
    with torchpool.make("CartPole-v1", num_envs=4, batch_size=2) as pool:
        with pytest.raises(RuntimeError, match="needs a sync pool"):
            pool.send_into(torch.zeros(4, dtype=torch.int64), torch.empty(pool.output_nbytes, dtype=torch.uint8))


def test_recv_into_raises_a_worker_exception_and_the_pool_keeps_working():
    with probe(num_envs=2, fail_at_step=2) as pool:
        pool.reset()
        out = torch.empty(pool.output_nbytes, dtype=torch.uint8)
        action = torch.zeros(2, dtype=torch.int64)
        pool.send_into(action, out)
        pool.recv_into()
        pool.send_into(action, out)
        with pytest.raises(torchpool.EnvError, match="probe failure at step 2"):
            pool.recv_into()
        assert pool.step(action)["observation"][:, 2].tolist() == [2.0, 2.0]  # the failed envs were reset
        assert pool.step(action)["observation"][:, 3].tolist() == [3.0, 3.0]


def test_a_rejected_send_into_leaves_later_plain_steps_in_the_pools_own_buffers():
    with torchpool.make("CartPole-v1", num_envs=2) as pool:
        pool.reset()
        out = torch.zeros(pool.output_nbytes, dtype=torch.uint8)
        with pytest.raises(ValueError, match="action"):
            pool.send_into(torch.tensor([0, 7]), out)
        td = pool.step(torch.tensor([0, 1]))
        assert not out.any(), "the rejected step's buffer is never written"
        assert td["env_id"].tolist() == [0, 1]


def test_import_torchpool_leaves_tensordict_to_the_first_pool():
    # tensordict imports torch._dynamo (~1 s): `python -m torchpool list` and friends should not pay for it.
    import subprocess
    import sys

    code = ("import sys, torchpool; assert 'tensordict' not in sys.modules, 'imported by import torchpool'; "
            "torchpool.make('CartPole-v1', num_envs=2).reset(); assert 'tensordict' in sys.modules")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_seed_none_draws_a_fresh_seed_as_gymnasium_does():
    first = torchpool.make("CartPole-v1", num_envs=4, seed=None)
    second = torchpool.make("CartPole-v1", num_envs=4, seed=None)
    assert first.seed != second.seed, "two pools made with seed=None drew the same seed"
    with torchpool.make("CartPole-v1", num_envs=4, seed=first.seed) as replay:
        assert torch.equal(replay.reset()["observation"], first.reset()["observation"]), "pool.seed does not replay"
    first.close()
    second.close()
    stream = torchpool.stream("CartPole-v1", lambda obs: torch.zeros(len(obs), dtype=torch.int64), num_envs=4,
                              frames_per_batch=8, total_frames=8, seed=None)
    assert next(iter(stream)).batch_size == (4, 2)


def test_a_sync_step_of_some_envs_steps_those_alone_and_keeps_held_rows():
    pool = torchpool.make("CartPole-v1", num_envs=4, seed=0)
    every = torchpool.make("CartPole-v1", num_envs=4, seed=0)
    pool.reset()
    every.reset()
    held = pool.step(torch.tensor([1, 1]), env_id=[2, 0])
    kept = held["observation"].clone()
    assert held["env_id"].tolist() == [2, 0] and held["episode_length"].tolist() == [1, 1]
    torch.testing.assert_close(held["observation"], every.step(torch.tensor([1, 0, 1, 0]))["observation"][[2, 0]])
    again = pool.step(torch.tensor([0]), env_id=[2])  # lands elsewhere: `held` is still referenced
    assert again["episode_length"].tolist() == [2]
    torch.testing.assert_close(held["observation"], kept, msg="a held partial step's rows were overwritten")
    assert pool.step(torch.zeros(4, dtype=torch.int64))["episode_length"].tolist() == [2, 1, 3, 1]
    with pytest.raises(ValueError, match="action must have shape"):
        pool.step(torch.zeros(3, dtype=torch.int64), env_id=[0, 1])
    pool.close()
    every.close()
