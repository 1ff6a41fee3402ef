"""Untrusted text in Markdown: shown as written, never read as markup.

A dataset card and ``synth gate``'s summary are Markdown that a host renders (the Hub, GitHub), and
they quote text from documents, models and users: file names, questions, model names, errors. Such
text goes through :func:`escape`: HTML's specials become entities (no tag, no comment) and every
character Markdown acts on inline is escaped with a backslash, so no link, image, emphasis, code
span or table cell break can be made of it.
"""

from __future__ import annotations

import re

#: the characters that make inline Markdown: escapes, code, emphasis, links and images, table
#: cells, strikethrough
_MARKUP = re.compile(r"([\\`*_\[\]!|~])")


def escape(text: str) -> str:
    """Return ``text`` with HTML's specials as entities and Markdown's inline markup escaped."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKUP.sub(r"\\\1", text)


__all__ = ["escape"]
