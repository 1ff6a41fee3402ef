"""Rows of a table (a spreadsheet's sheet, a CSV file) as lines of text that name their cells.

Each row becomes one line that stands on its own, so a passage cut from the middle of a long
table still says what each value is::

    Sheet: Prices | Row 3 | Product: Widget | Price: 4.50

The first non-empty row is the header when every one of its cells is text and another row follows;
its cells name the columns (a column without a name is called by its letter, ``C``), and it is
written once as ``Columns: Product, Price``. Without a header, cells are named by their column
letters. Empty cells are left out of a row's line, and rows without any value are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

FIELD_SEPARATOR = " | "


def column_letter(index: int) -> str:
    """``0 -> "A"``, ``25 -> "Z"``, ``26 -> "AA"``: the column's name in a spreadsheet."""
    letters = ""
    number = index + 1
    while number:
        number, remainder = divmod(number - 1, 26)
        letters = chr(ord("A") + remainder) + letters
    return letters


def row_lines(rows: Iterable[tuple[int, Sequence[str]]], sheet: str | None = None) -> Iterator[str]:
    """One line per row with a value: ``rows`` are (row number, cell texts) in order.

    ``sheet`` (a sheet's name) starts every line, so a line read alone names its sheet.
    """
    prefix = f"Sheet: {sheet}{FIELD_SEPARATOR}" if sheet is not None else ""
    pending: tuple[int, list[str]] | None = None  # the first row, until the next says if it heads
    names: list[str] | None = None
    for number, cells in rows:
        values = [" ".join(cell.split()) for cell in cells]
        if not any(values):
            continue
        if names is None and pending is None:
            pending = (number, values)
            continue
        if pending is not None:
            first_number, first = pending
            pending = None
            if _looks_like_header(first):
                names = [name or column_letter(i) for i, name in enumerate(first)]
                yield f"{prefix}Columns: {', '.join(names)}"
            else:
                names = []
                yield prefix + _line(first_number, first, names)
        assert names is not None
        yield prefix + _line(number, values, names)
    if pending is not None:  # a single row: data, not a header
        yield prefix + _line(pending[0], pending[1], [])


def _looks_like_header(values: list[str]) -> bool:
    """Every value is text (not a number) and no two are the same."""
    filled = [value for value in values if value]
    return all(not _is_number(value) for value in filled) and len(set(filled)) == len(filled)


def _is_number(value: str) -> bool:
    try:
        float(value.replace(",", ""))
    except ValueError:
        return False
    return True


def _line(number: int, values: list[str], names: list[str]) -> str:
    fields = [
        f"{names[i] if i < len(names) else column_letter(i)}: {value}"
        for i, value in enumerate(values)
        if value
    ]
    return FIELD_SEPARATOR.join([f"Row {number}", *fields])


__all__ = ["FIELD_SEPARATOR", "column_letter", "row_lines"]
