"""Is this machine quiet enough to measure on right now?

The benchmarks quote ratios to the raw limit within a few %, but a shared VM
sometimes runs a core at half speed for seconds at a time, for an hour or
more (2026-12-01, 09:35-11:30 UTC: one thread's bare mj_step rate swung
between 82k and 172k per second). Run this first: it times pairs of short
slices of bare `mj_step` on HalfCheetah-v5 (the C++ program of
mujoco_tasks.py), one process and one per core in alternating order
(benchmarks/harness), and says whether one thread's rate held steady and the
cores scaled. Takes about 10 s; exits 1
when noisy, so a script can wait for quiet:

    until python benchmarks/vm_noise.py; do sleep 120; done && python benchmarks/raw_share.py
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import harness
import mujoco_tasks

ENV_ID = "HalfCheetah-v5"
# Quiet: one thread's rate within this of its best, and cores scaling within this of perfect.
TOLERANCE = 0.05


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--pairs", type=int, default=8, help="pairs of slices (one process and one per core)")
    parser.add_argument("--slice-seconds", type=float, default=0.3, help="length of one slice")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as scratch:
        binary = mujoco_tasks.build_raw_step(Path(scratch))
        processes = {"one": 1, "together": cores}
        rates = harness.measure_rounds(list(processes), args.pairs, lambda name: mujoco_tasks.raw_mj_steps_per_s(
            binary, ENV_ID, args.slice_seconds, processes[name]))
    one, together = rates["one"], rates["together"]
    steadiness = min(one) / max(one)
    scaling = [t / (cores * o) for t, o in zip(together, one)]
    quiet = steadiness >= 1 - TOLERANCE and all(abs(s - 1) <= TOLERANCE for s in scaling)
    print(f"one thread: {min(one):,.0f} - {max(one):,.0f} mj_step/s (slowest {steadiness:.0%} of fastest)")
    print(f"{cores} cores at once / ({cores} x one): " + " ".join(f"{s:.2f}" for s in scaling))
    print("quiet: measure now" if quiet else f"noisy (beyond {TOLERANCE:.0%}): benchmark ratios will scatter")
    sys.exit(0 if quiet else 1)


if __name__ == "__main__":
    main()
