"""The readers of HTML, slides, spreadsheets, CSV and e-books: what each reads, the sections it
records, and a one-line error (never a crash) for each kind of broken file."""

from __future__ import annotations

import csv
import re
import threading
import zipfile
from pathlib import Path

import pytest
from format_files import FOOTER_TEXT, NAV_WORDS, make_epub, make_html, make_pptx, make_xlsx

from synth import load_documents
from synth.ingest.delimited import read_csv
from synth.ingest.epub import read_epub
from synth.ingest.html import read_html
from synth.ingest.pptx import read_pptx
from synth.ingest.xlsx import cell_text, read_xlsx


def _paths(document):
    return [
        (s.path, s.split, document.text[s.start :].split("\n", 1)[0]) for s in document.sections
    ]


def test_a_web_page_reads_as_its_article_with_headings_and_no_navigation_or_footer(tmp_path):
    page = make_html(
        tmp_path / "guide.html",
        "Widget Guide",
        [
            (2, "Installation", ["Mount the widget one metre above the soil."]),
            (3, "Linux", ["Install the widgetd daemon and join the dialout group."]),
            (2, "Care", ["Clean the membrane every three months with distilled water."]),
        ],
    )
    document = read_html(page)
    for word in NAV_WORDS:
        assert word not in document.text
    assert "Copyright" not in document.text and "tracking" not in document.text
    assert document.text.startswith("Widget Guide\n\nInstallation\n\nMount the widget")
    assert _paths(document) == [
        (["Widget Guide"], False, "Widget Guide"),
        (["Widget Guide", "Installation"], False, "Installation"),
        (["Widget Guide", "Installation", "Linux"], False, "Linux"),
        (["Widget Guide", "Care"], False, "Care"),
    ]


def test_lists_and_tables_of_a_page_keep_their_items_and_cells(tmp_path):
    path = tmp_path / "specs.html"
    path.write_text(
        "<html><body><main><article><h1>Specs</h1>"
        "<p>The widget comes in two models, each sold with a mounting kit and cable.</p>"
        "<ul><li>Battery lasts two years</li><li>Radio range <b>50 m</b></li></ul>"
        "<table><tr><th>Model</th><th>Range</th></tr><tr><td>W-1</td><td>50 m</td></tr></table>"
        "</article></main></body></html>"
    )
    text = read_html(path).text
    assert "- Battery lasts two years\n- Radio range 50 m" in text
    assert "Model | Range\nW-1 | 50 m" in text


def test_a_page_without_main_or_article_keeps_its_headings_and_lists(tmp_path):
    path = tmp_path / "returns.html"  # as pandoc writes a page: its content straight in body
    path.write_text(
        "<html><head><title>Returns</title></head><body>"
        f"<nav><a href='/'>{NAV_WORDS[0]}</a> <a href='/a'>{NAV_WORDS[1]}</a></nav>"
        "<h1>Returns</h1><p>You can return any item within 30 days of delivery for a refund.</p>"
        "<h2>Exceptions</h2><ul><li>Gift cards</li><li>Opened software</li></ul>"
        "<p>Items must be unused and in their original packaging to be accepted.</p>"
        f"<footer><p>{FOOTER_TEXT}</p></footer></body></html>"
    )
    document = read_html(path)
    assert document.text == (
        "Returns\n\nYou can return any item within 30 days of delivery for a refund.\n\n"
        "Exceptions\n\n- Gift cards\n- Opened software\n\n"
        "Items must be unused and in their original packaging to be accepted."
    )
    assert [s.path for s in document.sections] == [["Returns"], ["Returns", "Exceptions"]]


def test_a_page_that_is_only_a_table_keeps_a_line_per_row(tmp_path):
    path = tmp_path / "cities.html"  # trafilatura hands its rows back without their table
    path.write_text(
        "<html><body><table><tr><th>City</th><th>Population</th></tr>"
        "<tr><td>Paris</td><td>2.1M</td></tr><tr><td>Rome</td><td>2.8M</td></tr></table>"
        "</body></html>"
    )
    assert read_html(path).text == "City | Population\nParis | 2.1M\nRome | 2.8M"


