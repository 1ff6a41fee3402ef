"""The exit codes of the ``synth`` command, one constant each (docs/cli.md has the table), and
how the program ends once its command has returned (:class:`ProgramEnd`).

They live apart from :mod:`synth.cli` so that every command module can return them without
importing the package that imports the command modules.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys

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


class ProgramEnd:
    """Ends the ``synth`` program after the interpreter's exit steps, without its teardown.

    Made when the program starts, before the command runs. When the command has returned its
    ``code``, the interpreter exits as usual: it joins the threads left, then runs every exit
    function registered while the command ran (a Ray started for the run shut down, a user's own
    module's clean-up), this one last, which flushes stdout and stderr and ends the process with
    ``code``. What it skips is the teardown that follows, the freeing of every module and object
    one by one: 0.55 to 0.85 s of a core after a ``synth generate``, mostly the openai SDK's
    thousands of pydantic types and Chroma's client (docs/benchmarks.md, "The program's end").
    Nothing is lost by it: every file a command writes is closed when the command returns, and
    its journals are flushed line by line; a Ctrl-C already ends the same way
    (:meth:`synth._interrupt.CtrlC.exit_now`).

    It stands aside, and the interpreter ends as usual, when exit functions were registered
    before the program started (coverage measuring the process, a site's own ones: they would
    run after this one), and when the command did not return (an uncaught exception).
    """

    def __init__(self) -> None:
        self.code: int | None = None
        ncallbacks = getattr(atexit, "_ncallbacks", None)  # CPython's count of exit functions
        self._first = ncallbacks is not None and ncallbacks() == 0
        atexit.register(self._end)

    def _end(self) -> None:
        if self.code is None or not self._first:
            return
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(self.code)


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
    "ProgramEnd",
]
