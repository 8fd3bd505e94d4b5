"""How fast does the PPO recipe train, from `python -m torchpool train`?

Runs torchpool.train.ppo with each env's tuned recipe for several seeds (a
round per seed, every env once in each: benchmarks/harness) and records wall
time to the target return (mean of the last 20 episodes), frames and
frames/s, plus one learning curve per env.

    python benchmarks/train.py [--seeds 1 2 3] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile

import harness

from torchpool.train.ppo import RECIPES, Args, train

ENVS = ("CartPole-v1", "Pendulum-v1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3], help="one run per seed")
    parser.add_argument("--quick", action="store_true", help="one seed, 8192 frames, print only")
    args = parser.parse_args()
    seeds = args.seeds[:1] if args.quick else args.seeds
    # The recorded curves live in benchmarks/train_runs/; a quick run leaves them alone.
    out_dir = tempfile.mkdtemp(prefix="torchpool_train_") if args.quick else str(harness.OUTPUT / "train_runs")
    rows = []
    for index, env_id in harness.interleaved(ENVS, len(seeds), order="same"):
        settings = dict(RECIPES[env_id], seed=seeds[index], progress=False, out_dir=out_dir)
        if args.quick:
            settings.update(total_frames=8192, target_return=None)
        result = train(Args(env_id=env_id, **settings))
        rows.append(result)
        reached = result["seconds_to_target"]
        print(f"{env_id} seed {seeds[index]}: {result['final_mean_return']:.1f} after {result['frames']:,} frames, "
              f"{result['wall_seconds']:.1f} s" + (f" (target reached in {reached:.1f} s)" if reached else ""))
    if args.quick:
        return
    lines = ["| env | target | runs reaching it | median seconds to target | median frames | median frames/s |",
             "|---|---:|---:|---:|---:|---:|"]
    for env_id in ENVS:
        runs = [r for r in rows if r["env_id"] == env_id]
        reached = [r for r in runs if r["seconds_to_target"] is not None]
        seconds = f"{statistics.median(r['seconds_to_target'] for r in reached):.1f}" if reached else "-"
        lines.append(f"| {env_id} | {runs[0]['target_return']} | {len(reached)}/{len(runs)} | {seconds} | "
                     f"{statistics.median(r['frames'] for r in runs):,.0f} | "
                     f"{statistics.median(r['frames_per_s'] for r in runs):,.0f} |")
    print("\n".join(lines))
    harness.record_section(
        "train", "PPO recipes on the CPU (`benchmarks/train.py`)",
        question="How long does `python -m torchpool train` take to reach each env's target return?",
        settings=[f"- Settings: the recipes in `torchpool/train/ppo.py` (RECIPES), seeds {seeds}, device cpu, "
                  "torch.set_num_threads(1); wall time includes the PPO updates; a run stops when the mean return "
                  "of its last 20 episodes reaches the target."],
        body=[*lines, "", *[f"![PPO on {env_id}](train_runs/ppo_{env_id}.png)" for env_id in ENVS]])


if __name__ == "__main__":
    main()
