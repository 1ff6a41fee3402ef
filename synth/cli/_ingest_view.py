"""How ``synth ingest`` shows its report: a table with every file, then a summary."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.table import Table
from rich.text import Text

from synth.cli.console import print_fitted
from synth.store.ingest_run import IngestedFile, IngestReport

_STYLES = {"ok": "green", "error": "red", "skipped": "yellow"}
#: the reason column of a file stored before and unchanged since
UNCHANGED_NOTE = "unchanged, not read again"


def print_ingest_report(report: IngestReport, console: Console) -> None:
    """Print one row per file (path, status, chunks, tokens, reason) and the totals.

    On a terminal the table fits its width. Piped or redirected, where rich would assume 80
    columns, the table is as wide as its longest row, so no path or reason is folded. The totals
    and the store are plain lines, never wrapped, for people and scripts alike.
    """
    table = Table(show_lines=False, header_style="bold")
    table.add_column("file", overflow="fold")
    table.add_column("status")
    table.add_column("chunks", justify="right")
    table.add_column("tokens", justify="right")
    table.add_column("reason", overflow="fold")
    for row in report.files:
        table.add_row(
            Text(row.path),
            Text(row.status, style=_STYLES.get(row.status, "")),
            str(row.chunks) if row.status == "ok" else "",
            str(row.tokens) if row.status == "ok" else "",
            Text(_reason(row)),
        )
    print_fitted(console, table)
    where = f"store: {report.collection} in {report.store} ({report.embedder})"
    console.file.write(f"{summary_line(report)}\n{where}\n")
    console.file.flush()


def _reason(row: IngestedFile) -> str:
    if not row.unchanged:
        return row.reason
    return "; ".join(part for part in (UNCHANGED_NOTE, row.reason) if part)


def summary_line(report: IngestReport) -> str:
    """``12 files (10 ok, 1 error, 1 skipped), 40 chunks, 31,200 tokens, 40 embedded now, 0 reused``."""
    counts = report.counts()
    total = len(report.files)
    return (
        f"{total} file{'' if total == 1 else 's'} ({counts['ok']} ok, {counts['error']} "
        f"error{'' if counts['error'] == 1 else 's'}, {counts['skipped']} skipped), "
        f"{report.chunks:,} chunks, {report.tokens:,} tokens, "
        f"{report.embedded:,} embedded now, {report.reused:,} reused"
    )


@contextmanager
def ingest_progress(console: Console) -> Iterator[Callable[[IngestedFile], None] | None]:
    """A live "files done" line on an interactive ``console``; nothing when it is not a terminal."""
    if not console.is_terminal:
        yield None
        return
    done = 0
    with console.status("reading files...") as status:

        def on_file(row: IngestedFile) -> None:
            nonlocal done
            done += 1
            status.update(Text(f"{done} files done, last: {row.path} ({row.status})"))

        yield on_file


__all__ = ["UNCHANGED_NOTE", "ingest_progress", "print_ingest_report", "summary_line"]
