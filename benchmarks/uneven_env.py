"""The benchmarks' uneven Python env: each step computes for a random 0.1-2 ms.

A module of its own (no torch) so every system's worker processes import it
by name, quickly.
"""

import time

import gymnasium
import numpy as np
from gymnasium import spaces


class UnevenEnv(gymnasium.Env):
    observation_space = spaces.Box(-1.0, 1.0, (4,), np.float32)
    action_space = spaces.Discrete(2)

    def __init__(self, low_ms: float = 0.1, high_ms: float = 2.0):
        self.low, self.high = low_ms / 1e3, high_ms / 1e3

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(4, np.float32), {}

    def step(self, action):
        end = time.perf_counter() + self.np_random.uniform(self.low, self.high)
        while time.perf_counter() < end:  # computes, as a simulator does: it keeps its core busy
            pass
        return self.np_random.uniform(-1, 1, 4).astype(np.float32), 1.0, False, False, {}


def make_uneven():
    return UnevenEnv()
