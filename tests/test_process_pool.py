"""Python envs in worker processes: parity with Gymnasium's SyncVectorEnv, the async queue's
invariants, errors, dead workers, Ctrl-C, nothing left behind, and ProcessPool built on Pool's seam alone.

No assertion here reads a clock: on a loaded host any bound flakes. Where a wait must end, a generous
deadline guards against a hang, and what is asserted is what happened and in which order; how long
things take is for benchmarks/python_envs.py."""

import ast
import functools
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import gymnasium
import numpy as np
import pytest
import python_envs
import torch

import torchpool
from torchpool._workers.process_pool import ProcessPool
from torchpool.pool import Pool

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process pools need Linux")

MODES = {"same_step": gymnasium.vector.AutoresetMode.SAME_STEP, "next_step": gymnasium.vector.AutoresetMode.NEXT_STEP}


def _as_numpy(value):
    if isinstance(value, torch.Tensor):
        return value.numpy()
    return {key: _as_numpy(item) for key, item in value.items()}


def _observation_equal(ours, theirs, space):
    """Ours is a tensor or a TensorDict of fields; theirs is SyncVectorEnv's batched observation."""
    if isinstance(space, gymnasium.spaces.Dict):
        for key in space.spaces:
            np.testing.assert_array_equal(ours[key].numpy(), np.asarray(theirs[key]), err_msg=key)
    elif isinstance(space, gymnasium.spaces.Tuple):
        for index in range(len(space.spaces)):
            np.testing.assert_array_equal(ours[str(index)].numpy(), np.asarray(theirs[index]), err_msg=str(index))
    else:
        np.testing.assert_array_equal(ours.numpy(), theirs)


def _final_observation(info, i, space):
    final = info["final_obs"][i]
    if isinstance(space, gymnasium.spaces.Dict):
        return {key: np.asarray(final[key])[None] for key in space.spaces}
    if isinstance(space, gymnasium.spaces.Tuple):
        return tuple(np.asarray(part)[None] for part in final)
    return np.asarray(final)[None]


def _sample_actions(space, num_envs, rng):
    if isinstance(space, gymnasium.spaces.Discrete):
        return rng.integers(0, space.n, num_envs)
    if isinstance(space, gymnasium.spaces.MultiDiscrete):
        return rng.integers(0, space.nvec, (num_envs, *space.shape))
    return rng.uniform(space.low, space.high, (num_envs, *space.shape)).astype(space.dtype)


@pytest.mark.parametrize("steps_in", ["workers", "caller"])
@pytest.mark.parametrize("autoreset", ["same_step", "next_step"])
@pytest.mark.parametrize("env", ["gymnasium:CartPole-v1", "gymnasium:Pendulum-v1", "dict", "tuple"])
def test_sync_steps_equal_sync_vector_env(env, autoreset, steps_in):
    num_envs, steps = 6, 25
    if env == "dict":
        fn = functools.partial(python_envs.CountingDictEnv, length=4)
    elif env == "tuple":
        fn = python_envs.TupleEnv
    else:
        fn = functools.partial(gymnasium.make, env.split(":", 1)[1])
    reference = gymnasium.vector.SyncVectorEnv([fn] * num_envs, autoreset_mode=MODES[autoreset])
    where = {"num_workers": 2} if steps_in == "workers" else {"steps_in": "caller"}
    with torchpool.make(env if env.startswith("gymnasium") else fn, num_envs=num_envs, seed=5,
                        autoreset=autoreset, **where) as pool:
        assert pool.schedule["steps_in"] == steps_in
        space = reference.single_observation_space
        assert pool.observation_spec.to_gymnasium() == space
        assert pool.action_spec.to_gymnasium() == reference.single_action_space
        theirs, _ = reference.reset(seed=5)
        ours = pool.reset()
        _observation_equal(ours["observation"], theirs, space)
        rng = np.random.default_rng(0)
        if env.startswith("gymnasium"):  # long enough for episodes to end (CartPole) or be truncated (Pendulum)
            steps = 210
        ended = 0
        for _ in range(steps):
            actions = _sample_actions(reference.single_action_space, num_envs, rng)
            theirs, reward, terminated, truncated, info = reference.step(actions)
            ours = pool.step(torch.as_tensor(actions))
            _observation_equal(ours["observation"], theirs, space)
            np.testing.assert_allclose(ours["reward"].numpy(), reward.astype(np.float32), rtol=1e-6)
            np.testing.assert_array_equal(ours["terminated"].numpy(), terminated)
            np.testing.assert_array_equal(ours["truncated"].numpy(), truncated)
            if autoreset == "same_step":
                for i in np.flatnonzero(terminated | truncated):
                    ended += 1
                    _observation_equal(ours["final_observation"][i:i + 1], _final_observation(info, i, space), space)
        assert ended > 0 or autoreset == "next_step"
    reference.close()


