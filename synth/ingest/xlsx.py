"""Read Excel ``.xlsx`` workbooks with openpyxl: one page per sheet, one line per row.

Rows are written as :mod:`synth.ingest._rows` describes (``Sheet: Prices | Row 3 | Product: Widget |
Price: 4.50``), with the row numbers Excel shows. Values are read as last computed by Excel (a
formula's cached result; none for a workbook no spreadsheet program has saved: such formula cells
are counted, ``metadata["formulas_without_values"]``, and noted on the file's line) and written
as displayed where the number format is simple: ``0.00`` keeps two decimals, ``0%`` is a
percentage, dates are ISO dates. Each sheet with a value is a page and a section named by the sheet, that no
chunk crosses; chart sheets and pictures are not read.
"""

from __future__ import annotations

import datetime as dt
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openpyxl import load_workbook
from openpyxl.utils.exceptions import InvalidFileException

from synth.data import Document
from synth.ingest._blocks import Block, units_document
from synth.ingest._rows import row_lines
from synth.ingest._util import damaged, package_failures, zip_package

# openpyxl parses with the standard library's XML parser (SyntaxError) when lxml is missing
_XLSX_FAILURES = package_failures(
    InvalidFileException, SyntaxError, IndexError, AttributeError, TypeError
)
# a number format showing a fixed count of decimals (``0.00``, ``#,##0.0``), maybe as a percentage
_SIMPLE_FORMAT = re.compile(r"[#,0]*0(?:\.(0+))?(%?)")


def read_xlsx(path: Path) -> Document:
    """Every sheet's rows as lines naming their cells, a page and a section per sheet;
    IngestError when the file is not a workbook or no sheet holds a value."""
    path = zip_package(path, "an Excel .xlsx file")
    with damaged(".xlsx", _XLSX_FAILURES):
        workbook = load_workbook(path, read_only=True, data_only=True)
        try:
            sheets = [(sheet.title, list(_sheet_lines(sheet))) for sheet in workbook.worksheets]
        finally:
            workbook.close()
        unsaved = _formulas_without_values(path)
    units = [(n, name, [Block("\n".join(lines))]) for n, (name, lines) in enumerate(sheets, 1)]
    nothing = f"no values in any of its {len(sheets)} sheets"
    if unsaved:
        nothing += f" ({unsaved} {UNSAVED_NOTE})"
    document = units_document(units, "sheet_count", "empty_sheets", nothing)
    if unsaved:
        document.metadata[FORMULAS_WITHOUT_VALUES] = unsaved
    return document


#: the metadata key counting a workbook's formula cells that have no saved result
FORMULAS_WITHOUT_VALUES = "formulas_without_values"
UNSAVED_NOTE = (
    "formula cells have no saved result, so are not read: open and save the workbook in a "
    "spreadsheet program"
)
_CELL = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}c"
_FORMULA = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}f"
_VALUE = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}v"


def _formulas_without_values(path: Path) -> int:
    """How many formula cells of the workbook hold no result: a workbook a program wrote (not a
    spreadsheet program, which computes and saves each result) has only their formulas, and the
    values read are the results."""
    from lxml import etree

    count = 0
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if not (name.startswith("xl/worksheets/") and name.endswith(".xml")):
                continue
            with archive.open(name) as part:
                cells = etree.iterparse(part, tag=_CELL, resolve_entities=False, no_network=True)
                for _, cell in cells:
                    # no result, or an empty one that is not text (a formula's empty text
                    # result is saved as an empty value of type "str")
                    empty = not cell.findtext(_VALUE) and cell.get("t") != "str"
                    if empty and cell.find(_FORMULA) is not None:
                        count += 1
                    cell.clear()
    return count


def _sheet_lines(sheet: Any) -> Iterator[str]:
    # The size a sheet declares is not trusted: one styled cell at XFD1048576 would make openpyxl
    # pad every row to 16,384 cells, a million rows long; a size too small would cut rows off.
    # Unsized, its rows are those the sheet holds, as long as their last cell, from row 1.
    sheet.reset_dimensions()
    rows = (
        (number, [cell_text(cell.value, getattr(cell, "number_format", None)) for cell in row])
        for number, row in enumerate(sheet.iter_rows(), start=1)
    )
    return row_lines(rows, sheet=sheet.title)


def cell_text(value: object, number_format: str | None = None) -> str:
    """A cell's value as a spreadsheet shows it, as far as its number format is simple."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        if value.time() == dt.time():
            return value.date().isoformat()
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, int | float):
        simple = _SIMPLE_FORMAT.fullmatch(number_format or "")
        if simple:
            decimals = len(simple.group(1) or "")
            if simple.group(2):
                return f"{value * 100:.{decimals}f}%"
            return f"{value:.{decimals}f}"
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return f"{value:.15g}" if isinstance(value, float) else str(value)
    return str(value)


__all__ = ["cell_text", "read_xlsx"]
