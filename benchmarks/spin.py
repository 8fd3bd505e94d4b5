"""How long should a waiting thread spin before it sleeps?

Waking a sleeping thread on a VM costs tens of microseconds, about a whole
batch of cheap steps; spinning burns a core the other threads may need. This
sweeps the pool's `spin_polls` (pause instructions a waiter polls through
before it sleeps, for workers and the caller alike) on a few workloads and
reports steps/s, median of alternating repeats (benchmarks/harness). The
default in torchpool/pool.py (DEFAULT_SPIN_POLLS) is chosen from this table.

    python benchmarks/spin.py [--repeats N] [--quick]
"""

from __future__ import annotations

import argparse
import statistics

import harness

from torchpool.pool import DEFAULT_SPIN_POLLS

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

    def measure(polls: int) -> list[float]:
        """steps/s of every workload with this spin_polls, in order."""
        return [harness.run_torchpool(env_id, num_envs, args.calls, batch_size=batch_size,
                                      spin_polls=polls).steps_per_s for env_id, num_envs, batch_size in WORKLOADS]

    rates = harness.measure_rounds(POLLS, args.repeats, measure, progress="spin_polls")
    header = "| spin_polls | " + " | ".join(
        f"{env} n={n}" + (f" batch={b}" if b else "") for env, n, b in WORKLOADS) + " |"
    lines = [header, "|---:|" + "---:|" * len(WORKLOADS)]
    for polls in POLLS:
        cells = [f"{statistics.median(repeat[k] for repeat in rates[polls]):,.0f}" for k in range(len(WORKLOADS))]
        lines.append(f"| {polls}{' (default)' if polls == DEFAULT_SPIN_POLLS else ''} | " + " | ".join(cells) + " |")
    print("\n".join(lines))
    if args.quick:
        return
    harness.record_section(
        "spin", "Spin before sleep (`benchmarks/spin.py`)",
        question="Env steps/s by `spin_polls`, sync unless a batch is given (async send/recv).",
        settings=[f"- Settings: {args.repeats} alternating repeats, {args.calls} calls each, medians; default "
                  "threads."],
        body=lines)


if __name__ == "__main__":
    main()
