"""A Python env that is not Atari, though its info carries Atari's extras' names (``game_over``, ``raw_reward``).

Adapters must tell Atari by the pool's family (``Pool.family``), not by these
names: here ``game_over`` is never set and ``raw_reward`` is 100 per step,
while the episode really ends after ``LENGTH`` steps of reward 1.
"""

import gymnasium
import numpy as np

LENGTH = 3


class AtariNamedInfoEnv(gymnasium.Env):
    observation_space = gymnasium.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.steps = 0
        return np.zeros(1, np.float32), {"game_over": 0, "raw_reward": 0.0}

    def step(self, action):
        self.steps += 1
        terminated = self.steps == LENGTH
        return np.zeros(1, np.float32), 1.0, terminated, False, {"game_over": 0, "raw_reward": 100.0}
