"""``torchpool.envpool_compat`` under gym 0.23.1 itself, the gym CleanRL's EnvPool scripts declare.

NOTE [The gym API follows the installed gym] (envpool_compat.py): ``env_type="gym"`` is the legacy API
(observation-only resets, ``(obs, reward, done, info)`` steps) where the installed gym is older than 0.26,
Gymnasium's API otherwise. tests/test_envpool_compat.py checks that with gym's version patched; here gym
0.23.1 is installed (``pip install --no-deps --target .legacy-gym/gym-0.23.1`` on first use, gitignored; it
imports under NumPy 2) and put first on ``PYTHONPATH`` of a child process, which runs CleanRL's episode loop
(``ppo_atari_envpool.py``'s ``RecordEpisodeStatistics(gym.Wrapper)`` and its ``lives == 0`` episode count)
on CartPole-v1 and Pong-v5 and reports what it saw. benchmarks/peers/run_cleanrl.sh runs CleanRL's scripts
themselves this way.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

import torchpool
import torchpool.envpool_compat as envpool

ROOT = Path(__file__).resolve().parent.parent
LEGACY_GYM = ROOT / ".legacy-gym" / "gym-0.23.1"  # shared with benchmarks/peers/run_cleanrl.sh
ENV_IDS = ["CartPole-v1", "Pong-v5"]
NUM_ENVS, STEPS = 4, {"CartPole-v1": 200, "Pong-v5": 300}

# CleanRL's ppo_atari_envpool.py, its wrapper and episode count as written (less the returned_* copies it
# keeps for logging), run by the child with gym 0.23.1 first on its path.
CLEANRL_LOOP = r'''
import json, sys
import gym
import numpy as np
import torchpool.envpool_compat as envpool

NUM_ENVS, steps = json.loads(sys.argv[1])

class RecordEpisodeStatistics(gym.Wrapper):
    def __init__(self, env, deque_size=100):
        super().__init__(env)
        self.num_envs = getattr(env, "num_envs", 1)
        self.episode_returns = None
        self.episode_lengths = None

    def reset(self, **kwargs):
        observations = super().reset(**kwargs)
        self.episode_returns = np.zeros(self.num_envs, dtype=np.float32)
        self.episode_lengths = np.zeros(self.num_envs, dtype=np.int32)
        return observations

    def step(self, action):
        observations, rewards, dones, infos = super().step(action)
        self.episode_returns += infos["reward"]
        self.episode_lengths += 1
        infos["r"] = self.episode_returns.copy()
        infos["l"] = self.episode_lengths.copy()
        self.episode_returns *= 1 - infos["terminated"]
        self.episode_lengths *= 1 - infos["terminated"]
        return observations, rewards, dones, infos

seen = {"gym": gym.__version__}
for env_id, num_steps in steps.items():
    envs = envpool.make(env_id, env_type="gym", num_envs=NUM_ENVS, seed=1,
                        **({"episodic_life": True, "reward_clip": True} if env_id.endswith("-v5") else {}))
    envs.num_envs = NUM_ENVS
    envs.single_action_space = envs.action_space
    envs.single_observation_space = envs.observation_space
    envs = RecordEpisodeStatistics(envs)
    facts = {"discrete": isinstance(envs.action_space, gym.spaces.Discrete)}
    obs = envs.reset()
    facts["reset"] = [type(obs).__name__, list(obs.shape), str(obs.dtype)]
    rng = np.random.default_rng(0)
    episodes, reward_sum, step_lengths = [], 0.0, set()
    for _ in range(num_steps):
        out = envs.step(rng.integers(envs.single_action_space.n, size=NUM_ENVS))
        step_lengths.add(len(out))
        obs, reward, done, info = out
        facts["done"] = str(done.dtype)
        facts["info"] = sorted(info)
        reward_sum += float(info["reward"].sum())
        for idx, d in enumerate(done):
            if d and info["lives"][idx] == 0:
                episodes.append([float(info["r"][idx]), int(info["l"][idx])])
    facts.update(steps=sorted(step_lengths), episodes=episodes, reward_sum=reward_sum,
                 unfinished=float(envs.episode_returns.sum()), obs=[list(obs.shape), str(obs.dtype)])
    envs.close()
    seen[env_id] = facts
print(json.dumps(seen))
'''


def _legacy_gym() -> Path:
    """The folder holding gym 0.23.1, installed there on first use; a failed install fails the test."""
    if (LEGACY_GYM / "gym" / "__init__.py").exists():
        return LEGACY_GYM
    LEGACY_GYM.parent.mkdir(exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=LEGACY_GYM.name + ".", dir=LEGACY_GYM.parent))
    made = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                           "--target", str(fresh), "gym==0.23.1"], capture_output=True, text=True, timeout=300)
    if made.returncode != 0:
        shutil.rmtree(fresh, ignore_errors=True)
        pytest.fail(f"could not install gym==0.23.1 into {LEGACY_GYM} (pip install --no-deps --target; PyPI "
                    f"unreachable?): {made.stderr[-500:]}")
    try:
        fresh.rename(LEGACY_GYM)  # whole, so a half-made folder is never taken for an install
    except OSError:  # another run installed it first
        shutil.rmtree(fresh, ignore_errors=True)
    return LEGACY_GYM


@pytest.fixture(scope="module")
def under_gym_0_23() -> dict:
    """What CLEANRL_LOOP saw for each of ENV_IDS, run with gym 0.23.1 first on the path."""
    # gym 0.23.1, then the folder this torchpool was imported from (whatever made it importable here).
    path = [str(_legacy_gym()), str(Path(torchpool.__file__).parent.parent), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, path))}
    child = subprocess.run([sys.executable, "-c", CLEANRL_LOOP, json.dumps([NUM_ENVS, STEPS])], capture_output=True,
                           text=True, timeout=300, cwd=ROOT, env=env)
    assert child.returncode == 0, f"CleanRL's loop under gym 0.23.1 failed:\n{child.stderr[-3000:]}"
    return json.loads(child.stdout.splitlines()[-1])


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_cleanrl_loop_under_real_gym_0_23(under_gym_0_23: dict, env_id: str):
    assert under_gym_0_23["gym"] == "0.23.1", f"the child imported gym {under_gym_0_23['gym']}, not 0.23.1"
    seen = under_gym_0_23[env_id]
    shape = [NUM_ENVS, 4] if env_id == "CartPole-v1" else [NUM_ENVS, 4, 84, 84]
    dtype = "float32" if env_id == "CartPole-v1" else "uint8"
    assert seen["reset"] == ["ndarray", shape, dtype], f"reset() gave {seen['reset']}, not the observations only"
    assert seen["steps"] == [4], f"step() gave {seen['steps']} values, gym 0.23's API has 4"
    assert seen["done"] == "bool" and seen["obs"] == [shape, dtype], f"step's done/obs: {seen['done']}, {seen['obs']}"
    assert seen["discrete"], "isinstance(envs.action_space, gym.spaces.Discrete) fails under gym 0.23.1"
    missing = {"reward", "terminated", "lives", "TimeLimit.truncated", "env_id", "elapsed_step"} - set(seen["info"])
    assert not missing, f"info lacks what CleanRL's scripts read: {sorted(missing)}"
    # Every unclipped reward is counted once: in an episode the loop counted, or in one still running.
    counted = sum(episode_return for episode_return, _ in seen["episodes"]) + seen["unfinished"]
    assert counted == pytest.approx(seen["reward_sum"]), (
        f"episode returns {counted} + running, but {seen['reward_sum']} reward in all")
    if env_id == "CartPole-v1":  # a random policy ends ~20-step episodes; reward 1 a step, 0 on the reset step
        assert len(seen["episodes"]) >= 10, f"{len(seen['episodes'])} CartPole episodes counted in 200 steps"
        assert all(length in (episode_return, episode_return + 1) and 5 <= episode_return < 200
                   for episode_return, length in seen["episodes"]), f"CartPole episodes: {seen['episodes']}"
    else:  # a random Pong player loses points within 300 steps; no game (21 points) ends
        assert seen["reward_sum"] < 0 and not seen["episodes"], (
            f"Pong: {seen['reward_sum']} reward, episodes {seen['episodes']}")


def test_gym_0_26_gets_gymnasiums_api():
    gym = pytest.importorskip("gym")
    if tuple(int(part) for part in gym.__version__.split(".")[:2]) < (0, 26):
        pytest.skip(f"this environment has gym {gym.__version__}, not >= 0.26")
    envs = envpool.make("CartPole-v1", env_type="gym", num_envs=2, seed=1)
    try:
        reset = envs.reset()
        step = envs.step(np.zeros(2, dtype=np.int64))
    finally:
        envs.close()
    assert isinstance(reset, tuple) and len(reset) == 2, f"gym {gym.__version__}: reset() gave {type(reset)}"
    assert len(step) == 5, f"gym {gym.__version__}: step() gave {len(step)} values, Gymnasium's API has 5"
