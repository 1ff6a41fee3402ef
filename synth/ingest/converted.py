"""Read the formats synth's own readers do not cover through markitdown, the general converter
chosen by measurement (docs/benchmarks.md): Jupyter notebooks, old Excel ``.xls`` workbooks and
Outlook ``.msg`` mails.

Each suffix goes to markitdown's converter for that format alone, never to its guess from the
content: markitdown's own ``convert`` falls back to reading a damaged file as plain text, which
would turn its bytes into passages. The Markdown it gives is the document's text, and its headings
(a notebook's ``#`` cells, a workbook's ``## Sheet`` titles) are the sections, as a Markdown
file's are; a workbook's sheets are units no chunk crosses. markitdown is the ``convert`` extra (``pip install 'synth[convert]'``); without it a
file of these formats is skipped, and its line names the extra.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from synth.data import Document
from synth.errors import IngestError, ReaderMissing
from synth.ingest._util import damaged
from synth.ingest.markdown import markdown_sections

#: suffix -> (markitdown's converter class for it, what the format is called in an error line)
CONVERTED = {
    ".ipynb": ("IpynbConverter", "Jupyter notebook"),
    ".xls": ("XlsConverter", "Excel .xls workbook"),
    ".msg": ("OutlookMsgConverter", "Outlook .msg mail"),
}


def read_converted(path: Path) -> Document:
    """The file as markitdown's converter for its suffix writes it in Markdown, with its headings
    as sections; IngestError when markitdown is missing or the file is not of its format."""
    path = Path(path)
    name, kind = CONVERTED[path.suffix.lower()]
    try:
        import markitdown
        from markitdown import StreamInfo, converters
    except ImportError as exc:
        raise ReaderMissing(
            f"reading a {kind} needs markitdown: pip install 'synth[convert]'"
        ) from exc
    if path.stat().st_size == 0:
        raise IngestError("empty file")
    info = StreamInfo(extension=path.suffix.lower(), filename=path.name, local_path=str(path))
    with damaged(kind, (markitdown.MarkItDownException, *_format_errors())):
        with path.open("rb") as stream, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pandas warns about the xlrd engine markitdown uses
            result = getattr(converters, name)().convert(stream, info)
    text = result.markdown.strip()
    if not text:
        raise IngestError(f"no text found in the {kind}")
    sections = markdown_sections(text)
    if name == "XlsConverter":  # each sheet is a "## <name>" heading: cut on its own, as .xlsx's
        sections = [section.model_copy(update={"split": True}) for section in sections]
    metadata: dict[str, Any] = {"converter": f"markitdown {_version()}"}
    if result.title:
        metadata["title"] = result.title
    return Document(id="", path=str(path), text=text, sections=sections, metadata=metadata)


def _format_errors() -> tuple[type[BaseException], ...]:
    """What the libraries under the converters raise on a file not of their format: the JSON of
    a notebook (ValueError), olefile's (an OSError, turned into one line by ``damaged``), xlrd's."""
    errors: list[type[BaseException]] = [ValueError, KeyError, TypeError]
    try:
        from xlrd import XLRDError
    except ImportError:  # markitdown without its xls extra says so with a MarkItDownException
        return tuple(errors)
    return (*errors, XLRDError)


def _version() -> str:
    from importlib.metadata import version

    return version("markitdown")


__all__ = ["CONVERTED", "read_converted"]
