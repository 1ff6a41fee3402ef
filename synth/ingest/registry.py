"""Which reader handles which file suffix; users can add their own.

A loader is any callable taking a ``pathlib.Path`` and returning the file's text (``str``) or a
``Document`` (its ``text``, ``pages``, ``sections`` and ``metadata`` are kept; ``id`` and ``path``
are set by ``load_documents``). To report a file as unreadable it raises ``IngestError`` (``OSError`` and
``ValueError`` are reported too); anything else is a bug and propagates.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path

from synth.data import Document
from synth.errors import ConfigError
from synth.ingest.text import read_text

Loader = Callable[[Path], "Document | str"]


def read_pdf(path: Path, password: str | None = None) -> Document:
    """:func:`synth.ingest.pdf.read_pdf`, imported by the first PDF read (pypdf takes a tenth of
    a second or more to import, paid only by a process that reads one)."""
    from synth.ingest.pdf import read_pdf as read

    return read(path, password=password)


def read_markdown(path: Path) -> Document:
    """:func:`synth.ingest.markdown.read_markdown`: the text as is, and its headings."""
    from synth.ingest.markdown import read_markdown as read

    return read(path)


def read_docx(path: Path) -> Document:
    """:func:`synth.ingest.docx.read_docx`, imported by the first .docx read (python-docx, lxml)."""
    from synth.ingest.docx import read_docx as read

    return read(path)


def read_html(path: Path) -> Document:
    """:func:`synth.ingest.html.read_html`, imported by the first HTML read (trafilatura)."""
    from synth.ingest.html import read_html as read

    return read(path)


def read_pptx(path: Path) -> Document:
    """:func:`synth.ingest.pptx.read_pptx`, imported by the first .pptx read (python-pptx)."""
    from synth.ingest.pptx import read_pptx as read

    return read(path)


def read_xlsx(path: Path) -> Document:
    """:func:`synth.ingest.xlsx.read_xlsx`, imported by the first .xlsx read (openpyxl)."""
    from synth.ingest.xlsx import read_xlsx as read

    return read(path)


def read_csv(path: Path) -> Document:
    """:func:`synth.ingest.delimited.read_csv`: a CSV's (or a TSV's) rows, naming their cells."""
    from synth.ingest.delimited import read_csv as read

    return read(path)


def read_epub(path: Path) -> Document:
    """:func:`synth.ingest.epub.read_epub`, imported by the first EPUB read (ebooklib)."""
    from synth.ingest.epub import read_epub as read

    return read(path)


def read_converted(path: Path) -> Document:
    """:func:`synth.ingest.converted.read_converted`: a notebook, an .xls workbook or an Outlook
    mail through markitdown (the ``convert`` extra), imported by the first such file."""
    from synth.ingest.converted import read_converted as read

    return read(path)


_BUILTIN: dict[str, Loader] = {
    ".txt": read_text,
    ".md": read_markdown,
    ".markdown": read_markdown,
    ".docx": read_docx,
    ".pdf": read_pdf,
    ".html": read_html,
    ".htm": read_html,
    ".xhtml": read_html,
    ".pptx": read_pptx,
    ".xlsx": read_xlsx,
    ".xlsm": read_xlsx,
    ".csv": read_csv,
    ".tsv": read_csv,
    ".epub": read_epub,
    ".ipynb": read_converted,
    ".xls": read_converted,
    ".msg": read_converted,
}
_registry: dict[str, Loader] = dict(_BUILTIN)


def register_loader(suffix: str, loader: Loader) -> None:
    """Use ``loader`` for files ending in ``suffix`` (e.g. ``".html"``), replacing any previous one."""
    if not callable(loader):
        raise ConfigError(f"loader for {suffix!r} must be callable, got {type(loader).__name__}")
    _registry[normalize_suffix(suffix)] = loader


def unregister_loader(suffix: str) -> None:
    """Stop handling ``suffix``; a built-in suffix goes back to its built-in reader."""
    key = normalize_suffix(suffix)
    if key in _BUILTIN:
        _registry[key] = _BUILTIN[key]
    else:
        _registry.pop(key, None)


def registered_loaders() -> dict[str, Loader]:
    """A copy of the suffix -> loader table used when ``load_documents`` is given no ``loaders``."""
    return dict(_registry)


def normalize_suffix(suffix: str) -> str:
    """``"PDF"``, ``".pdf"`` and ``"*.pdf"`` all become ``".pdf"``."""
    text = suffix.strip().lstrip("*").lower()
    if not text.startswith("."):
        text = "." + text
    if text == "." or any(c in text for c in "/\\ "):
        raise ConfigError(f"invalid file suffix {suffix!r}; expected something like '.html'")
    return text


def resolve_loaders(
    loaders: Mapping[str, Loader] | None, password: str | None
) -> dict[str, Loader]:
    """The registry with ``loaders`` laid over it, and the PDF password bound to the PDF reader."""
    table = registered_loaders()
    for suffix, loader in (loaders or {}).items():
        if not callable(loader):
            raise ConfigError(f"loader for {suffix!r} must be callable")
        table[normalize_suffix(suffix)] = loader
    if password is not None:
        for suffix, loader in table.items():
            if loader is read_pdf:
                table[suffix] = functools.partial(read_pdf, password=password)
    return table


__all__ = [
    "Loader",
    "normalize_suffix",
    "register_loader",
    "registered_loaders",
    "resolve_loaders",
    "unregister_loader",
]
