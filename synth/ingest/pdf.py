"""Read PDF files with pypdf: the text of each page, with where each page starts.

The outline (bookmarks), when the PDF has one, gives ``Document.sections``: each bookmark starts a
section where its title is found on its page, with the path of bookmarks above it.

pypdf reports every robustness fix it applies (broken fonts, bad cross-references) through the
``pypdf`` logger and sometimes ``warnings``; a real-world PDF can produce hundreds of such lines. They
are counted per file (``Document.metadata["warnings"]``) and kept away from the user's terminal.

Damaged files are read non-strictly: when pypdf can repair them, their text is used; when it cannot
(for example ``Invalid object in /Pages``), the file is an error.
"""

from __future__ import annotations

import contextlib
import logging
import struct
import threading
import warnings
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pypdf
from pypdf import PasswordType
from pypdf.errors import DependencyError, FileNotDecryptedError, PyPdfError

from synth.data import Document, Page, Section
from synth.errors import IngestError
from synth.ingest._util import one_line

PAGE_SEPARATOR = "\n\n"

# pypdf parses arbitrary bytes; on a damaged file its parser can fail with any of these besides its
# own PyPdfError. Listing them keeps a real bug (say, a NameError in our code) visible.
_PDF_FAILURES = (
    PyPdfError,
    ValueError,
    KeyError,
    IndexError,
    TypeError,
    AttributeError,
    AssertionError,
    RecursionError,
    NotImplementedError,
    zlib.error,
    struct.error,
)

_capture_lock = threading.RLock()


class _Counter(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


@contextlib.contextmanager
def quiet_pypdf() -> Iterator[_Counter]:
    """Count pypdf's log records and warnings instead of letting them reach the user."""
    with _capture_lock:
        pypdf_logger = logging.getLogger("pypdf")
        counter = _Counter()
        propagate = pypdf_logger.propagate
        pypdf_logger.addHandler(counter)
        pypdf_logger.propagate = False
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                yield counter
                counter.count += len(caught)
        finally:
            pypdf_logger.propagate = propagate
            pypdf_logger.removeHandler(counter)


def read_pdf(path: Path, password: str | None = None) -> Document:
    """The text of every page, pages separated by a blank line, and ``Document.pages``.

    IngestError for an encrypted file without the right password, a damaged file pypdf cannot
    repair, and a PDF without a text layer (scanned pages; OCR is not done).
    """
    path = Path(path)
    if path.stat().st_size == 0:
        raise IngestError("empty file")
    with quiet_pypdf() as counter:
        try:
            reader = pypdf.PdfReader(path)
            _unlock(reader, password)
            texts, failed = _page_texts(reader)
        except FileNotDecryptedError as exc:
            raise IngestError("encrypted PDF: a password is needed") from exc
        except DependencyError as exc:
            raise IngestError(f"encrypted PDF: {one_line(exc)}") from exc
        except _PDF_FAILURES as exc:
            raise IngestError(f"damaged PDF: {one_line(exc)}") from exc
    metadata = {"page_count": len(texts), "warnings": counter.count}
    empty = sum(1 for text in texts if not text)
    if failed:
        metadata["pages_failed"] = failed
    if empty:
        metadata["pages_without_text"] = empty
    if empty == len(texts):
        if failed:
            raise IngestError(
                f"damaged PDF: text extraction failed on {failed} of {len(texts)} pages"
            )
        raise IngestError(
            f"no text layer ({len(texts)} page{'s' if len(texts) != 1 else ''}, probably scanned "
            f"images; OCR is not supported)"
        )
    pages: list[Page] = []
    parts: list[str] = []
    offset = 0
    for number, text in enumerate(texts, start=1):
        if parts:
            offset += len(PAGE_SEPARATOR)
        pages.append(Page(number=number, start=offset))
        parts.append(text)
        offset += len(text)
    text = PAGE_SEPARATOR.join(parts)
    with quiet_pypdf():
        sections = _outline_sections(reader, text, pages)
    return Document(id="", path="", text=text, pages=pages, sections=sections, metadata=metadata)


def _outline_sections(reader: pypdf.PdfReader, text: str, pages: list[Page]) -> list[Section]:
    """A section at each bookmark of the PDF's outline, with the path of bookmarks above it.

    A bookmark points at a page; its section starts where its title is found on that page (the
    first match after the previous bookmark's), else at the page's start. An outline pypdf cannot
    read gives no sections: the text is still good.
    """
    try:
        entries = list(_outline_entries(reader, reader.outline, []))
    except _PDF_FAILURES:
        return []
    sections = []
    floor = 0
    for page_index, path in entries:
        if not 0 <= page_index < len(pages):
            continue
        page_start = pages[page_index].start
        page_end = pages[page_index + 1].start if page_index + 1 < len(pages) else len(text)
        begin = max(page_start, floor) if floor < page_end else page_start
        found = text.find(path[-1], begin, page_end)
        start = found if found >= 0 else page_start
        floor = start
        sections.append(Section(start=start, path=path))
    return sorted(sections, key=lambda section: section.start)


def _outline_entries(
    reader: pypdf.PdfReader, outline: list[Any], above: list[str]
) -> Iterator[tuple[int, list[str]]]:
    """``(page index, path)`` of each bookmark in ``outline`` (pypdf's nested lists), in order."""
    path = above
    for entry in outline:
        if isinstance(entry, list):  # the children of the bookmark before it
            yield from _outline_entries(reader, entry, path)
            continue
        title = " ".join(str(entry.title or "").split())
        if not title:
            continue
        path = [*above, title]
        page = reader.get_destination_page_number(entry)
        if page is not None:
            yield page, path


def _unlock(reader: pypdf.PdfReader, password: str | None) -> None:
    if not reader.is_encrypted:
        return
    # pypdf already tried the empty user password when it opened the file.
    if password is None:
        if reader.decrypt("") == PasswordType.NOT_DECRYPTED:
            raise IngestError("encrypted PDF: a password is needed")
        return
    if reader.decrypt(password) == PasswordType.NOT_DECRYPTED:
        raise IngestError("encrypted PDF: wrong password")


def _page_texts(reader: pypdf.PdfReader) -> tuple[list[str], int]:
    """The cleaned text of each page, and how many pages failed to extract (they count as empty)."""
    texts = []
    failed = 0
    for page in reader.pages:
        try:
            raw = page.extract_text() or ""
        except _PDF_FAILURES:
            failed += 1
            raw = ""
        texts.append(_clean(raw))
    return texts, failed


def _clean(text: str) -> str:
    return text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n").strip()


__all__ = ["PAGE_SEPARATOR", "quiet_pypdf", "read_pdf"]
