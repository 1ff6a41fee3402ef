"""How ``synth generate`` shows a run: the live progress display, the per-stage table at the end,
the ``--plan`` table, and the goldens per file (the coverage table)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from synth.contexts.coverage import Coverage, FileCoverage
from synth.run.plan import Plan
from synth.run.progress import Snapshot, summary_line

#: the per-stage table's columns, with how each is aligned
_STAGE_COLUMNS = (
    ("stage", "left"),
    ("in", "right"),
    ("out", "right"),
    ("dropped", "left"),
    ("requests", "right"),
    ("embed req", "right"),
    ("cached", "right"),
    ("retries", "right"),
    ("failed", "right"),
    ("tokens in", "right"),
    ("tokens out", "right"),
    ("cost $", "right"),
)


def render_table(rows: Sequence[Mapping[str, Any]], title: str | None = None) -> Table:
    """The per-stage table ``synth generate`` prints at the end, from the manifest's stage rows."""
    table = Table(title=title, header_style="bold", title_justify="left")
    for name, justify in _STAGE_COLUMNS:
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for row in rows:
        dropped = ", ".join(f"{k}: {v}" for k, v in row.get("dropped", {}).items())
        table.add_row(
            row["stage"],
            str(row["items_in"]),
            str(row["items_out"]),
            Text(dropped),
            str(row.get("requests", 0)),
            str(row.get("embedding_requests", 0)),
            str(row.get("cached", 0)),
            str(row.get("retries", 0)),
            str(row.get("failures", 0)),
            f"{row.get('input_tokens', 0):,}",
            f"{row.get('output_tokens', 0):,}",
            f"{row.get('cost_usd', 0):.4f}",
        )
    return table


def render_plan(plan: Plan) -> Table:
    """The table ``synth generate --plan`` prints: per stage requests, tokens and cost, and the
    totals."""
    title = (
        f"plan: {plan.files} files, {plan.chunks} chunks -> {plan.contexts} contexts -> "
        f"{plan.goldens} goldens"
    )
    table = Table(title=title, header_style="bold", title_justify="left")
    for name in ("stage", "requests", "tokens in", "tokens out", "cost $"):
        table.add_column(name, justify="left" if name == "stage" else "right")
    for s in plan.stages:
        cost = "?" if s.cost_usd is None else f"{s.cost_usd:.4f}"
        table.add_row(s.stage, str(s.requests), f"{s.input_tokens:,}", f"{s.output_tokens:,}", cost)
    total_cost = "?" if plan.cost_usd is None else f"{plan.cost_usd:.4f}"
    table.add_row(
        "total",
        str(plan.requests),
        f"{sum(s.input_tokens for s in plan.stages):,}",
        f"{sum(s.output_tokens for s in plan.stages):,}",
        total_cost,
        style="bold",
    )
    return table


#: file rows a coverage table shows at most (``--json`` lists them all)
SHOWN_FILES = 20


def coverage_line(coverage: Coverage) -> str:
    """One line: files with goldens of the files ingested, and chunks used of the chunks stored."""
    return (
        f"coverage ({coverage.rule}): {coverage.files_covered} of {coverage.files_ingested} files, "
        f"{coverage.seed_chunks} seed and {coverage.neighbour_chunks} neighbour chunks of "
        f"{coverage.chunks_stored} stored"
    )


def render_coverage(coverage: Coverage, files: Sequence[FileCoverage] | None = None) -> Table:
    """Goldens per file (``files``, default every file): its chunks, share and target, and after
    a run what it delivered; the files short of their share first, at most SHOWN_FILES rows."""
    rows = sorted(files if files is not None else coverage.files, key=lambda f: -f.shortfall)
    delivered = any(f.delivered is not None for f in rows)
    title = f"goldens per file ({coverage.rule} coverage)"
    table = Table(title=title, header_style="bold", title_justify="left")
    names = ["file", "chunks", "share", "target", *(["delivered"] if delivered else []), "short"]
    for name in names:
        table.add_column(name, justify="left" if name == "file" else "right")
    for f in rows[:SHOWN_FILES]:
        got = [str(f.delivered if f.delivered is not None else "-")] if delivered else []
        short = str(f.shortfall) if f.shortfall else ""
        table.add_row(
            _shown_path(f.source), str(f.chunks), str(f.share), str(f.target), *got, short
        )
    if len(rows) > SHOWN_FILES:
        table.add_row(f"... {len(rows) - SHOWN_FILES} more files", *([""] * (len(names) - 1)))
    return table


def _shown_path(path: str) -> str:
    """``path`` relative to the working folder when it is under it (tables stay narrow)."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if relative.startswith("..") else relative


def render(snap: Snapshot) -> Group:
    """The progress display at one moment: each stage's done/total, then one line of totals."""
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    table.add_column("stage")
    table.add_column("done", justify="right")
    for name, done, total in snap.stages:
        table.add_row(name, f"{done}/{total}")
    line = Text(summary_line(snap))
    parts: list[Any] = [Text(snap.title, style="bold")] if snap.title else []
    return Group(*parts, table, line)


class RichProgress:
    """A live display on ``console`` (stderr by default), refreshed a few times a second; a
    :class:`~synth.run.progress.Progress`."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self._live: Live | None = None
        self._snapshot: Callable[[], Snapshot] | None = None

    def start(self, snapshot: Callable[[], Snapshot]) -> None:
        self._snapshot = snapshot
        self._live = Live(
            get_renderable=lambda: render(snapshot()),
            console=self.console,
            refresh_per_second=4,
            transient=True,
        )
        self._live.start()

    def stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
            if self._snapshot is not None:
                self.console.print(render(self._snapshot()))

    def note(self, text: str) -> None:
        self.console.print(Text(text))


__all__ = [
    "SHOWN_FILES",
    "RichProgress",
    "coverage_line",
    "render",
    "render_coverage",
    "render_plan",
    "render_table",
]
