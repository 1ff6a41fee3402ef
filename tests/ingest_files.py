"""Real files for the ingest tests: .docx written by python-docx, PDFs written by fpdf2 and pypdf."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE_DOCS = REPO / "sample_docs"
CORPUS = REPO.parent / "shared" / "corpus"


def make_docx(path: Path, blocks: list[tuple[str, object]]) -> Path:
    """A .docx of ("p", text) paragraphs and ("table", rows) tables, in that order."""
    import docx

    document = docx.Document()
    for kind, content in blocks:
        if kind == "p":
            document.add_paragraph(str(content))
        elif kind == "h":
            document.add_heading(str(content), level=1)
        elif kind == "table":
            rows = content
            assert isinstance(rows, list)
            table = document.add_table(rows=len(rows), cols=len(rows[0]))
            for row, values in zip(table.rows, rows, strict=True):
                for cell, value in zip(row.cells, values, strict=True):
                    cell.text = value
        else:
            raise ValueError(kind)
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(str(path))
    return path


def pdf_bytes(pages: list[str]) -> bytes:
    """A PDF with one page per string, written with fpdf2's standard Helvetica font."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    for text in pages:
        pdf.add_page()
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 6, text)
    return bytes(pdf.output())


def make_pdf(path: Path, pages: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pdf_bytes(pages))
    return path


def make_encrypted_pdf(path: Path, pages: list[str], password: str, algorithm: str) -> Path:
    """The PDF of ``pages`` encrypted by pypdf's writer with a user password."""
    import io

    import pypdf

    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(pdf_bytes(pages))))
    writer.encrypt(user_password=password, owner_password=password + "-owner", algorithm=algorithm)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        writer.write(handle)
    return path


def make_image_only_pdf(path: Path, page_count: int = 2) -> Path:
    """A PDF whose pages hold only a picture: no text layer at all (like a scan)."""
    from fpdf import FPDF
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    picture = path.with_suffix(".png")
    Image.new("RGB", (120, 80), (200, 30, 30)).save(picture)
    pdf = FPDF(format="A4")
    for _ in range(page_count):
        pdf.add_page()
        pdf.image(str(picture), x=20, y=20, w=120)
    pdf.output(str(path))
    picture.unlink()
    return path


def make_repairable_pdf(path: Path, text: str) -> Path:
    """A PDF whose cross-reference pointer is wrong: pypdf warns, repairs it, and reads the text."""
    data = pdf_bytes([text])
    match = re.search(rb"startxref\s+(\d+)", data)
    assert match is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data[: match.start(1)] + b"999" + data[match.end(1) :])
    return path