ASYNC_ENVS = {  # name: (constructor, the observation's first field in a TensorDict, and in the env's own)
    "box-discrete": (functools.partial(gymnasium.make, "CartPole-v1"), ("observation",), ()),
    "dict-box": (functools.partial(python_envs.CountingDictEnv, length=5), ("observation", "position"), ("position",)),
    "tuple-multidiscrete": (python_envs.TupleEnv, ("observation", "0"), (0,)),
}


@pytest.mark.parametrize("kind", ASYNC_ENVS)
def test_async_delivers_every_transition_once_in_order(kind):
    # Each env's transitions, gathered from an async pool's batches, equal
    # that env stepped alone with the same actions: nothing lost, duplicated,
    # reordered or mixed between envs.
    fn, ours_key, their_key = ASYNC_ENVS[kind]
    num_envs, batch, steps = 8, 3, 40
    space = fn().action_space
    with torchpool.make(fn, num_envs=num_envs, batch_size=batch, num_workers=2, seed=11) as pool:
        actions = {i: _sample_actions(space, steps, np.random.default_rng(i)) for i in range(num_envs)}
        sent = dict.fromkeys(range(num_envs), 0)
        got = {i: [] for i in range(num_envs)}
        pool.async_reset()
        received = 0
        while received < num_envs * (steps + 1):
            td = pool.recv()
            ids = td["env_id"].tolist()
            for row, i in enumerate(ids):
                got[i].append((td[ours_key][row].numpy().copy(), float(td["reward"][row]), bool(td["done"][row])))
            received += len(ids)
            to_send = [i for i in ids if sent[i] < steps]
            if to_send:
                pool.send(torch.as_tensor(np.stack([actions[i][sent[i]] for i in to_send])), torch.tensor(to_send))
                for i in to_send:
                    sent[i] += 1
            if pool.in_flight < batch:
                break
        assert num_envs * (steps + 1) - received == pool.in_flight < batch

    def first_field(observation):
        for key in their_key:
            observation = observation[key]
        return np.asarray(observation)

    for i in range(num_envs):
        env = fn()
        observation, _ = env.reset(seed=11 + i)
        expected = [(first_field(observation), 0.0, False)]
        for t in range(steps):
            observation, reward, terminated, truncated, _ = env.step(actions[i][t])
            done = terminated or truncated
            if done:
                observation, _ = env.reset()
            expected.append((first_field(observation), reward, done))
        # Only the last rows (fewer than a batch in all) may still be in flight.
        assert len(expected) - batch < len(got[i]) <= len(expected), i
        for (ours, our_reward, our_done), (theirs, reward, done) in zip(got[i], expected):
            np.testing.assert_array_equal(ours, theirs.astype(ours.dtype))
            assert our_reward == pytest.approx(reward, rel=1e-6)
            assert our_done == done


def test_info_numbers_become_extras_and_the_rest_is_named_once():
    with pytest.warns(UserWarning, match=r"info keys \['name'\]"):
        pool = torchpool.make(python_envs.CountingDictEnv, num_envs=2, num_workers=1)
    with pool:
        assert pool.extra_keys == ("lives",)
        assert pool.reset()["lives"].tolist() == [3, 3]
        assert pool.step(torch.zeros(2, 1))["lives"].tolist() == [2, 2]
        assert pool.observation_spec.to_gymnasium() == python_envs.CountingDictEnv().observation_space
        td = pool.step(torch.zeros(2, 1))
        assert td["observation", "count"].dtype == torch.int64
        assert td["observation", "flags"].dtype == torch.uint8  # MultiBinary's int8, stored as 0/1 bytes