def test_a_deck_is_a_page_and_a_section_per_slide_with_its_notes(tmp_path):
    deck = make_pptx(
        tmp_path / "q3.pptx",
        [
            ("Quarterly results", ["Revenue grew 12 percent.", "Costs fell."], "Mention Lyon."),
            ("", ["A slide without a title about logistics."], ""),
            ("Hiring", ["Three engineers in spring."], ""),
        ],
    )
    document = read_pptx(deck)
    assert document.text == (
        "Quarterly results\n\nRevenue grew 12 percent.\nCosts fell.\n\nSpeaker notes:\nMention Lyon."
        "\n\nA slide without a title about logistics."
        "\n\nHiring\n\nThree engineers in spring."
    )
    assert [(p.number, document.text[p.start :][:6]) for p in document.pages] == [
        (1, "Quarte"),
        (2, "A slid"),
        (3, "Hiring"),
    ]
    assert [(s.path, s.split) for s in document.sections] == [
        (["Quarterly results"], True),
        (["Slide 2"], True),
        (["Hiring"], True),
    ]


def test_a_workbook_is_a_page_per_sheet_and_a_line_per_row_naming_its_cells(tmp_path):
    book = make_xlsx(
        tmp_path / "shop.xlsx",
        {
            "Prices": [["Product", "Price"], ["Widget", 4.5], ["Gadget", 12.0]],
            "Empty": [],
            "Stock": [["Product", "Units", None], ["Widget", 140, "Lyon"]],
        },
    )
    document = read_xlsx(book)
    assert document.text == (
        "Sheet: Prices | Columns: Product, Price\n"
        "Sheet: Prices | Row 2 | Product: Widget | Price: 4.50\n"
        "Sheet: Prices | Row 3 | Product: Gadget | Price: 12.00\n\n"
        "Sheet: Stock | Columns: Product, Units\n"
        "Sheet: Stock | Row 2 | Product: Widget | Units: 140 | C: Lyon"
    )
    assert [(s.path, s.split) for s in document.sections] == [(["Prices"], True), (["Stock"], True)]
    assert [p.number for p in document.pages] == [1, 3]
    assert document.metadata == {"sheet_count": 3, "empty_sheets": 1}


def test_a_sheet_without_a_header_row_names_cells_by_column_letter(tmp_path):
    book = make_xlsx(tmp_path / "raw.xlsx", {"Data": [[1, 2.25], [3, None]]})
    assert read_xlsx(book).text == (
        "Sheet: Data | Row 1 | A: 1 | B: 2.25\nSheet: Data | Row 2 | A: 3"
    )


def test_a_sheet_starting_below_row_1_keeps_the_row_numbers_excel_shows(tmp_path):
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet["B3"], sheet["C3"], sheet["B4"], sheet["C4"] = "Item", "Qty", "Bolt", 7
    workbook.save(tmp_path / "offset.xlsx")  # its declared size: B3:C4
    assert read_xlsx(tmp_path / "offset.xlsx").text == (
        "Sheet: Sheet | Columns: A, Item, Qty\nSheet: Sheet | Row 4 | Item: Bolt | Qty: 7"
    )


def _declared_size(path: Path, size: str) -> Path:
    """The workbook at ``path`` rewritten so its first sheet declares ``size`` (``A1:B2``)."""
    sheet = "xl/worksheets/sheet1.xml"
    with zipfile.ZipFile(path) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    parts[sheet] = re.sub(rb'<dimension ref="[^"]*"/>', f'<dimension ref="{size}"/>'.encode(),
                          parts[sheet])  # fmt: skip
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return path


def test_a_sheet_declaring_too_small_a_size_is_read_to_its_last_row(tmp_path):
    book = make_xlsx(tmp_path / "small.xlsx", {"Data": [["Name", "City"], ["Ada", "Lyon"]]})
    text = read_xlsx(_declared_size(book, "A1:A1")).text
    assert text.endswith("Sheet: Data | Row 2 | Name: Ada | City: Lyon")


def test_a_sheet_with_a_styled_empty_cell_at_its_far_corner_is_read_in_moments(tmp_path):
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Data"
    sheet["A1"], sheet["A2"] = "Name", "Ada"
    sheet["XFD1048576"].font = openpyxl.styles.Font(bold=True)  # no value; declared A1:XFD1048576
    workbook.save(book := tmp_path / "huge.xlsx")
    read: list[str] = []
    # a daemon thread, so a reader that pads 16,384 cells to each of a million rows fails the
    # test rather than hanging it
    worker = threading.Thread(target=lambda: read.append(read_xlsx(book).text), daemon=True)
    worker.start()
    worker.join(60)
    assert read == ["Sheet: Data | Columns: Name\nSheet: Data | Row 2 | Name: Ada"]


