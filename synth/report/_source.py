"""What a report function was given: the result itself or the file holding it, and the file to
name on the page."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def given(
    value: T | str | os.PathLike[str],
    kind: type[T],
    read: Callable[[str], T],
    source: str | os.PathLike[str] | None = None,
) -> tuple[T, str | None]:
    """``value`` when it is a ``kind``, else ``read`` of the file it names; and the page's file
    name: ``source``, else that file, else None."""
    if isinstance(value, kind):
        return value, os.fspath(source) if source is not None else None
    path = os.fspath(value)  # type: ignore[arg-type]  # not a kind: a path
    return read(path), os.fspath(source) if source is not None else path


__all__ = ["given"]
