"""How long should a waiting thread spin before it sleeps?

Waking a sleeping thread on a VM costs tens of microseconds, about a whole
batch of cheap steps; spinning burns a core the other threads may need. This
sweeps the pool's `spin_polls` (pause instructions a waiter polls through
before it sleeps, for workers and the caller alike) on a few workloads and
reports steps/s, median of alternating repeats. The default in
torchpool/pool.py (DEFAULT_SPIN_POLLS) is chosen from this table.

    python benchmarks/spin.py [--repeats N] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from torchpool import bench
from torchpool.bench import run_torchpool
from torchpool.pool import DEFAULT_SPIN_POLLS

HERE = Path(__file__).resolve().parent
# (env_id, num_envs, batch_size): sync small, sync large, async.
WORKLOADS = [("CartPole-v1", 8, None), ("CartPole-v1", 256, None), ("Pendulum-v1", 64, 32), ("Acrobot-v1", 64, None)]
POLLS = [0, 200, 2000, 20000]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="alternating repeats (median reported)")
    parser.add_argument("--calls", type=int, default=4000, help="step calls per measurement")
    parser.add_argument("--quick", action="store_true", help="one repeat, few calls; print only")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.calls = 1, 300
    rates: dict[tuple, list[float]] = {}
    for repeat in range(args.repeats):
        for polls in (POLLS if repeat % 2 == 0 else POLLS[::-1]):
            for env_id, num_envs, batch_size in WORKLOADS:
                result = run_torchpool(env_id, num_envs, args.calls, batch_size=batch_size, spin_polls=polls)
                rates.setdefault((env_id, num_envs, batch_size, polls), []).append(result.steps_per_s)
    header = "| spin_polls | " + " | ".join(
        f"{env} n={n}" + (f" batch={b}" if b else "") for env, n, b in WORKLOADS) + " |"
    lines = [header, "|---:|" + "---:|" * len(WORKLOADS)]
    for polls in POLLS:
        cells = [f"{statistics.median(rates[(e, n, b, polls)]):,.0f}" for e, n, b in WORKLOADS]
        lines.append(f"| {polls}{' (default)' if polls == DEFAULT_SPIN_POLLS else ''} | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    print(table)
    if args.quick:
        return
    info = bench.machine(())
    section = ("<!-- spin:begin -->\n## Spin before sleep (`benchmarks/spin.py`)\n\n"
               "Env steps/s by `spin_polls`, sync unless a batch is given (async send/recv).\n\n"
               f"- Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {info['cpu']}, {info['cores']} "
               f"cores; {info['versions']}; {args.repeats} alternating repeats, {args.calls} calls each, medians; "
               "default threads.\n\n" + table + "\n<!-- spin:end -->")
    bench.write_section(HERE / "RESULTS.md", section, "<!-- spin:begin -->", "<!-- spin:end -->")


if __name__ == "__main__":
    main()
