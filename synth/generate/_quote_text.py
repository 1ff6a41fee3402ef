"""Text normalized for locating quotes, with the way back to the original text's offsets.

:class:`NormalText` is what :mod:`synth.generate.citations` compares quotes and chunks in: runs
of whitespace become one space, a word broken across lines by a hyphen is joined, invisible
characters go, curly quotes, dashes, ligatures and the ellipsis are spelled in ASCII. Every
normalized character keeps its span in the original, so a match found here is reported as a span
of the chunk's own text.
"""

from __future__ import annotations

import bisect
import re
from functools import cached_property

_MAP = {
    **dict.fromkeys("‘’‚‛′‹›", "'"),
    **dict.fromkeys("“”„‟″«»", '"'),
    **dict.fromkeys("–—‒―−‐‑", "-"),
    "ﬀ": "ff",
    "ﬁ": "fi",
    "ﬂ": "fl",
    "ﬃ": "ffi",
    "ﬄ": "ffl",
    "…": "...",
}
_HYPHENS = "-\u2010\u2011\u00ad"
_INVISIBLE = "\u00ad\u200b\u200c\u200d\u2060\ufeff"
# What normalization changes, each branch starting with a character set so the scan stays fast:
# a hyphen after a letter, then whitespace, then a letter is a word broken across lines (joined);
# whitespace other than one plain space (most of them, left alone); invisible and mapped characters.
_SPECIAL = re.compile(
    rf"[{_HYPHENS}](?<=[^\W\d_].)\s+(?=[^\W\d_])"
    r"| ?[^\S ]\s*| {2,}\s*"
    rf"|[{_INVISIBLE}{''.join(_MAP)}]"
)
# a word for pairing: apostrophes and hyphens inside it keep it whole ("don't", "e-mail")
WORD_TOKEN = re.compile(r"\w+(?:['-]\w+)*")


class NormalText:
    """A text normalized for matching, with each normalized character's span in the original.

    The offset map is kept as segments, each starting at a normalized position: a copied run of
    the original (``copied``) maps character by character, a replacement maps every character it
    holds to the whole span it replaced. Only a citation's two ends are ever looked up.
    """

    def __init__(self, text: str) -> None:
        pieces: list[str] = []
        self._at: list[int] = []  # where each segment starts in the normalized text
        self._segments: list[tuple[int, int, bool]] = []  # (original start, end, copied)
        size = pos = 0
        for match in _SPECIAL.finditer(text):
            a, b = match.span()
            if a > pos:
                size = self._add(pieces, text[pos:a], size, (pos, a, True))
            found = match.group()
            if found[0].isspace():
                size = self._add(pieces, " ", size, (a, b, False))
            elif found in _MAP:
                size = self._add(pieces, _MAP[found], size, (a, b, False))
            # else a broken word's hyphen and whitespace, or an invisible character: nothing
            pos = b
        if pos < len(text):
            self._add(pieces, text[pos:], size, (pos, len(text), True))
        self.text = "".join(pieces)

    def _add(self, pieces: list[str], piece: str, size: int, segment: tuple[int, int, bool]) -> int:
        pieces.append(piece)
        self._at.append(size)
        self._segments.append(segment)
        return size + len(piece)

    def _span_of(self, index: int) -> tuple[int, int]:
        """The span of the original text that normalized character ``index`` came from."""
        k = bisect.bisect_right(self._at, index) - 1
        start, end, copied = self._segments[k]
        if copied:
            start += index - self._at[k]
            return start, start + 1
        return start, end

    @cached_property
    def folded(self) -> str:
        """The text lowercased character by character, so positions stay the same."""
        lowered = self.text.lower()
        if len(lowered) == len(self.text):
            return lowered
        # a few characters lowercase to two ("İ"): those keep their case
        return "".join(c.lower() if len(c.lower()) == 1 else c for c in self.text)

    def tokens(self, start: int, end: int) -> list[tuple[int, int, str]]:
        """The words overlapping ``[start, end)`` as (start, end, key), normalized positions."""
        start = self.text.rfind(" ", 0, max(0, start)) + 1
        stop = self.text.find(" ", end)
        stop = len(self.text) if stop < 0 else stop
        return [
            (m.start(), m.end(), word_key(m.group()))
            for m in WORD_TOKEN.finditer(self.text, start, stop)
        ]

    def original(self, start: int, end: int, source: str) -> tuple[int, int]:
        """The span of ``source`` (the original text) that normalized ``[start, end)`` came from."""
        a, b = self._span_of(start)[0], self._span_of(end - 1)[1]
        while a < b and source[a].isspace():
            a += 1
        while b > a and source[b - 1].isspace():
            b -= 1
        return a, b


def word_key(word: str) -> str:
    return word.casefold().replace("-", "")


def is_word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


__all__ = ["WORD_TOKEN", "NormalText", "is_word_char", "word_key"]
