"""The exit codes of the ``synth`` command, one constant each (docs/cli.md has the table).

They live apart from :mod:`synth.cli` so that every command module can return them without
importing the package that imports the command modules.
"""

from __future__ import annotations

from synth._interrupt import EXIT_INTERRUPTED, EXIT_TERMINATED

#: everything asked was done
EXIT_OK = 0
#: ``synth ingest``: no file could be read
EXIT_NOTHING_READ = 1
#: ``synth gate``: a metric is worse than the baseline by more than its margin, its interval clear
#: of zero
EXIT_WORSE = 1
#: a usage error or a ``synth: error:`` line (nothing, or nothing useful, was written)
EXIT_ERROR = 2
#: the output was written but is short: fewer goldens than asked, or evaluation items that failed
EXIT_PARTIAL = 3
#: ``synth update --check``: the documents moved on (goldens to retire, or files never seen)
EXIT_STALE = 4
# EXIT_INTERRUPTED (130, Ctrl-C) and EXIT_TERMINATED (143, SIGTERM) are defined with their
# handler in synth._interrupt
#: stdout was closed early (``synth ... | head``): 128 + SIGPIPE, what a shell reports for it
EXIT_CLOSED_PIPE = 141

__all__ = [
    "EXIT_CLOSED_PIPE",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_NOTHING_READ",
    "EXIT_OK",
    "EXIT_PARTIAL",
    "EXIT_STALE",
    "EXIT_TERMINATED",
    "EXIT_WORSE",
]
