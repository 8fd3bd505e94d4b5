"""Python envs as users meet them (issue 47): mistakes caught in the parent at once, no reset the user did
not ask for, the parent's registrations in the workers, a hung env stopped, workers that die with their
parent, and a start without torch in the workers.

No assertion here reads a clock (on a shared, loaded host any bound flakes): "at once" is "before any
worker process starts or any env is built", and a signal is sent when the env it must land in says it
is there, not after a guessed delay. Deadlines only keep a broken pool from hanging the suite; how long
things take is for benchmarks/python_envs.py."""

import asyncio
import functools
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import cloudpickle
import gymnasium
import numpy as np
import pytest
import python_envs
import torch

import torchpool

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process pools need Linux")

# The envs below travel to the workers by value: a worker that unpickled them
# by reference would import this module, and with it torch.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


class ResetCounter(gymnasium.Env):
    """Observes how many times this instance was reset."""

    observation_space = gymnasium.spaces.Box(0, 1000, (1,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self):
        self.resets = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.resets += 1
        return np.full(1, self.resets, np.float32), {"resets": self.resets}

    def step(self, action):
        return np.full(1, self.resets, np.float32), 0.0, False, False, {}


class HangsAtStep(python_envs.CountsSteps):
    """Env `hang_env` sleeps for an hour at its step `at` (the GIL released), having created the file `flag`
    if given; the others count steps."""

    def __init__(self, env_index: int = 0, hang_env: int = 1, at: int = 2, flag: str | None = None):
        self.env_index, self.hang_env, self.at, self.flag = env_index, hang_env, at, flag

    def step(self, action):
        self.steps += 1
        if self.env_index == self.hang_env and self.steps == self.at:
            if self.flag is not None:
                open(self.flag, "w").close()
            time.sleep(3600)
        return np.full(1, self.steps, np.float32), 1.0, False, False, {}


def _children() -> set[int]:
    with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children") as children:
        return {int(pid) for pid in children.read().split()}


def _wait_for_file(path: str, timeout: float = 30.0) -> None:
    """Returns once ``path`` exists (an env says it got there); the timeout only keeps a broken pool from
    hanging the suite."""
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.005)


def _interrupt_once(path: str) -> threading.Thread:
    """Sends this process SIGINT (a Ctrl-C) as soon as ``path`` exists."""
    def interrupt():
        _wait_for_file(path)
        os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=interrupt, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def nothing_starts(monkeypatch):
    """Fails the test if a worker process starts or an env is built in the parent (a probe, or envs for the
    caller): what a refused argument must come before."""
    from torchpool._workers import launch
    from torchpool._workers import worker as worker_script

    def refuse(what):
        def call(*args, **kwargs):
            raise AssertionError(f"{what} before the mistake was refused")
        return call

    monkeypatch.setattr(launch, "start", refuse("a worker process started"))
    monkeypatch.setattr(worker_script, "make_env", refuse("an env was built"))
    monkeypatch.setattr(worker_script, "build_envs", refuse("the envs were built"))


# ---- 6. clear errors at once -------------------------------------------------


@pytest.mark.parametrize("env", ["gymnasium:CartPole-v1", "callable"])
def test_a_typo_of_a_torchpool_argument_is_caught_in_the_parent(env, nothing_starts):
    env = python_envs.FailingEnv if env == "callable" else env
    before = _children()
    with pytest.raises(TypeError, match="num_worker= is neither an argument of torchpool.make.*Did you mean "
                                        "num_workers\\?"):
        torchpool.make(env, num_envs=2, num_worker=2)
    assert _children() == before, "no worker process should have been started"


