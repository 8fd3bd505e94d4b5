"""Does stream(prefetch=True) pay? PPO's frames/s with and without it, interleaved A/B.

Each round trains the Pong-v5 recipe for --seconds with prefetch off and on,
in alternating order, each in a fresh process (the same seed, so both see the
same games at first). Frames/s includes every PPO update: it is what a run's
wall time is made of. --record writes the RESULTS.md section.

    python benchmarks/prefetch.py --rounds 3 --seconds 60 --record
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

HERE = Path(__file__).resolve().parent

CHILD = """
import json, sys
from torchpool.train.ppo import Args, recipe, train
settings = recipe(sys.argv[1])
settings.update(prefetch=sys.argv[2] == "1", max_seconds=float(sys.argv[3]), target_return=None, eval_games=0,
                progress=False, out_dir=sys.argv[4])
result = train(Args(env_id=sys.argv[1], **settings))
print(json.dumps({"frames_per_s": result["frames_per_s"], "time_split": result["time_split"]}))
"""


def one(env_id: str, prefetch: bool, seconds: float) -> dict:
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run([sys.executable, "-c", CHILD, env_id, "1" if prefetch else "0", str(seconds), out],
                              capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env-id", default="Pong-v5", help="a recipe's env (default Pong-v5)")
    parser.add_argument("--rounds", type=int, default=3, help="A/B rounds, alternating which goes first")
    parser.add_argument("--seconds", type=float, default=60.0, help="training seconds per measurement")
    parser.add_argument("--record", action="store_true", help="write the RESULTS.md section")
    args = parser.parse_args()
    ratios, rates = [], {False: [], True: []}
    for index in range(args.rounds):
        order = (False, True) if index % 2 == 0 else (True, False)
        got = {prefetch: one(args.env_id, prefetch, args.seconds) for prefetch in order}
        for prefetch, result in got.items():
            rates[prefetch].append(result["frames_per_s"])
        ratios.append(got[True]["frames_per_s"] / got[False]["frames_per_s"])
        print(f"round {index + 1}: off {got[False]['frames_per_s']:,.0f}, on {got[True]['frames_per_s']:,.0f} "
              f"frames/s (on/off {ratios[-1]:.3f}); with prefetch the consumer waited "
              f"{got[True]['time_split'].get('consumer_waited', 0):.1f} s of {args.seconds:.0f}", flush=True)
    if not args.record:
        return
    from torchpool import bench

    info = bench.machine(())
    section = "\n".join([
        "<!-- prefetch:begin -->",
        "## stream(prefetch=True) in PPO (`benchmarks/prefetch.py`)",
        "",
        f"- Recorded: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- Machine: {info['cpu']}, {info['cores']} cores, {info['ram']} RAM, CPU only; {info['versions']}",
        f"- Settings: the {args.env_id} recipe, {args.seconds:.0f} s of training per measurement, "
        f"{args.rounds} interleaved rounds, each in a fresh process; frames/s includes the PPO updates.",
        "",
        "| prefetch | median frames/s | rounds |",
        "|---|---:|---|",
        f"| off | {statistics.median(rates[False]):,.0f} | {', '.join(f'{r:,.0f}' for r in rates[False])} |",
        f"| on | {statistics.median(rates[True]):,.0f} | {', '.join(f'{r:,.0f}' for r in rates[True])} |",
        "",
        f"On/off per round: {', '.join(f'{r:.3f}' for r in ratios)} (median {statistics.median(ratios):.3f}).",
        "<!-- prefetch:end -->",
    ])
    bench.write_section(HERE / "RESULTS.md", section, "<!-- prefetch:begin -->", "<!-- prefetch:end -->")


if __name__ == "__main__":
    main()
