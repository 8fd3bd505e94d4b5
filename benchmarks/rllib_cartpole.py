"""RLlib's PPO on CartPole-v1 to a mean return of 450: torchpool's pools against Gymnasium's own envs.

Question: does RLlib (Ray 2.60.0, new API stack) train on ``torchpool.rllib.VectorEnv`` as it does on
its default env path, and how many env steps, iterations and seconds does each take to reach 450? How fast
do the env runners sample (env steps/s while sampling)?

    python benchmarks/rllib_cartpole.py              # from the dev venv: runs RLlib in .venv-rllib, plots
    python benchmarks/rllib_cartpole.py --quick      # a smoke test: 2 iterations each
    python benchmarks/rllib_cartpole.py --rounds 2   # each path twice, in ABBA order

RLlib runs in its own venv (``ray[rllib]==2.60.0`` pins ``gymnasium==1.2.2``): ``.venv-rllib``, which
tests/test_rllib.py makes, or the Python in TORCHPOOL_RLLIB_PYTHON; this script re-runs itself there with
``--child`` per env path and draws the curves here (matplotlib). Writes benchmarks/rllib_cartpole.json and
benchmarks/rllib_cartpole.png; the numbers go to RESULTS.md by hand.

Method. PPO with RLlib's tuned CartPole settings (lr 3e-4, 6 epochs, vf_loss_coeff 0.01, a [32] linear
network sharing its layers with the value function), ``--num-env-runners`` env runners of
``--num-envs`` envs each, ``train_batch_size_per_learner`` 4000, minibatches of 128, one local learner;
``env="CartPole-v1"`` with ``gym_env_vectorize_mode="sync"`` (Gymnasium's ``SyncVectorEnv``, RLlib's
default) against ``torchpool.rllib.VectorEnv`` with ``"vector_entry_point"`` (one pool of one thread per
runner). Stops when ``env_runners/episode_return_mean`` (RLlib's: the mean over runners of each runner's
last 50 episodes) reaches ``--target``, or after ``--max-iterations``. Sampling rate: env steps sampled
over the time the algorithm waited for them, summed over iterations: the wall time of each call of PPO's
``synchronous_parallel_sample`` (the block ``timers/env_runner_sampling_timer`` times), measured here.
Not RLlib's ``env_runner_sampling_timer`` itself: that is an EMA (coefficient 0.01) started at the first
iteration's value, so after 20 iterations it is still about 80% the first sample (cold, and one draw of
a noisy machine's load). benchmarks/rllib_sampling.py times one env runner's ``sample()`` A/B.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV_PATHS = ("torchpool", "gymnasium")


def train(env_path: str, args: argparse.Namespace) -> dict:
    """One PPO run in this (RLlib's) Python: per iteration (env steps, wall s, mean return, sampling s, env steps
    sampled, RLlib's env_runner_sampling_timer EMA)."""
    import gymnasium
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    import torchpool.rllib

    sampling_s: list[float] = []
    ppo_module = importlib.import_module("ray.rllib.algorithms.ppo.ppo")
    sample = ppo_module.synchronous_parallel_sample

    def timed_sample(*args, **kwargs):  # what PPO.training_step times as env_runner_sampling_timer
        started = time.perf_counter()
        try:
            return sample(*args, **kwargs)
        finally:
            sampling_s.append(time.perf_counter() - started)

    ppo_module.synchronous_parallel_sample = timed_sample
    ray.init(address="local", num_cpus=args.num_env_runners, include_dashboard=False, log_to_driver=False)
    config = PPOConfig()
    if env_path == "torchpool":
        config = config.environment(torchpool.rllib.VectorEnv, env_config={"env_id": "CartPole-v1", "num_threads": 1})
        mode = "vector_entry_point"
    else:
        config = config.environment("CartPole-v1")
        mode = "sync"
    config = (
        config.env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.num_envs,
                           gym_env_vectorize_mode=mode)
        .training(lr=3e-4, num_epochs=6, vf_loss_coeff=0.01, train_batch_size_per_learner=4000,
                  minibatch_size=128)
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[32], fcnet_activation="linear",
                                                   vf_share_layers=True))
        .debugging(seed=args.seed)
    )
    algo = config.build_algo()
    curve, started = [], time.perf_counter()
    for _ in range(args.max_iterations):
        result = algo.train()
        runners = result["env_runners"]
        sampling, ema = sum(sampling_s), result.get("timers", {}).get("env_runner_sampling_timer", float("nan"))
        sampling_s.clear()
        curve.append((int(runners["num_env_steps_sampled_lifetime"]), time.perf_counter() - started,
                      float(runners.get("episode_return_mean", float("nan"))), sampling,
                      int(runners["num_env_steps_sampled"]), float(ema)))
        print(f"{env_path:>9} iteration {len(curve):3d}: {curve[-1][0]:7d} env steps, {curve[-1][1]:6.1f} s, "
              f"return {curve[-1][2]:6.1f}", file=sys.stderr, flush=True)
        if curve[-1][2] >= args.target:
            break
    algo.stop()
    ray.shutdown()
    return {"env_path": env_path, "curve": curve, "seed": args.seed, "gymnasium": gymnasium.__version__,
            "ray": ray.__version__, "reached": curve[-1][2] >= args.target}