def test_an_unknown_env_keyword_is_refused_and_env_kwargs_takes_a_dict():
    with pytest.raises(TypeError, match="fail_after= is neither .* FailingEnv \\(which takes fail_at\\)"):
        torchpool.make(python_envs.FailingEnv, num_envs=2, num_workers=1, fail_after=3)
    with pytest.raises(TypeError, match="gravity= is neither .*gymnasium.make\\('CartPole-v1'\\)"):
        torchpool.make("gymnasium:CartPole-v1", num_envs=2, num_workers=1, env_kwargs={"gravity": 1.0})
    # Keywords the constructor takes pass, as keywords or as env_kwargs={...} for every env.
    with torchpool.make("gymnasium:LunarLander-v3", num_envs=2, num_workers=1, env_kwargs={"continuous": True}) as pool:
        assert pool.action_spec.to_gymnasium().shape == (2,)
    with torchpool.make(python_envs.FailingEnv, num_envs=2, num_workers=1, fail_at=2) as pool:
        pool.reset()
        pool.step(torch.zeros(2, dtype=torch.int64))
        with pytest.raises(torchpool.EnvError, match="broke at step 2"):
            pool.step(torch.zeros(2, dtype=torch.int64))


@pytest.mark.parametrize("num_workers", [None, 2])
def test_an_env_instance_is_refused_by_name(num_workers):
    env = gymnasium.make("CartPole-v1")
    with pytest.raises(TypeError, match="pass a callable or an id, not an instance"):
        torchpool.make(env, num_envs=2, num_workers=num_workers)
    with pytest.raises(TypeError, match="pass a callable or an id, not an instance"):
        torchpool.make([env, env], num_envs=2)
    env.close()


def test_an_unseeded_pool_gives_seeds_that_legacy_seeding_takes():
    # np.random.seed refuses seeds past 2**32 - 1; SyncVectorEnv runs such an env unseeded.
    for num_workers in (None, 1):
        with torchpool.make(python_envs.LegacySeedingEnv, num_envs=2, seed=None, num_workers=num_workers) as pool:
            assert pool.reset()["observation"].shape == (2, 1)  # the env raises for a seed past 2**32 - 1


# ---- 5. no reset the user did not ask for ------------------------------------


def test_making_a_pool_resets_no_env():
    with torchpool.make(ResetCounter, num_envs=2, num_workers=1) as pool:
        assert pool.info_keys == ("resets",), "the info keys are still learned"
        td = pool.reset()
        assert td["observation"].flatten().tolist() == [1.0, 1.0], "env 0 was reset before the user's reset"


@pytest.mark.parametrize("gym_id,kwargs", [("BipedalWalker-v3", {}), ("LunarLander-v3", {"continuous": True})])
def test_box2d_envs_equal_sync_vector_env_for_1000_steps(gym_id, kwargs):
    pytest.importorskip("Box2D")
    num_envs, seed = 3, 7
    reference = gymnasium.vector.SyncVectorEnv([functools.partial(gymnasium.make, gym_id, **kwargs)] * num_envs,
                                               autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)
    rng = np.random.default_rng(0)
    ended = 0
    with torchpool.make(f"gymnasium:{gym_id}", num_envs=num_envs, num_workers=2, seed=seed, **kwargs) as pool:
        theirs, _ = reference.reset(seed=seed)
        np.testing.assert_array_equal(pool.reset()["observation"].numpy(), theirs)
        for step in range(1000):
            actions = rng.uniform(-1, 1, (num_envs, *reference.single_action_space.shape)).astype(np.float32)
            theirs, reward, terminated, truncated, _ = reference.step(actions)
            ours = pool.step(torch.as_tensor(actions))
            np.testing.assert_array_equal(ours["observation"].numpy(), theirs, err_msg=f"step {step}")
            np.testing.assert_array_equal(ours["reward"].numpy(), reward.astype(np.float32), err_msg=f"step {step}")
            np.testing.assert_array_equal(ours["terminated"].numpy(), terminated, err_msg=f"step {step}")
            np.testing.assert_array_equal(ours["truncated"].numpy(), truncated, err_msg=f"step {step}")
            ended += int((terminated | truncated).sum())
    reference.close()
    assert ended > 0, "the 1,000 steps should cross episode ends"


# ---- 3. registrations reach the workers --------------------------------------


