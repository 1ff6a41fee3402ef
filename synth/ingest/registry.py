"""Which reader handles which file suffix; users can add their own.

A loader is any callable taking a ``pathlib.Path`` and returning the file's text (``str``) or a
``Document`` (its ``text``, ``pages``, ``sections`` and ``metadata`` are kept; ``id`` and ``path``
are set by ``load_documents``). To report a file as unreadable it raises ``IngestError`` (``OSError`` and
``ValueError`` are reported too); anything else is a bug and propagates.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from synth.data import Document
from synth.errors import ConfigError
from synth.ingest.text import read_text

Loader = Callable[[Path], "Document | str"]


def _on_first_use(module: str, name: str) -> Callable[..., Document]:
    """The reader ``synth.ingest.<module>.<name>``, its module imported by the first file it reads:
    a reader's library (pypdf, python-docx, trafilatura, python-pptx, openpyxl, ebooklib,
    markitdown) takes a tenth of a second or more to import, paid only by a process that reads one.
    """

    def read(path: Path, **options: Any) -> Document:
        reader = getattr(importlib.import_module(f"synth.ingest.{module}"), name)
        return reader(path, **options)

    read.__name__ = read.__qualname__ = name
    return read


read_pdf = _on_first_use("pdf", "read_pdf")  # with a password bound by resolve_loaders
read_markdown = _on_first_use("markdown", "read_markdown")
read_docx = _on_first_use("docx", "read_docx")
read_html = _on_first_use("html", "read_html")
read_pptx = _on_first_use("pptx", "read_pptx")
read_xlsx = _on_first_use("xlsx", "read_xlsx")
read_csv = _on_first_use("delimited", "read_csv")  # a CSV's (or a TSV's) rows, naming their cells
read_epub = _on_first_use("epub", "read_epub")
# a notebook, an .xls workbook or an Outlook mail through markitdown (the ``convert`` extra)
read_converted = _on_first_use("converted", "read_converted")

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
