"""Interleaved A/B of the per-call cost of two torchpool builds, one process per round.

    python benchmarks/ab_step.py OLD_DIR NEW_DIR [--rounds 10]

Each DIR holds a ``torchpool`` package with its compiled ``_core`` (a copy of
a checkout's ``torchpool/`` plus its extension). Rounds alternate A, B, A, …
in fresh interpreters (``-S``, so an editable install cannot redirect the
import), each timing the same calls: a sync ``step()`` of CartPole-v1 at 4
and 8 envs, an async ``recv()``/``send()`` pair at 8 envs / batch 4, a
sync ``step()`` of 8 envs of HalfCheetah-v5 and of Pong-v5 with random
actions (the costly envs' scheduling modes), and one step of a CartPole-v1
``torchpool.stream`` of 8 envs (64 steps a batch) under a policy returning a
bare tensor and one returning ``(action, extras)`` (the stream's CPU loop).
Prints the median microseconds per call and the B/A ratio per case, with how
many rounds B was faster.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import sysconfig

MEASURE = r"""
import json, time, torch, torchpool
torch.set_num_threads(1)
out = {}
for n in (4, 8):
    pool = torchpool.make("CartPole-v1", num_envs=n)
    pool.reset()
    action = torch.zeros(n, dtype=torch.int64)
    for _ in range(2000):
        pool.step(action)
    calls = 30000
    start = time.perf_counter()
    for _ in range(calls):
        pool.step(action)
    out[f"step CartPole-v1 x{n}"] = (time.perf_counter() - start) / calls * 1e6
    pool.close()
pool = torchpool.make("CartPole-v1", num_envs=8, batch_size=4)
pool.async_reset()
action = torch.zeros(4, dtype=torch.int64)
def pair():
    td = pool.recv()
    pool.send(action, td["env_id"])
for _ in range(2000):
    pair()
calls = 30000
start = time.perf_counter()
for _ in range(calls):
    pair()
out["recv+send CartPole-v1 8/4"] = (time.perf_counter() - start) / calls * 1e6
pool.close()
for env_id, calls in (("HalfCheetah-v5", 3000), ("Pong-v5", 600)):
    pool = torchpool.make(env_id, num_envs=8, seed=0)
    pool.reset()
    spec = pool.action_spec
    g = torch.Generator().manual_seed(0)
    if hasattr(spec, "n"):
        actions = [torch.randint(0, spec.n, (8,), generator=g) for _ in range(64)]
    else:
        actions = [spec.low + (spec.high - spec.low) * torch.rand((8, *spec.shape), generator=g, dtype=spec.low.dtype)
                   for _ in range(64)]
    for i in range(calls // 5):
        pool.step(actions[i % 64])
    start = time.perf_counter()
    for i in range(calls):
        pool.step(actions[i % 64])
    out[f"step {env_id} x8"] = (time.perf_counter() - start) / calls * 1e6
    pool.close()
zeros = torch.zeros(8, dtype=torch.int64)
extras = {"value": torch.zeros(8)}
for name, policy in (("tensor", lambda obs: zeros), ("(action, extras)", lambda obs: (zeros, extras))):
    stream = torchpool.stream("CartPole-v1", policy, num_envs=8, frames_per_batch=8 * 64)
    batches = iter(stream)
    for _ in range(20):
        next(batches)
    start = time.perf_counter()
    for _ in range(200):
        next(batches)
    out[f"stream CartPole-v1 x8, {name} policy"] = (time.perf_counter() - start) / (200 * 64) * 1e6
    batches.close()
print(json.dumps(out))
"""


def run(directory: str) -> dict:
    path = f"{directory}:{sysconfig.get_paths()['purelib']}"
    result = subprocess.run([sys.executable, "-S", "-c", MEASURE], capture_output=True, text=True,
                            env={"PYTHONPATH": path, "PATH": "/usr/bin:/bin"}, cwd="/", timeout=600)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-2000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", help="folder holding build A's torchpool package")
    parser.add_argument("new", help="folder holding build B's torchpool package")
    parser.add_argument("--rounds", type=int, default=10, help="A/B pairs (default 10)")
    parser.add_argument("--out", default=None, help="also write the JSON results here")
    args = parser.parse_args()
    rounds = []
    for i in range(args.rounds):
        rounds.append((run(args.old), run(args.new)))
        print(f"round {i + 1}/{args.rounds}", file=sys.stderr)
    report = {}
    for case in rounds[0][0]:
        a = [r[0][case] for r in rounds]
        b = [r[1][case] for r in rounds]
        report[case] = {"A_us": round(statistics.median(a), 3), "B_us": round(statistics.median(b), 3),
                        "B_over_A": round(statistics.median([y / x for x, y in zip(a, b)]), 3),
                        "B_faster_rounds": sum(y < x for x, y in zip(a, b)), "rounds": len(rounds)}
    print(json.dumps(report, indent=1))
    if args.out:
        with open(args.out, "w") as file:
            json.dump(report, file, indent=1)


if __name__ == "__main__":
    main()
