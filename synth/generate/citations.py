"""Citations: where each quote a model gave stands in its context, and how well they ground an answer.

**Locating a quote.** Quote and chunk are compared after the same normalization: every run of
whitespace becomes one space, a word broken by a hyphen and whitespace ("infor-\\nmation",
"infor- mation") is joined, soft hyphens and zero-width characters go, curly and angle quotes
(‘’“”‹›«») become ``'`` and ``"``, dashes (– — ‒ ― −) become ``-``, the ligatures ﬁ ﬂ ﬀ ﬃ ﬄ are
spelled out and … becomes ``...``. An offset map keeps every normalized character's place in the
original text, so a citation's ``start``/``end`` index the chunk's *original* text
(``chunk.text[start:end]`` is the passage, without surrounding whitespace). Three passes, each over
all chunks before the next:

1. exact: the normalized quote occurs in the normalized chunk (ratio 1.0);
2. exact but for letter case (ratio 0.9999);
3. fuzzy: ``rapidfuzz.fuzz.partial_ratio_alignment`` finds the best window of the case-folded chunk,
   which is then snapped to whole words. The match stands only if its ``fuzz.ratio`` to the quote
   (case-folded) is at least ``min_ratio`` (0.9; that ratio, at most 0.9999, is the citation's), its
   length is within 15% of the quote's, and it has the quote's words, in order, none added or left
   out (hyphens ignored). Where words differ, they must spell the same run together ("refund
   window"/"refundwindow"), or pair up one to one as typos: words of five letters or more, one edit
   apart ("colour"/"color"), at most one such pair per eight words. A word holding a digit must be
   equal: "30 days" never matches "60 days". So a reordered, negated ("is not refundable" for "is
   refundable") or renumbered quote is *not* found, however many characters it shares with the
   text; nor is a quote that elides text with "...".

The first chunk with an exact match wins, else the fuzzy match with the highest ratio (ties: the
first chunk). A match must begin and end at word boundaries: "able to pay" is not in "unable to
pay". A quote with fewer than two words of two or more characters is too short to support anything
and is never located. ``page`` is the last page of the chunk starting at or before ``start`` (None
when the chunk has no pages).

**Grounding score.** For an answer, its quotes and their citations::

    coverage = share of the answer's distinct content words found among the words of the
               located passages (synth._words.content_words / words; broken words joined)
    score    = coverage * found / quotes        (rounded to 4 places; 0.0 when there are no quotes)

So an answer whose every content word is in its located quotes, all of which were found, scores
1.0; each quote not found scales the score down, and words of the answer no quote backs lower it.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, field_validator
from rapidfuzz import fuzz
from rapidfuzz.distance import OSA, Levenshtein

from synth._untrusted import escape
from synth._words import overlap, words
from synth.generate._quote_text import WORD_TOKEN, NormalText, is_word_char, word_key

#: the least fuzzy ratio (0..1, on the normalized, case-folded texts) a match needs
MIN_RATIO = 0.9
#: how far a fuzzy match's length may stray from the quote's, as a share of the quote's length
MAX_LENGTH_DIFF = 0.15
#: the ratio of a match equal to the quote but for letter case (1.0 is kept for exact matches)
CASE_RATIO = 0.9999
# words this long may differ by one edit (shorter ones, "he"/"she", "now"/"not", must be equal)
_NEAR_WORD_LENGTH = 5
# one near-spelled word allowed per this many words of the quote (at least one)
_WORDS_PER_NEAR = 8
_SHOWN_QUOTE = 60
# a fuzzy window may start this many words early or late; words are read this far around it
_SLACK_WORDS = 2
_WORD_WIDTH = 12


class SourceChunk(BaseModel):
    """A chunk a quote may come from: its id, its text and where its pages start."""

    model_config = ConfigDict(frozen=True)

    chunk_id: str
    text: str
    #: (page number, offset in ``text`` where that page starts), by offset; () = no pages
    pages: tuple[tuple[int, int], ...] = ()

    @field_validator("pages")
    @classmethod
    def _sorted(cls, pages: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
        offsets = [offset for _, offset in pages]
        if offsets != sorted(offsets):
            raise ValueError(f"pages must be sorted by offset, got {pages}")
        return pages


class Citation(BaseModel):
    """A located quote: the chunk, the span of its original text, the page and the match ratio."""

    model_config = ConfigDict(frozen=True)

    quote: str
    chunk_id: str
    start: int
    end: int
    page: int | None
    ratio: float


class Grounding(BaseModel):
    """How well an answer's quotes ground it: the score and how many quotes were located."""

    model_config = ConfigDict(frozen=True)

    score: float
    quotes: int
    found: int
    all_found: bool


def _too_short(quote: str) -> bool:
    return sum(1 for w in words(quote) if len(w) >= 2) < 2


