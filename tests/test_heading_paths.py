"""Where each chunk sits: the heading path every reader records, which chunks carry through the
store into contexts, and the units (slides, sheets, chapters) no chunk crosses."""

from __future__ import annotations

from pathlib import Path

import docx
from format_files import make_pptx

from synth import ChunkStore, load_documents
from synth.contexts.context import make_context
from synth.data import Document, Section
from synth.ingest import chunk_documents
from synth.ingest.docx import read_docx
from synth.ingest.markdown import markdown_sections, read_markdown
from synth.ingest.pdf import read_pdf
from synth.ingest.text import read_text

GUIDE = """---
title: front matter is not a heading
---
Widgets measure humidity.

# Guide

The guide covers setup and care.

## Installation

Mount it high.

```sh
# a comment in code, not a heading
```

### Linux ###

Install widgetd.

Care
----

Clean it monthly.

- a list item
---

# Appendix [links](https://example.com) and `code`
"""


def _heads(text: str, sections: list[Section]) -> list[tuple[list[str], str]]:
    return [(s.path, text[s.start :].split("\n", 1)[0]) for s in sections]


def test_markdown_headings_give_paths_and_code_and_front_matter_are_not_headings():
    assert _heads(GUIDE, markdown_sections(GUIDE)) == [
        (["Guide"], "# Guide"),
        (["Guide", "Installation"], "## Installation"),
        (["Guide", "Installation", "Linux"], "### Linux ###"),
        (["Guide", "Care"], "Care"),
        (["Appendix links and code"], "# Appendix [links](https://example.com) and `code`"),
    ]


def test_markdown_chunks_carry_their_heading_path_and_keep_the_ids_of_plain_text(tmp_path):
    path = tmp_path / "guide.md"
    path.write_text(GUIDE)
    structured = read_markdown(path).model_copy(update={"id": "d", "path": "guide.md"})
    plain = read_text(path).model_copy(update={"id": "d", "path": "guide.md"})
    chunks = chunk_documents([structured], chunk_size=12)
    before = chunk_documents([plain], chunk_size=12)
    assert [(c.id, c.text) for c in chunks] == [(c.id, c.text) for c in before]

    def path_of(passage: str) -> list[str] | None:
        (chunk,) = [c for c in chunks if passage in c.text]
        return chunk.metadata.get("heading_path")

    assert path_of("Widgets measure humidity.") is None  # before the first heading
    assert path_of("Mount it high.") == ["Guide", "Installation"]
    assert path_of("Install widgetd.") == ["Guide", "Installation", "Linux"]
    assert path_of("Clean it monthly.") == ["Guide", "Care"]


def test_word_heading_styles_give_paths(tmp_path):
    word = docx.Document()
    word.add_heading("Manual", 0)
    word.add_heading("Installation", 1)
    word.add_paragraph("Mount it high.")
    word.add_heading("Linux", 2)
    word.add_paragraph("Install widgetd.")
    word.add_heading("Care", 1)
    word.add_paragraph("Clean it monthly.", style="List Bullet")
    word.save(str(tmp_path / "manual.docx"))
    document = read_docx(tmp_path / "manual.docx")
    assert _heads(document.text, document.sections) == [
        (["Manual"], "Manual"),
        (["Manual", "Installation"], "Installation"),
        (["Manual", "Installation", "Linux"], "Linux"),
        (["Manual", "Care"], "Care"),
    ]


def test_pdf_bookmarks_give_paths_where_their_titles_stand(tmp_path):
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)

    def line(text: str) -> None:
        pdf.multi_cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")

    pdf.add_page()
    pdf.start_section("Introduction", level=0)
    line("Introduction")
    line("The pump is blue.")
    pdf.start_section("Setup", level=1)
    line("Setup")
    line("Fill the tank first.")
    pdf.add_page()
    pdf.start_section("Care", level=0)
    line("Care")
    line("Clean it monthly.")
    pdf.output(str(tmp_path / "pump.pdf"))
    document = read_pdf(tmp_path / "pump.pdf")
    assert _heads(document.text, document.sections) == [
        (["Introduction"], "Introduction"),
        (["Introduction", "Setup"], "Setup"),
        (["Care"], "Care"),
    ]


def test_no_chunk_crosses_a_slide_and_each_carries_its_slide_title(tmp_path):
    make_pptx(
        tmp_path / "deck" / "deck.pptx",
        [(f"Topic {n}", [f"Fact number {n} about the pumps."], "") for n in range(1, 6)],
    )
    report = load_documents(tmp_path / "deck")
    chunks = chunk_documents(report.documents, chunk_size=200)
    assert [c.metadata["heading_path"] for c in chunks] == [[f"Topic {n}"] for n in range(1, 6)]
    assert all(c.page_start == c.page_end == c.index + 1 for c in chunks)
    assert all(c.text.count("Topic") == 1 for c in chunks)


def test_a_soft_section_does_not_cut_chunks_and_a_split_one_does():
    text = "\n\n".join(f"Paragraph {n} says something about pumps." for n in range(8))
    document = Document(id="d", path="p.txt", text=text)
    at = text.index("Paragraph 5")

    def chunked(split: bool) -> list[str]:
        section = Section(start=at, path=["Half"], split=split)
        made = chunk_documents([document.model_copy(update={"sections": [section]})], chunk_size=40)
        return [c.text for c in made]

    assert chunked(split=False) == [c.text for c in chunk_documents([document], chunk_size=40)]
    assert any("Paragraph 4" in t and "Paragraph 5" in t for t in chunked(split=False))
    assert not any("Paragraph 4" in t and "Paragraph 5" in t for t in chunked(split=True))


def test_heading_paths_survive_the_store_and_reach_the_context(tmp_path: Path):
    path = tmp_path / "guide.md"
    path.write_text(GUIDE)
    document = read_markdown(path).model_copy(update={"id": "doc", "path": "guide.md"})
    chunks = chunk_documents([document], chunk_size=12)
    store = ChunkStore("hash", path=tmp_path / "chroma")
    try:
        store.add(chunks)
        stored = store.get([c.id for c in chunks])
    finally:
        store.close()
    assert [c.metadata.get("heading_path") for c in stored] == [
        c.metadata.get("heading_path") for c in chunks
    ]
    context = make_context(stored[:3])
    assert context.metadata["heading_paths"] == [
        c.metadata.get("heading_path") or [] for c in stored[:3]
    ]
    assert "heading_paths" not in make_context([stored[0]]).metadata  # before any heading