def test_ids_registered_in_the_parent_work_in_the_workers():
    gymnasium.register("TorchpoolTests/ResetCounter-v0", entry_point=ResetCounter)  # a class
    gymnasium.register("TorchpoolTests/Counter-v0", entry_point="python_envs:CounterEnv")  # a module path
    try:
        for gym_id in ("TorchpoolTests/ResetCounter-v0", "TorchpoolTests/Counter-v0"):
            with torchpool.make(f"gymnasium:{gym_id}", num_envs=2, num_workers=2) as pool:
                pool.reset()
                assert pool.step(torch.zeros(2, dtype=torch.int64))["observation"].flatten().tolist() == [1.0, 1.0]
        # A callable that makes one by its id, in the worker, finds it too.
        with torchpool.make(lambda: gymnasium.make("TorchpoolTests/Counter-v0"), num_envs=2, num_workers=1) as pool:
            pool.reset()
            assert pool.step(torch.zeros(2, dtype=torch.int64))["observation"].flatten().tolist() == [1.0, 1.0]
    finally:
        del gymnasium.registry["TorchpoolTests/ResetCounter-v0"], gymnasium.registry["TorchpoolTests/Counter-v0"]


def test_minigrid_ids_registered_by_an_import_work_in_the_workers():
    minigrid = pytest.importorskip("minigrid")
    from minigrid.wrappers import ImgObsWrapper

    assert minigrid is not None
    reference = ImgObsWrapper(gymnasium.make("MiniGrid-Empty-8x8-v0"))
    with torchpool.make(lambda: ImgObsWrapper(gymnasium.make("MiniGrid-Empty-8x8-v0")), num_envs=2,
                        num_workers=2, seed=3) as pool:
        ours = pool.reset()["observation"].numpy()
        np.testing.assert_array_equal(ours[0], reference.reset(seed=3)[0])
    # The id itself reaches gymnasium.make in the workers (its Text "mission" is a Python object, NOTE [Python
    # objects] in torchpool/_workers/spaces.py: tests/test_python_env_spaces.py checks it against SyncVectorEnv).
    with torchpool.make("gymnasium:MiniGrid-Empty-8x8-v0", num_envs=2, num_workers=1, seed=3) as pool:
        pool.reset()
        assert [answer[0] for answer in pool.objects(1)] == [("get to the green goal square",)] * 2
    reference.close()


def test_gymnasium_robotics_ids_registered_by_an_import_step_in_the_workers_as_in_gymnasium():
    gymnasium_robotics = pytest.importorskip("gymnasium_robotics")
    gymnasium.register_envs(gymnasium_robotics)  # the parent's registry alone knows the id
    env_id = "PointMaze_UMaze-v3"  # (its Fetch tasks fail in Gymnasium itself under mujoco 4.0.0)
    references = [gymnasium.make(env_id) for _ in range(2)]
    actions = np.random.default_rng(0).uniform(-1, 1, (30, 2, 2)).astype(np.float32)
    with torchpool.make(f"gymnasium:{env_id}", num_envs=2, num_workers=2, seed=3) as pool:
        assert pool.schedule["steps_in"] == "workers"
        td = pool.reset()
        expected = [env.reset(seed=3 + i)[0] for i, env in enumerate(references)]
        for step in range(len(actions) + 1):
            for i, obs in enumerate(expected):
                for key, value in obs.items():
                    ours = td["observation", key][i].numpy()
                    np.testing.assert_array_equal(ours, value.astype(ours.dtype), err_msg=f"{key}, step {step}")
            if step == len(actions):
                break
            td = pool.step(torch.from_numpy(actions[step]))
            expected = [env.step(actions[step][i])[0] for i, env in enumerate(references)]
    for env in references:
        env.close()


def test_an_id_no_process_registered_names_what_to_import():
    with pytest.raises(gymnasium.error.NameNotFound, match="importing the package that registers it.*"
                                                           "'gymnasium:<module>:<id>'"):
        torchpool.make("gymnasium:NotRegisteredAnywhere-v0", num_envs=2, num_workers=1)
    with pytest.raises(RuntimeError, match="(?s)could not build.*NameNotFound.*import the module that registers "
                                           "the id before torchpool.make"):
        torchpool.make(lambda: gymnasium.make("NotRegisteredAnywhere-v0"), num_envs=2, num_workers=1)


# ---- 4. a hung env is stopped; workers die with their parent -----------------