def test_env_kwargs_and_lists_of_constructors_build_each_env():
    fns = [functools.partial(python_envs.CountingDictEnv, length=3)] * 3
    with torchpool.make(fns, num_envs=3, env_kwargs=[{"scale": 0.0}, {"scale": 1.0}, {"scale": 0.0}],
                        num_workers=2) as pool:
        position = pool.reset()["observation", "position"]
        assert position[0].abs().sum() == 0 and position[2].abs().sum() == 0 and position[1].abs().sum() > 0
        assert [len(p["envs"]) for p in pool.schedule["processes"]] == [1, 2]


def test_gymnasium_kwargs_and_time_limit_reach_gymnasium_make():
    with torchpool.make("gymnasium:Pendulum-v1", num_envs=2, num_workers=1, g=0.0, max_episode_steps=3) as pool:
        pool.reset()
        for _ in range(2):
            assert not pool.step(torch.zeros(2, 1))["truncated"].any()
        assert pool.step(torch.zeros(2, 1))["truncated"].all()


def test_a_python_exception_is_an_env_error_and_the_env_resets():
    with torchpool.make(python_envs.FailingEnv, num_envs=4, num_workers=2, fail_at=3) as pool:
        pool.reset()
        pool.step(torch.zeros(4, dtype=torch.int64))
        pool.step(torch.zeros(4, dtype=torch.int64))
        with pytest.raises(torchpool.EnvError) as raised:
            pool.step(torch.zeros(4, dtype=torch.int64))
        assert raised.value.env_ids == [0, 1, 2, 3]
        assert "ValueError: the env broke at step 3" in raised.value.messages[0]
        assert "Traceback" in raised.value.messages[0] and "python_envs.py" in raised.value.messages[0]
        td = pool.step(torch.zeros(4, dtype=torch.int64))  # each failed env resets instead of stepping
        assert td["observation"].flatten().tolist() == [0.0] * 4
        assert pool.step(torch.zeros(4, dtype=torch.int64))["observation"].flatten().tolist() == [1.0] * 4


# A slow restart: the next step's requests are sent while no process serves the dead worker's envs (the
# replacement must answer them; the reaped pid must not be taken for its server).
@pytest.mark.parametrize("how, restart_delay", [("exit", 0), ("kill", 0), ("segfault", 0), ("exit", 0.3)])
def test_a_dying_worker_is_an_env_error_then_restarted(how, restart_delay, monkeypatch):
    if restart_delay:
        start_worker = ProcessPool._start_worker

        def slow_start(self, index):
            time.sleep(restart_delay)
            return start_worker(self, index)

        monkeypatch.setattr(ProcessPool, "_start_worker", slow_start)
    fn = functools.partial(python_envs.DyingEnv, how=how, fail_at=2, only_env=2)  # the first of its worker
    with torchpool.make(fn, num_envs=4, num_workers=2, env_kwargs=[{"env_index": i} for i in range(4)]) as pool:
        before = pool.worker_pids
        pool.reset()
        pool.step(torch.zeros(4, dtype=torch.int64))
        with pytest.raises(torchpool.EnvError) as raised:
            pool.step(torch.zeros(4, dtype=torch.int64))
        assert raised.value.env_ids == [2, 3]
        message = raised.value.messages[2]
        assert "worker process 1" in message and "envs 2-3" in message and "died" in message
        assert "step_timeout" not in message, "the death was seen, not waited out by the step timeout"
        assert {"exit": "exit code 3", "kill": "signal 9", "segfault": "signal 11"}[how] in message
        # Every env keeps working: the dead worker's envs reset (the restarted
        # process builds them again), the others step on.
        td = pool.step(torch.zeros(4, dtype=torch.int64))
        assert td["observation"].flatten().tolist() == [3.0, 3.0, 0.0, 0.0]
        td = pool.step(torch.zeros(4, dtype=torch.int64))
        assert td["observation"].flatten().tolist() == [4.0, 4.0, 1.0, 1.0]
        after = pool.worker_pids
        assert after[0] == before[0] and after[1] != before[1]
        assert not python_envs.alive(before[1])


