"""How ``synth generate`` draws its end on a terminal and in a log: the per-stage table at 80
columns, the table of the files that fell short, and the progress display's last frame, drawn once
and ending its line."""

from __future__ import annotations

import io
import re

from rich.console import Console

from synth.cli._generate_view import RichProgress
from synth.cli.generate import _print_coverage, _print_table
from synth.contexts.coverage import Coverage, FileCoverage
from synth.dataset import Dataset
from synth.run.progress import Snapshot

STAGES = ("ingest", "critic", "group", "inputs", "filter", "evolve", "style", "expected", "dedup")


def stage_rows() -> list[dict]:
    """A busy run's rows: every column non-zero, big token counts, a stage that dropped items."""
    return [
        {
            "stage": stage,
            "items_in": 1200 + i,
            "items_out": 1100 + i,
            "dropped": {"low quality": 37, "too similar": 5} if stage == "critic" else {},
            "requests": 640 + i,
            "embedding_requests": 12,
            "cached": 310,
            "retries": 17,
            "failures": 3,
            "input_tokens": 1_234_567 * (i + 1),
            "output_tokens": 98_765 + i,
            "cost_usd": 12.3456 + i,
        }
        for i, stage in enumerate(STAGES)
    ]


def terminal(width: int = 80) -> Console:
    return Console(width=width, force_terminal=True, color_system=None, record=True)


def test_the_stage_table_at_80_columns_keeps_headers_on_one_line_and_costs_whole() -> None:
    console = terminal()
    _print_table({"run_id": "r1", "stages": stage_rows()}, Dataset(), console)
    lines = console.export_text().splitlines()
    assert all(len(line) <= 80 for line in lines)
    rule = next(i for i, line in enumerate(lines) if set(line.strip()) <= set("─━┡╇┩┬┼├┤"))
    # the title, then the headers: one line, no header word cut
    header = [line for line in lines[1:rule] if line.strip("┏┓━┳ ")]
    assert len(header) == 1, header
    assert re.search(r"\bstage\b.*\bin\b.*\bout\b.*\bcost \$", header[0]), header[0]
    text = "\n".join(lines)
    for i, stage in enumerate(STAGES):
        row = next(line for line in lines if line.strip().startswith(stage))
        assert f"{12.3456 + i:.4f}" in row  # the cost whole, on its stage's line
    assert "low quality: 37" in text  # the drops are still said


def test_a_piped_stage_table_is_the_whole_table() -> None:
    console = Console(file=io.StringIO(), width=80, record=True)  # not a terminal
    _print_table({"run_id": "r1", "stages": stage_rows()}, Dataset(), console)
    text = console.export_text()
    assert "embed req" in text and "tokens out" in text and "1,234,567" in text


def test_the_table_after_a_run_says_it_lists_only_the_files_that_fell_short() -> None:
    rows = [
        FileCoverage(source="a.md", chunks=9, share=4, target=4, delivered=4),
        FileCoverage(source="b.md", chunks=1, share=4, target=2, delivered=2, shortfall=2),
        FileCoverage(source="c.md", chunks=9, share=4, target=4, delivered=4),
    ]
    coverage = Coverage(
        rule="uniform",
        files_covered=3,
        files_ingested=3,
        seed_chunks=6,
        neighbour_chunks=0,
        chunks_stored=19,
        files=rows,
    )
    console = terminal(120)
    _print_coverage(coverage, console)
    text = console.export_text()
    assert "files that fell short of their share (1 of 3 files" in text
    assert "b.md" in text and "a.md" not in text


def test_the_progress_displays_last_frame_is_drawn_once() -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system=None)
    progress = RichProgress(console, auto_refresh=False)  # drawn only when it stops
    final = Snapshot(title="run r1", stages=[("inputs", 30, 30)], goldens=30, target=30)
    progress.start(lambda: final)
    progress.stop()
    assert out.getvalue().count("goldens 30/30") == 1


def test_the_progress_displays_last_frame_ends_its_line_in_a_log() -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, color_system=None)  # not a terminal: a CI log, a file
    progress = RichProgress(console, auto_refresh=False)
    progress.start(lambda: Snapshot(title="run r1", stages=[("inputs", 1, 2)], goldens=1, target=2))
    progress.stop()
    console.print("synth: error: the next line")
    assert "\nsynth: error: the next line\n" in out.getvalue()
    assert out.getvalue().count("goldens 1/2") == 1
