"""The long recipes (Pong-v5, HalfCheetah-v5, Ant-v5) on this machine: frames/s and projected time.

Reaching Pong's 18 or a MuJoCo return in the thousands takes millions of
frames (tutorials/02_pong.ipynb, 03_mujoco.ipynb; the time to those targets is
benchmarks/train_speed.py's). Here each recipe runs for a short fixed budget on
the given device, and the table records its training frames/s (env steps per
second, PPO updates included), the time split from ``torchpool.stream.stats()``,
and the time the recipe's full ``total_frames`` would take at that rate (the
MuJoCo recipes stop at their target well before it).

    python benchmarks/train_heavy.py [--device cuda] [--quick]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from torchpool import bench
from torchpool.train.ppo import RECIPES, Args, train

HERE = Path(__file__).resolve().parent
BUDGETS = {"Pong-v5": 16_384, "HalfCheetah-v5": 65_536, "Ant-v5": 65_536}  # frames per measured run
BEGIN, END = "<!-- train-heavy:begin -->", "<!-- train-heavy:end -->"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", help="cpu or cuda")
    parser.add_argument("--quick", action="store_true", help="an eighth of each budget; print only")
    args = parser.parse_args()
    rows = []
    for env_id, budget in BUDGETS.items():
        frames = budget // 8 if args.quick else budget
        settings = dict(RECIPES[env_id], total_frames=frames, target_return=None, progress=False,
                        device=args.device, out_dir=str(HERE / "train_runs_heavy"))
        result = train(Args(env_id=env_id, **settings))
        full = RECIPES[env_id]["total_frames"]
        split = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in result["time_split"].items())
        rows.append((env_id, result["frames"], result["wall_seconds"], result["frames_per_s"], split,
                     full, full / result["frames_per_s"] / 3600))
        print(f"{env_id}: {result['frames']:,} frames in {result['wall_seconds']:.0f} s = "
              f"{result['frames_per_s']:,.0f} frames/s ({split}); {full:,} frames would take "
              f"{rows[-1][-1]:.1f} h", flush=True)
    if args.quick:
        return
    info = bench.machine(())
    lines = ["| env | device | frames run | seconds | frames/s | time split (stream.stats) | recipe total_frames | "
             "projected hours |", "|---|---|---:|---:|---:|---|---:|---:|"]
    lines += [f"| {env_id} | {args.device} | {frames:,} | {seconds:.0f} | {rate:,.0f} | {split} | {full:,} | "
              f"{hours:.1f} |" for env_id, frames, seconds, rate, split, full, hours in rows]
    bench.write_section(HERE / "RESULTS.md", "\n".join([
        BEGIN,
        "## The long PPO recipes: frames/s and projected time (`benchmarks/train_heavy.py`)",
        "",
        "How fast do the Pong-v5 (Nature CNN) and MuJoCo recipes train here, and how long would their full "
        "budgets take? Frames are env steps (Pong: x4 emulator frames); PPO updates are included.",
        "",
        f"- Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- Machine: {info['cpu']}, {info['cores']} cores, {info['ram']} RAM; {info['versions']}",
        f"- Command: `python benchmarks/train_heavy.py --device {args.device}`; the recipes of "
        "`torchpool/train/ppo.py`, seed 1, one run each for the budget shown.",
        "",
        *lines,
        END,
    ]), BEGIN, END)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
