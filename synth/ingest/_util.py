"""Small helpers shared by the readers."""

from __future__ import annotations

import contextlib
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

from synth.errors import IngestError


def one_line(exc: BaseException, limit: int = 200) -> str:
    """The exception's message on one line, at most ``limit`` characters (its type when empty)."""
    text = " ".join(str(exc).split())
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text or type(exc).__name__


#: errors of the file itself, not of its content: load_documents reports them as "cannot read file"
ACCESS_ERRORS = (PermissionError, FileNotFoundError, IsADirectoryError)


@contextlib.contextmanager
def damaged(kind: str, failures: tuple[type[BaseException], ...]) -> Iterator[None]:
    """Turn a reader library's ``failures`` (and OSErrors from damaged zip data) into one line,
    ``damaged <kind>: <why>``, as an IngestError; a file that cannot be opened is raised as is."""
    try:
        yield
    except failures as exc:
        raise IngestError(f"damaged {kind}: {one_line(exc)}") from exc
    except OSError as exc:
        if isinstance(exc, ACCESS_ERRORS):
            raise
        raise IngestError(f"damaged {kind}: {exc.strerror or one_line(exc)}") from exc


def zip_package(path: Path | str, what: str) -> Path:
    """``path`` as a Path, once it is a non-empty zip file; IngestError (``empty file``, ``not
    <what> (not a zip package)``) before its reader library is handed it."""
    path = Path(path)
    if path.stat().st_size == 0:
        raise IngestError("empty file")
    if not zipfile.is_zipfile(path):
        raise IngestError(f"not {what} (not a zip package)")
    return path


def package_failures(*library: type[BaseException]) -> tuple[type[BaseException], ...]:
    """What a reader library (its own ``library`` errors), zipfile and lxml raise on a zip package
    that is not well formed.

    A damaged zip can also fail while inflating a part (zlib.error), name a compression method or
    zip version zipfile does not know (NotImplementedError), end early (EOFError) or point a seek
    before the start of the file (an OSError, which :func:`damaged` handles).
    """
    from lxml import etree  # the readers' libraries import it; load_documents need not

    return (
        *library,
        zipfile.BadZipFile,
        etree.XMLSyntaxError,
        KeyError,
        ValueError,
        zlib.error,
        NotImplementedError,
        EOFError,
    )
