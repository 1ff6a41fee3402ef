"""Small helpers shared by the readers."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

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
