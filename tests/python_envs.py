"""Python envs the process-pool tests build in worker processes.

A module of its own that imports no torch: the workers import it by name to
unpickle the constructors, and stay quick to start.
"""

import os
import signal
import time

import gymnasium
import numpy as np
from gymnasium import spaces


class CountingDictEnv(gymnasium.Env):
    """Dict observations of three kinds; ends after `length` steps; info has a number and a string."""

    def __init__(self, length: int = 7, scale: float = 1.0):
        self.length = length
        self.scale = scale
        self.observation_space = spaces.Dict({
            "position": spaces.Box(-10.0, 10.0, (2,), np.float32),
            "count": spaces.Discrete(100),
            "flags": spaces.MultiBinary(3),
        })
        self.action_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.steps = 0

    def _observation(self):
        position = (self.np_random.uniform(-1, 1, 2) * self.scale).astype(np.float32)
        return {"position": position, "count": self.steps, "flags": np.array([self.steps % 2, 1, 0], np.int8)}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.steps = 0
        return self._observation(), {"lives": 3, "name": "counting"}

    def step(self, action):
        self.steps += 1
        reward = float(action[0]) + self.steps
        return self._observation(), reward, self.steps >= self.length, False, {"lives": 3 - self.steps % 3,
                                                                                  "name": "counting"}


class TupleEnv(gymnasium.Env):
    """Tuple observations; MultiDiscrete actions; truncates after 5 steps."""

    def __init__(self):
        self.observation_space = spaces.Tuple((spaces.Box(-np.inf, np.inf, (3,), np.float64), spaces.Discrete(4)))
        self.action_space = spaces.MultiDiscrete([3, 2])
        self.steps = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.steps = 0
        return (self.np_random.normal(size=3), 0), {}

    def step(self, action):
        self.steps += 1
        observation = (self.np_random.normal(size=3) + action[0], int(action[1]) + 2 * (self.steps % 2))
        return observation, float(action.sum()), False, self.steps >= 5, {}


class CountsSteps(gymnasium.Env):
    """The base of the envs that act at a chosen step (fail, hang, raise Ctrl-C): a float32 [1] observation
    their steps fill in, two actions, and `steps`, this episode's count, zeroed by reset()."""

    observation_space = spaces.Box(0, 1000, (1,), np.float32)
    action_space = spaces.Discrete(2)
    steps = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.steps = 0
        return np.zeros(1, np.float32), {}


class FailingEnv(CountsSteps):
    """Raises ValueError at step `fail_at` of each episode."""

    observation_space = spaces.Box(0, 100, (1,), np.float32)

    def __init__(self, fail_at: int = 3):
        self.fail_at = fail_at

    def step(self, action):
        self.steps += 1
        if self.steps == self.fail_at:
            raise ValueError(f"the env broke at step {self.steps}")
        return np.full(1, self.steps, np.float32), 1.0, False, False, {}


class CounterEnv(FailingEnv):
    """Observes its step count; each step sleeps `sleep_ms`."""

    def __init__(self, sleep_ms: float = 0.0):
        super().__init__(fail_at=-1)
        self.sleep = sleep_ms / 1e3

    def step(self, action):
        time.sleep(self.sleep)
        return super().step(action)


class DyingEnv(FailingEnv):
    """Ends its worker process at step `fail_at`: "exit" (os._exit), "kill" (SIGKILL) or "segfault"."""

    def __init__(self, how: str = "exit", fail_at: int = 3, only_env: int | None = None, env_index: int = 0):
        super().__init__(fail_at)
        self.how = how
        self.armed = only_env is None or only_env == env_index

    def step(self, action):
        self.steps += 1
        if self.armed and self.steps == self.fail_at:
            self.armed = False
            if self.how == "exit":
                os._exit(3)
            if self.how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if self.how == "segfault":
                import ctypes

                ctypes.string_at(0)
        return np.full(1, self.steps, np.float32), 1.0, False, False, {}


class WordyFailingEnv(FailingEnv):
    """Fails at step 1 with a message of `size` characters that UTF-8 cannot encode (a lone surrogate)."""

    def __init__(self, size: int = 100_000):
        super().__init__(fail_at=1)
        self.size = size

    def step(self, action):
        raise ValueError("\udcff" + "é" * self.size + " the end")


class HangsWhenRebuilt(DyingEnv):
    """Its worker exits at step 2; the constructor of a replacement hangs (`marker` tells them apart)."""

    def __init__(self, marker: str):
        if os.path.exists(marker) and open(marker).read() != str(os.getpid()):
            time.sleep(600)
        with open(marker, "w") as file:
            file.write(str(os.getpid()))
        super().__init__("exit", fail_at=2)


class SleepyEnv(gymnasium.Env):
    """Each step sleeps or spins a random 0.1-2 ms: the uneven env of the benchmarks."""

    observation_space = spaces.Box(-1, 1, (4,), np.float32)
    action_space = spaces.Discrete(2)

    def __init__(self, low_ms: float = 0.1, high_ms: float = 2.0, spin: bool = True):
        self.low, self.high, self.spin = low_ms / 1e3, high_ms / 1e3, spin

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(4, np.float32), {}

    def step(self, action):
        duration = self.np_random.uniform(self.low, self.high)
        if self.spin:
            end = time.perf_counter() + duration
            while time.perf_counter() < end:
                pass
        else:
            time.sleep(duration)
        return self.np_random.uniform(-1, 1, 4).astype(np.float32), 1.0, False, False, {}


class ConstructorFails(gymnasium.Env):
    def __init__(self):
        raise RuntimeError("no simulator licence")


def not_an_env():
    return object()


def dict_action_env():
    env = FailingEnv()
    env.action_space = spaces.Dict({"a": spaces.Discrete(2)})
    return env


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:  # gone (ENOENT, or ESRCH while it is being reaped)
        return False


class LegacySeedingEnv(gymnasium.Env):
    """Seeds NumPy's global RNG with its reset seed, as old gym code does (np.random.seed takes < 2**32)."""

    observation_space = spaces.Box(0.0, 1.0, (1,), np.float64)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            np.random.seed(seed)
        return np.random.random(1), {}

    def step(self, action):
        return np.random.random(1), 0.0, False, False, {}