def test_formulas_without_a_saved_result_are_noted_not_dropped_silently(tmp_path):
    import openpyxl

    workbook = openpyxl.Workbook()  # written by a program: formulas, and no result saved
    sheet = workbook.active
    sheet.append(["Item", "Price", "Total"])
    sheet.append(["Bolt", 2, "=B2*10"])
    (tmp_path / "docs").mkdir()
    workbook.save(tmp_path / "docs" / "costs.xlsx")
    only = openpyxl.Workbook()
    only.active["A1"] = "=1+1"
    only.save(tmp_path / "docs" / "formulas.xlsx")
    report = load_documents(tmp_path / "docs")
    reasons = {
        status.path.split("/")[-1]: (status.status, status.reason) for status in report.files
    }
    assert reasons == {
        "costs.xlsx": ("ok", "1 formula cells have no saved result, so are not read"),
        "formulas.xlsx": (
            "error",
            "no values in any of its 1 sheets (1 formula cells have no saved result, so are not "
            "read: open and save the workbook in a spreadsheet program)",
        ),
    }
    assert report.documents[0].metadata["formulas_without_values"] == 1


@pytest.mark.parametrize(
    ("value", "number_format", "shown"),
    [(0.125, "0.0%", "12.5%"), (3.0, "General", "3"), (True, "General", "TRUE"), (None, "0", "")],
)
def test_cell_values_read_as_the_sheet_shows_them(value, number_format, shown):
    assert cell_text(value, number_format) == shown


def test_a_csv_reads_as_rows_naming_their_cells_whatever_its_delimiter(tmp_path):
    path = tmp_path / "prices.csv"
    path.write_text('Product;Price\nWidget;4.50\n"Gadget; large";12\n', encoding="utf-8")
    document = read_csv(path)
    assert document.text == (
        "Columns: Product, Price\nRow 2 | Product: Widget | Price: 4.50\n"
        "Row 3 | Product: Gadget; large | Price: 12"
    )
    assert document.sections == [] and document.metadata["delimiter"] == ";"


def test_a_csv_cell_longer_than_the_csv_modules_field_limit_is_read(tmp_path):
    path = tmp_path / "articles.csv"
    body = "word " * 40_000  # 200 KB in one cell: more than csv's default limit of 128 KiB
    path.write_text(f'id,body\n1,"{body}"\n2,short\n', encoding="utf-8")
    before = csv.field_size_limit(128 * 1024)  # the default, whatever an earlier test raised it to
    try:
        text = read_csv(path).text
    finally:
        csv.field_size_limit(before)
    assert f"Row 2 | id: 1 | body: {body.strip()}\n" in text and text.endswith("body: short")


def test_a_book_is_a_section_per_chapter_named_by_its_table_of_contents(tmp_path):
    book = make_epub(
        tmp_path / "tides.epub",
        [
            (
                "The Harbour",
                "The Harbour",
                [("", ["The ferry left at dawn."]), ("Night", ["The keeper wrote."])],
            ),
            ("Storm", "", [("", ["Waves broke the pier."])]),
            ("Home", "Coming home", [("", ["They came home in May."])]),
        ],
    )
    document = read_epub(book)
    assert "Tides" not in document.text  # the navigation document is not a chapter
    assert [page.number for page in document.pages] == [1, 2, 3]
    assert _paths(document) == [
        (["The Harbour"], True, "The Harbour"),
        (["The Harbour", "Night"], False, "Night"),
        (["Storm"], True, "Waves broke the pier."),
        (["Home"], True, "Coming home"),
        (["Home", "Coming home"], False, "Coming home"),
    ]


def test_a_chapter_in_latin_1_reads_with_its_accents(tmp_path):
    book = make_epub(tmp_path / "old.epub", [("Menu", "", [("", ["placeholder"])])])
    chapter = (
        '<?xml version="1.0" encoding="iso-8859-1"?>'
        '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Menu</title></head><body>'
        "<p>Crème brûlée, café au lait and a naïve façade.</p></body></html>"
    ).encode("latin-1")
    with zipfile.ZipFile(book) as archive:
        parts = {info: archive.read(info) for info in archive.infolist()}
    with zipfile.ZipFile(book, "w") as archive:
        for info, data in parts.items():
            archive.writestr(info, chapter if info.filename.endswith("chapter1.xhtml") else data)
    assert read_epub(book).text == "Crème brûlée, café au lait and a naïve façade."