def _at_word_bounds(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` neither begins nor ends inside a word of ``text``."""
    if start > 0 and is_word_char(text[start - 1]) and is_word_char(text[start]):
        return False
    return not (end < len(text) and is_word_char(text[end - 1]) and is_word_char(text[end]))


def _find(needle: str, haystack: str) -> int | None:
    """The first place ``needle`` occurs in ``haystack`` at word boundaries, else None."""
    at = haystack.find(needle)
    while at >= 0:
        if _at_word_bounds(haystack, at, at + len(needle)):
            return at
        at = haystack.find(needle, at + 1)
    return None


def _near(a: str, b: str) -> bool:
    """Whether two different words are one typo apart: long enough, no digit, one edit."""
    if any(c.isdigit() for c in a + b):
        return False
    return min(len(a), len(b)) >= _NEAR_WORD_LENGTH and OSA.distance(a, b) <= 1


def _same_words(quote: Sequence[str], span: Sequence[str]) -> bool:
    """Whether the span's words are the quote's: in order, none added or left out.

    Where they differ, the differing words must either spell the same when run together ("refund
    window" and "refundwindow") or pair up one to one, each pair one typo apart, a few at most.
    """
    near = 0
    block: list[int] | None = None  # the words differing in a row: [i1, i2, j1, j2]
    blocks: list[list[int]] = []
    for op in Levenshtein.opcodes(quote, span):
        if op.tag == "equal":
            block = None
        elif block is None:
            block = [op.src_start, op.src_end, op.dest_start, op.dest_end]
            blocks.append(block)
        else:
            block[1], block[3] = op.src_end, op.dest_end
    for i1, i2, j1, j2 in blocks:
        ours, theirs = quote[i1:i2], span[j1:j2]
        if "".join(ours) == "".join(theirs):
            continue
        if len(ours) != len(theirs) or not all(map(_near, ours, theirs)):
            return False
        near += len(ours)
    return near <= max(1, len(quote) // _WORDS_PER_NEAR)


def _is_punctuation(c: str) -> bool:
    return not (is_word_char(c) or c.isspace())


def _punctuation_run(text: str, *, leading: bool) -> int:
    """How many characters at one end of ``text`` are punctuation (neither word nor space)."""
    count = 0
    for c in text if leading else reversed(text):
        if not _is_punctuation(c):
            break
        count += 1
    return count


def _fuzzy(quote: str, chunk: NormalText, min_ratio: float) -> tuple[float, int, int] | None:
    """The best fuzzy match of normalized ``quote`` in ``chunk``: (ratio, start, end) normalized."""
    folded_quote = quote.lower()
    alignment = fuzz.partial_ratio_alignment(
        folded_quote, chunk.folded, score_cutoff=min_ratio * 100
    )
    if alignment is None:
        return None
    wanted = [word_key(m.group()) for m in WORD_TOKEN.finditer(quote)]
    # the window may start and end a word or two off: try the word runs around its ends
    slack = 2 * _SLACK_WORDS * _WORD_WIDTH
    tokens = chunk.tokens(alignment.dest_start - slack, alignment.dest_end + slack)
    if not wanted or not tokens:
        return None
    lead = _punctuation_run(quote, leading=True)
    trail = _punctuation_run(quote, leading=False)
    text = chunk.text
    first = bisect.bisect_right([end for _, end, _ in tokens], alignment.dest_start)
    last = bisect.bisect_left([start for start, _, _ in tokens], alignment.dest_end) - 1
    best: tuple[float, int, int] | None = None
    for i in range(max(0, first - _SLACK_WORDS), min(first + _SLACK_WORDS + 1, len(tokens))):
        for j in range(max(i, last - _SLACK_WORDS), min(last + _SLACK_WORDS + 1, len(tokens))):
            if not _same_words(wanted, [key for _, _, key in tokens[i : j + 1]]):
                continue
            start, end = tokens[i][0], tokens[j][1]
            # take the quote's punctuation at either end along, where the chunk has it too
            limit = max(0, start - lead)
            while start > limit and _is_punctuation(text[start - 1]):
                start -= 1
            limit = min(len(text), end + trail)
            while end < limit and _is_punctuation(text[end]):
                end += 1
            if abs((end - start) - len(quote)) > MAX_LENGTH_DIFF * len(quote):
                continue
            ratio = fuzz.ratio(folded_quote, chunk.folded[start:end]) / 100
            if ratio >= min_ratio and (best is None or ratio > best[0]):
                best = (ratio, start, end)
    return best


def _page(chunk: SourceChunk, start: int) -> int | None:
    page = None
    for number, offset in chunk.pages:
        if offset > start:
            break
        page = number
    return page


def _locate(
    quote: str,
    chunks: Sequence[SourceChunk],
    normals: Sequence[NormalText],
    min_ratio: float,
) -> Citation | None:
    if not quote.strip() or _too_short(quote):
        return None
    wanted = NormalText(quote).text.strip()

    def cite(index: int, start: int, end: int, ratio: float) -> Citation:
        chunk = chunks[index]
        a, b = normals[index].original(start, end, chunk.text)
        return Citation(
            quote=quote,
            chunk_id=chunk.chunk_id,
            start=a,
            end=b,
            page=_page(chunk, a),
            ratio=round(ratio, 4),
        )

    for index, normal in enumerate(normals):
        at = _find(wanted, normal.text)
        if at is not None:
            return cite(index, at, at + len(wanted), 1.0)
    folded = wanted.lower()
    if len(folded) == len(wanted):
        for index, normal in enumerate(normals):
            at = _find(folded, normal.folded)
            if at is not None:
                return cite(index, at, at + len(wanted), CASE_RATIO)
    best: tuple[float, int, int, int] | None = None
    for index, normal in enumerate(normals):
        found = _fuzzy(wanted, normal, min_ratio)
        if found is not None and (best is None or found[0] > best[0]):
            best = (found[0], index, found[1], found[2])
    if best is None:
        return None
    ratio, index, start, end = best
    return cite(index, start, end, min(ratio, CASE_RATIO))


def locate(
    quote: str, chunks: Sequence[SourceChunk], *, min_ratio: float = MIN_RATIO
) -> Citation | None:
    """The citation of ``quote`` in the first chunk holding it (exact, then fuzzy), or None."""
    return _locate(quote, chunks, [NormalText(chunk.text) for chunk in chunks], min_ratio)


def copied(text: str, chunks: Sequence[SourceChunk]) -> bool:
    """Whether ``text`` stands word for word in one of ``chunks`` (both normalized as a quote and
    its chunk are, letter case aside): a passage of the context, not words of the model's own."""
    wanted = NormalText(text).text.strip().lower()
    if not wanted:
        return False
    return any(_find(wanted, NormalText(chunk.text).folded) is not None for chunk in chunks)


def locate_all(
    quotes: Sequence[str], chunks: Sequence[SourceChunk], *, min_ratio: float = MIN_RATIO
) -> list[Citation | None]:
    """The citation of each quote (None for one not located), in the order of ``quotes``."""
    normals = [NormalText(chunk.text) for chunk in chunks]
    return [_locate(quote, chunks, normals, min_ratio) for quote in quotes]


def grounding(
    answer: str,
    quotes: Sequence[str],
    citations: Sequence[Citation | None],
    chunks: Sequence[SourceChunk],
) -> Grounding:
    """How well the located quotes ground ``answer`` (see the module docstring for the formula).

    Raises ValueError when ``citations`` and ``quotes`` differ in length, or a citation names a
    chunk not among ``chunks``.
    """
    if len(citations) != len(quotes):
        raise ValueError(f"{len(quotes)} quotes but {len(citations)} citations")
    if not quotes:
        return Grounding(score=0.0, quotes=0, found=0, all_found=False)
    texts = {chunk.chunk_id: chunk.text for chunk in chunks}
    passages: list[str] = []
    for citation in citations:
        if citation is None:
            continue
        if citation.chunk_id not in texts:
            raise ValueError(f"citation of chunk {citation.chunk_id!r}, which is not given")
        # normalized, so a word broken across lines in the chunk counts as the word
        passages.append(NormalText(texts[citation.chunk_id][citation.start : citation.end]).text)
    found = len(passages)
    coverage = overlap(answer, passages)
    return Grounding(
        score=round(coverage * found / len(quotes), 4),
        quotes=len(quotes),
        found=found,
        all_found=found == len(quotes),
    )


def _shown(quote: str) -> str:
    """``quote`` on one line, shortened, in double quotes, escaped for a prompt."""
    line = " ".join(quote.split())
    if len(line) > _SHOWN_QUOTE:
        line = line[: _SHOWN_QUOTE - 3].rstrip() + "..."
    return escape(json.dumps(line, ensure_ascii=False))


def describe_failures(quotes: Sequence[str], citations: Sequence[Citation | None]) -> str:
    """One line naming each quote not located and why, for asking the model again ("" if none)."""
    if len(citations) != len(quotes):
        raise ValueError(f"{len(quotes)} quotes but {len(citations)} citations")
    failures = []
    for number, (quote, citation) in enumerate(zip(quotes, citations, strict=True), start=1):
        if citation is not None:
            continue
        if not quote.strip():
            failures.append(f"quote {number} is empty")
        elif _too_short(quote):
            failures.append(f"quote {number} ({_shown(quote)}) is too short to support anything")
        else:
            failures.append(f"quote {number} ({_shown(quote)}) is not in the context")
    return "; ".join(failures)


__all__ = [
    "CASE_RATIO",
    "MAX_LENGTH_DIFF",
    "MIN_RATIO",
    "Citation",
    "Grounding",
    "SourceChunk",
    "copied",
    "describe_failures",
    "grounding",
    "locate",
    "locate_all",
]
