"""How fast does the PPO recipe train, from `python -m torchpool train`?

Runs torchpool.train.ppo with each env's tuned recipe for several seeds and
records wall time to the target return (mean of the last 20 episodes), frames
and frames/s, plus one learning curve per env.

    python benchmarks/train.py [--seeds 1 2 3] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from torchpool import bench
from torchpool.train.ppo import RECIPES, Args, train

HERE = Path(__file__).resolve().parent
ENVS = ("CartPole-v1", "Pendulum-v1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3], help="one run per seed")
    parser.add_argument("--quick", action="store_true", help="one seed, 8192 frames, print only")
    args = parser.parse_args()
    rows = []
    for env_id in ENVS:
        for seed in args.seeds[:1] if args.quick else args.seeds:
            settings = dict(RECIPES[env_id], seed=seed, progress=False, out_dir=str(HERE / "train_runs"))
            if args.quick:
                settings.update(total_frames=8192, target_return=None)
            result = train(Args(env_id=env_id, **settings))
            rows.append(result)
            reached = result["seconds_to_target"]
            print(f"{env_id} seed {seed}: {result['final_mean_return']:.1f} after {result['frames']:,} frames, "
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
    info = bench.machine(())
    section = "\n".join([
        "<!-- train:begin -->",
        "## PPO recipes on the CPU (`benchmarks/train.py`)",
        "",
        "How long does `python -m torchpool train` take to reach each env's target return?",
        "",
        f"- Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- Machine: {info['cpu']}, {info['cores']} cores, {info['ram']} RAM; {info['versions']}",
        f"- Settings: the recipes in `torchpool/train/ppo.py` (RECIPES), seeds {args.seeds}, device cpu, "
        "torch.set_num_threads(1); wall time includes the PPO updates; a run stops when the mean return of "
        "its last 20 episodes reaches the target.",
        "",
        *lines,
        "",
        *[f"![PPO on {env_id}](train_runs/ppo_{env_id}.png)" for env_id in ENVS],
        "<!-- train:end -->",
    ])
    bench.write_section(HERE / "RESULTS.md", section, "<!-- train:begin -->", "<!-- train:end -->")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
