"""RLlib's PPO on torchpool, the child of tests/test_rllib.py: runs in RLlib's own venv (.venv-rllib).

Trains PPO (new API stack) for a few iterations with ``torchpool.rllib.VectorEnv`` as each of
``--num-env-runners`` env runners' vector env (``gym_env_vectorize_mode="vector_entry_point"``), and
prints one JSON line for the test to check:

* ``runners``: per env runner, every episode its pool stepped (``episodes``: return, length), read off the
  VectorEnv's outputs by a recording subclass, the steps it took, the seeds it was reset with; and every
  episode RLlib logged into its metrics (``logged``: return, length), caught where SingleAgentEnvRunner
  (Ray 2.60) turns a finished episode into them (``_log_episode_metrics``);
* ``results``: what each ``algo.train()`` reported under ``env_runners``, and ``counts``: per iteration and
  env runner, how many episodes RLlib had logged and the pool had stepped by then, and the pool's steps;
* ``pids`` and ``alive``: Ray's processes under this one before ``ray.shutdown()``, and those still
  alive after it.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import gymnasium
import numpy as np
from python_envs import alive  # tests/ is this script's folder, so on sys.path

import torchpool.rllib


class RecordingVectorEnv(torchpool.rllib.VectorEnv):
    """torchpool.rllib.VectorEnv that records, per env, the (return, length) of every episode its pool
    stepped, from the outputs it hands RLlib. Next-step autoreset: the step after an env's end resets it
    (reward 0, not an episode step)."""

    def __init__(self, config):
        super().__init__(config)
        n = self.num_envs
        self.returns, self.lengths = np.zeros(n), np.zeros(n, dtype=np.int64)
        self.resetting = np.zeros(n, dtype=bool)
        self.episodes: list[tuple[float, int]] = []
        self.reset_seeds: list = []
        self.steps = 0  # env steps that belong to an episode (the reset steps excluded), as RLlib counts

    def reset(self, *, seed=None, options=None):
        self.reset_seeds.append(seed)
        self.returns[:], self.lengths[:], self.resetting[:] = 0, 0, False
        return super().reset(seed=seed, options=options)

    def step(self, actions):
        observation, reward, terminated, truncated, info = super().step(actions)
        stepped = ~self.resetting
        self.returns[stepped] += reward[stepped]
        self.lengths[stepped] += 1
        self.steps += int(stepped.sum())
        self.returns[self.resetting], self.lengths[self.resetting] = 0, 0
        done = terminated | truncated
        for i in np.flatnonzero(done):
            self.episodes.append((float(self.returns[i]), int(self.lengths[i])))
        self.resetting = done.copy()
        return observation, reward, terminated, truncated, info


def _descendants(pid: int) -> list[int]:
    """The processes under ``pid`` (read from /proc), grandchildren included."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--num-env-runners", type=int, default=2)
    parser.add_argument("--num-envs", type=int, default=4, help="envs per env runner (one pool)")
    parser.add_argument("--batch", type=int, default=1000, help="train_batch_size_per_learner")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

    import torchpool
    import torchpool._core

    class LoggingEnvRunner(SingleAgentEnvRunner):
        """Keeps each (length, return) that RLlib 2.60 logs into its episode metrics."""

        logged: list

        def _log_episode_metrics(self, length, ret, sec):
            self.__dict__.setdefault("logged", []).append((float(ret), int(length)))
            return super()._log_episode_metrics(length, ret, sec)

    started = time.perf_counter()
    # address="local": a Ray instance of its own, never a cluster that `ray start` left running here
    ray.init(address="local", num_cpus=args.num_env_runners, include_dashboard=False, log_to_driver=False)
    config = (
        PPOConfig()
        .environment(RecordingVectorEnv, env_config={"env_id": "CartPole-v1", "num_threads": 1})
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.num_envs,
                     gym_env_vectorize_mode="vector_entry_point", env_runner_cls=LoggingEnvRunner)
        .training(train_batch_size_per_learner=args.batch, minibatch_size=250, num_epochs=2)
        .reporting(metrics_num_episodes_for_smoothing=1_000_000)
        .debugging(seed=args.seed)
    )
    algo = config.build_algo()
    results, counts = [], []

    def count(runner):
        env = runner.env.unwrapped
        return {"logged": len(getattr(runner, "logged", [])), "episodes": len(env.episodes), "steps": env.steps}

    for _ in range(args.iterations):
        results.append(algo.train())
        # per runner, by the end of this iteration: episodes logged by RLlib, episodes and steps of its pool
        counts.append(algo.env_runner_group.foreach_env_runner(count, local_env_runner=False))

    def report(runner):
        env = runner.env.unwrapped  # RLlib wraps ours in its DictInfoToList
        classes = [c.__module__ + "." + c.__qualname__ for c in type(env).__mro__[:3]]
        return {"worker_index": runner.worker_index, "pid": os.getpid(), "reset_seeds": env.reset_seeds,
                "env_seeds": list(env.np_random_seed), "episodes": env.episodes, "steps": env.steps,
                "logged": getattr(runner, "logged", []), "vector_env": classes, "gymnasium": gymnasium.__version__}

    runners = algo.env_runner_group.foreach_env_runner(report, local_env_runner=False)
    pids = _descendants(os.getpid())
    algo.stop()
    ray.shutdown()
    deadline = time.monotonic() + 30
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    keys = ("num_episodes", "num_episodes_lifetime", "num_env_steps_sampled", "num_env_steps_sampled_lifetime",
            "episode_return_mean", "episode_return_min", "episode_return_max", "episode_len_mean")
    print(json.dumps({
        "gymnasium": gymnasium.__version__, "ray": ray.__version__,
        "torchpool": torchpool.__file__, "core": torchpool._core.__file__,
        "runners": runners,
        "results": [{key: result["env_runners"].get(key) for key in keys} for result in results],
        "counts": counts,
        "iterations": len(results), "pids": pids, "alive": [p for p in pids if alive(p)],
        "wall_s": time.perf_counter() - started}, default=float))


if __name__ == "__main__":
    main()