def test_a_step_past_step_timeout_is_an_env_error_and_its_worker_restarts():
    fn = functools.partial(HangsAtStep, hang_env=1, at=2)
    with torchpool.make(fn, num_envs=4, num_workers=2, step_timeout=1.0,
                        env_kwargs=[{"env_index": i} for i in range(4)]) as pool:
        before = pool.worker_pids
        pool.reset()
        pool.step(torch.zeros(4, dtype=torch.int64))
        started = time.monotonic()
        with pytest.raises(torchpool.EnvError) as raised:
            pool.step(torch.zeros(4, dtype=torch.int64))
        waited = time.monotonic() - started
        # A lower bound cannot flake (no load makes a wait shorter); that it ended at all is the message's.
        assert waited >= 1.0, f"stopped after {waited:.2f} s with step_timeout=1"
        assert raised.value.env_ids == [1], "env 0 answered before env 1 hung"
        assert "this env's reset or step ran past the pool's step_timeout (1 s) in worker process 0" in \
            raised.value.messages[1]
        assert pool.schedule["step_timeouts"] == 1
        deadline = time.monotonic() + 2  # killed; reaped by the supervisor soon after
        while python_envs.alive(before[0]) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not python_envs.alive(before[0])
        while pool.schedule["restarts"] == 0 and time.monotonic() < deadline + 5:  # a request sent meanwhile fails
            time.sleep(0.01)
        # The pool goes on: the stopped worker's envs start new episodes in its replacement (env 0, which
        # was not in flight, learns it at its next step, as after any restart).
        with pytest.raises(torchpool.EnvError) as raised:
            pool.step(torch.zeros(4, dtype=torch.int64))
        assert raised.value.env_ids == [0] and "restarted" in raised.value.messages[0]
        td = pool.step(torch.zeros(4, dtype=torch.int64))
        assert td["observation"].flatten().tolist() == [0.0, 1.0, 4.0, 4.0]
        assert pool.worker_pids[0] != before[0]


def test_step_timeout_is_checked():
    with pytest.raises(ValueError, match="step_timeout must be a positive number of seconds or None"):
        torchpool.make(python_envs.FailingEnv, num_envs=2, step_timeout=0)