def test_a_worker_killed_from_outside_while_idle_fails_its_envs_once():
    with torchpool.make(python_envs.FailingEnv, num_envs=4, num_workers=2, fail_at=1000) as pool:
        pool.reset()
        pool.step(torch.zeros(4, dtype=torch.int64))
        os.kill(pool.worker_pids[0], signal.SIGKILL)
        deadline = time.monotonic() + 5
        while pool.schedule["restarts"] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        with pytest.raises(torchpool.EnvError) as raised:
            pool.step(torch.zeros(4, dtype=torch.int64))
        assert raised.value.env_ids == [0, 1]
        assert "restarted" in raised.value.messages[0]
        td = pool.step(torch.zeros(4, dtype=torch.int64))
        assert td["observation"].flatten().tolist() == [0.0, 0.0, 3.0, 3.0]


def test_a_long_undecodable_traceback_keeps_its_end():
    with torchpool.make(python_envs.WordyFailingEnv, num_envs=2, num_workers=1) as pool:
        pool.reset()
        with pytest.raises(torchpool.EnvError) as raised:
            pool.step(torch.zeros(2, dtype=torch.int64))
        message = raised.value.messages[0]
        assert message.startswith("[... the start of this traceback was cut]")
        assert message.endswith("é the end\n") and "\ufffd" not in message
        assert len(message.encode()) <= 16384
        assert pool.step(torch.zeros(2, dtype=torch.int64))["observation"].flatten().tolist() == [0.0, 0.0]
    short = python_envs.WordyFailingEnv(size=3)
    with torchpool.make(lambda: short, num_envs=1) as pool:
        pool.reset()
        with pytest.raises(torchpool.EnvError, match=r"ValueError: \\udcffééé the end"):
            pool.step(torch.zeros(1, dtype=torch.int64))


def test_close_ends_a_replacement_whose_constructor_hangs(tmp_path):
    fn = functools.partial(python_envs.HangsWhenRebuilt, str(tmp_path / "built"))
    pool = torchpool.make(fn, num_envs=2, num_workers=1)
    pool.reset()
    pool.step(torch.zeros(2, dtype=torch.int64))
    first = pool.worker_pids[0]
    with pytest.raises(torchpool.EnvError, match="died"):
        pool.step(torch.zeros(2, dtype=torch.int64))
    deadline = time.monotonic() + 10
    while pool.worker_pids[0] == first and time.monotonic() < deadline:  # the replacement is building
        time.sleep(0.01)
    replacement = pool.worker_pids[0]
    assert replacement != first
    closing = threading.Thread(target=pool.close)
    closing.start()
    closing.join(60)  # a guard against a hang, not a measure: close() kills what does not exit in 2 s
    assert not closing.is_alive(), "close() hangs on the replacement building its envs"
    assert not python_envs.alive(first) and not python_envs.alive(replacement)


def test_workers_are_restarted_when_their_pidfds_are_numbered_past_1024():
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2048:
        pytest.skip("needs 2048 file descriptors")
    resource.setrlimit(resource.RLIMIT_NOFILE, (2048, hard))
    fillers = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]  # select() would refuse what follows
    try:
        with torchpool.make(python_envs.FailingEnv, num_envs=2, num_workers=1, fail_at=1000) as pool:
            assert pool._workers[0].pidfd >= 1024
            pool.reset()
            os.kill(pool.worker_pids[0], signal.SIGKILL)
            deadline = time.monotonic() + 10
            while pool.schedule["restarts"] == 0 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert pool.schedule["restarts"] == 1
    finally:
        for fd in fillers:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.parametrize("sync", [True, False])
