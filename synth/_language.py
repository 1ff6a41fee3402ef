"""Languages of texts: which one a document, chunk or golden is in, and whether a text is in the
one it should be. Detection is lingua's (``lingua-language-detector``: offline, no download).

Two detectors, each built once, on first use:

- :func:`detect_language` names the language of a document or chunk: among :data:`COMMON`
  languages with lingua's full models, and only when none is sure among all 75 languages lingua
  knows (see its docstring). It reads the first :data:`SAMPLE_CHARS` characters (a chunk's, and
  up to five samples of a document's): about half a millisecond a chunk.
- :func:`check_language` judges a short generated text (a question, an answer) against the language
  it must be in, among :data:`COMMON` languages, the target and the corpus' own languages (fewer
  candidates: far fewer wrong guesses on a ten-word question). Trigrams first (lingua's
  low-accuracy mode, a third of a second to load): a text they find in its target at least
  :data:`QUICK_CONFIDENCE` likely is a match. Any other text is judged again in lingua's
  high-accuracy mode, whose models for short texts take seconds to load and hold the
  interpreter while they do: they load when the first text in doubt comes, one language at a
  time on a daemon thread, and that text waits for them off the loop (:func:`prepare_checks`).
  Not ahead of need: loaded ahead, each language's load (0.3 s of a core) held the interpreter
  in every run, and a Ctrl-C waited for it on a busy machine.

A check is ``"unsure"``, never a mismatch, when the text is too short to judge (under
:data:`MIN_LETTERS` letters, a CJK character counting as :data:`CJK_WEIGHT`), or when no other
language is clearly ahead: a mismatch needs another language with confidence at least
:data:`MIN_CONFIDENCE` and :data:`MIN_MARGIN` above the target's. Scripts settle what they can
first: a Japanese, Chinese or Korean target needs text mostly in those scripts, and any other
target text mostly not.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from synth._function_words import ASCII_FUNCTION_WORDS, FUNCTION_WORDS

if TYPE_CHECKING:
    from lingua import LanguageDetector

T = TypeVar("T")

#: the metadata key under which documents, chunks, contexts and goldens record their language
LANGUAGE_KEY = "language"
#: the generation setting that writes each golden in its context's language
AUTO = "auto"
#: characters of a document or chunk that detection reads (its start)
SAMPLE_CHARS = 600
#: a text with fewer letters than this is too short to judge (CJK characters count more)
MIN_LETTERS = 15
#: what one Chinese, Japanese or Korean character counts as toward MIN_LETTERS
CJK_WEIGHT = 3
#: a mismatch needs another language at least this confident ...
MIN_CONFIDENCE = 0.5
#: ... and this far ahead of the target language
MIN_MARGIN = 0.3
#: how sure detection must be of a language to look no further
SURE_CONFIDENCE = 0.9
#: a check whose trigrams alone find the target at least this likely is a match (see the module)
QUICK_CONFIDENCE = 0.7
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
def _check_detector(codes: frozenset[str], quick: bool = False) -> LanguageDetector:
    from lingua import LanguageDetectorBuilder

    iso, _ = _lingua()
    isos = [iso.from_str(c) for c in sorted(codes)]  # type: ignore[attr-defined]
    builder = LanguageDetectorBuilder.from_iso_codes_639_1(*isos)
    return (builder.with_low_accuracy_mode() if quick else builder).build()


def _weight(text: str) -> tuple[int, int]:
    """(letters that are not CJK, CJK characters) of ``text``."""
    cjk = len(_CJK.findall(text))
    letters = sum(1 for ch in text if ch.isalpha())
    return letters - cjk, cjk


def long_enough(text: str) -> bool:
    """Whether ``text`` holds enough letters for its language to be judged."""
    other, cjk = _weight(text)
    return other + CJK_WEIGHT * cjk >= MIN_LETTERS


def _uses(text: str, listed: frozenset[str]) -> bool:
    """Whether ``text`` uses enough of the function words ``listed`` (one word in twenty, and
    at least two)."""
    tokens = [w.lower() for w in re.findall(r"\w+", text)]
    return sum(1 for w in tokens if w in listed) >= max(2, len(tokens) // 20)


def _has_function_words(text: str, code: str) -> bool:
    listed = FUNCTION_WORDS.get(code)
    if listed is None:
        return True  # a language with its own script: the script said enough
    return _uses(text, listed)


def _plain(text: str) -> bool:
    """Whether every letter of ``text`` is an ASCII one."""
    return all(ch.isascii() for ch in text if ch.isalpha())


def _may_be_rare(text: str) -> bool:
    """Whether ``text`` may be in a language outside :data:`COMMON`: it has a letter outside
    ASCII (as nearly every such language written in Latin letters does), or the function words
    of one written in plain ASCII. English word salad has neither, and so is never weighed
    among all 75 languages (whose models take longer to load than the rest of detection)."""
    return not _plain(text) or any(_uses(text, w) for w in ASCII_FUNCTION_WORDS.values())


def _may_be_named(text: str) -> bool:
    """Whether detection could name a language for ``text`` at all: not when its letters are
    plain ASCII (no Cyrillic or CJK language, then) and it uses the function words of no list:
    each path below needs some. Such text (word salad) is settled without asking lingua."""
    if not _plain(text):
        return True
    return any(_uses(text, w) for w in (*FUNCTION_WORDS.values(), *ASCII_FUNCTION_WORDS.values()))


def _mostly_words(text: str) -> bool:
    """Whether most of ``text``'s tokens are words of letters alone: codes such as "grid12" or
    "P-4a" are no language, though trigram models happily name one (Estonian, for "sol12 grid5")."""
    tokens = re.findall(r"\w+", text)
    words = sum(1 for token in tokens if token.isalpha())
    return not tokens or words >= 0.6 * len(tokens)


def _repeats_words(text: str) -> bool:
    """Whether ``text`` reads like language: at least 30 words, and (as every language does: its
    function words) some of them again; made-up words almost never repeat."""
    tokens = [w.lower() for w in re.findall(r"\w+", text)]
    return len(tokens) >= 30 and (len(tokens) - len(set(tokens))) / len(tokens) >= 0.1


def detect_language(text: str) -> str | None:
    """The ISO 639-1 code of the language ``text`` (its first SAMPLE_CHARS characters) is in;
    None when it is too short to tell or no language is sure.

    A text in plain ASCII letters that uses the function words of no list gets none without a
    model being asked (:func:`_may_be_named`). The :data:`COMMON` languages are weighed first, with lingua's full models (quick: their
    models are few); one at least :data:`SURE_CONFIDENCE` likely whose :data:`FUNCTION_WORDS`
    the text uses is the answer. Otherwise (and only if the text has a letter outside ASCII, or
    the function words of a rare language written without: :data:`ASCII_FUNCTION_WORDS`) all 75
    languages are weighed with
    trigrams (lingua's low-accuracy mode), and a rare language they are sure of is the answer if
    the full models, weighing it with :data:`COMMON`, agree, and the text has 30 words or more,
    some of them repeated (as real text repeats its function words). Nothing else is: made-up words, or
    a list of nouns with no sentence around them ("photovoltaic cells inverter rooftop"), get no
    language, and so no check of their goldens.
    """
    sample = text[:SAMPLE_CHARS]
    if not long_enough(sample) or not _mostly_words(sample):
        return None
    if not _may_be_named(sample):
        return None
    common, likely = _top(_check_detector(frozenset(COMMON)), sample)
    if common is not None and likely >= SURE_CONFIDENCE and _has_function_words(sample, common):
        return common
    if not _repeats_words(sample) or not _may_be_rare(sample):
        return None
    rare, sure = _top(_document_detector(), sample)
    if rare is not None and rare not in COMMON and sure >= SURE_CONFIDENCE:
        again, agreed = _top(_check_detector(frozenset({*COMMON, rare})), sample)
        if again == rare and agreed >= MIN_CONFIDENCE:
            return rare
    return None


def _top(detector: LanguageDetector, text: str) -> tuple[str | None, float]:
    """The language ``detector`` finds likeliest for ``text``, and how likely."""
    values = detector.compute_language_confidence_values(text)
    if not values:
        return None, 0.0
    return _code_of(values[0].language), float(values[0].value)


#: samples a document's languages are read from at most (spread evenly over its text)
DOCUMENT_SAMPLES = 5


def _sample_order(count: int) -> list[int]:
    """The order samples are read in: the first, the last, then those between."""
    return [0, count - 1, *range(1, count - 1)] if count > 1 else [0]


def document_languages(text: str) -> list[str]:
    """The languages of a document, main one first (more than one: the document mixes languages,
    and its chunks are detected one by one).

    Up to :data:`DOCUMENT_SAMPLES` samples spread over its text are read, the first and the last
    first: when those two agree (the same language, or both none) the document is settled, and
    only on disagreement are the samples between read too.
    """
    count = max(1, min(DOCUMENT_SAMPLES, len(text) // SAMPLE_CHARS))
    last = max(0, len(text) - SAMPLE_CHARS)  # the last sample ends with the text
    starts = [last * i // max(1, count - 1) for i in range(count)]
    found: Counter[str] = Counter()
    seen: list[str | None] = []
    for index in _sample_order(len(starts)):
        code = detect_language(text[starts[index] : starts[index] + SAMPLE_CHARS])
        seen.append(code)
        if code is not None:
            found[code] += 1
        if len(seen) == 2 and seen[0] == seen[1]:
            break
    return [code for code, _ in found.most_common()]


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


def _confidences(detector: LanguageDetector, text: str) -> dict[str, float]:
    values = detector.compute_language_confidence_values(text)
    return {_code_of(v.language): float(v.value) for v in values}


def check_codes(target: str, also: Iterable[str] = ()) -> frozenset[str]:
    """The languages a check against ``target`` weighs: :data:`COMMON`, the target, ``also``."""
    return frozenset({*COMMON, target, *(c for c in also if c)})


def _settled(text: str, target: str, also: Iterable[str]) -> LanguageVerdict | frozenset[str]:
    """The verdict on ``text`` when it needs no full model (too short, a script that settles it,
    the trigrams sure of a match); else the languages the full models must weigh."""
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
    codes = check_codes(target, also)
    quick = _quick_confidences(codes, text)
    if quick and max(quick, key=lambda c: quick[c]) == target and quick[target] >= QUICK_CONFIDENCE:
        return LanguageVerdict("match", target, target, round(quick[target], 2))
    return codes


@lru_cache(maxsize=1024)
def _quick_confidences(codes: frozenset[str], text: str) -> dict[str, float]:
    """The trigrams' confidences for ``text`` among ``codes``, kept: :func:`prepare_checks` and
    the :func:`check_language` that follows it ask for the same text (read them, never change)."""
    return _confidences(_check_detector(codes, quick=True), text)


#: a text of Latin letters only: its check loads the models of every Latin-script candidate
_WARM_TEXT = "the first words of a text in no language in particular"


def warm_checks(target: str, also: Iterable[str] = ()) -> None:
    """Load now the trigram models that checks against ``target`` weigh (with :data:`COMMON`
    and ``also``); see :func:`synth.generate.language.warm_checks_soon`."""
    _confidences(_check_detector(check_codes(target, also), quick=True), _WARM_TEXT)


#: the languages of :data:`COMMON` written in Latin letters: a check of a text in Latin letters
#: weighs the full models of every one of them (lingua settles a text in Cyrillic, Chinese,
#: Japanese or Korean letters by its letters, with no model)
LATIN_COMMON = ("de", "en", "es", "fr", "it", "nl", "pl", "pt", "sv")
_full_loaded: set[str] = set()
_full_lock = threading.Lock()


def full_models_for(target: str, also: Iterable[str] = ()) -> list[str]:
    """The languages whose full models checks against ``target`` (in a corpus of the languages
    ``also``) will need: those languages, and the Latin-letter ones of :data:`COMMON` when one of
    them is among those (its texts are weighed against all of them)."""
    codes = {target, *(c for c in also if c)}
    if codes & set(LATIN_COMMON):
        codes |= set(LATIN_COMMON)
    return sorted(codes, key=lambda code: (code != "en", code))


def load_full_models(codes: Iterable[str]) -> None:
    """Load lingua's full models of ``codes`` now (once a process; lingua keeps them for every
    detector). One language at a time: a load holds the interpreter's lock throughout (0.3 s of
    a core a language), so a thread running this lets the event loop in between languages."""
    from lingua import LanguageDetectorBuilder

    iso, _ = _lingua()
    for code in codes:
        with _full_lock:
            if code in _full_loaded:
                continue
            other = next(iter(_full_loaded), "de" if code == "en" else "en")  # lingua needs two
            isos = [iso.from_str(c) for c in (code, other)]  # type: ignore[attr-defined]
            builder = LanguageDetectorBuilder.from_iso_codes_639_1(*isos)
            builder.with_preloaded_language_models().build()
            _full_loaded.update((code, other))


@lru_cache(maxsize=1024)
def _full_confidences(codes: frozenset[str], text: str) -> dict[str, float]:
    """The full models' confidences for ``text`` among ``codes`` (kept for the check that
    follows :func:`prepare_checks`)."""
    return _confidences(_check_detector(codes), text)


def check_language(text: str, target: str, also: Iterable[str] = ()) -> LanguageVerdict:
    """Whether ``text`` is written in ``target`` (an ISO 639-1 code); ``also`` are more candidate
    languages (the corpus' own), weighed with :data:`COMMON`."""
    settled = _settled(text, target, also)
    if isinstance(settled, LanguageVerdict):
        return settled
    confidences = _full_confidences(settled, text)
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


async def prepare_checks(
    texts: Iterable[str], target: str | None, also: Iterable[str] = ()
) -> None:
    """Judge off the event loop the ``texts`` the trigrams leave in doubt (their full models'
    confidences, on a thread), so that the :func:`check_language` of each that follows, on the
    loop, finds them ready. Nothing to do without a ``target``."""
    if not target:
        return
    also = [c for c in also if c]
    for text in texts:
        settled = _settled(text, target, also)
        if not isinstance(settled, LanguageVerdict):
            # loaded one language at a time (the loop runs in between), unless loaded already
            await _on_a_daemon(load_full_models, full_models_for(target, also))
            await _on_a_daemon(_full_confidences, settled, text)


async def _on_a_daemon(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on a daemon thread, awaited. Not ``asyncio.to_thread``: the loop's executor
    is joined when the run ends, so a Ctrl-C would wait for a load it cannot stop midway (seconds
    of a core); a daemon thread is left behind by an exit."""
    import asyncio  # here: `synth --help` reaches this module and must not load asyncio

    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if done.done():  # the waiting task was cancelled
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(value)

    def work() -> None:
        value: Any = None
        error: BaseException | None = None
        try:
            value = fn(*args)
        except Exception as exc:  # handed to the task that waits, raised there
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=work, name="synth-language-check", daemon=True).start()
    return await done


__all__ = [
    "ASCII_FUNCTION_WORDS",
    "AUTO",
    "CJK_LANGUAGES",
    "COMMON",
    "FUNCTION_WORDS",
    "LANGUAGE_KEY",
    "LATIN_COMMON",
    "MIN_CONFIDENCE",
    "MIN_LETTERS",
    "MIN_MARGIN",
    "QUICK_CONFIDENCE",
    "SURE_CONFIDENCE",
    "LanguageVerdict",
    "check_language",
    "detect_language",
    "document_languages",
    "full_models_for",
    "language_name",
    "load_full_models",
    "long_enough",
    "main_language",
    "normalize_code",
    "prepare_checks",
    "warm_checks",
]