_ORPHAN_SCRIPT = """
import functools, os, signal, sys, threading, time
sys.path[:0] = {path!r}
import torch, torchpool
import test_python_envs_usability as here

def make():
    return torchpool.make(functools.partial(here.HangsAtStep, hang_env=0, at=1, flag={flag!r}), num_envs=2,
                          num_workers=2, step_timeout=None)

if {in_thread!r}:  # made in a thread that then ends: no PR_SET_PDEATHSIG, the socket alone
    made = []
    thread = threading.Thread(target=lambda: made.append(make()))
    thread.start()
    thread.join()
    pool = made[0]
else:
    pool = make()
pool.reset()
print(*pool.worker_pids, flush=True)
threading.Thread(target=pool.step, args=(torch.zeros(2, dtype=torch.int64),), daemon=True).start()
here._wait_for_file({flag!r})  # worker 0 is in its hour-long step
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_workers_die_with_their_parent_even_in_a_step(tmp_path):
    # Both parents at once (each spends seconds importing torch): one made its pool in the main thread, one
    # in a thread that then ended (no PR_SET_PDEATHSIG, the socket alone).
    parents = {}
    for in_thread in (False, True):
        script = _ORPHAN_SCRIPT.format(path=sys.path, in_thread=in_thread, flag=str(tmp_path / f"hangs-{in_thread}"))
        parents[in_thread] = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)],
                                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for in_thread, parent in parents.items():
        made = "made in a thread" if in_thread else "made in the main thread"
        out, err = parent.communicate(timeout=120)
        assert parent.returncode == -signal.SIGKILL, f"{made}: {err}"
        pids = [int(pid) for pid in out.split()]
        assert len(pids) == 2, f"{made}: {err}"
        deadline = time.monotonic() + 10  # a guard: PR_SET_PDEATHSIG or the closed socket ends them at once
        while any(python_envs.alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not [pid for pid in pids if python_envs.alive(pid)], f"{made}: worker processes outlived their parent"


# ---- 2. a start without torch (how fast: benchmarks/python_envs.py) -----------


def test_workers_start_without_torch():
    pool = torchpool.make("gymnasium:CartPole-v1", num_envs=2, num_workers=2)
    try:
        pool.reset()
        for pid in pool.worker_pids:
            with open(f"/proc/{pid}/maps") as maps:
                assert "libtorch" not in maps.read(), f"worker {pid} loaded torch"
            with open(f"/proc/{pid}/status") as status:
                resident_kb = int(status.read().split("VmRSS:")[1].split()[0])
            assert resident_kb < 80 * 1024, f"worker {pid} holds {resident_kb / 1024:.0f} MB"
    finally:
        pool.close()


# ---- 1. where envs step --------------------------------------------------------


class CtrlCInStep(python_envs.CountsSteps):
    """Counts its steps; env `interrupted_env`'s step `at` sends this process SIGINT (a Ctrl-C) and sleeps,
    where the KeyboardInterrupt lands, before it would count."""

    def __init__(self, env_index: int = 0, interrupted_env: int = 1, at: int = 2):
        self.interrupts = env_index == interrupted_env
        self.at = at

    def step(self, action):
        if self.interrupts and self.steps + 1 == self.at:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(60)
        self.steps += 1
        return np.full(1, self.steps, np.float32), 1.0, False, False, {}


@pytest.mark.parametrize("load", [0.0, 8.0])
def test_the_pool_steps_cheap_envs_in_the_caller_and_costly_ones_in_workers(monkeypatch, load):
    from torchpool._workers import process_pool

    monkeypatch.setattr(process_pool, "available_cpus", lambda: 2)
    monkeypatch.setattr(process_pool, "_runnable_elsewhere", lambda: load)
    # An env cheap on any host and Python: whether CartPole x4 passes the threshold depends on both.
    with torchpool.make(functools.partial(python_envs.FailingEnv, fail_at=-1), num_envs=4) as pool:
        assert pool.schedule["steps_in"] == "caller" and pool.worker_pids == []
        assert 0 < pool.schedule["measured_step_ns"] < 1e6
    with torchpool.make(functools.partial(python_envs.CounterEnv, sleep_ms=2.0), num_envs=4) as pool:
        if load == 0.0:
            assert pool.schedule["steps_in"] == "workers" and len(pool.worker_pids) == 2, "2 ms steps: workers"
        else:
            assert pool.schedule["steps_in"] == "caller", "on an oversubscribed host the caller steps every env"
    # Asked for: num_workers means workers, steps_in="caller" the caller.
    with torchpool.make("gymnasium:CartPole-v1", num_envs=4, num_workers=2) as pool:
        assert pool.schedule["steps_in"] == "workers"
    with torchpool.make(functools.partial(python_envs.CounterEnv, sleep_ms=2.0), num_envs=4,
                        steps_in="caller") as pool:
        assert pool.schedule["steps_in"] == "caller"


def test_envs_in_the_caller_start_no_process_and_fail_as_envs():
    before = _children()
    with torchpool.make(python_envs.FailingEnv, num_envs=3, steps_in="caller", fail_at=2) as pool:
        assert _children() == before
        pool.reset()
        pool.step(torch.zeros(3, dtype=torch.int64))
        with pytest.raises(torchpool.EnvError) as raised:
            pool.step(torch.zeros(3, dtype=torch.int64))
        assert raised.value.env_ids == [0, 1, 2] and "the env broke at step 2" in raised.value.messages[1]
        td = pool.step(torch.zeros(3, dtype=torch.int64))  # they reset
        assert td["observation"].flatten().tolist() == [0.0, 0.0, 0.0]


def test_ctrl_c_interrupts_envs_stepping_in_the_caller():
    # The caller steps envs 0-3 in turn: a Ctrl-C in env 1's second step raises KeyboardInterrupt at once,
    # with envs 2 and 3 not stepped.
    with torchpool.make(CtrlCInStep, num_envs=4, steps_in="caller",
                        env_kwargs=[{"env_index": i} for i in range(4)]) as pool:
        pool.reset()
        pool.step(torch.zeros(4, dtype=torch.int64))
        with pytest.raises(KeyboardInterrupt):
            pool.step(torch.zeros(4, dtype=torch.int64))
        steps = [env.steps for env in pool.local_envs]
        assert steps == [2, 1, 1, 1], f"steps per env {steps}: the envs after the interrupted one were stepped"
        td = pool.step(torch.zeros(4, dtype=torch.int64))  # env 0 stepped on; the others start anew
        assert td["observation"].flatten().tolist() == [3.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("bad", [{"autoreset": "sometimes"}, {"pin_memory": "yes"}, {"step_timeout": -1}])
def test_arguments_the_core_would_refuse_are_refused_before_any_process_starts(bad, nothing_starts):
    before = _children()
    with pytest.raises((ValueError, TypeError)):
        torchpool.make("gymnasium:CartPole-v1", num_envs=2, num_workers=2, **bad)
    assert _children() == before


def _ctrl_c_stops_a_hung_call(flag: str):
    # Ctrl-C ends the call, not the step timeout far off (which would kill and restart the hung worker, and
    # Python raise the KeyboardInterrupt it had pending only then).
    fn = functools.partial(HangsAtStep, hang_env=1, at=2, flag=flag)
    with torchpool.make(fn, num_envs=4, num_workers=2, step_timeout=30,
                        env_kwargs=[{"env_index": i} for i in range(4)]) as pool:
        pool.reset()
        pool.step(torch.zeros(4, dtype=torch.int64))
        hung = pool.worker_pids[0]
        interrupter = _interrupt_once(flag)  # once env 1 hangs
        with pytest.raises(KeyboardInterrupt):
            pool.step(torch.zeros(4, dtype=torch.int64))
        interrupter.join()
        assert pool.schedule["step_timeouts"] == 0 and pool.worker_pids[0] == hung, \
            "the step timeout ended the call, not Ctrl-C"
    assert not python_envs.alive(hung), "close() should end the hung worker"


def test_ctrl_c_stops_a_call_whose_worker_hangs(tmp_path):
    # Only Ctrl-C can end this call in time (NOTE [Ctrl-C while workers step]); the step timeout, far off,
    # only keeps a broken Ctrl-C from hanging the suite (the call would then raise EnvError, not
    # KeyboardInterrupt, and fail the test). An earlier test's live asyncio loop may hold Python's signal
    # wake-up fd (the pool then leaves Ctrl-C to the step timeout): this test starts as a script does.
    signal.set_wakeup_fd(-1)
    _ctrl_c_stops_a_hung_call(str(tmp_path / "hangs"))


def test_ctrl_c_is_heard_after_an_event_loop_that_handled_it_closed(tmp_path):
    # The loop takes the wake-up fd from the pools' pipe and, closing, leaves none: later pools take it back.
    with torchpool.make("gymnasium:CartPole-v1", num_envs=2, num_workers=2) as pool:
        pool.reset()
    loop = asyncio.new_event_loop()
    loop.add_signal_handler(signal.SIGINT, lambda: None)
    loop.close()
    _ctrl_c_stops_a_hung_call(str(tmp_path / "hangs"))


def test_a_pool_whose_core_refuses_it_leaves_no_process_and_no_registry_entry(monkeypatch):
    """The region registered for the core is forgotten when the core's make fails (here: stubbed to fail)."""
    from torchpool import _process
    from torchpool.pool import Pool

    def refuse(self, *args, **kwargs):
        raise ValueError("the core refused the pool")

    monkeypatch.setattr(Pool, "_open", refuse)
    before, regions = _children(), _process.registered_regions()
    for where in ({"steps_in": "workers", "num_workers": 2}, {"steps_in": "caller"}):
        with pytest.raises(ValueError, match="the core refused the pool"):
            torchpool.make("gymnasium:CartPole-v1", num_envs=2, **where)
    assert _process.registered_regions() == regions, "a failed pool left its region in the registry"
    deadline = time.monotonic() + 5
    while _children() != before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _children() == before, "a failed pool left worker processes behind"


