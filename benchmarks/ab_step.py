"""Interleaved A/B of the per-call cost of two torchpool builds, one process per round.

    python benchmarks/ab_step.py OLD_DIR NEW_DIR [--rounds 10] [--seconds 0.5]

Each DIR holds a ``torchpool`` package with its compiled ``_core`` (a copy of
a checkout's ``torchpool/`` plus its extension). Rounds alternate A, B then
B, A (benchmarks/harness) in fresh interpreters (``-S``, so an editable
install cannot redirect the import), each timing the same calls for
``--seconds`` after a warm-up: a sync ``step()`` of CartPole-v1 at 4 and 8
envs, an async ``recv()``/``send()`` pair at 8 envs / batch 4, a sync
``step()`` of 8 envs of HalfCheetah-v5 and of Pong-v5 with random actions
(the costly envs' scheduling modes), and one step of a CartPole-v1
``torchpool.stream`` of 8 envs (64 steps a batch) under a policy returning a
bare tensor and one returning ``(action, extras)`` (the stream's CPU loop).
Prints the median microseconds per call and the B/A ratio per case, with how
many rounds B was faster.

The child times with the harness's ``rate_for`` (benchmarks/harness/timing.py,
which imports nothing of torchpool), so either build may be older than the
harness.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import sysconfig
from pathlib import Path

import harness

HARNESS = Path(harness.__file__).resolve().parent

MEASURE = r"""
import sys, torch, torchpool
sys.path.insert(0, sys.argv[1])
from timing import rate_for
seconds = float(sys.argv[2])
torch.set_num_threads(1)
out = {}

def us_per_step(step):
    return 1e6 / rate_for(step, seconds, warmup=seconds / 5).steps_per_s

for n in (4, 8):
    pool = torchpool.make("CartPole-v1", num_envs=n)
    pool.reset()
    action = torch.zeros(n, dtype=torch.int64)
    out[f"step CartPole-v1 x{n}"] = us_per_step(lambda i: (pool.step(action), 1)[1])
    pool.close()
pool = torchpool.make("CartPole-v1", num_envs=8, batch_size=4)
pool.async_reset()
action = torch.zeros(4, dtype=torch.int64)
def pair(i):
    td = pool.recv()
    pool.send(action, td["env_id"])
    return 1
out["recv+send CartPole-v1 8/4"] = us_per_step(pair)
pool.close()
for env_id in ("HalfCheetah-v5", "Pong-v5"):
    pool = torchpool.make(env_id, num_envs=8, seed=0)
    pool.reset()
    spec = pool.action_spec
    g = torch.Generator().manual_seed(0)
    if hasattr(spec, "n"):
        actions = [torch.randint(0, spec.n, (8,), generator=g) for _ in range(64)]
    else:
        actions = [spec.low + (spec.high - spec.low) * torch.rand((8, *spec.shape), generator=g, dtype=spec.low.dtype)
                   for _ in range(64)]
    out[f"step {env_id} x8"] = us_per_step(lambda i: (pool.step(actions[i % 64]), 1)[1])
    pool.close()
zeros = torch.zeros(8, dtype=torch.int64)
extras = {"value": torch.zeros(8)}
for name, policy in (("tensor", lambda obs: zeros), ("(action, extras)", lambda obs: (zeros, extras))):
    stream = torchpool.stream("CartPole-v1", policy, num_envs=8, frames_per_batch=8 * 64)
    batches = iter(stream)
    out[f"stream CartPole-v1 x8, {name} policy"] = us_per_step(lambda i: (next(batches), 64)[1])
    batches.close()
print(json.dumps(out))
""".replace("import sys,", "import json, sys,")


def run(directory: str, seconds: float) -> dict:
    """One round's measurements of the build in ``directory``, in a fresh interpreter that sees only it."""
    path = f"{directory}:{sysconfig.get_paths()['purelib']}"
    return harness.run_child(["-S", "-c", MEASURE, str(HARNESS), str(seconds)],
                             env={"PYTHONPATH": path, "PATH": "/usr/bin:/bin"}, cwd="/", timeout=600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", help="folder holding build A's torchpool package")
    parser.add_argument("new", help="folder holding build B's torchpool package")
    parser.add_argument("--rounds", type=int, default=10, help="A/B pairs (default 10)")
    parser.add_argument("--seconds", type=float, default=0.5, help="timed seconds per case (default 0.5)")
    parser.add_argument("--out", default=None, help="also write the JSON results here")
    args = parser.parse_args()
    builds = {"A": args.old, "B": args.new}
    rounds = harness.measure_rounds(list(builds), args.rounds, lambda side: run(builds[side], args.seconds),
                                    progress="A/B rounds")
    report = {}
    for case in rounds["A"][0]:
        a = [result[case] for result in rounds["A"]]
        b = [result[case] for result in rounds["B"]]
        report[case] = {"A_us": round(statistics.median(a), 3), "B_us": round(statistics.median(b), 3),
                        "B_over_A": round(harness.paired(b, a).ratio, 3),
                        "B_faster_rounds": harness.paired(a, b).wins, "rounds": args.rounds}
    print(json.dumps(report, indent=1))
    if args.out:
        with open(args.out, "w") as file:
            json.dump(report, file, indent=1)


if __name__ == "__main__":
    sys.exit(main())
