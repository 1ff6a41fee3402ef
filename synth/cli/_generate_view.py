"""How ``synth generate`` shows a run: the live progress display, the per-stage table at the end,
the ``--plan`` table, and the goldens per file (the coverage table)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.live import Live
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from synth.contexts.coverage import Coverage
from synth.run.plan import Plan
from synth.run.progress import Snapshot, summary_line

#: the per-stage table's columns: header, the short header of the compact table (None: left out
#: of it), the manifest row's key (None: made below) and how each is aligned
_STAGE_COLUMNS = (
    ("stage", "stage", "stage", "left"),
    ("in", "in", "items_in", "right"),
    ("out", "out", "items_out", "right"),
    ("dropped", None, None, "left"),
    ("requests", "req", "requests", "right"),
    ("embed req", "embed", "embedding_requests", "right"),
    ("cached", "cached", "cached", "right"),
    ("retries", "retry", "retries", "right"),
    ("failed", "fail", "failures", "right"),
    ("tokens in", "tok in", "input_tokens", "right"),
    ("of them cached", "tok cached", "cached_input_tokens", "right"),
    ("tokens out", "tok out", "output_tokens", "right"),
    ("cost $", "cost $", "cost_usd", "right"),
)
#: columns the compact table leaves out when every stage has 0 in them
_QUIET_WHEN_ZERO = (
    "embedding_requests",
    "cached",
    "retries",
    "failures",
    "cached_input_tokens",
)


def _cells(row: Mapping[str, Any]) -> dict[str, str]:
    """One stage row's cells by manifest key, as the tables show them."""
    return {
        "stage": str(row["stage"]),
        "items_in": str(row["items_in"]),
        "items_out": str(row["items_out"]),
        "requests": str(row.get("requests", 0)),
        "embedding_requests": str(row.get("embedding_requests", 0)),
        "cached": str(row.get("cached", 0)),
        "retries": str(row.get("retries", 0)),
        "failures": str(row.get("failures", 0)),
        "input_tokens": f"{row.get('input_tokens', 0):,}",
        "cached_input_tokens": f"{row.get('cached_input_tokens', 0):,}",
        "output_tokens": f"{row.get('output_tokens', 0):,}",
        "cost_usd": f"{row.get('cost_usd', 0):.4f}",
    }


def _dropped(row: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in row.get("dropped", {}).items())


def render_table(
    rows: Sequence[Mapping[str, Any]], title: str | None = None, *, width: int | None = None
) -> Table | Group:
    """The per-stage table ``synth generate`` prints at the end, from the manifest's stage rows.

    ``width``: the terminal's; where the whole table is wider, the compact one (see
    :func:`_compact_table`). None (a pipe, a file): the whole table, printed at its own width.
    """
    table = Table(title=title, header_style="bold", title_justify="left")
    for name, _, _, justify in _STAGE_COLUMNS:
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for row in rows:
        cells = _cells(row)
        table.add_row(
            *(Text(_dropped(row)) if key is None else cells[key] for _, _, key, _ in _STAGE_COLUMNS)
        )
    if width is None or _natural_width(table) <= width:
        return table
    return _compact_table(rows, title)


def _natural_width(renderable: Any) -> int:
    """How wide ``renderable`` is when nothing has to wrap."""
    console = Console(width=1_000_000)
    return Measurement.get(console, console.options, renderable).maximum


def _short_count(n: int) -> str:
    """``n`` in at most six characters: 99,999, then 123k, then 12.3M."""
    if n < 100_000:
        return f"{n:,}"
    if n < 1_000_000:
        return f"{n // 1000}k"
    return f"{n / 1_000_000:.1f}M"