# ---- the env objects: get_attr, set_attr, call, is_wrapped, set_reset_options (NOTE [Env requests]) ----------


class Reachable(gymnasium.Env):
    """An env with an attribute, a method and the options of its last reset, to reach from the pool."""

    observation_space = gymnasium.spaces.Box(0, 1, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, level=0):
        self.level = level
        self.last_options = "never reset"

    def reset(self, *, seed=None, options=None):
        self.last_options = options
        return np.zeros(2, np.float32), {}

    def step(self, action):
        return np.zeros(2, np.float32), 0.0, False, False, {}

    def compute_reward(self, achieved, desired, info=None):
        return -np.abs(np.asarray(achieved) - np.asarray(desired)) * (self.level + 1)


def _reachables(steps_in):
    return torchpool.make([functools.partial(Reachable, level=i) for i in range(2)]
                          + [lambda: gymnasium.wrappers.TimeLimit(Reachable(level=2), 10)],
                          num_envs=3, steps_in=steps_in)


@pytest.mark.parametrize("steps_in", ["caller", "workers"])
def test_get_attr_set_attr_and_call_reach_each_envs_object(steps_in):
    with _reachables(steps_in) as pool:
        assert pool.get_attr("level") == [0, 1, 2], "get_attr reads through the TimeLimit of env 2"
        assert pool.get_attr("level", env_ids=[-1, 0]) == [2, 0], "negative ids count from the end"
        pool.set_attr("level", 7, env_ids=1)
        assert pool.get_attr("level") == [0, 7, 2], "set_attr set env 1's only"
        rewards = pool.call("compute_reward", np.array([1.0]), np.array([3.0]), info=None, env_ids=[0, 1])
        np.testing.assert_array_equal(np.stack(rewards), [[-2.0], [-16.0]], err_msg="HER's compute_reward")
        with pytest.raises(AttributeError, match="no_such_thing"):
            pool.get_attr("no_such_thing")
        with pytest.raises(IndexError):
            pool.get_attr("level", env_ids=3)
        pool.reset()
        pool.step(torch.zeros(3, dtype=torch.int64))
        assert pool.get_attr("level") == [0, 7, 2], "the pool steps on after requests"


