"""RLlib's env-runner sampling on torchpool.rllib.VectorEnv against its default CartPole-v1 path, A/B.

Question: RLlib's PPO samples fewer env steps/s on ``torchpool.rllib.VectorEnv`` than on Gymnasium's own
CartPole-v1 (benchmarks/rllib_cartpole.py), though a torchpool step costs far less than a SyncVectorEnv
step. Where does the time go, and is it ours?

    .venv-rllib/bin/python benchmarks/rllib_sampling.py                  # A/B table, 8 and 32 envs
    .venv-rllib/bin/python benchmarks/rllib_sampling.py --profile 8      # + cProfile of one sample() each
    .venv-rllib/bin/python benchmarks/rllib_sampling.py --env-step-only  # the envs alone, RLlib's actions
    .venv-rllib/bin/python benchmarks/rllib_sampling.py --cold 3         # first sample() of a fresh process

Runs in RLlib's venv (``ray[rllib]==2.60.0``; tests/test_rllib.py makes ``.venv-rllib``). No Ray cluster:
one local ``SingleAgentEnvRunner`` per env path (the PPO config of benchmarks/rllib_cartpole.py, its
[32] linear module, same seed), built once; each round times ``runner.sample(num_timesteps=4000,
random_actions=False)`` on each path in turn (interleaved, the order reversed every other round), after
one warm-up sample each, with ``torch.set_num_threads(1)`` as in a Ray env runner actor. Env steps are
those of the episodes returned (``env_steps()``). Reports the median env steps/s of the rounds and the
median of per-round ratios to the Gymnasium path. Paths: ``torchpool`` (torchpool.rllib.VectorEnv,
``vector_entry_point``), ``gymnasium`` (``env="CartPole-v1"``, ``sync``: RLlib's default), and
``torchpool-views`` (torchpool.rllib.VectorEnv as it was before it copied its outputs: RLlib then holds
views of the pool's ring and the pool builds a buffer per step until it has lent ~one sample()'s worth).
``--cold`` times the first ``sample()`` of a fresh process per path, where that shows.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import statistics
import sys
import time

ENV_PATHS = ("torchpool", "gymnasium", "torchpool-views")


def views_env_class():
    """torchpool.rllib.VectorEnv as it was before it copied its outputs: views of the pool's output ring,
    which RLlib's episodes then hold (the "torchpool-views" path; seeding unchanged)."""
    import torchpool.gym
    import torchpool.rllib

    class ViewsVectorEnv(torchpool.rllib.VectorEnv):
        def reset(self, *, seed=None, options=None):
            if isinstance(seed, int):
                seed = [seed * self.num_envs + i for i in range(self.num_envs)]
            return torchpool.gym.VectorEnv.reset(self, seed=seed, options=options)

        def step(self, actions):
            return torchpool.gym.VectorEnv.step(self, actions)

    return ViewsVectorEnv


ENV_ID = "CartPole-v1"  # --env-id: a classic-control id both torchpool and Gymnasium have (Pendulum-v1: 200-step
# episodes, so RLlib holds each observation row longer than CartPole's random-policy ~20 steps)


def make_runner(env_path: str, num_envs: int, seed: int, env_config: dict | None = None):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

    import torchpool.rllib

    config = PPOConfig()
    if env_path.startswith("torchpool"):
        env_class = torchpool.rllib.VectorEnv if env_path == "torchpool" else views_env_class()
        config = config.environment(env_class,
                                    env_config={"env_id": ENV_ID, "num_threads": 1, **(env_config or {})})
        mode = "vector_entry_point"
    else:
        config = config.environment(ENV_ID)
        mode = "sync"
    config = (
        config.env_runners(num_env_runners=0, num_envs_per_env_runner=num_envs, gym_env_vectorize_mode=mode)
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[32], fcnet_activation="linear",
                                                   vf_share_layers=True))
        .debugging(seed=seed)
    )
    return SingleAgentEnvRunner(config=config)


def timed_sample(runner, num_timesteps: int) -> tuple[int, float]:
    started = time.perf_counter()
    episodes = runner.sample(num_timesteps=num_timesteps, random_actions=False)
    seconds = time.perf_counter() - started
    runner.get_metrics()  # as the algorithm does after each sample: drops the done episodes RLlib keeps
    return sum(e.env_steps() for e in episodes), seconds


def ab(num_envs: int, rounds: int, num_timesteps: int, seed: int, env_config: dict | None,
       paths: tuple[str, ...]) -> dict:
    runners = {path: make_runner(path, num_envs, seed, env_config) for path in paths}
    for runner in runners.values():
        timed_sample(runner, num_timesteps)  # warm-up: first reset, module and connector caches
    rates: dict[str, list[float]] = {path: [] for path in paths}
    for round_ in range(rounds):
        order = paths if round_ % 2 == 0 else paths[::-1]
        for path in order:
            steps, seconds = timed_sample(runners[path], num_timesteps)
            rates[path].append(steps / seconds)
    row = {"num_envs": num_envs, "rates": rates,
           "median": {path: statistics.median(r) for path, r in rates.items()},
           "ratio_median": {path: statistics.median(t / g for t, g in zip(rates[path], rates["gymnasium"]))
                            for path in paths if path != "gymnasium"},
           "envs": {path: type(runner.env.unwrapped).__qualname__ for path, runner in runners.items()}}
    for runner in runners.values():
        runner.stop()
    return row