def _compact_table(rows: Sequence[Mapping[str, Any]], title: str | None) -> Group:
    """The per-stage table for a narrow terminal: no rules between columns, short headers that
    never wrap, numbers never cut (tokens past 99,999 in thousands or millions), the columns of
    only zeros left out (said below it), and the drops listed under it, one line per stage."""
    cells = [_cells(row) for row in rows]
    quiet = [
        key for key in _QUIET_WHEN_ZERO if all(c[key] == "0" for c in cells)
    ]  # a column of zeros says nothing on a narrow screen
    table = Table(
        title=title,
        header_style="bold",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
    )
    shown = [
        (short, key, justify)
        for _, short, key, justify in _STAGE_COLUMNS
        if short is not None and key is not None and key not in quiet
    ]
    for short, key, justify in shown:
        table.add_column(short, justify=justify, no_wrap=key != "stage")  # type: ignore[arg-type]
    for cell, stage in zip(cells, rows, strict=True):
        for key in ("input_tokens", "cached_input_tokens", "output_tokens"):
            cell[key] = _short_count(int(stage.get(key, 0)))
        table.add_row(*(cell[key] for _, key, _ in shown))
    lines: list[Any] = [table]
    names = {key: name for name, _, key, _ in _STAGE_COLUMNS}
    if quiet:
        lines.append(Text(f"0 in every stage: {', '.join(names[k] for k in quiet)}"))
    for stage in rows:
        if stage.get("dropped"):
            lines.append(Text(f"dropped at {stage['stage']}: {_dropped(stage)}"))
    return Group(*lines)


def render_plan(plan: Plan) -> Table:
    """The table ``synth generate --plan`` prints: per stage requests, tokens and cost, and the
    totals."""
    title = (
        f"plan: {plan.files} files, {plan.chunks} chunks -> {plan.contexts} contexts -> "
        f"{plan.goldens} goldens"
    )
    table = Table(title=title, header_style="bold", title_justify="left")
    for name in ("stage", "requests", "tokens in", "of them cached", "tokens out", "cost $"):
        table.add_column(name, justify="left" if name == "stage" else "right")
    for s in plan.stages:
        cost = "?" if s.cost_usd is None else f"{s.cost_usd:.4f}"
        table.add_row(
            s.stage,
            str(s.requests),
            f"{s.input_tokens:,}",
            f"{s.cached_input_tokens:,}",
            f"{s.output_tokens:,}",
            cost,
        )
    total_cost = "?" if plan.cost_usd is None else f"{plan.cost_usd:.4f}"
    table.add_row(
        "total",
        str(plan.requests),
        f"{sum(s.input_tokens for s in plan.stages):,}",
        f"{sum(s.cached_input_tokens for s in plan.stages):,}",
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


def render_coverage(coverage: Coverage, *, only_short: bool = False) -> Table:
    """Goldens per file: its chunks, share and target, and after a run what it delivered; the
    files short of their share first, at most SHOWN_FILES rows. ``only_short``: only the files
    that fell short, and the title says so."""
    files = coverage.short if only_short else coverage.files
    rows = sorted(files, key=lambda f: -f.shortfall)
    delivered = any(f.delivered is not None for f in rows)
    if only_short:
        title = (
            f"files that fell short of their share ({len(rows)} of {len(coverage.files)} files, "
            f"{coverage.rule} coverage; --json lists every file)"
        )
    else:
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
    """``path`` relative to the working folder when it is under it (tables stay narrow); a web
    page's URL as it is (a path's normalising would fold its ``//``)."""
    if "://" in path:
        return path
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

    def __init__(self, console: Console | None = None, *, auto_refresh: bool = True) -> None:
        self.console = console or Console(stderr=True)
        #: False: drawn only when stopped (the last frame)
        self.auto_refresh = auto_refresh
        self._live: Live | None = None

    def start(self, snapshot: Callable[[], Snapshot]) -> None:
        # not transient: stopping draws the last frame where the display was and leaves it
        # there (a transient display erased, then printed again, shows it twice wherever the
        # erasing is not honoured: a CI log, a captured terminal)
        self._live = Live(
            get_renderable=lambda: render(snapshot()),
            console=self.console,
            auto_refresh=self.auto_refresh,
            refresh_per_second=4,
        )
        self._live.start()

    def stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
            if not self.console.is_terminal:
                # rich ends the last frame's line on a terminal only: in a CI log or a file the
                # next line (the table, or the "synth: error:" line) would start on it
                self.console.line()

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
