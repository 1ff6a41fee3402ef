"""Real files of the formats beyond text, Word and PDF, each written by its own library: an HTML
page with navigation and a footer, a PowerPoint deck with notes, an Excel workbook, an EPUB, and
the formats read through markitdown: a Jupyter notebook, an old Excel .xls workbook.

Each builder takes the content and returns the path, so a test knows what every part must read as.
"""

from __future__ import annotations

import html
from pathlib import Path

#: what a page's navigation and footer say: never to be read as content
NAV_WORDS = ("Home", "Products", "Pricing", "Careers", "Sign in")
FOOTER_TEXT = "Copyright 2026 Greenhouse Instruments Ltd. All rights reserved. Imprint. Privacy."


def make_html(path: Path, title: str, sections: list[tuple[int, str, list[str]]]) -> Path:
    """A web page: a header with a navigation menu, an article of (level, heading, paragraphs),
    a sidebar of links and a footer."""
    menu = "".join(f'<li><a href="/{w.lower()}">{html.escape(w)}</a></li>' for w in NAV_WORDS)
    body = [f"<h1>{html.escape(title)}</h1>"]
    for level, heading, paragraphs in sections:
        body.append(f"<h{level}>{html.escape(heading)}</h{level}>")
        body.extend(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    page = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)} | Greenhouse Instruments</title>"
        "<style>body { font-family: sans-serif }</style><script>var tracking = 1;</script></head>"
        f"<body><header><nav class='menu'><ul>{menu}</ul></nav></header>"
        f"<main><article>{''.join(body)}</article></main>"
        "<aside class='sidebar'><ul><li><a href='/a'>Related: Careers</a></li></ul></aside>"
        f"<footer><p>{html.escape(FOOTER_TEXT)}</p></footer></body></html>"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path


def make_pptx(path: Path, slides: list[tuple[str, list[str], str]]) -> Path:
    """A deck of (title, body lines, speaker notes) slides; an empty title makes a slide without
    a title placeholder (a text box only)."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    for title, lines, notes in slides:
        if title:
            slide = deck.slides.add_slide(deck.slide_layouts[1])  # title and content
            slide.shapes.title.text = title
            slide.placeholders[1].text_frame.text = "\n".join(lines)
        else:
            slide = deck.slides.add_slide(deck.slide_layouts[6])  # blank
            box = slide.shapes.add_textbox(Inches(1), Inches(1), Inches(6), Inches(2))
            box.text_frame.text = "\n".join(lines)
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    path.parent.mkdir(parents=True, exist_ok=True)
    deck.save(str(path))
    return path


def make_xlsx(path: Path, sheets: dict[str, list[list[object]]]) -> Path:
    """A workbook of named sheets, each a list of rows (the first its header); a float in a
    column named "Price" is shown with two decimals."""
    import openpyxl

    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(row)
        header = [str(v) for v in rows[0]] if rows else []
        if "Price" in header:
            column = header.index("Price") + 1
            for cells in sheet.iter_rows(min_row=2, min_col=column, max_col=column):
                cells[0].number_format = "0.00"
    path.parent.mkdir(parents=True, exist_ok=True)
    workbook.save(path)
    return path


def make_epub(path: Path, chapters: list[tuple[str, str, list[tuple[str, list[str]]]]]) -> Path:
    """A book of (title, heading shown, [(subheading or "", paragraphs)]) chapters; the table
    of contents names each chapter by its title."""
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("synth-test-book")
    book.set_title("Tides")
    book.set_language("en")
    items = []
    for number, (title, shown, parts) in enumerate(chapters, start=1):
        body = [f"<h1>{html.escape(shown)}</h1>"] if shown else []
        for subheading, paragraphs in parts:
            if subheading:
                body.append(f"<h2>{html.escape(subheading)}</h2>")
            body.extend(f"<p>{html.escape(p)}</p>" for p in paragraphs)
        chapter = epub.EpubHtml(title=title, file_name=f"chapter{number}.xhtml", lang="en")
        chapter.content = f"<html><body><section>{''.join(body)}</section></body></html>"
        book.add_item(chapter)
        items.append(chapter)
    book.toc = items
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *items]
    path.parent.mkdir(parents=True, exist_ok=True)
    epub.write_epub(str(path), book)
    return path


def make_ipynb(path: Path, cells: list[tuple[str, str]]) -> Path:
    """A Jupyter notebook (nbformat 4, JSON) of (cell type, source) cells, "markdown" or "code"."""
    import json

    notebook = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "cells": [
            {"cell_type": kind, "id": f"c{n}", "metadata": {}, "source": source.splitlines(True)}
            | ({"outputs": [], "execution_count": None} if kind == "code" else {})
            for n, (kind, source) in enumerate(cells)
        ],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


def make_xls(path: Path, sheets: dict[str, list[list[object]]]) -> Path:
    """An old Excel (BIFF) workbook of named sheets, each a list of rows, written by xlwt."""
    import xlwt

    workbook = xlwt.Workbook()
    for name, rows in sheets.items():
        sheet = workbook.add_sheet(name)
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                sheet.write(r, c, value)
    path.parent.mkdir(parents=True, exist_ok=True)
    workbook.save(str(path))
    return path
