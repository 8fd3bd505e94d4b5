"""Start-up costs: `import torchpool` over `import torch`, and make + first reset of 32 Pong envs next to EnvPool.

Every measurement runs in a fresh process (nothing cached in the interpreter),
the systems interleaved round by round (benchmarks/harness) so drift hits
both alike; medians and their ratio are printed, and --record writes the
RESULTS.md section.

    python benchmarks/startup.py --rounds 5 --record
"""

from __future__ import annotations

import argparse
import statistics

import harness

IMPORT = """
import json, time
start = time.perf_counter(); import torch; torch_s = time.perf_counter() - start
start = time.perf_counter(); import torchpool; torchpool_s = time.perf_counter() - start
start = time.perf_counter(); import tensordict; tensordict_s = time.perf_counter() - start
print(json.dumps({"torch": torch_s, "torchpool": torchpool_s, "tensordict": tensordict_s}))
"""

# The modules are imported before the clock starts (tensordict too, which the first pool would
# import): only make + the first reset are timed.
MAKE = {
    "torchpool": """
import json, sys, time, torchpool, tensordict
n = int(sys.argv[1]); start = time.perf_counter()
pool = torchpool.make("Pong-v5", num_envs=n, seed=0); pool.reset()
print(json.dumps({"seconds": time.perf_counter() - start}))
""",
    "envpool": """
import json, sys, time, envpool
n = int(sys.argv[1]); start = time.perf_counter()
env = envpool.make("Pong-v5", env_type="gymnasium", num_envs=n, seed=0); env.reset()
print(json.dumps({"seconds": time.perf_counter() - start}))
""",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="fresh-process rounds per measurement")
    parser.add_argument("--num-envs", type=int, default=32, help="Pong envs per pool (default 32)")
    parser.add_argument("--record", action="store_true", help="write the RESULTS.md section")
    args = parser.parse_args()
    imports = [harness.run_child(["-c", IMPORT]) for _ in range(args.rounds)]
    over = statistics.median(r["torchpool"] for r in imports)
    torch_s = statistics.median(r["torch"] for r in imports)
    tensordict_s = statistics.median(r["tensordict"] for r in imports)
    print(f"import torch {torch_s:.2f} s; import torchpool after it {over:.2f} s; tensordict, which the first "
          f"pool imports, {tensordict_s:.2f} s more (medians of {args.rounds})")

    def make(name: str) -> float | None:
        try:
            return harness.run_child(["-c", MAKE[name], str(args.num_envs)])["seconds"]
        except harness.ChildFailed as error:
            print(f"{name} failed: {error}")
            return None

    runs = harness.measure_rounds(list(MAKE), args.rounds, make)
    makes = {name: [t for t in times if t is not None] for name, times in runs.items()}
    medians = {name: statistics.median(times) for name, times in makes.items() if times}
    for name, seconds in medians.items():
        print(f"{name:10s} make + first reset of {args.num_envs} Pong-v5: {seconds:.2f} s "
              f"({', '.join(f'{t:.2f}' for t in makes[name])})")
    ratio = medians["torchpool"] / medians["envpool"] if len(medians) == 2 else None
    if ratio is not None:
        print(f"torchpool / envpool: {ratio:.2f}")
    if not args.record:
        return
    rows = [f"| {name} | {medians[name]:.2f} | {', '.join(f'{t:.2f}' for t in makes[name])} |" for name in medians]
    harness.record_section(
        "startup", "Start-up (`benchmarks/startup.py`)", packages=("envpool",),
        settings=[f"- Settings: each number a fresh process, {args.rounds} rounds, the systems interleaved; "
                  "default threads."],
        body=[
            f"`import torchpool` after `import torch`: {over:.2f} s (median; `import torch` itself {torch_s:.2f} s). "
            f"The first pool imports tensordict (which imports `torch._dynamo`): {tensordict_s:.2f} s more, so "
            f"import + first pool pays {over + tensordict_s:.2f} s over torch; commands that make no pool "
            "(`python -m torchpool list`) pay only the import.",
            "",
            f"| make + first reset of {args.num_envs} Pong-v5 | median seconds | rounds |",
            "|---|---:|---|",
            *rows,
            "",
            f"torchpool / EnvPool: {ratio:.2f}." if ratio is not None else "EnvPool did not run.",
        ])


if __name__ == "__main__":
    main()
