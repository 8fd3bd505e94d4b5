"""How many of the peers' own test cases pass on torchpool, next to the peer itself on the same files.

Reads the pytest logs the run_*.sh / sb3_run.py harnesses wrote (each ends with pytest's summary line),
writes the section "The peers' own test suites" of benchmarks/RESULTS.md and benchmarks/peers.png.

    python benchmarks/peers/record.py --suite "EnvPool 1.2.5" ours.log theirs.log --before 23 --note "..." \\
        --suite "Gymnasium 1.4.0" ... [--source "..."]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: its harness
import harness  # noqa: E402

PLOT = harness.OUTPUT / "peers.png"
_COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?|deselected)")


def counts(log: Path) -> dict[str, int]:
    """pytest's closing counts (passed, failed, skipped, error, deselected) from a log's last summary line."""
    lines = [line for line in log.read_text().splitlines() if re.search(r"\d+ (passed|failed)", line)]
    if not lines:
        raise SystemExit(f"{log}: no pytest summary line (did the run finish?)")
    found = {kind.rstrip("s") if kind.startswith("error") else kind: int(n) for n, kind in _COUNT.findall(lines[-1])}
    return {kind: found.get(kind, 0) for kind in ("passed", "failed", "skipped", "error", "deselected")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", nargs=3, action="append", metavar=("NAME", "OURS_LOG", "PEER_LOG"), required=True)
    parser.add_argument("--before", type=int, action="append", default=[],
                        help="passes on torchpool before this work, one per --suite (as the issue counted)")
    parser.add_argument("--note", action="append", default=[], help="a bullet under the table (repeatable)")
    args = parser.parse_args()
    rows, names, ours_passed, theirs_passed, before = [], [], [], [], []
    for index, (name, ours_log, peer_log) in enumerate(args.suite):
        ours, theirs = counts(Path(ours_log)), counts(Path(peer_log))
        total = sum(ours[kind] for kind in ("passed", "failed", "skipped", "error"))
        peer_total = sum(theirs[kind] for kind in ("passed", "failed", "skipped", "error", "deselected"))
        was = args.before[index] if index < len(args.before) else None
        rows.append(f"| {name} | {total} | {'-' if was is None else was} | **{ours['passed']}** | {ours['failed']} | "
                    f"{ours['skipped']} | {theirs['passed']} of {peer_total} |")
        names.append(name)
        ours_passed.append(ours["passed"])
        theirs_passed.append(theirs["passed"])
        before.append(was or 0)
    body = ["| suite | cases | passed on torchpool before | passed on torchpool | failed | skipped | "
            "passed on the peer itself |", "|---|---:|---:|---:|---:|---:|---:|", *rows, "",
            *[f"- {note}" for note in args.note], "", f"![passes per suite]({PLOT.name})"]
    harness.record_section(
        "peers", "The peers' own test suites on torchpool (`benchmarks/peers/`, `tests/peers/`)",
        question="How many of EnvPool's, Gymnasium's and SB3's own test cases, their assertions untouched and only "
        "the class or module under test swapped for torchpool's, pass?",
        settings=["- Settings: each suite's files as its harness lists them; the peer's own run is the same files on "
                  "the installed peer. Which cases cannot pass on a drop-in, and why: docs/adapters.md."],
        body=body, packages=("envpool", "gymnasium", "stable-baselines3", "gym"))
    figure, (axes,) = harness.panels(1, (7, 3.5))
    harness.grouped_bars(axes, names, {"torchpool before": before, "torchpool now": ours_passed,
                                       "the peer itself": theirs_passed})
    axes.set_ylabel("cases passed")
    harness.save(figure, PLOT, title="The peers' own tests: cases passed")


if __name__ == "__main__":
    main()
