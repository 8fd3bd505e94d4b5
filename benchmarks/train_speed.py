"""Time to a trained policy, side by side in one run: torchpool's recipes next to RLtools (issue #34).

So far Pendulum-v1: ``python -m torchpool train Pendulum-v1``'s PPO recipe and
RLtools' SAC (its Python package, ``pip install "rltools[mkl]"``, training on
RLtools' own C++ Pendulum: 10,000 steps, its defaults), seeds interleaved.
Each trained policy then plays 10 fresh Gymnasium ``Pendulum-v1`` episodes
(seeds 10,000+; torchpool's on a fresh pool), and their mean is reported.
Times: torchpool from its stream's start to the stopping point (mean of the
last 20 episodes >= -200); RLtools from ``State(seed)`` to the end of its
10,000 steps, in a child interpreter of its own (RLtools refuses MKL in a
process that has imported torch); its one-time compile (~10 s, cached after)
is not counted.

    python benchmarks/train_speed.py [--seeds 1 2 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gymnasium
import numpy as np

HERE = Path(__file__).resolve().parent
# RLtools' C++ Pendulum, as its training interface includes a custom environment (ENVIRONMENT_FACTORY<T, TI>).
_RLTOOLS_PENDULUM = """#include <rl_tools/rl/environments/pendulum/operations_cpu.h>
namespace pendulum = rl_tools::rl::environments::pendulum;
template <typename T, typename TI>
using ENVIRONMENT_FACTORY =
    rl_tools::rl::environments::Pendulum<pendulum::Specification<T, TI, pendulum::DefaultParameters<T>>>;
"""


def rltools_run(seed: int) -> dict:
    """In a child interpreter without torch: RLtools' SAC trained with `seed`, timed, then its fresh episodes."""
    from rltools import SAC

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "environment.h").write_text(_RLTOOLS_PENDULUM)
        started = time.perf_counter()
        sac = SAC({"path": folder, "action_dim": 1, "observation_dim": 3}, interface_name="torchpool_bench_pendulum",
                  enable_evaluation=False)
        compiled = time.perf_counter() - started
    state = sac.State(seed)
    started = time.perf_counter()
    while not state.step():
        pass
    seconds = time.perf_counter() - started
    fresh = fresh_episodes(lambda observation: 2.0 * np.asarray(state.action(observation)))  # actions in [-1, 1]
    return {"seconds": seconds, "fresh": fresh, "compile_seconds": compiled}


def fresh_episodes(act, games: int = 10) -> float:
    """The mean return of `games` fresh Gymnasium Pendulum-v1 episodes under `act(observation) -> torque`."""
    env = gymnasium.make("Pendulum-v1")
    returns = []
    for game in range(games):
        observation, _ = env.reset(seed=10_000 + game)
        total, done = 0.0, False
        while not done:
            observation, reward, terminated, truncated, _ = env.step(act(observation))
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    env.close()
    return float(np.mean(returns))


def plot(rows: dict[str, list[tuple[float, float]]], path: Path) -> None:
    """Each run as a point: seconds to its trained policy against its 10 fresh episodes' mean."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, runs in rows.items():
        ax.scatter([s for s, _ in runs], [r for _, r in runs], label=name, s=40)
    ax.axhline(-200, color="gray", linestyle="--", label="-200 (the target)")
    ax.set_xlabel("seconds to a trained policy")
    ax.set_ylabel("10 fresh episodes' mean return")
    ax.set_xlim(left=0)
    ax.set_title("Pendulum-v1 on 2 CPU cores, one run per seed")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--rltools-seed", type=int, default=None, help=argparse.SUPPRESS)  # the child's run
    args = parser.parse_args()
    if args.rltools_seed is not None:
        print(json.dumps(rltools_run(args.rltools_seed)))
        return
    from torchpool import bench
    from torchpool.train.ppo import RECIPES, Args, train

    rows: dict[str, list[tuple[float, float]]] = {"torchpool PPO (the recipe)": [], "RLtools SAC": []}
    compile_seconds = []
    for seed in args.seeds:
        with tempfile.TemporaryDirectory() as folder:
            result = train(Args(env_id="Pendulum-v1", **dict(RECIPES["Pendulum-v1"], seed=seed, progress=False,
                                                             out_dir=folder)))
        ours = (result["seconds_to_target"] or float("nan"), result["evaluation"]["mean_return"])
        rows["torchpool PPO (the recipe)"].append(ours)
        child = subprocess.run([sys.executable, __file__, "--rltools-seed", str(seed)], capture_output=True,
                               text=True, check=True)
        run = json.loads(child.stdout.strip().splitlines()[-1])
        compile_seconds.append(run["compile_seconds"])
        theirs = (run["seconds"], run["fresh"])
        rows["RLtools SAC"].append(theirs)
        print(f"seed {seed}: torchpool {ours[0]:.2f} s, fresh {ours[1]:.1f}; RLtools {theirs[0]:.2f} s, "
              f"fresh {theirs[1]:.1f}", flush=True)
    lines = ["| system | seconds to a trained policy (per seed) | median | 10 fresh episodes' mean (per seed) |",
             "|---|---|---:|---|"]
    for name, runs in rows.items():
        lines.append(f"| {name} | {', '.join(f'{s:.2f}' for s, _ in runs)} | "
                     f"{statistics.median(s for s, _ in runs):.2f} | {', '.join(f'{r:.1f}' for _, r in runs)} |")
    ratio = statistics.median(s for s, _ in rows["torchpool PPO (the recipe)"]) / statistics.median(
        s for s, _ in rows["RLtools SAC"])
    plot(rows, HERE / "train_speed.png")
    info = bench.machine(("rltools",))
    section = "\n".join([
        "<!-- train-speed:begin -->",
        "## Time to a trained policy next to RLtools (`benchmarks/train_speed.py`)",
        "",
        f"- Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- Machine: {info['cpu']}, {info['cores']} cores, {info['ram']} RAM; {info['versions']}",
        f"- Settings: Pendulum-v1; torchpool's PPO recipe (`RECIPES`, stops at a mean of -200 over the last 20 "
        f"episodes) and RLtools' SAC (its defaults: 10,000 steps, 1 env, on RLtools' C++ Pendulum; its one-time "
        f"compile took {compile_seconds[0]:.1f} s, not counted), seeds {args.seeds} interleaved; each policy then "
        "plays 10 fresh Gymnasium episodes.",
        "",
        *lines,
        "",
        f"torchpool's median time is {ratio:.2f}x RLtools' (issue #34: must <= 1.5x, goal <= 1x and <= 2 s).",
        "",
        "![Pendulum-v1: time to a trained policy](train_speed.png)",
        "<!-- train-speed:end -->",
    ])
    bench.write_section(HERE / "RESULTS.md", section, "<!-- train-speed:begin -->", "<!-- train-speed:end -->")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
