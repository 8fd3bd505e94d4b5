"""The long recipes (Pong-v5, HalfCheetah-v5, Ant-v5) on this machine: frames/s and projected time.

Reaching Pong's 18 or a MuJoCo return in the thousands takes millions of
frames (tutorials/02_pong.ipynb, 03_mujoco.ipynb; the time to those targets is
benchmarks/train_speed.py's). Here each recipe runs for a short fixed budget on
the given device, and the table records its training frames/s (env steps per
second, PPO updates included), the time split from ``torchpool.stream.stats()``,
and the time the recipe's full ``total_frames`` would take at that rate (the
MuJoCo recipes stop at their target well before it).

``--prefetch-ab`` asks whether ``stream(prefetch=True)`` pays in a recipe
(Pong-v5 by default): it trains the recipe for ``--seconds`` with prefetch
off and on, in fresh processes (the same seed, so both see the same games at
first), rounds alternating which goes first (benchmarks/harness), and
records the frames/s of each (updates included: what a run's wall time is
made of) in its own section.

    python benchmarks/train_heavy.py [--device cuda] [--quick]
    python benchmarks/train_heavy.py --prefetch-ab [--env-id Pong-v5] --rounds 3 --seconds 60 --record
"""

from __future__ import annotations

import argparse
import statistics
import tempfile

import harness
import torch

from torchpool.train.ppo import RECIPES, Args, train

BUDGETS = {"Pong-v5": 16_384, "HalfCheetah-v5": 65_536, "Ant-v5": 65_536}  # frames per measured run

# One training run of --prefetch-ab, in a fresh interpreter: argv = env id, prefetch (0/1), seconds, out dir.
PREFETCH_RUN = """
import json, sys
from torchpool.train.ppo import Args, recipe, train
settings = recipe(sys.argv[1])
settings.update(prefetch=sys.argv[2] == "1", max_seconds=float(sys.argv[3]), target_return=None, eval_games=0,
                progress=False, out_dir=sys.argv[4])
result = train(Args(env_id=sys.argv[1], **settings))
print(json.dumps({"frames_per_s": result["frames_per_s"], "time_split": result["time_split"]}))
"""


def budgets(args: argparse.Namespace) -> None:
    """Each long recipe for its budget: frames/s, time split, projected time; the train-heavy section."""
    rows = []
    for env_id, budget in BUDGETS.items():
        frames = budget // 8 if args.quick else budget
        settings = dict(RECIPES[env_id], total_frames=frames, target_return=None, progress=False,
                        device=args.device, out_dir=str(harness.BENCHMARKS / "train_runs_heavy"))
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
    lines = ["| env | device | frames run | seconds | frames/s | time split (stream.stats) | recipe total_frames | "
             "projected hours |", "|---|---|---:|---:|---:|---|---:|---:|"]
    lines += [f"| {env_id} | {args.device} | {frames:,} | {seconds:.0f} | {rate:,.0f} | {split} | {full:,} | "
              f"{hours:.1f} |" for env_id, frames, seconds, rate, split, full, hours in rows]
    print("\n".join(lines))
    harness.record_section(
        "train-heavy", "The long PPO recipes: frames/s and projected time (`benchmarks/train_heavy.py`)",
        question="How fast do the Pong-v5 (Nature CNN) and MuJoCo recipes train here, and how long would their "
        "full budgets take? Frames are env steps (Pong: x4 emulator frames); PPO updates are included.",
        settings=[f"- Settings: the recipes of `torchpool/train/ppo.py` on {args.device}, seed 1, one run each for "
                  "the budget shown."],
        body=lines)


def prefetch_ab(args: argparse.Namespace) -> None:
    """The recipe with prefetch off and on, interleaved in fresh processes; the prefetch section."""
    def run(prefetch: bool) -> dict:
        with tempfile.TemporaryDirectory() as out:
            result = harness.run_child(["-c", PREFETCH_RUN, args.env_id, str(int(prefetch)), str(args.seconds), out])
        print(f"prefetch {'on' if prefetch else 'off'}: {result['frames_per_s']:,.0f} frames/s; the consumer waited "
              f"{result['time_split'].get('consumer_waited', 0):.1f} s of {args.seconds:.0f}", flush=True)
        return result

    runs = harness.measure_rounds([False, True], args.rounds, run, progress="prefetch off/on")
    rates = {prefetch: [result["frames_per_s"] for result in results] for prefetch, results in runs.items()}
    ratios = [on / off for on, off in zip(rates[True], rates[False])]
    lines = ["| prefetch | median frames/s | rounds |", "|---|---:|---|",
             *[f"| {'on' if prefetch else 'off'} | {statistics.median(rates[prefetch]):,.0f} | "
               f"{', '.join(f'{r:,.0f}' for r in rates[prefetch])} |" for prefetch in (False, True)],
             "", f"On/off per round: {', '.join(f'{r:.3f}' for r in ratios)} (median {statistics.median(ratios):.3f})."]
    print("\n".join(lines))
    if args.record:
        harness.record_section(
            "prefetch", "stream(prefetch=True) in PPO (`benchmarks/train_heavy.py --prefetch-ab`)",
            question="Does `stream(prefetch=True)` pay in a recipe's training? Frames/s with and without it.",
            settings=[f"- Settings: the {args.env_id} recipe on the CPU, {args.seconds:.0f} s of training per "
                      f"measurement, {args.rounds} interleaved rounds, each in a fresh process; frames/s includes "
                      "the PPO updates."],
            body=lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", help="cpu or cuda")
    parser.add_argument("--quick", action="store_true", help="an eighth of each budget; print only")
    parser.add_argument("--prefetch-ab", action="store_true",
                        help="instead: a recipe's frames/s with prefetch off and on, interleaved")
    parser.add_argument("--env-id", default="Pong-v5", help="--prefetch-ab: a recipe's env (default Pong-v5)")
    parser.add_argument("--rounds", type=int, default=3, help="--prefetch-ab: rounds, alternating which goes first")
    parser.add_argument("--seconds", type=float, default=60.0, help="--prefetch-ab: training seconds per run")
    parser.add_argument("--record", action="store_true", help="--prefetch-ab: write its RESULTS.md section")
    args = parser.parse_args()
    prefetch_ab(args) if args.prefetch_ab else budgets(args)


if __name__ == "__main__":
    main()
