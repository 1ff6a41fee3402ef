"""The coverage table a generate run prints: files named relative to the working folder, web
pages by their whole URL."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from synth.cli._generate_view import render_coverage
from synth.contexts.coverage import Coverage, FileCoverage


def _shown(coverage: Coverage) -> str:
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(render_coverage(coverage))
    return out.getvalue()


def test_pages_are_named_by_their_whole_url_and_files_relative_to_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    page = "http://127.0.0.1:8080/docs/page10"
    local = os.path.join(str(tmp_path), "kb", "guide.md")
    coverage = Coverage(
        rule="proportional",
        files_covered=2,
        files_ingested=2,
        seed_chunks=2,
        neighbour_chunks=0,
        chunks_stored=2,
        files=[
            FileCoverage(source=page, chunks=1, share=1, target=1),
            FileCoverage(source=local, chunks=1, share=1, target=1),
        ],
    )
    shown = _shown(coverage)
    assert page in shown
    assert os.path.join("kb", "guide.md") in shown and str(tmp_path) not in shown
