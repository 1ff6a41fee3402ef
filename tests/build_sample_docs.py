"""Build the Word and PDF files of sample_docs/ from the text in sample_docs_source.py.

Run from the repository root after editing the text, and commit the results::

    .venv/bin/python tests/build_sample_docs.py

The output is byte-for-byte reproducible (fixed dates everywhere), so rebuilding unchanged text
leaves git clean. ``expected_docx_text`` and ``expected_pdf_pages`` say what synth's readers must
extract from the files; test_ingest_sample_docs.py holds the committed files to that.
"""

from __future__ import annotations

import datetime as dt
import io
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sample_docs_source import DOCX_FILES, PDF_FILES, Block, pdf_footer  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent / "sample_docs"
FIXED_DATE = dt.datetime(2025, 3, 14, 9, 0, 0, tzinfo=dt.UTC)
CELL_SEPARATOR = " | "  # as synth.ingest.docx writes table rows


def _rows(block: Block) -> list[list[str]]:
    rows = block[1]
    assert isinstance(rows, list)
    return rows


def expected_docx_text(blocks: list[Block]) -> str:
    """The text synth's .docx reader gives: blocks separated by blank lines, rows cell | cell."""
    parts = []
    for kind, content in blocks:
        if kind == "table":
            parts.append("\n".join(CELL_SEPARATOR.join(row) for row in _rows((kind, content))))
        else:
            parts.append(str(content))
    return "\n\n".join(parts)


def expected_pdf_pages(name: str, pages: list[list[Block]]) -> list[str]:
    """The words on each PDF page, in reading order (line breaks depend on layout, words do not)."""
    result = []
    for number, blocks in enumerate(pages, start=1):
        words: list[str] = []
        for kind, content in blocks:
            if kind == "table":
                for row in _rows((kind, content)):
                    words.extend(" ".join(row).split())
            elif kind == "bullet":
                words.extend(("- " + str(content)).split())
            else:
                words.extend(str(content).split())
        words.extend(pdf_footer(name, number, len(pages)).split())
        result.append(" ".join(words))
    return result


def build_docx(path: Path, blocks: list[Block]) -> None:
    import docx

    document = docx.Document()
    properties = document.core_properties
    properties.author = "Veltrana Energy"
    properties.title = str(blocks[0][1])
    properties.created = properties.modified = FIXED_DATE.replace(tzinfo=None)
    properties.last_modified_by = "Veltrana Energy"
    properties.revision = 1
    for kind, content in blocks:
        if kind == "title":
            document.add_heading(str(content), level=0)
        elif kind == "h":
            document.add_heading(str(content), level=1)
        elif kind == "p":
            document.add_paragraph(str(content))
        elif kind == "bullet":
            document.add_paragraph(str(content), style="List Bullet")
        elif kind == "table":
            rows = _rows((kind, content))
            table = document.add_table(rows=len(rows), cols=len(rows[0]))
            table.style = "Table Grid"
            for row, values in zip(table.rows, rows, strict=True):
                for cell, value in zip(row.cells, values, strict=True):
                    cell.text = value
            for cell in table.rows[0].cells:
                for run in cell.paragraphs[0].runs:
                    run.bold = True
        else:
            raise ValueError(f"unknown block kind {kind!r}")
    buffer = io.BytesIO()
    document.save(buffer)
    path.write_bytes(_with_fixed_zip_dates(buffer.getvalue()))


def _with_fixed_zip_dates(data: bytes) -> bytes:
    """The same zip with every entry dated FIXED_DATE, so rebuilding gives identical bytes."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=FIXED_DATE.timetuple()[:6])
            fixed.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(fixed, source.read(info.filename))
    return out.getvalue()


def build_pdf(path: Path, name: str, pages: list[list[Block]]) -> None:
    from fpdf import FPDF
    from fpdf.enums import XPos, YPos

    pdf = FPDF(format="A4")
    pdf.set_creation_date(FIXED_DATE)
    pdf.set_title(str(pages[0][0][1]))
    pdf.set_author("Veltrana Energy")
    pdf.set_margins(20, 20, 20)
    pdf.set_auto_page_break(True, margin=20)
    for number, blocks in enumerate(pages, start=1):
        pdf.add_page()
        for kind, content in blocks:
            if kind == "title":
                pdf.set_font("Helvetica", "B", 18)
                pdf.multi_cell(0, 9, str(content), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
                pdf.ln(4)
            elif kind == "h":
                pdf.set_font("Helvetica", "B", 13)
                pdf.multi_cell(0, 7, str(content), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
                pdf.ln(1)
            elif kind in ("p", "bullet"):
                text = str(content) if kind == "p" else "- " + str(content)
                pdf.set_font("Helvetica", "", 10)
                pdf.multi_cell(0, 5.2, text, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
                pdf.ln(2.5)
            elif kind == "table":
                pdf.set_font("Helvetica", "", 10)
                with pdf.table(line_height=6, first_row_as_headings=True) as table:
                    for values in _rows((kind, content)):
                        row = table.row()
                        for value in values:
                            row.cell(value)
                pdf.ln(3)
            else:
                raise ValueError(f"unknown block kind {kind!r}")
        if pdf.page != number:
            raise ValueError(f"{name}: page {number} overflows onto another page; shorten it")
        pdf.set_auto_page_break(False)  # the footer sits in the bottom margin
        pdf.set_y(-15)
        pdf.set_font("Helvetica", "I", 8)
        pdf.cell(0, 8, pdf_footer(name, number, len(pages)), align="C")
        pdf.set_auto_page_break(True, margin=20)
    pdf.output(str(path))


def main() -> None:
    ROOT.mkdir(exist_ok=True)
    for name, blocks in DOCX_FILES.items():
        build_docx(ROOT / name, blocks)
        print(f"wrote {ROOT / name}")
    for name, pages in PDF_FILES.items():
        build_pdf(ROOT / name, name, pages)
        print(f"wrote {ROOT / name}")


if __name__ == "__main__":
    main()
