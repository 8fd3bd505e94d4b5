"""Recording a result: the machine it ran on, its tables, and its section of RESULTS.md.

Every script writes its numbers into a section of its own between
``<!-- key:begin -->`` and ``<!-- key:end -->``; rerunning it replaces that
section and leaves every other as it was. ``record_section`` writes the
section's head the same way for all of them: the title, the question, then
the date, the machine, the software's versions, the command that wrote it
(with its minutes) and the script's settings, then its body.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import torch

import torchpool

__all__ = ["BENCHMARKS", "OUTPUT", "RESULTS", "command_line", "load", "machine", "machine_line", "markdown_table",
           "print_table", "record_section", "write_section"]

BENCHMARKS = Path(__file__).resolve().parent.parent
# Where RESULTS.md and the PNGs go: benchmarks/, or for a trial run of a script's recording another folder.
OUTPUT = Path(os.environ.get("BENCHMARKS_OUTPUT_DIR", BENCHMARKS))
RESULTS = OUTPUT / "RESULTS.md"
RESULTS_HEADER = ("# torchpool benchmark results\n\n"
                  "Each section is written by one script in `benchmarks/`; rerun it to refresh its section.\n")


def machine(packages: Sequence[str] = ()) -> dict[str, str]:
    """The machine and software a result was measured on: cpu, cores, ram, os, versions (Python, torch,
    torchpool and ``packages``')."""
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor() or "unknown CPU")
    ram_gib = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30
    os_name = platform.platform()
    if Path("/etc/os-release").exists():
        release = dict(line.rstrip().split("=", 1) for line in open("/etc/os-release") if "=" in line)
        os_name = f"{release.get('PRETTY_NAME', 'Linux').strip(chr(34))}, kernel {platform.release()}"
    versions = {"Python": platform.python_version(), "torch": torch.__version__, "torchpool": torchpool.__version__}
    for package in packages:
        try:
            versions[package] = importlib.metadata.version(package)  # also for modules without __version__
        except importlib.metadata.PackageNotFoundError:
            try:  # a module whose distribution has another name (pufferlib from pufferlib-core)
                versions[package] = __import__(package).__version__
            except Exception:
                versions[package] = "not installed"
    return {"cpu": cpu, "cores": str(os.cpu_count()), "ram": f"{ram_gib:.0f} GiB", "os": os_name,
            "versions": ", ".join(f"{name} {version}" for name, version in versions.items())}


def load() -> str:
    """The load average over 1, 5 and 15 minutes: whether other work shared the cores."""
    return " / ".join(f"{value:.1f}" for value in os.getloadavg()) + " (1 / 5 / 15 min)"


def machine_line(info: dict[str, str]) -> str:
    """The machine in a few words, for a plot's title: CPU, cores, RAM."""
    return f"{info['cpu']}, {info['cores']} cores, {info['ram']} RAM"


def process_seconds() -> float:
    """Wall seconds since this process started (Linux's /proc), however late the harness was imported."""
    started_ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return uptime - started_ticks / os.sysconf("SC_CLK_TCK")


def command_line() -> str:
    """The command that is running, as a reader reruns it from the repository root."""
    script = Path(sys.argv[0]).resolve()
    try:
        script = script.relative_to(BENCHMARKS.parent)
    except ValueError:
        pass
    return " ".join(["python", str(script), *sys.argv[1:]])


def record_section(key: str, title: str, *, body: Sequence[str], settings: Sequence[str] = (),
                   question: str | None = None, packages: Sequence[str] = (), path: Path = RESULTS) -> None:
    """Writes the section ``key`` of RESULTS.md: ``## title``, the question, the date, the machine (and its load
    average), the software (with ``packages``' versions), the command and its minutes, the settings' bullet lines,
    a blank line, the body."""
    info = machine(packages)
    begin, end = f"<!-- {key}:begin -->", f"<!-- {key}:end -->"
    minutes = process_seconds() / 60
    section = "\n".join([
        begin, f"## {title}", "",
        *([question, ""] if question else []),
        f"- Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- Machine: {machine_line(info)}, {info['os']}; load average {load()} when recorded",
        f"- Software: {info['versions']}",
        f"- Command: `{command_line()}` ({minutes:.1f} min)",
        *settings, "", *body, end])
    write_section(path, section, begin, end)
    print(f"wrote the section {key!r} of {path}")


def write_section(path: Path, section: str, begin: str, end: str) -> None:
    """Puts ``section`` (which starts with ``begin`` and ends with ``end``) into RESULTS.md in place
    of the old one, or appends it; every other section stays as it was."""
    text = path.read_text() if path.exists() else RESULTS_HEADER
    if begin in text and end in text:
        text = text[:text.index(begin)] + section + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text)


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[str]], text_columns: int = 1) -> list[str]:
    """A Markdown table's lines: the first ``text_columns`` columns left-aligned, the numbers right-aligned."""
    return ["| " + " | ".join(columns) + " |",
            "|" + "|".join("---" if i < text_columns else "---:" for i in range(len(columns))) + "|",
            *["| " + " | ".join(row) + " |" for row in rows]]


def print_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """The same table for a terminal: columns right-aligned to their widest cell."""
    widths = [max([len(column), *(len(row[i]) for row in rows)]) for i, column in enumerate(columns)]
    print("  ".join(column.rjust(width) for column, width in zip(columns, widths)))
    for row in rows:
        print("  ".join(cell.rjust(width) for cell, width in zip(row, widths)))
