"""sample_docs/: the committed Word and PDF files still say what their source text says."""

from __future__ import annotations

import pytest
from build_sample_docs import expected_docx_text, expected_pdf_pages
from ingest_files import SAMPLE_DOCS
from sample_docs_source import DOCX_FILES, PDF_FILES

from synth import chunk_documents, load_documents
from synth.ingest.docx import read_docx
from synth.ingest.pdf import read_pdf


@pytest.mark.parametrize("name", sorted(DOCX_FILES))
def test_committed_docx_matches_its_source(name):
    document = read_docx(SAMPLE_DOCS / name)
    assert document.text == expected_docx_text(DOCX_FILES[name]), (
        f"{name} is out of date: run tests/build_sample_docs.py"
    )
    assert document.metadata["tables"] >= 1


@pytest.mark.parametrize("name", sorted(PDF_FILES))
def test_committed_pdf_matches_its_source_page_by_page(name):
    document = read_pdf(SAMPLE_DOCS / name)
    expected = expected_pdf_pages(name, PDF_FILES[name])
    starts = [page.start for page in document.pages] + [len(document.text)]
    got = [" ".join(document.text[a:b].split()) for a, b in zip(starts, starts[1:], strict=False)]
    assert got == expected, f"{name} is out of date: run tests/build_sample_docs.py"
    assert len(document.pages) >= 3


def test_sample_docs_load_cleanly_and_make_a_useful_number_of_chunks():
    report = load_documents(SAMPLE_DOCS)

    assert report.errors == [] and report.skipped == []
    suffixes = [f.suffix for f in report.files]
    assert suffixes.count(".docx") >= 2 and suffixes.count(".pdf") >= 2
    assert suffixes.count(".txt") >= 2 and suffixes.count(".md") >= 2
    assert any("/" in f.path.removeprefix("sample_docs/") for f in report.files)  # a subfolder

    chunks = chunk_documents(report.documents)
    assert 15 <= len(chunks) <= 30
    assert {c.source for c in chunks} == {d.path for d in report.documents}
    ids = [c.id for c in chunks]
    assert len(set(ids)) == len(ids)
    assert ids == [c.id for c in chunk_documents(load_documents(SAMPLE_DOCS).documents)]