def test_ctrl_c_during_a_step_leaves_no_step_behind(sync):
    # A real SIGINT lands while the workers step (30 ms each): the envs' steps
    # are never cut half-way (workers ignore SIGINT), KeyboardInterrupt is
    # raised, and afterwards each env's count goes on by exactly one per step.
    with torchpool.make(python_envs.CounterEnv, num_envs=4, num_workers=2, sleep_ms=30,
                        batch_size=None if sync else 2) as pool:
        before = pool.worker_pids
        assert [os.getpgid(pid) for pid in before] == before  # a terminal's Ctrl-C goes to the parent's group only
        zeros = torch.zeros(4 if sync else 2, dtype=torch.int64)
        if sync:
            pool.reset()
        else:
            pool.async_reset()
            pool.recv(), pool.recv()
        timer = threading.Timer(0.01, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            for _ in range(100):  # the interrupt surfaces in one of these
                pool.step(zeros) if sync else pool.step(zeros, torch.tensor([0, 1]))
        timer.join()
        assert pool.worker_pids == before
        if sync:
            assert pool.in_flight == 0
            first = pool.step(zeros)["observation"].clone()
            second = pool.step(zeros)["observation"]
            assert (second - first).flatten().tolist() == [1.0] * 4
        else:  # an interrupted recv() leaves its envs in flight, and the next recv() returns them
            ids = pool.recv()["env_id"] if pool.in_flight else torch.tensor([0, 1])
            assert pool.in_flight == 0
            first = pool.step(zeros, ids)["observation"].clone()
            second = pool.step(zeros, ids)["observation"]
            assert (second - first).flatten().tolist() == [1.0] * 2


def test_ctrl_c_discarding_envs_their_workers_ran_resets_them(monkeypatch):
    # Under the "workers" schedule a sync step's caller only waits, so Ctrl-C
    # discards the envs no core thread has reached; their workers, begun at
    # push time, ran them anyway (NOTE [Lost answers]). Those envs must fail
    # their next step and reset, never step on with an episode length one
    # short of what the env counted.
    from torchpool._workers import process_pool

    monkeypatch.setattr(process_pool, "_STEP_COST_NS", 1e9)
    with torchpool.make(python_envs.CounterEnv, num_envs=4, num_workers=2, sleep_ms=100) as pool:
        assert pool.schedule["mode"] == "workers"
        zeros = torch.zeros(4, dtype=torch.int64)
        pool.reset()
        # One core thread takes envs 0, 1, 2, 3 in turn, 100 ms each; the
        # workers ran all four by 200 ms. SIGINT at 150 ms: envs 2 and 3 are discarded.
        timer = threading.Timer(0.15, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            pool.step(zeros)
            time.sleep(1)
        timer.join()
        with pytest.raises(torchpool.EnvError) as raised:
            pool.step(zeros)
        assert raised.value.env_ids == [2, 3]
        assert "Ctrl-C discarded its answer" in raised.value.messages[2]
        for _ in range(2):
            td = pool.step(zeros)
            assert td["observation"].flatten().tolist() == td["episode_length"].float().tolist()
        assert td["episode_length"].tolist() == [4, 4, 1, 1]


def _uint64_observation_env():
    env = python_envs.FailingEnv()
    env.observation_space = gymnasium.spaces.Box(0, 1, (2,), dtype=np.uint64)
    return env


def test_make_refuses_bad_env_fns_before_any_batch():
    lock = threading.Lock()
    with pytest.raises(TypeError, match="cannot be pickled"):
        torchpool.make(lambda: (lock, python_envs.FailingEnv())[1], num_envs=2)
    with pytest.raises(RuntimeError, match="(?s)could not build envs 0-0.*no simulator licence"):
        torchpool.make(python_envs.ConstructorFails, num_envs=2, num_workers=2)
    with pytest.raises(RuntimeError, match="not a gymnasium.Env"):
        torchpool.make(python_envs.not_an_env, num_envs=2, num_workers=1)
    with pytest.raises(ValueError, match="uint64, which torchpool cannot store"):  # (Dict actions are served)
        torchpool.make(_uint64_observation_env, num_envs=2, steps_in="caller")
    with pytest.raises(ValueError, match="list of 3 constructors, but num_envs=2"):
        torchpool.make([python_envs.FailingEnv] * 3, num_envs=2)
    with pytest.raises(ValueError, match="env_kwargs must be a dict \\(for every env\\) or a list of num_envs=2 dicts"):
        torchpool.make(python_envs.FailingEnv, num_envs=2, env_kwargs=[{}])
    with pytest.raises(ValueError, match="num_threads and obs_dtype apply to torchpool's C\\+\\+ envs"):
        torchpool.make(python_envs.FailingEnv, num_envs=2, num_threads=2)
    with pytest.raises(gymnasium.error.NameNotFound, match="(?s)doesn't exist.*must be registered in this process"):
        torchpool.make("gymnasium:NoSuchEnv-v0", num_envs=1)


def test_wrong_actions_are_refused_naming_the_problem():
    with torchpool.make(python_envs.TupleEnv, num_envs=2, num_workers=1) as pool:
        pool.reset()
        with pytest.raises(ValueError, match=r"action must have shape \(2, 2\)"):
            pool.step(torch.zeros(2, dtype=torch.int64))
        td = pool.step(torch.tensor([[2, 1], [0, 0]]))  # MultiDiscrete actions as integers
        assert td["reward"].tolist() == [3.0, 0.0]


def _leftovers(pids):
    return [pid for pid in pids if python_envs.alive(pid)]


def _children() -> set[int]:
    """This process's child processes, zombies (exited, never reaped) included."""
    with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children") as children:
        return {int(pid) for pid in children.read().split()}


def _what_pools_hold() -> dict:
    """What a pool of Python envs takes from this process, each of which close() must give back."""
    from torchpool import _process
    from torchpool._workers import interrupts

    return {"fds": len(os.listdir("/proc/self/fd")), "children": _children(),
            "threads": sorted(thread.name for thread in threading.enumerate()),
            "regions": _process.registered_regions(), "listeners": len(interrupts._listeners),
            "mappings": open("/proc/self/maps").read().count("torchpool-process-pool")}


def _check_nothing_left(before: dict, pids: list[int]) -> None:
    after = _what_pools_hold()
    assert _leftovers(pids) == [], "worker processes outlived their pool"
    assert after["children"] <= before["children"], "worker processes left unreaped (zombies)"
    assert after["fds"] <= before["fds"] + 1, f"{after['fds'] - before['fds']} file descriptors more"
    for key in ("threads", "regions", "listeners", "mappings"):
        assert after[key] == before[key], f"{key}: {before[key]} before the pools, {after[key]} after"


def test_close_and_garbage_collection_leave_no_process_or_memory_behind():
    torchpool.make(python_envs.FailingEnv, num_envs=2, num_workers=2, fail_at=1000).close()  # the Ctrl-C thread
    before, pids = _what_pools_hold(), []
    for cycle in range(10):
        pool = torchpool.make(python_envs.FailingEnv, num_envs=2, num_workers=2, fail_at=1000)
        pids += pool.worker_pids
        pool.reset()
        if cycle % 2:
            pool.close()
        else:
            del pool  # garbage collection closes it
        how = "close()" if cycle % 2 else "garbage collection"
        assert _leftovers(pids) == [], f"cycle {cycle}: the workers outlived their pool's {how}"
    _check_nothing_left(before, pids)


def test_make_close_cycles_leave_nothing_behind():
    # Each cycle is checked, so a leak shows at once; the cycles catch one that happens only now and then
    # (the worker's handshake, the supervisor's thread, a close racing a start). Half the pools never
    # step (closed while their worker may still be starting), half step once; a few envs step in the caller.
    torchpool.make(python_envs.FailingEnv, num_envs=1, num_workers=1, fail_at=1000).close()
    before, pids = _what_pools_hold(), []
    for cycle in range(40):
        kind = {"steps_in": "caller"} if cycle % 8 == 7 else {"num_workers": 1}
        with torchpool.make(python_envs.FailingEnv, num_envs=1, fail_at=1000, **kind) as pool:
            pids += pool.worker_pids
            if cycle % 2:
                pool.reset()
        assert _leftovers(pids) == [], f"cycle {cycle}: close() returned before its worker ended"
    _check_nothing_left(before, pids)


def test_workers_end_with_their_parent_even_when_it_crashes():
    # Both parents at once (each spends seconds importing torch): one exits without closing its pool, one is
    # killed.
    parents = {}
    for ending in ("exit", "sigkill"):
        script = textwrap.dedent(f"""
            import os, signal, sys
            sys.path.insert(0, {os.path.dirname(__file__)!r})
            import torchpool, python_envs
            pool = torchpool.make(python_envs.FailingEnv, num_envs=2, num_workers=2, fail_at=1000)
            pool.reset()
            print(*pool.worker_pids, flush=True)
            if {ending!r} == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            """)
        parents[ending] = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, text=True)
    for ending, parent in parents.items():
        out, err = parent.communicate(timeout=120)
        pids = [int(pid) for pid in out.split()]
        assert len(pids) == 2, f"{ending}: {err}"
        deadline = time.monotonic() + 10  # a guard: PR_SET_PDEATHSIG or the closed socket ends them at once
        while _leftovers(pids) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _leftovers(pids) == [], f"the parent's {ending} left its workers running"


def test_adapters_take_a_process_pool():
    from torchrl.envs.utils import check_env_specs

    from torchpool.envpool_compat import make as envpool_make
    from torchpool.gym import VectorEnv as TorchPoolVectorEnv
    from torchpool.torchrl import TorchPoolEnv

    env = TorchPoolEnv("gymnasium:CartPole-v1", num_envs=2, num_workers=1)
    check_env_specs(env)
    env.close()
    gym_id = torchpool.gym.register_env("gymnasium:CartPole-v1")
    assert gym_id == "torchpool/gymnasium.CartPole-v1"
    made = gymnasium.make_vec(gym_id, num_envs=2, num_workers=1)
    assert made.observation_space.shape == (2, 4) and made.single_action_space == gymnasium.spaces.Discrete(2)
    made.close()
    vector = TorchPoolVectorEnv("gymnasium:CartPole-v1", num_envs=2, num_workers=1)
    observation, _ = vector.reset(seed=0)
    assert observation.shape == (2, 4) and vector.single_action_space == gymnasium.spaces.Discrete(2)
    vector.step(np.zeros(2, dtype=np.int64))
    vector.close()
    envs = envpool_make("gymnasium:CartPole-v1", env_type="gymnasium", num_envs=2)
    observation, _ = envs.reset()
    assert observation.shape == (2, 4)
    envs.close()
    with torchpool.make("gymnasium:CartPole-v1", num_envs=2, num_workers=1) as pool:
        from_pool = TorchPoolEnv.from_pool(pool)
        assert from_pool.rollout(5)["next", "observation"].shape == (2, 5, 4)
    from stable_baselines3 import PPO

    from torchpool.rl_games import RlGamesVecEnv
    from torchpool.sb3 import make_vec_env

    sb3_envs = make_vec_env("gymnasium:CartPole-v1", n_envs=2, num_workers=1)
    PPO("MlpPolicy", sb3_envs, n_steps=64, batch_size=64, n_epochs=1).learn(256)
    sb3_envs.close()
    rl_games_env = RlGamesVecEnv("torchpool", num_actors=2, env_id="gymnasium:CartPole-v1", num_workers=1)
    observation = rl_games_env.reset()
    assert tuple(observation.shape) == (2, 4)
    rl_games_env.step(torch.zeros(2, dtype=torch.int64))
    rl_games_env.close()
    stream = torchpool.stream(python_envs.CountingDictEnv, lambda td: torch.zeros(td.batch_size[0], 1), num_envs=2,
                              frames_per_batch=8, total_frames=16, num_workers=1)
    batches = list(stream)
    assert len(batches) == 2 and batches[0]["observation", "position"].shape == (2, 4, 2)


def test_the_generic_ppo_recipe_trains_a_gymnasium_id(tmp_path):
    from torchpool.train.ppo import Args, train

    result = train(Args(env_id="gymnasium:CartPole-v1", total_frames=4096, num_envs=4, num_steps=64,
                        out_dir=str(tmp_path), progress=False))
    assert result["frames"] == 4096 and (tmp_path / "ppo_gymnasium_CartPole-v1.json").exists()


# ---- Ctrl-C in an env stepped in the caller: NOTE [Answers in the caller] ------------------------------------


class InterruptedAtStep(python_envs.CountsSteps):
    """Env `env_index` raises KeyboardInterrupt in its step `at` (as a Ctrl-C landing in its Python code does)."""

    def __init__(self, env_index: int = 0, interrupted_env: int = 1, at: int = 1):
        self.interrupted = env_index == interrupted_env
        self.at = at

    def step(self, action):
        self.steps += 1
        if self.interrupted and self.steps == self.at:
            raise KeyboardInterrupt
        return np.full(1, self.steps, np.float32), 1.0, False, False, {}


# The caller answers envs 0-3 in one go when it collects env 0: env 1 interrupted fails the first batch (0, 1),
# whose recv() raises EnvError; env 3 interrupted leaves it whole, and recv() returns it. Either way the batch was
# taken when KeyboardInterrupt replaces the call's result.
@pytest.mark.parametrize("interrupted_env", [1, 3], ids=["in_the_batch", "after_the_batch"])
def test_ctrl_c_in_an_env_stepped_in_the_caller_loses_no_batch_of_an_async_pool(interrupted_env):
    with torchpool.make(InterruptedAtStep, num_envs=4, batch_size=2, steps_in="caller",
                        env_kwargs=[{"env_index": i, "interrupted_env": interrupted_env} for i in range(4)]) as pool:
        assert pool.schedule["mode"] == "caller_runs_items", "the caller collects every env, in env order"
        pool.async_reset()
        ids = torch.cat([pool.recv()["env_id"], pool.recv()["env_id"]])
        pool.send(torch.zeros(4, dtype=torch.int64), ids)
        with pytest.raises(KeyboardInterrupt):
            pool.recv()
        assert pool.in_flight == 4, "the batch the interrupted recv() took was not given back: its envs are lost"
        received = []
        while pool.in_flight:
            try:
                received += pool.recv()["env_id"].tolist()
            except torchpool.EnvError as error:  # the interrupted env's, and those it left unstepped
                received += error.batch["env_id"].tolist()
        assert sorted(received) == [0, 1, 2, 3], f"after the interrupt, recv() returned envs {received}"
        # Every env steps on: each is sent and received once more.
        pool.send(torch.zeros(4, dtype=torch.int64), torch.tensor(received))
        again = pool.recv()["env_id"].tolist() + pool.recv()["env_id"].tolist()
        assert sorted(again) == [0, 1, 2, 3] and pool.in_flight == 0


# ---- the layers: pool.py knows nothing of torchpool/_workers/, which builds on Pool's seam alone -------------


def _module_level_imports(tree: ast.Module):
    """The imports a module runs as it loads: at its top level, and in top-level if/try blocks."""
    for node in tree.body:
        for inner in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]:
            if isinstance(inner, (ast.Import, ast.ImportFrom)):
                yield inner


