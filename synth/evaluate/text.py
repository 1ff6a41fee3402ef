"""Deterministic answer metrics: exact match and token F1 against one or several references.

Both compare normalised text, as the SQuAD evaluation does: lowercase, punctuation removed, the
articles "a", "an" and "the" removed, whitespace collapsed. With several acceptable references the
best score counts.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Sequence

from synth.errors import ConfigError

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """Return ``text`` lowercased, without punctuation or articles, with single spaces."""
    lowered = text.lower()
    no_punct = "".join(
        ch
        for ch in lowered
        if ch not in _PUNCTUATION and not unicodedata.category(ch).startswith("P")
    )
    return " ".join(_ARTICLES.sub(" ", no_punct).split())


def _references(references: str | Sequence[str]) -> list[str]:
    refs = [references] if isinstance(references, str) else list(references)
    if not refs:
        raise ConfigError("at least one reference is needed")
    bad = [type(r).__name__ for r in refs if not isinstance(r, str)]
    if bad:
        raise ConfigError(f"references must be strings, got {', '.join(bad)}")
    return refs


def exact_match(prediction: str, references: str | Sequence[str]) -> float:
    """Return 1.0 when the normalised prediction equals a normalised reference, else 0.0."""
    target = normalize_answer(prediction)
    return float(any(target == normalize_answer(ref) for ref in _references(references)))


def _f1(prediction_tokens: list[str], reference_tokens: list[str]) -> float:
    if not prediction_tokens or not reference_tokens:
        # an empty side matches only another empty side
        return float(prediction_tokens == reference_tokens)
    common = Counter(prediction_tokens) & Counter(reference_tokens)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(prediction_tokens)
    recall = overlap / len(reference_tokens)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, references: str | Sequence[str]) -> float:
    """Return the best F1 of the prediction's normalised tokens against any reference's tokens."""
    tokens = normalize_answer(prediction).split()
    return max(_f1(tokens, normalize_answer(ref).split()) for ref in _references(references))


#: the text metrics :func:`~synth.evaluate.answers.evaluate_answers` knows by name
TEXT_METRICS = {"exact_match": exact_match, "token_f1": token_f1}

__all__ = ["TEXT_METRICS", "exact_match", "normalize_answer", "token_f1"]
