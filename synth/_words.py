"""Words of a text, as the trust measurements count them: one tokenizer for overlap, grounding, BM25.

A word is a run of Unicode word characters, lowercased (``casefold``). *Content words* leave out a
short list of English function words and single characters, so "what is the refund window?" and
"the refund window is 30 days" share ``refund`` and ``window``, not ``the`` and ``is``. The list is
English only: in other languages every word counts as content, which makes overlap a little higher,
never lower.

Chinese and Japanese put no space between words, so a run of their characters would be one "word"
as long as the sentence. Such a run is cut into overlapping character pairs (bigrams, the usual
scheme of CJK full-text search): "返金期間" gives ``返金``, ``金期``, ``期間``. A question and its
source then share pairs as English ones share words, for overlap, grounding and BM25 alike.
Korean, written with spaces, keeps its words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORD = re.compile(r"\w+", re.UNICODE)
#: Chinese characters and Japanese kana
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")

#: English function words left out of content words (question words included: every question has one)
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves
    """.split()
)


def words(text: str) -> list[str]:
    """Every word of ``text``, casefolded, in order (runs of CJK characters as bigrams)."""
    out: list[str] = []
    for word in _WORD.findall(text):
        word = word.casefold()
        if _CJK.search(word) is None:
            out.append(word)
        else:
            out.extend(_pieces(word))
    return out


def _pieces(word: str) -> list[str]:
    """``word`` with its CJK runs cut into bigrams (a one-character run kept whole) and the rest
    kept as words."""
    out: list[str] = []
    at = 0
    for run in _CJK.finditer(word):
        if run.start() > at:
            out.append(word[at : run.start()])
        chars = run.group()
        out.extend(
            [chars] if len(chars) == 1 else [chars[i : i + 2] for i in range(len(chars) - 1)]
        )
        at = run.end()
    if at < len(word):
        out.append(word[at:])
    return out


def content_words(text: str) -> list[str]:
    """The words of ``text`` that carry meaning: no stopwords, no single characters."""
    return [w for w in words(text) if len(w) > 1 and w not in STOPWORDS]


def overlap(text: str, sources: Iterable[str]) -> float:
    """The share of ``text``'s distinct content words that occur in any of ``sources`` (0..1).

    A text with no content word overlaps nothing (0.0).
    """
    wanted = set(content_words(text))
    if not wanted:
        return 0.0
    found: set[str] = set()
    for source in sources:
        found.update(words(source))
    return len(wanted & found) / len(wanted)


__all__ = ["STOPWORDS", "content_words", "overlap", "words"]
