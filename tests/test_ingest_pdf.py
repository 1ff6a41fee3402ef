"""PDF files: text per page with page starts; encrypted, damaged and scanned files are errors."""

from __future__ import annotations

import logging

import pytest
from ingest_files import (
    CORPUS,
    make_encrypted_pdf,
    make_image_only_pdf,
    make_pdf,
    make_repairable_pdf,
    pdf_bytes,
)

from synth import IngestError, load_documents
from synth.ingest.pdf import PAGE_SEPARATOR, read_pdf

PAGES = [
    "Page one talks about installation.",
    "Page two covers the operating modes.",
    "Page three lists the error codes.",
]
PASSWORD_PDF = CORPUS / "pdf" / "libreoffice-writer-password.pdf"


def test_text_per_page_with_page_starts(tmp_path):
    document = read_pdf(make_pdf(tmp_path / "three.pdf", PAGES))

    assert [page.number for page in document.pages] == [1, 2, 3]
    assert document.text == PAGE_SEPARATOR.join(PAGES)
    starts = [page.start for page in document.pages] + [len(document.text)]
    for index, expected in enumerate(PAGES):
        assert document.text[starts[index] : starts[index + 1]].strip() == expected
    assert document.metadata["page_count"] == 3


@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-128", "AES-256"])
def test_encrypted_pdf_needs_its_password(tmp_path, algorithm):
    path = make_encrypted_pdf(tmp_path / "locked.pdf", PAGES[:2], "s3cret", algorithm)

    with pytest.raises(IngestError, match="encrypted PDF: a password is needed"):
        read_pdf(path)
    with pytest.raises(IngestError, match="encrypted PDF: wrong password"):
        read_pdf(path, password="guess")
    assert read_pdf(path, password="s3cret").text == PAGE_SEPARATOR.join(PAGES[:2])


def test_password_reaches_the_pdf_reader_through_load_documents(tmp_path):
    make_encrypted_pdf(tmp_path / "docs" / "locked.pdf", ["Secret page"], "pw", "AES-256")
    make_pdf(tmp_path / "docs" / "open.pdf", ["Open page"])

    locked = load_documents(tmp_path / "docs")
    opened = load_documents(tmp_path / "docs", password="pw")

    assert [(f.path, f.status) for f in locked.files] == [
        ("docs/locked.pdf", "error"),
        ("docs/open.pdf", "ok"),
    ]
    assert locked.files[0].reason == "encrypted PDF: a password is needed"
    assert [f.status for f in opened.files] == ["ok", "ok"]  # the open one ignores the password
    assert opened.documents[0].text == "Secret page"


@pytest.mark.skipif(not PASSWORD_PDF.exists(), reason="shared corpus not present")
def test_real_world_password_pdf():
    with pytest.raises(IngestError, match="password is needed"):
        read_pdf(PASSWORD_PDF)
    document = read_pdf(PASSWORD_PDF, password="openpassword")
    assert len(document.pages) == 1 and len(document.text) > 100


def test_damaged_pdfs_are_errors(tmp_path):
    truncated = tmp_path / "truncated.pdf"
    truncated.write_bytes(pdf_bytes(PAGES)[:400])
    garbage = tmp_path / "garbage.pdf"
    garbage.write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 8)
    not_pdf = tmp_path / "not.pdf"
    not_pdf.write_text("hello, I am not a PDF")
    for path in (truncated, garbage, not_pdf):
        with pytest.raises(IngestError, match="^damaged PDF: "):
            read_pdf(path)


def test_empty_pdf_file_is_an_error(tmp_path):
    path = tmp_path / "empty.pdf"
    path.write_bytes(b"")
    with pytest.raises(IngestError, match="empty file"):
        read_pdf(path)


def test_image_only_pdf_has_no_text_layer(tmp_path):
    with pytest.raises(IngestError, match=r"no text layer \(2 pages"):
        read_pdf(make_image_only_pdf(tmp_path / "scan.pdf", page_count=2))


def test_pypdf_warnings_are_counted_not_shown(tmp_path, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    path = make_repairable_pdf(tmp_path / "repairable.pdf", "Still readable after repair")

    report = load_documents(path)

    status = report.files[0]
    assert status.status == "ok"
    assert report.documents[0].text == "Still readable after repair"
    assert status.warnings > 0  # pypdf complained while repairing the cross-reference table
    assert not [r for r in caplog.records if r.name.startswith("pypdf")]
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    assert logging.getLogger("pypdf").propagate is True  # restored after the file


def test_pages_without_text_are_noted_on_an_ok_file(tmp_path):
    path = make_pdf(tmp_path / "gappy.pdf", ["First page has text", "", "Third page too"])
    report = load_documents(path)
    status = report.files[0]
    assert status.status == "ok"
    assert status.pages == 3
    assert status.reason == "1 of 3 pages have no text"
