"""Languages of texts: which one a document, chunk or golden is in, and whether a text is in the
one it should be. Detection is lingua's (``lingua-language-detector``: offline, no download).

Two detectors, each built once, on first use:

- :func:`detect_language` names the language of a document or chunk among all 75 languages lingua
  knows, in its low-accuracy mode (trigrams only: quick to build, and sure of a paragraph or more
  of real text), weighing a doubtful answer again with the full models. It reads at most
  :data:`SAMPLE_CHARS` characters.
- :func:`check_language` judges a short generated text (a question, an answer) against the language
  it must be in, in lingua's high-accuracy mode among :data:`COMMON` languages, the target and the
  corpus' own languages (fewer candidates: far fewer wrong guesses on a ten-word question).

A check is ``"unsure"``, never a mismatch, when the text is too short to judge (under
:data:`MIN_LETTERS` letters, a CJK character counting as :data:`CJK_WEIGHT`), or when no other
language is clearly ahead: a mismatch needs another language with confidence at least
:data:`MIN_CONFIDENCE` and :data:`MIN_MARGIN` above the target's. Scripts settle what they can
first: a Japanese, Chinese or Korean target needs text mostly in those scripts, and any other
target text mostly not.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from lingua import LanguageDetector

#: the metadata key under which documents, chunks, contexts and goldens record their language
LANGUAGE_KEY = "language"
#: the generation setting that writes each golden in its context's language
AUTO = "auto"
#: characters of a document or chunk that detection reads (its start)
SAMPLE_CHARS = 2000
#: a text with fewer letters than this is too short to judge (CJK characters count more)
MIN_LETTERS = 15
#: what one Chinese, Japanese or Korean character counts as toward MIN_LETTERS
CJK_WEIGHT = 3
#: a mismatch needs another language at least this confident ...
MIN_CONFIDENCE = 0.5
#: ... and this far ahead of the target language
MIN_MARGIN = 0.3
#: how sure the quick detection must be of a COMMON language for it to stand
SURE_CONFIDENCE = 0.9
#: languages written in CJK scripts
CJK_LANGUAGES = frozenset({"ja", "zh", "ko"})
#: the candidates every check weighs besides the target and the corpus' languages
COMMON = ("en", "de", "fr", "es", "it", "pt", "nl", "pl", "sv", "ru", "ja", "zh", "ko")

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def _lingua() -> tuple[type, type]:
    from lingua import IsoCode639_1, Language

    return IsoCode639_1, Language


def normalize_code(code: str) -> str:
    """``code`` as a lowercase ISO 639-1 code lingua knows; ValueError otherwise."""
    iso, _ = _lingua()
    cleaned = code.strip().lower()
    try:
        iso.from_str(cleaned)  # type: ignore[attr-defined]
    except ValueError:
        raise ValueError(
            f"unknown language {code!r}: use 'auto' or an ISO 639-1 code such as 'en', 'de', 'ja'"
        ) from None
    return cleaned


@cache
def language_name(code: str) -> str:
    """The English name of the language ``code`` ("de" -> "German")."""
    iso, language = _lingua()
    return str(language.from_iso_code_639_1(iso.from_str(code)).name.title())  # type: ignore[attr-defined]


def _code_of(language: object) -> str:
    return str(language.iso_code_639_1.name.lower())  # type: ignore[attr-defined]


@cache
def _document_detector() -> LanguageDetector:
    from lingua import LanguageDetectorBuilder

    return LanguageDetectorBuilder.from_all_languages().with_low_accuracy_mode().build()


@cache
def _check_detector(codes: frozenset[str]) -> LanguageDetector:
    from lingua import LanguageDetectorBuilder

    iso, _ = _lingua()
    isos = [iso.from_str(c) for c in sorted(codes)]  # type: ignore[attr-defined]
    return LanguageDetectorBuilder.from_iso_codes_639_1(*isos).build()


def _weight(text: str) -> tuple[int, int]:
    """(letters that are not CJK, CJK characters) of ``text``."""
    cjk = len(_CJK.findall(text))
    letters = sum(1 for ch in text if ch.isalpha())
    return letters - cjk, cjk


def long_enough(text: str) -> bool:
    """Whether ``text`` holds enough letters for its language to be judged."""
    other, cjk = _weight(text)
    return other + CJK_WEIGHT * cjk >= MIN_LETTERS


def _confident(detector: LanguageDetector, text: str, least: float) -> str | None:
    values = detector.compute_language_confidence_values(text)
    if not values or float(values[0].value) < least:
        return None
    return _code_of(values[0].language)


def detect_language(text: str) -> str | None:
    """The ISO 639-1 code of the language ``text`` (its first SAMPLE_CHARS characters) is in;
    None when it is too short to tell or no language is clearly ahead.

    All 75 languages are weighed with trigrams (lingua's low-accuracy mode: quick to load, sure
    of any paragraph of real text). A :data:`COMMON` language it is at least
    :data:`SURE_CONFIDENCE` sure of is the answer; anything else (a rare language, or a doubt) is
    weighed again with lingua's full models among :data:`COMMON` and that language, and the one
    ahead there with at least :data:`MIN_CONFIDENCE` is the answer. A list of words with no
    sentence around them ("photovoltaic cells inverter rooftop") is Norwegian to trigrams alone,
    English to the full models.
    """
    sample = text[:SAMPLE_CHARS]
    if not long_enough(sample):
        return None
    values = _document_detector().compute_language_confidence_values(sample)
    if not values:
        return None
    first = _code_of(values[0].language)
    if first in COMMON and float(values[0].value) >= SURE_CONFIDENCE:
        return first
    again = _check_detector(frozenset({*COMMON, first})).compute_language_confidence_values(sample)
    if not again or float(again[0].value) < MIN_CONFIDENCE:
        return None
    return _code_of(again[0].language)


def document_language(text: str) -> str | None:
    """The main language of a document: of samples from its start, middle and end."""
    if len(text) <= 3 * SAMPLE_CHARS:
        return main_language(
            [text[i : i + SAMPLE_CHARS] for i in range(0, len(text), SAMPLE_CHARS)]
        )
    middle = len(text) // 2
    samples = [text[:SAMPLE_CHARS], text[middle : middle + SAMPLE_CHARS], text[-SAMPLE_CHARS:]]
    return main_language(samples)


def main_language(texts: Iterable[str]) -> str | None:
    """The language most characters of ``texts`` are in (None when none can be told)."""
    weights: Counter[str] = Counter()
    for text in texts:
        code = detect_language(text)
        if code is not None:
            weights[code] += len(text)
    return weights.most_common(1)[0][0] if weights else None


@dataclass(frozen=True)
class LanguageVerdict:
    """Whether a text is in its target language: ``"match"``, ``"mismatch"`` or ``"unsure"``
    (too short, or no language clearly ahead), and the language found (None when unsure)."""

    status: Literal["match", "mismatch", "unsure"]
    target: str
    found: str | None = None
    confidence: float = 0.0

    @property
    def mismatch(self) -> bool:
        return self.status == "mismatch"

    def reason(self, what: str = "text") -> str:
        """One line saying what is wrong, for asking the model again and for the rejects."""
        found = language_name(self.found) if self.found else "another language"
        return (
            f"the {what} is written in {found} (confidence {self.confidence:.2f}), "
            f"but it must be written in {language_name(self.target)}"
        )


def check_language(text: str, target: str, also: Iterable[str] = ()) -> LanguageVerdict:
    """Whether ``text`` is written in ``target`` (an ISO 639-1 code); ``also`` are more candidate
    languages (the corpus' own), weighed with :data:`COMMON`."""
    other, cjk = _weight(text)
    if other + CJK_WEIGHT * cjk < MIN_LETTERS:
        return LanguageVerdict("unsure", target)
    share = cjk / (other + cjk)
    if target in CJK_LANGUAGES and share < 0.3 and other >= MIN_LETTERS:
        found = detect_language(text)
        return LanguageVerdict("mismatch", target, found, round(1.0 - share, 2))
    if target not in CJK_LANGUAGES and share > 0.5:
        found = detect_language(text)
        return LanguageVerdict("mismatch", target, found, round(share, 2))
    codes = frozenset({*COMMON, target, *also})
    values = _check_detector(codes).compute_language_confidence_values(text)
    confidences = {_code_of(v.language): float(v.value) for v in values}
    if not confidences:
        return LanguageVerdict("unsure", target)
    top = max(confidences, key=lambda c: confidences[c])
    best = confidences[top]
    if top == target:
        return LanguageVerdict("match", target, top, round(best, 2))
    ahead = best - confidences.get(target, 0.0)
    if best >= MIN_CONFIDENCE and ahead >= MIN_MARGIN:
        return LanguageVerdict("mismatch", target, top, round(best, 2))
    return LanguageVerdict("unsure", target)


__all__ = [
    "AUTO",
    "CJK_LANGUAGES",
    "COMMON",
    "LANGUAGE_KEY",
    "MIN_CONFIDENCE",
    "MIN_LETTERS",
    "MIN_MARGIN",
    "SURE_CONFIDENCE",
    "LanguageVerdict",
    "check_language",
    "detect_language",
    "document_language",
    "language_name",
    "long_enough",
    "main_language",
    "normalize_code",
]
