"""Small helpers shared by the readers."""

from __future__ import annotations


def one_line(exc: BaseException, limit: int = 200) -> str:
    """The exception's message on one line, at most ``limit`` characters (its type when empty)."""
    text = " ".join(str(exc).split())
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text or type(exc).__name__