@pytest.mark.parametrize("steps_in", ["caller", "workers"])
def test_is_wrapped_looks_through_each_envs_wrappers(steps_in):
    with _reachables(steps_in) as pool:
        assert pool.is_wrapped(gymnasium.wrappers.TimeLimit) == [False, False, True]
        assert pool.is_wrapped(gymnasium.Wrapper, env_ids=[2]) == [True], "a base class of the wrapper"
        assert pool.is_wrapped(gymnasium.wrappers.ClipAction) == [False] * 3


@pytest.mark.parametrize("steps_in", ["caller", "workers"])
def test_reset_options_reach_the_next_reset_only(steps_in):
    with _reachables(steps_in) as pool:
        pool.set_reset_options([{"level": 1}, None, {"level": 3}])
        pool.reset()
        assert pool.get_attr("last_options") == [{"level": 1}, None, {"level": 3}]
        pool.reset()
        assert pool.get_attr("last_options") == [None] * 3, "options are for one reset"
        pool.set_reset_options({"x": 1}, env_ids=[1])
        pool.reset()
        assert pool.get_attr("last_options") == [None, {"x": 1}, None]


def test_local_envs_are_the_objects_stepped_in_the_caller():
    with _reachables("caller") as pool:
        assert [env.get_wrapper_attr("level") for env in pool.local_envs] == [0, 1, 2]
        pool.local_envs[0].level = 5
        assert pool.get_attr("level", env_ids=0) == [5], "local_envs are the pool's own objects"
    with _reachables("workers") as pool:
        assert pool.local_envs is None, "envs in worker processes have no object here"


def test_constructors_returning_one_env_object_are_refused():
    env = Reachable()
    with pytest.raises(ValueError, match="returned the same env object"):
        torchpool.make([lambda: env] * 2, num_envs=2, steps_in="caller")


class OwnDict(gymnasium.spaces.Dict):
    """A space class of this module, which travels to the workers by value (as a class of __main__ does)."""


class OwnSpaceEnv(Reachable):
    observation_space = OwnDict({"x": gymnasium.spaces.Box(0, 1, (2,), np.float32)})

    def reset(self, *, seed=None, options=None):
        return {"x": np.zeros(2, np.float32)}, {}


def test_a_space_of_a_class_that_came_by_value_travels_back_from_the_workers():
    with torchpool.make(OwnSpaceEnv, num_envs=2, num_workers=1) as pool:
        assert type(pool.observation_space).__name__ == "OwnDict"
        assert pool.reset()["observation"].shape[0] == 2
        assert [type(space).__name__ for space in pool.get_attr("observation_space")] == ["OwnDict"] * 2
