"""The formats read through markitdown (the general converter): a Jupyter notebook and an old
Excel workbook, each written by its own library (the standard library's json for the notebook's
JSON, xlwt for the .xls), their headings or sheets as sections, and a one-line error for a broken
file of each, never its bytes read as text."""

from __future__ import annotations

import sys

import pytest
from format_files import make_ipynb, make_xls

from synth import load_documents
from synth.ingest.chunking import chunk_documents

CELLS = [
    ("markdown", "# Pump analysis\n\nReadings of the pump pressure over one winter."),
    ("markdown", "## Loading\n\nThe readings come from the depot's weekly export."),
    ("code", "readings = load('pumps.csv')\nreadings.plot()"),
    ("markdown", "## Findings\n\nPressure fell below forty kilopascals twice in January."),
]


def test_a_notebook_reads_as_its_cells_with_its_markdown_headings_as_sections(tmp_path):
    make_ipynb(tmp_path / "nb" / "pumps.ipynb", CELLS)
    report = load_documents(tmp_path / "nb")
    (document,) = report.documents
    assert "forty kilopascals twice in January" in document.text
    assert "readings = load('pumps.csv')" in document.text  # code cells are kept
    assert [s.path for s in document.sections] == [
        ["Pump analysis"],
        ["Pump analysis", "Loading"],
        ["Pump analysis", "Findings"],
    ]
    assert document.metadata["converter"].startswith("markitdown ")
    chunks = chunk_documents(report.documents, chunk_size=16)
    last = next(c for c in chunks if "twice in January" in c.text)
    assert last.metadata["heading_path"] == ["Pump analysis", "Findings"]


def test_an_xls_workbook_is_a_section_per_sheet_that_no_chunk_crosses(tmp_path):
    make_xls(
        tmp_path / "xls" / "catalogue.xls",
        {
            "Prices": [["Product", "Price"], ["Humidity widget", 49.5], ["Receiver box", 120]],
            "Stock": [["Product", "Units"], ["Humidity widget", 340]],
        },
    )
    report = load_documents(tmp_path / "xls")
    (document,) = report.documents
    assert "| Humidity widget | 49.5 |" in document.text
    assert [(s.path, s.split) for s in document.sections] == [
        (["Prices"], True),
        (["Stock"], True),
    ]
    chunks = chunk_documents(report.documents, chunk_size=200)
    assert [c.metadata["heading_path"] for c in chunks] == [["Prices"], ["Stock"]]


def test_broken_notebooks_workbooks_and_mails_are_error_lines_never_text(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "cut.ipynb").write_text('{"cells": [')
    (folder / "garbage.xls").write_bytes(b"this is not a workbook at all")
    (folder / "garbage.msg").write_bytes(b"this is not a mail at all")
    (folder / "empty.msg").write_bytes(b"")
    make_ipynb(folder / "fine.ipynb", CELLS[:1])
    report = load_documents(folder)
    assert [status.path for status in report.ok] == ["broken/fine.ipynb"]
    reasons = {status.path.split("/")[-1]: status.reason for status in report.errors}
    assert reasons["empty.msg"] == "empty file"
    assert reasons["cut.ipynb"].startswith("damaged Jupyter notebook: ")
    assert reasons["garbage.xls"].startswith("damaged Excel .xls workbook: ")
    assert reasons["garbage.msg"].startswith("damaged Outlook .msg mail: ")
    assert len(reasons) == 4


def test_without_markitdown_such_a_file_says_which_extra_reads_it(tmp_path, monkeypatch):
    make_ipynb(tmp_path / "nb" / "pumps.ipynb", CELLS)
    (tmp_path / "nb" / "notes.txt").write_text("Plain notes are read all the same.")
    monkeypatch.setitem(sys.modules, "markitdown", None)  # as if it were not installed
    report = load_documents(tmp_path / "nb")
    assert [status.path for status in report.ok] == ["nb/notes.txt"]
    assert report.errors == []
    (skipped,) = report.skipped
    assert (
        skipped.reason
        == "reading a Jupyter notebook needs markitdown: pip install 'synth[convert]'"
    )


@pytest.mark.parametrize("suffix", [".ipynb", ".xls", ".msg"])
def test_each_converted_suffix_is_read_by_default(suffix):
    from synth.ingest.registry import read_converted, registered_loaders

    assert registered_loaders()[suffix] is read_converted
