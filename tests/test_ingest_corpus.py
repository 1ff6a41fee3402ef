"""The real-world files in ../shared/corpus: every file gets a status, nothing raises or spams."""

from __future__ import annotations

import logging

import pytest
from ingest_files import CORPUS

from synth import chunk_documents, load_documents

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")

# What each odd file must give; every other file must load.
EXPECTED_ERRORS = {
    "corpus/pdf/libreoffice-writer-password.pdf": "encrypted PDF: a password is needed",
    # pypdf cannot repair its page tree even when reading non-strictly: an error, not a crash
    "corpus/pdf/unreadablemetadata.pdf": "damaged PDF: Invalid object in /Pages",
    "corpus/docx/having-images.docx": "no text (0 empty tables, 5 images)",
    "corpus/docx/tbl-having-tables.docx": "no text (3 empty tables, 0 images)",
}


@pytest.mark.slow
def test_every_file_gets_a_status_and_nothing_is_printed(caplog, capsys):
    caplog.set_level(logging.DEBUG)
    on_disk = sorted(p for p in CORPUS.rglob("*") if p.is_file())

    report = load_documents(CORPUS)

    assert len(report.files) == len(on_disk)
    errors = {f.path: f.reason for f in report.errors}
    assert errors == EXPECTED_ERRORS
    assert report.skipped == []
    assert all(f.status == "ok" and f.chars > 0 for f in report.files if f.path not in errors)
    thesis = next(f for f in report.files if f.path.endswith("GeoTopo-komprimiert.pdf"))
    assert thesis.pages and thesis.pages > 100
    images = next(f for f in report.files if f.path.endswith("imagemagick-images.pdf"))
    assert images.reason == "2 of 6 pages have no text"
    assert not [r for r in caplog.records if r.name.startswith("pypdf")]
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""

    chunks = chunk_documents(report.documents)
    assert {c.source for c in chunks} == {d.path for d in report.documents}
    assert all(c.token_count <= 1024 for c in chunks)
    pdf_chunks = [c for c in chunks if c.source.endswith(".pdf")]
    assert all(c.page_start is not None and c.page_end is not None for c in pdf_chunks)


def test_the_password_pdf_opens_with_its_password():
    report = load_documents(
        CORPUS / "pdf" / "libreoffice-writer-password.pdf", password="openpassword"
    )
    assert [f.status for f in report.files] == ["ok"]
    assert report.documents[0].pages[0].number == 1
