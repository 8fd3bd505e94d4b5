"""The benchmarks' harness: one way to time a case, and one way to plot and record it.

Every script in benchmarks/ imports it (``import harness``: a script's own
folder is on ``sys.path``); the package ships none of it. It has three parts:

- ``timing``: a case timed for a number of calls or seconds (wall and CPU
  time), calls sized by a pilot, rounds in interleaved order (alternating or
  rotating), medians, spreads and paired ratios, fresh-interpreter runs;
- ``record``: the machine's description, tables, and a script's section of
  RESULTS.md (in benchmarks/, or in ``$BENCHMARKS_OUTPUT_DIR`` for a trial run);
- ``plot``: figures of panels in the benchmarks' few shapes, saved as PNGs;
- ``systems``: a throughput case, one system at one size, run by the runners.

The throughput runners (a system built, its actions drawn before the timed
loop, every output handed over as a torch tensor) are the package's own
``torchpool._side_by_side``, which ``python -m torchpool bench`` runs; they
are re-exported here.
"""

from torchpool._side_by_side import (
    Result,
    draw_actions,
    envpool_available,
    run_envpool,
    run_gymnasium,
    run_torchpool,
    time_calls,
    torchpool_calls,
)

from .plot import grouped_bars, hbars, panels, pyplot, return_curves, save, size_lines
from .record import (
    BENCHMARKS,
    OUTPUT,
    RESULTS,
    command_line,
    load,
    machine,
    machine_line,
    markdown_table,
    print_table,
    record_section,
    write_section,
)
from .systems import SystemCase, gym_async_skip_reason
from .timing import (
    ChildFailed,
    Paired,
    Rate,
    Skip,
    interleaved,
    measure_rounds,
    paired,
    pilot,
    quartiles,
    rate_for,
    round_order,
    run_child,
    spread,
)

__all__ = ["BENCHMARKS", "ChildFailed", "OUTPUT", "Paired", "RESULTS", "Rate", "Result", "Skip", "SystemCase",
           "command_line", "draw_actions", "envpool_available", "grouped_bars", "gym_async_skip_reason", "hbars",
           "interleaved", "load", "machine", "machine_line", "markdown_table", "measure_rounds", "paired", "panels",
           "pilot", "print_table", "pyplot", "quartiles", "rate_for", "record_section", "return_curves",
           "round_order", "run_child", "run_envpool", "run_gymnasium", "run_torchpool", "save", "size_lines",
           "spread", "time_calls", "torchpool_calls", "write_section"]