def test_pool_py_does_not_import_the_workers_as_it_loads():
    import torchpool.pool

    tree = ast.parse(open(torchpool.pool.__file__).read())
    for node in _module_level_imports(tree):
        names = [alias.name for alias in node.names] + [getattr(node, "module", None) or ""]
        assert not any("_workers" in name for name in names), \
            f"pool.py line {node.lineno} imports torchpool/_workers/ at module level: the two would import each other"


def _private_names_of_pool() -> set[str]:
    """What Pool defines behind an underscore: its methods, class attributes and ``self._x`` attributes."""
    import torchpool.pool

    tree = ast.parse(open(torchpool.pool.__file__).read())
    pool = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Pool")
    names = set()
    for node in ast.walk(pool):
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return {name for name in names if name.startswith("_") and not name.startswith("__")}


def test_the_workers_use_no_private_name_of_pool_beyond_its_seam():
    import torchpool._workers

    private = _private_names_of_pool() - set(Pool._SUBCLASS_SEAM)
    assert {"_open", "_core", "_action_dtypes", "_lent"} <= private, "the check reads Pool's names"
    folder = os.path.dirname(torchpool._workers.__file__)
    for file in sorted(os.listdir(folder)):
        if not file.endswith(".py"):
            continue
        tree = ast.parse(open(os.path.join(folder, file)).read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in private:
                raise AssertionError(f"_workers/{file} line {node.lineno} uses Pool's private {node.attr}: build on "
                                     "Pool.__init__ (FamilyEnvs), its public API and Pool._SUBCLASS_SEAM")
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("pool"):
                hidden = [alias.name for alias in node.names if alias.name.startswith("_")]
                assert not hidden, f"_workers/{file} line {node.lineno} imports {hidden} from pool.py"