def profile(num_envs: int, num_timesteps: int, seed: int, env_config: dict | None, top: int,
            paths: tuple[str, ...]) -> None:
    for path in paths:
        runner = make_runner(path, num_envs, seed, env_config)
        timed_sample(runner, num_timesteps)
        profiler = cProfile.Profile()
        profiler.enable()
        steps, seconds = timed_sample(runner, num_timesteps)
        profiler.disable()
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats("tottime").print_stats(top)
        # Where the time of the env step itself goes, and RLlib's stages around it (cumulative).
        stats.sort_stats("cumulative").print_stats(
            r"_try_env_step|_try_env_reset|vector_env.py.*\(step\)|sync_vector_env.py.*\(step\)|torchpool/|"
            r"dict_info_to_list|forward_exploration|connector_pipeline_v2.py.*__call__|add_env_step|"
            r"to_numpy|_new_episode|\(cut\)|_make_on_episode_callback|\(unbatch\)")
        print(f"\n===== {path}: {num_envs} envs, {steps} env steps in {seconds:.3f} s (under cProfile) =====")
        print(out.getvalue())
        runner.stop()


def env_step_only(num_envs: int, steps: int, seed: int, paths: tuple[str, ...]) -> None:
    """The vector envs RLlib builds, stepped alone with int64 NumPy actions as RLlib passes them."""
    import numpy as np

    for path in paths:
        runner = make_runner(path, num_envs, seed, None)
        env = runner.env
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        actions = rng.integers(0, 2, size=(steps, num_envs), dtype=np.int64)
        kept = []
        started = time.perf_counter()
        for a in actions:
            env.step(a)
        dropped = (time.perf_counter() - started) / steps
        started = time.perf_counter()
        for a in actions:
            kept.append(env.step(a)[0])  # keep the observations, as RLlib's episodes do
        held = (time.perf_counter() - started) / steps
        print(f"{path:>9} {num_envs:3d} envs: env.step {dropped * 1e6:7.1f} us (outputs dropped), "
              f"{held * 1e6:7.1f} us (observations kept)  [{type(env).__name__} over "
              f"{type(env.unwrapped).__name__}]")
        runner.stop()


def cold(num_envs: int, repeats: int, num_timesteps: int, seed: int, paths: tuple[str, ...]) -> None:
    """A fresh process per measurement (interleaved): building the runner, its first sample(), its second."""
    import subprocess

    times: dict[str, list[tuple[float, float, float]]] = {path: [] for path in paths}
    for repeat in range(repeats):
        for path in paths if repeat % 2 == 0 else paths[::-1]:
            out = subprocess.run([sys.executable, __file__, "--cold-child", path, "--num-envs", str(num_envs),
                                  "--env-id", ENV_ID,
                                  "--num-timesteps", str(num_timesteps), "--seed", str(seed)],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=True)
            times[path].append(tuple(json.loads(out.stdout.strip().splitlines()[-1])))
    for path, rows in times.items():
        build, first, second = (statistics.median(column) for column in zip(*rows))
        print(f"{path:>9} {num_envs:3d} envs (median of {repeats} processes): build {build:.2f} s, first sample "
              f"{num_timesteps / first:6.0f} steps/s ({first:.2f} s), second {num_timesteps / second:6.0f} steps/s"
              f"   first samples {[round(r[1], 2) for r in rows]}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--env-id", default="CartPole-v1")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--num-timesteps", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--env-config", type=json.loads, default=None,
                        help="extra torchpool.rllib.VectorEnv env_config, JSON")
    parser.add_argument("--profile", type=int, metavar="NUM_ENVS", help="cProfile one sample() of each path")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--env-step-only", action="store_true")
    parser.add_argument("--torch-threads", type=int, default=1, help="torch.set_num_threads (default 1, as Ray's)")
    parser.add_argument("--cold", type=int, metavar="REPEATS", help="first sample() in fresh processes")
    parser.add_argument("--paths", nargs="+", choices=ENV_PATHS, default=list(ENV_PATHS),
                        help="torchpool-views: torchpool.rllib.VectorEnv handing RLlib views of the pool's ring")
    parser.add_argument("--cold-child", choices=ENV_PATHS, help=argparse.SUPPRESS)
    parser.add_argument("--json", help="write the A/B rows here")
    args = parser.parse_args()
    import logging

    import torch

    logging.getLogger("ray").setLevel(logging.ERROR)
    # As in a Ray env runner actor (num_cpus_per_env_runner=1: Ray sets OMP_NUM_THREADS=1 there). Torch's
    # default, a thread per core, makes each forward pass of the tiny module wait on a busy core here.
    torch.set_num_threads(args.torch_threads)
    globals()["ENV_ID"] = args.env_id
    paths = tuple(args.paths)
    if "gymnasium" not in paths and not (args.env_step_only or args.profile or args.cold):
        parser.error("the A/B compares with the gymnasium path: name it in --paths")
    if args.cold_child:
        started = time.perf_counter()
        runner = make_runner(args.cold_child, args.num_envs[0], args.seed, args.env_config)
        build = time.perf_counter() - started
        print(json.dumps([build, timed_sample(runner, args.num_timesteps)[1],
                          timed_sample(runner, args.num_timesteps)[1]]))
        return
    if args.cold:
        for n in args.num_envs:
            cold(n, args.cold, args.num_timesteps, args.seed, paths)
        return
    if args.env_step_only:
        for n in args.num_envs:
            env_step_only(n, 2000, args.seed, paths)
        return
    if args.profile:
        profile(args.profile, args.num_timesteps, args.seed, args.env_config, args.top, paths)
        return
    rows = []
    for n in args.num_envs:
        row = ab(n, args.rounds, args.num_timesteps, args.seed, args.env_config, paths)
        rows.append(row)
        for path in paths:
            ratio = row["ratio_median"].get(path)
            print(f"{n:3d} envs  {path:>15} {row['median'][path]:7.0f} steps/s"
                  + ("" if ratio is None else f"  / gymnasium (median per round) {ratio:.2f}")
                  + f"   rounds {[round(r) for r in row['rates'][path]]}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