def rllib_python() -> str:
    named = os.environ.get("TORCHPOOL_RLLIB_PYTHON")
    python = named or str(ROOT / ".venv-rllib" / "bin" / "python")
    if not Path(python).exists():
        sys.exit(f"no RLlib venv at {python}: run `python -m pytest -o addopts= tests/test_rllib.py` once to make "
                 "it, or name one in TORCHPOOL_RLLIB_PYTHON")
    return python


def draw_plot(runs: list[dict], target: float, path: Path) -> None:
    """Left: mean return against env steps. Right: against wall seconds."""
    import harness

    figure, (by_steps, by_time) = harness.panels(2, (6.0, 4.5))
    labelled = set()
    for run in runs:
        steps, seconds, returns = zip(*[(s, t, r) for s, t, r, *_ in run["curve"]])
        label = {"torchpool": "torchpool.rllib.VectorEnv", "gymnasium": "Gymnasium CartPole-v1 (sync)"}[
            run["env_path"]]
        style = {"marker": ".", "color": f"C{ENV_PATHS.index(run['env_path'])}", "alpha": 0.8,
                 "label": None if label in labelled else label}  # one entry per path, however many rounds
        labelled.add(label)
        by_steps.plot(steps, returns, **style)
        by_time.plot(seconds, returns, **style)
    for ax, xlabel in ((by_steps, "env steps"), (by_time, "wall seconds")):
        ax.axhline(target, color="gray", linestyle="--", linewidth=1)
        ax.set(xlabel=xlabel, ylabel="episode_return_mean")
        ax.grid(alpha=0.3)
    by_steps.legend(fontsize=8)
    harness.save(figure, path, title="RLlib PPO (Ray 2.60.0), CartPole-v1, 2 env runners",
                 info=harness.machine())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", choices=ENV_PATHS, help="(internal) train on this env path, in RLlib's venv")
    parser.add_argument("--quick", action="store_true", help="2 iterations each, prints only")
    parser.add_argument("--env-paths", nargs="+", choices=ENV_PATHS, default=list(ENV_PATHS))
    parser.add_argument("--num-env-runners", type=int, default=2)
    parser.add_argument("--num-envs", type=int, default=8, help="envs per env runner")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", type=float, default=450.0)
    parser.add_argument("--max-iterations", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=1,
                        help="runs of each path, in ABBA order (a loaded machine's drift falls on both)")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(train(args.child, args)))
        return
    if args.quick:
        args.max_iterations = 2
    runs = []
    order = [path for r in range(args.rounds) for path in (args.env_paths if r % 2 == 0 else args.env_paths[::-1])]
    for env_path in order:
        command = [rllib_python(), __file__, "--child", env_path, "--num-env-runners", str(args.num_env_runners),
                   "--num-envs", str(args.num_envs), "--seed", str(args.seed), "--target", str(args.target),
                   "--max-iterations", str(args.max_iterations)]
        started = time.perf_counter()
        child = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True)
        run = json.loads(child.stdout.strip().splitlines()[-1])
        run["process_s"] = time.perf_counter() - started
        runs.append(run)
    columns = ["env path", "reached", "iterations", "env steps", "train s", "process s", "sampling steps/s"]
    rows = []
    for run in runs:
        steps, seconds, ret, *_ = run["curve"][-1]
        sampled = sum(c[4] for c in run["curve"])
        sampling_s = sum(c[3] for c in run["curve"])
        run["sampling_steps_per_s"] = sampled / sampling_s
        rows.append([run["env_path"], f"{ret:.1f}" + (" (yes)" if run["reached"] else " (no)"),
                     str(len(run["curve"])), str(steps), f"{seconds:.1f}", f"{run['process_s']:.1f}",
                     f"{run['sampling_steps_per_s']:.0f}"])
    sys.path.insert(0, str(Path(__file__).parent))
    import harness

    harness.print_table(columns, rows)
    if args.quick:
        return
    settings = {"num_env_runners": args.num_env_runners, "num_envs_per_env_runner": args.num_envs,
                "seed": args.seed, "target": args.target, "rounds": args.rounds, "train_batch_size_per_learner": 4000,
                "minibatch_size": 128, "num_epochs": 6, "lr": 3e-4,
                "machine": harness.machine()}  # Ray's and Gymnasium's versions: per run, from RLlib's venv
    out = Path(__file__).parent
    (out / "rllib_cartpole.json").write_text(json.dumps({"settings": settings, "runs": runs}, indent=1) + "\n")
    draw_plot(runs, args.target, out / "rllib_cartpole.png")


if __name__ == "__main__":
    main()
