"""Printing rich tables on the command line so that no column is ever cut off.

On a terminal a table is fitted to the terminal's width, its cells folded as narrow as needed
(rich would otherwise crop a table whose columns may not wrap, and drop the last columns).
Piped or redirected, rich would assume 80 columns and crop what does not fit; there a table is
printed at its natural width instead, as wide as its longest row.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

#: a width no table row reaches, to measure a table's natural width
_UNBOUNDED = 1_000_000


class CommandConsole(Console):
    """A rich console for the command line: a closed pipe raises :class:`BrokenPipeError`.

    rich's own reaction, exit code 1 with no message, would hide the closed pipe from
    :func:`synth.cli.main`, which ends quietly with its conventional exit code.
    """

    def on_broken_pipe(self) -> None:
        self.quiet = True  # nothing more is written through this console
        raise BrokenPipeError("the reader of the output went away")


def print_fitted(console: Console, renderable: Any) -> None:
    """Print ``renderable``: fitted to the terminal, or at its natural width when not a terminal."""
    if console.is_terminal:
        if isinstance(renderable, Table):
            for column in renderable.columns:  # narrower than the table: fold, never crop
                column.no_wrap, column.min_width, column.overflow = False, None, "fold"
        console.print(renderable)
        return
    options = console.options.update_width(_UNBOUNDED)
    natural = Measurement.get(console, options, renderable).maximum
    width = console.width
    console.width = max(width, natural)
    try:
        console.print(renderable)
    finally:
        console.width = width


def print_all_fitted(console: Console, renderables: Iterable[Any]) -> None:
    """Print each of ``renderables`` with :func:`print_fitted`."""
    for renderable in renderables:
        print_fitted(console, renderable)


__all__ = ["CommandConsole", "print_all_fitted", "print_fitted"]
