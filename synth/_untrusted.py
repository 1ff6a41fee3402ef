"""Untrusted text in prompts: inside tags, its markers escaped, and declared data.

Every prompt quotes text it must not obey: documents, and what a model wrote earlier (inputs,
answers, feedback) when it is fed back. Such text goes inside ``<name>`` tags, and inside them every
``<`` that could begin a tag (a ``<`` before a letter or ``/``) is followed by a backslash:
``</context>`` becomes ``<\\/context>`` and ``<passage index="2">`` becomes ``<\\passage
index="2">``. So quoted text can neither close its own tag nor forge another item, whatever tag
names the prompt uses, and a prompt tells the model about exactly as many items as it was given.
The system message sent with such a prompt says that tagged text is data, never instructions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# a "<" that could open or close a tag: before a letter or a slash
_TAG_START = re.compile(r"<(?=[/A-Za-z])")


def escape(text: str) -> str:
    """Return untrusted ``text`` with every tag start escaped, so it can neither end its own tag
    nor begin another."""
    return _TAG_START.sub(r"<\\", text)


def wrap(name: str, markup: str, **attributes: object) -> str:
    """Return ``markup`` (already escaped or built by :func:`tag`) inside ``<name ...>`` tags."""
    attrs = "".join(f' {key}="{value}"' for key, value in attributes.items())
    return f"<{name}{attrs}>\n{markup}\n</{name}>"


def tag(name: str, text: str, **attributes: object) -> str:
    """Return ``text`` escaped and wrapped in ``<name ...>`` tags."""
    return wrap(name, escape(text), **attributes)


def tag_list(outer: str, inner: str, texts: Sequence[str]) -> str:
    """Return ``texts`` each tagged ``<inner index="i">`` (from 1), all inside one ``<outer>``."""
    items = "\n".join(tag(inner, text, index=i) for i, text in enumerate(texts, start=1))
    return wrap(outer, items)


__all__ = ["escape", "tag", "tag_list", "wrap"]
