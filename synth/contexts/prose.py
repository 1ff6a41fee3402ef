"""The prose filter: plain-code rules that keep non-prose chunks out of the seeds, at no request cost.

A seed chunk becomes the source of questions only if it is running text. Tables of contents,
indexes, reference lists, navigation and table art are not, yet each would cost a critic request
to reject. :func:`check_prose` looks at the shape of the text instead (how many of its tokens are
words, how many characters are digits or symbols, how its lines are built) and returns the first
rule it breaks, with the figures that broke it, or None.

The rules and their limits (:data:`RULES` names them; each is a drop reason of the ``prose`` row):

- ``dotted_leaders``: lines that end in a run of dots (or spaced dots) and a page number, the
  shape of a table of contents, make up at least a quarter of the lines (three at least);
- ``page_number_lines``: more than half the lines end in a page or section number after a word
  (an index: "chunking, 12, 45"), five lines at least;
- ``reference_list``: more than half the lines open with a list marker ("[3]", "12.") and name a
  year, five lines at least;
- ``few_alphabetic_words``: under half the words (whitespace-separated tokens that hold a letter or
  a digit) hold a letter;
- ``digit_ratio``: over 25% of the non-space characters are digits;
- ``symbol_ratio``: over 15% of the non-space characters are neither letters, digits nor ordinary
  punctuation (``| + = # * _ ~ < > /`` and the box-drawing characters of table art);
- ``short_lines``: more than 70% of eight or more lines hold three words or fewer (navigation,
  menus, lists of labels), with no more than one sentence end every 40 words.

A text of fewer than :data:`MIN_WORDS` words is not judged: statistics over so little say nothing,
and the critic still sees it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: texts shorter than this (in whitespace-separated tokens) pass unjudged
MIN_WORDS = 20
#: the drop reasons, in the order the rules are tried
RULES = (
    "dotted_leaders",
    "page_number_lines",
    "reference_list",
    "few_alphabetic_words",
    "digit_ratio",
    "symbol_ratio",
    "short_lines",
)

_LEADER = re.compile(r"(?:\.\s?){4,}\s*\S{0,6}\d+\s*$|(?:\u2026\s?){2,}\s*\d+\s*$|_{4,}\s*\d+\s*$")
# a line's last token, a page or section number (or a roman one) after a separator; the line
# ends in a number when a letter stands between its last digit before that and the separator
_NUMBER_TAIL = re.compile(r"[,;:\s]\s*(?:[ivxlc]+|\d+(?:[-\u2013]\d+)?)\s*$", re.I)
_LIST_MARKER = re.compile(r"^\s*(?:\[\d{1,3}\]|\d{1,3}[.)])\s+")
_YEAR = re.compile(r"\b(?:1[5-9]|20)\d\d[a-z]?\b")
_SENTENCE_END = re.compile(r"[.!?\u3002\uff01\uff1f](?:[\"')\]]*)(?:\s|$)")
# what counts as ordinary punctuation in running text; anything else that is not a letter, a
# digit or a space is a symbol (table rules, pipes, box drawing, markup)
_PUNCTUATION = set(".,;:!?'\"()[]-\u2013\u2014\u2018\u2019\u201c\u201d%&$\u20ac\u00a3@")


@dataclass(frozen=True)
class ProseVerdict:
    """A broken rule: its name (the drop reason) and what broke it, in words (the drop's detail)."""

    reason: str
    detail: str


def check_prose(text: str) -> ProseVerdict | None:
    """The first prose rule ``text`` breaks, with its figures; None when it reads as prose (or is
    too short to judge)."""
    tokens = text.split()
    if len(tokens) < MIN_WORDS:
        return None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    n_lines = len(lines)

    leaders = sum(1 for line in lines if _LEADER.search(line))
    if leaders >= 3 and leaders * 4 >= n_lines:
        return ProseVerdict(
            "dotted_leaders", f"{leaders} of {n_lines} lines end in dotted leaders and a number"
        )
    numbered = sum(1 for line in lines if ends_in_number(line))
    if n_lines >= 5 and numbered * 2 > n_lines:
        return ProseVerdict(
            "page_number_lines", f"{numbered} of {n_lines} lines end in a page or section number"
        )
    references = sum(1 for line in lines if _LIST_MARKER.match(line) and _YEAR.search(line))
    if n_lines >= 5 and references * 2 > n_lines:
        return ProseVerdict(
            "reference_list", f"{references} of {n_lines} lines are numbered entries with a year"
        )
    # tokens of symbols alone (a table's pipes, a rule) are judged by the symbol ratio, not here
    worded = [token for token in tokens if any(ch.isalnum() for ch in token)]
    alphabetic = sum(1 for token in worded if any(ch.isalpha() for ch in token))
    if alphabetic < 0.5 * len(worded):
        return ProseVerdict(
            "few_alphabetic_words", f"{alphabetic} of {len(worded)} words hold a letter"
        )
    chars = [ch for ch in text if not ch.isspace()]
    digits = sum(1 for ch in chars if ch.isdigit())
    if digits > 0.25 * len(chars):
        return ProseVerdict(
            "digit_ratio",
            f"{digits} of {len(chars)} characters are digits ({_percent(digits, len(chars))})",
        )
    symbols = sum(1 for ch in chars if not ch.isalnum() and ch not in _PUNCTUATION)
    if symbols > 0.15 * len(chars):
        return ProseVerdict(
            "symbol_ratio",
            f"{symbols} of {len(chars)} characters are symbols ({_percent(symbols, len(chars))})",
        )
    short = sum(1 for line in lines if len(line.split()) <= 3)
    ends = len(_SENTENCE_END.findall(text))
    if n_lines >= 8 and short > 0.7 * n_lines and ends * 40 <= len(tokens):
        return ProseVerdict(
            "short_lines",
            f"{short} of {n_lines} lines hold three words or fewer, {ends} sentence ends "
            f"in {len(tokens)} words",
        )
    return None


def ends_in_number(line: str) -> bool:
    """Whether ``line`` ends in a page or section number after a word ("chunking, 12", "Index
    xiv"): a separator and the number close it, and a letter comes after the last digit before.

    One pattern searched for the whole shape (a letter, any non-digits, the number) tries every
    letter as the start and every later character as the separator: its work grows as the square
    of the line's length, 40 ms for a paragraph of 80 words on one line, seconds for a page. Here
    the number is found at the end and the text before it is read back to its last digit once.
    """
    tail = _NUMBER_TAIL.search(line)
    if tail is None:
        return False
    for ch in reversed(line[: tail.start()]):
        if ch.isdecimal():
            return False
        if ch.isalnum() and ch != "_":
            return True
    return False


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / max(whole, 1):.0f}%"


__all__ = ["MIN_WORDS", "RULES", "ProseVerdict", "check_prose", "ends_in_number"]