def _zip_with(path: Path, name: str, data: bytes) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(name, data)
    return path


def test_broken_files_of_every_new_format_are_reported_with_their_reason(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "empty.html").write_text("")
    (folder / "chrome.html").write_text(
        "<html><head><title>T</title><script>var a = 1;</script></head><body><div></div></body>"
    )
    (folder / "binary.htm").write_bytes(b"\x00\x01\x02\x03" * 100)
    (folder / "not-a-zip.pptx").write_bytes(b"this is not a deck")
    _zip_with(folder / "hollow.pptx", "ppt/presentation.xml", b"<p:presentation")
    _zip_with(folder / "hollow.xlsx", "xl/workbook.xml", b"<not xml")
    (folder / "cut.xlsx").write_bytes(
        make_xlsx(tmp_path / "ok.xlsx", {"A": [["x"]]}).read_bytes()[:300]
    )
    _zip_with(folder / "hollow.epub", "mimetype", b"application/epub+zip")
    (folder / "quote.csv").write_text('a,b\n"open quote,1\n')
    (folder / "blank.csv").write_text("\n,,\n")
    (folder / "fine.csv").write_text("Product,Price\nWidget,4.50\n")
    report = load_documents(folder)
    reasons = {status.path.split("/")[-1]: status.reason for status in report.errors}
    assert [status.path for status in report.ok] == ["broken/fine.csv"]
    assert reasons == {
        "binary.htm": "not an HTML file: binary content (decoded as utf-8)",
        "blank.csv": "no values in any row",
        "chrome.html": "no main content (an empty page, or navigation and boilerplate only)",
        "cut.xlsx": "not an Excel .xlsx file (not a zip package)",
        "empty.html": "empty file",
        "hollow.epub": reasons["hollow.epub"],
        "hollow.pptx": reasons["hollow.pptx"],
        "hollow.xlsx": reasons["hollow.xlsx"],
        "not-a-zip.pptx": "not a PowerPoint .pptx file (not a zip package)",
        "quote.csv": "malformed CSV at line 2: unexpected end of data",
    }
    assert reasons["hollow.epub"].startswith("damaged EPUB: ")
    assert reasons["hollow.pptx"].startswith("damaged .pptx: ")
    assert reasons["hollow.xlsx"].startswith("damaged .xlsx: ")


def test_every_new_format_is_read_from_a_folder_with_its_sections(tmp_path):
    make_html(tmp_path / "docs" / "page.htm", "Page", [(2, "Part", ["A paragraph of the page."])])
    make_pptx(tmp_path / "docs" / "deck.pptx", [("Slide title", ["A line."], "")])
    make_xlsx(tmp_path / "docs" / "book.xlsx", {"Sheet1": [["Name"], ["Ada"]]})
    make_epub(tmp_path / "docs" / "book.epub", [("One", "One", [("", ["Text."])])])
    report = load_documents(tmp_path / "docs")
    assert report.counts() == {"ok": 4, "error": 0, "skipped": 0}
    first_paths = {d.path.split("/")[-1]: d.sections[0].path for d in report.documents}
    assert first_paths == {
        "page.htm": ["Page"],
        "deck.pptx": ["Slide title"],
        "book.xlsx": ["Sheet1"],
        "book.epub": ["One"],
    }
    assert FOOTER_TEXT not in "".join(d.text for d in report.documents)


def test_slides_sheets_and_chapters_left_out_without_text_are_noted_on_their_file(tmp_path):
    make_pptx(tmp_path / "docs" / "deck.pptx", [("Plan", ["A line."], ""), ("", [], "")])
    make_xlsx(tmp_path / "docs" / "book.xlsx", {"Names": [["Name"], ["Ada"]], "Blank": []})
    report = load_documents(tmp_path / "docs")
    reasons = {
        status.path.split("/")[-1]: (status.status, status.reason) for status in report.files
    }
    assert reasons == {
        "book.xlsx": ("ok", "1 of 2 sheets have no text"),
        "deck.pptx": ("ok", "1 of 2 slides have no text"),
    }
