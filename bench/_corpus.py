"""A large synthetic corpus for the ingest bench: PDFs of N pages and .docx files of N paragraphs.

The text is deterministic word salad: English words drawn from the repository's ``sample_docs`` text
files (so a word costs about as many tokens as in real prose, and hash-embedder features and chunk
ids vary as in real text), with a seeded long-tailed choice. File ``i`` has the same content
whatever the corpus size, so a smaller corpus is a prefix of a larger one. PDFs are written with
fpdf2 (core Helvetica font, so Latin-1 text) and .docx with python-docx.
"""

from __future__ import annotations

import functools
import math
import os
import random
import re
from dataclasses import dataclass
from pathlib import Path

from _util import REPO

PAGES_PER_PDF = 20
PARAGRAPHS_PER_DOCX = 100
WORDS_PER_PAGE = 320
_WORD = re.compile(r"[A-Za-z][a-z]+")


@functools.cache
def vocabulary() -> tuple[str, ...]:
    """The distinct lower-case words of sample_docs' .md and .txt files, in a fixed shuffled order
    (the order sets which words are frequent)."""
    words: set[str] = set()
    for path in sorted((REPO / "sample_docs").rglob("*")):
        if path.suffix in (".md", ".txt"):
            words.update(w.lower() for w in _WORD.findall(path.read_text(encoding="utf-8")))
    ordered = sorted(words)
    random.Random(7).shuffle(ordered)
    return tuple(ordered)


@dataclass(frozen=True)
class CorpusShape:
    """How many PDF pages and .docx paragraphs, and in how many files."""

    pdf_pages: int
    docx_paragraphs: int

    @property
    def pdf_files(self) -> int:
        return math.ceil(self.pdf_pages / PAGES_PER_PDF)

    @property
    def docx_files(self) -> int:
        return math.ceil(self.docx_paragraphs / PARAGRAPHS_PER_DOCX)

    def pages_in_pdf(self, index: int) -> int:
        return min(PAGES_PER_PDF, self.pdf_pages - index * PAGES_PER_PDF)

    def paragraphs_in_docx(self, index: int) -> int:
        return min(PARAGRAPHS_PER_DOCX, self.docx_paragraphs - index * PARAGRAPHS_PER_DOCX)


class _Writer:
    """Sentences and paragraphs of seeded word salad."""

    def __init__(self, seed: int) -> None:
        self.vocabulary = vocabulary()
        self.rng = random.Random(seed)

    def sentence(self) -> str:
        words = [
            self.vocabulary[int(self.rng.paretovariate(1.0) * 8 - 8) % len(self.vocabulary)]
            if self.rng.random() < 0.4
            else self.rng.choice(self.vocabulary)
            for _ in range(self.rng.randint(6, 18))
        ]
        return " ".join(words).capitalize() + "."

    def paragraph(self, words: int) -> str:
        parts: list[str] = []
        count = 0
        while count < words:
            sentence = self.sentence()
            parts.append(sentence)
            count += len(sentence.split())
        return " ".join(parts)


def build_pdf(path: Path, index: int, pages: int) -> None:
    """A PDF of ``pages`` pages, each a heading and ~WORDS_PER_PAGE words in paragraphs."""
    from fpdf import FPDF
    from fpdf.enums import XPos, YPos

    writer = _Writer(seed=1_000_000 + index)
    pdf = FPDF(format="A4")
    pdf.set_margins(20, 20, 20)
    pdf.set_auto_page_break(True, margin=20)
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.set_font("Helvetica", "B", 13)
        pdf.multi_cell(
            0, 7, f"Report {index} section {number}", new_x=XPos.LMARGIN, new_y=YPos.NEXT
        )
        pdf.set_font("Helvetica", "", 10)
        for _ in range(4):
            pdf.multi_cell(
                0, 5, writer.paragraph(WORDS_PER_PAGE // 4), new_x=XPos.LMARGIN, new_y=YPos.NEXT
            )
            pdf.ln(2)
        if pdf.page != number:
            raise RuntimeError(f"{path.name}: page {number} overflowed; shorten WORDS_PER_PAGE")
    pdf.output(str(path))


def build_docx(path: Path, index: int, paragraphs: int) -> None:
    """A .docx with a title and ``paragraphs`` paragraphs of 40-90 words (the title counts)."""
    import docx

    writer = _Writer(seed=2_000_000 + index)
    document = docx.Document()
    document.add_heading(f"Handbook {index}", level=1)
    for _ in range(paragraphs - 1):
        document.add_paragraph(writer.paragraph(writer.rng.randint(40, 90)))
    document.save(str(path))


def build_corpus(pool: Path, folder: Path, shape: CorpusShape) -> None:
    """Fill ``folder`` with ``pdf/`` and ``docx/`` files of ``shape``, built once into ``pool``.

    Files are hard links to the pool's copies (the same file ``i`` serves every corpus size).
    """
    for kind, count, build, size_of in (
        ("pdf", shape.pdf_files, build_pdf, shape.pages_in_pdf),
        ("docx", shape.docx_files, build_docx, shape.paragraphs_in_docx),
    ):
        (folder / kind).mkdir(parents=True, exist_ok=True)
        (pool / kind).mkdir(parents=True, exist_ok=True)
        for index in range(count):
            size = size_of(index)
            name = f"{kind}_{index:05d}_{size}.{kind}"
            source = pool / kind / name
            if not source.exists():
                build(source, index, size)  # type: ignore[operator]
            target = folder / kind / name
            if not target.exists():
                os.link(source, target)
