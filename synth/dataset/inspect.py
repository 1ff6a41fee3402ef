"""What a dataset holds, in numbers: :func:`inspect_dataset` and its :class:`DatasetInspection`.

One function computes every number that ``synth inspect`` prints (and that a report draws): counts
per source file, evolution and difficulty label, the grounding rate, goldens with no citation,
unanswerable goldens, questions that leak their context and near-duplicate questions.

It reads any dataset, synth's or another tool's: every measurement a golden's ``metadata`` may
carry (``evolutions``, ``citations``, ``grounding``, ``difficulty``) is optional, and a golden
without one, or with one of the wrong shape, counts as unmeasured instead of failing. Every
threshold is inclusive: a value at the threshold is over it.
"""

from __future__ import annotations

import math
import os
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from synth._words import overlap, words
from synth.data import Golden
from synth.dataset import Dataset
from synth.dataset._diversity import Diversity, measure_diversity
from synth.errors import ConfigError

if TYPE_CHECKING:
    from synth.store.embedder import Embedder

#: the key of goldens with no source file, no evolution, or no difficulty label
NONE = "(none)"
UNMEASURED = "(unmeasured)"
#: difficulty labels in the order they are listed (any other label follows, sorted)
LABELS = ("easy", "medium", "hard")
#: rows of the similarity matrix computed at once: memory stays (block x goldens), not goldens²
_BLOCK = 1024
#: similarities are compared and reported at this many decimals, so an identical pair is 1.0
_DIGITS = 6


class Leak(BaseModel):
    """A golden whose question shares most of its content words with its own context."""

    model_config = ConfigDict(extra="forbid")

    index: int
    #: share of the input's distinct content words found in its context (0..1)
    overlap: float
    #: ``difficulty``: read from ``metadata.difficulty.overlap``; ``computed``: measured here
    measured: Literal["difficulty", "computed"]


class DuplicatePair(BaseModel):
    """Two goldens (``i < j``) whose inputs' embeddings have cosine ``similarity``."""

    model_config = ConfigDict(extra="forbid")

    i: int
    j: int
    similarity: float


class LengthStats(BaseModel):
    """Lengths in words of ``count`` texts."""

    model_config = ConfigDict(extra="forbid")

    count: int
    mean: float
    median: float
    max: int


class InspectionSettings(BaseModel):
    """The thresholds an inspection used, and the embedder's spec (None: no embedder)."""

    model_config = ConfigDict(extra="forbid")

    embedder: str | None
    duplicate_threshold: float
    leak_threshold: float
    grounding_threshold: float


class DatasetInspection(BaseModel):
    """The numbers of one dataset; golden indexes count from 0, in the dataset's order.

    Counts are ordered most first, then by name (``per_difficulty``: easy, medium, hard, any
    other label, then ``(unmeasured)``). ``without_citation`` lists the goldens that have a
    non-blank expected output, are not marked unanswerable, and whose ``metadata.citations`` is
    empty or missing; ``citations_checked`` counts the goldens that carry a citations list at all,
    so 0 means the dataset records no citations (every answer is listed). ``near_duplicates`` is
    None when no embedder was given.
    """

    model_config = ConfigDict(extra="forbid")

    goldens: int
    per_file: dict[str, int]
    per_evolution: dict[str, int]
    per_difficulty: dict[str, int]
    #: goldens per question type and per component a type tests (``(none)``: not recorded)
    per_question_type: dict[str, int]
    per_component: dict[str, int]
    #: goldens per language they are written in (``metadata["language"]``; ``(none)``: not recorded)
    per_language: dict[str, int] = {}
    #: goldens with a grounding score, and how many of them reach the grounding threshold
    grounding_measured: int
    grounded: int | None
    grounding_rate: float | None
    mean_grounding: float | None
    citations_checked: int
    without_citation: list[int]
    unanswerable: list[int]
    #: overlap at or above the leak threshold, highest first
    leaks: list[Leak]
    #: similarity at or above the duplicate threshold, highest first
    near_duplicates: list[DuplicatePair] | None
    input_words: LengthStats | None
    expected_words: LengthStats | None
    settings: InspectionSettings
    #: how varied the inputs are (:mod:`synth.dataset._diversity`)
    diversity: Diversity | None = None

    def summary(self) -> dict[str, Any]:
        """The aggregate numbers alone (counts and rates, no per-golden lists), as JSON values:
        what a run's manifest records under ``trust``."""
        # of the goldens whose citations were checked, those with at least one
        answered = self.citations_checked
        cited = max(answered - len(self.without_citation), 0) if answered else None
        return {
            "goldens": self.goldens,
            "per_file": self.per_file,
            "per_evolution": self.per_evolution,
            "per_difficulty": self.per_difficulty,
            "per_question_type": self.per_question_type,
            "per_component": self.per_component,
            "per_language": self.per_language,
            "grounding_measured": self.grounding_measured,
            "grounded": self.grounded,
            "grounding_rate": self.grounding_rate,
            "mean_grounding": self.mean_grounding,
            "cited": cited,
            "citation_rate": round(cited / answered, 4) if cited is not None else None,
            "unanswerable": len(self.unanswerable),
            "leaks": len(self.leaks),
            "input_words": _dump(self.input_words),
            "expected_words": _dump(self.expected_words),
            "grounding_threshold": self.settings.grounding_threshold,
            "leak_threshold": self.settings.leak_threshold,
        }


def _dump(stats: LengthStats | None) -> dict[str, Any] | None:
    return stats.model_dump(mode="json") if stats is not None else None


def inspect_dataset(
    dataset: Dataset | str | os.PathLike[str] | Sequence[Golden],
    *,
    embedder: str | Embedder | None = None,
    duplicate_threshold: float = 0.9,
    leak_threshold: float = 0.8,
    grounding_threshold: float = 0.5,
    files_total: int | None = None,
    chunks_total: int | None = None,
) -> DatasetInspection:
    """The numbers of ``dataset`` (a Dataset, a file path or a list of goldens).

    Near duplicates are looked for only with an ``embedder`` (a spec such as ``hash`` or
    ``local:all-MiniLM-L6-v2``, or an :class:`~synth.Embedder`): every pair of inputs is compared,
    which takes seconds up to about 10,000 goldens and grows with their square. An embedder made
    here from a spec is closed when done; one passed in is left open. Each threshold must be
    between 0 and 1 (:class:`~synth.errors.ConfigError` otherwise). The diversity numbers embed
    the inputs with that embedder, else with the hash embedder; ``files_total`` and
    ``chunks_total`` (the corpus's, when known) give the shares of files and sections covered.
    """
    duplicate_threshold = _threshold("duplicate_threshold", duplicate_threshold)
    leak_threshold = _threshold("leak_threshold", leak_threshold)
    grounding_threshold = _threshold("grounding_threshold", grounding_threshold)
    goldens = Dataset.coerce(dataset).goldens
    scores = [s for g in goldens if (s := _number(_field(g, "grounding").get("score"))) is not None]
    grounded = sum(score >= grounding_threshold for score in scores)
    embedder_name, near_duplicates, vectors = None, None, None
    if embedder is not None:
        embedder_name, near_duplicates, vectors = _near_duplicates(
            [g.input for g in goldens], embedder, duplicate_threshold
        )
    diversity = measure_diversity(
        goldens,
        embedder=embedder_name if embedder is not None else None,
        vectors=vectors,
        files_total=files_total,
        chunks_total=chunks_total,
    )
    expected = [g.expected_output for g in goldens if g.expected_output is not None]
    return DatasetInspection(
        goldens=len(goldens),
        per_file=_counts(g.source_files or [NONE] for g in goldens),
        per_evolution=_counts(_evolutions(g) or [NONE] for g in goldens),
        per_difficulty=_difficulty_counts(goldens),
        per_question_type=_counts([_text(g, "question_type")] for g in goldens),
        per_component=_counts([_text(g, "tests")] for g in goldens),
        per_language=_counts([_text(g, "language")] for g in goldens),
        grounding_measured=len(scores),
        grounded=grounded if scores else None,
        grounding_rate=grounded / len(scores) if scores else None,
        mean_grounding=statistics.fmean(scores) if scores else None,
        citations_checked=sum(isinstance(g.metadata.get("citations"), list) for g in goldens),
        without_citation=[i for i, g in enumerate(goldens) if _lacks_citation(g)],
        unanswerable=[i for i, g in enumerate(goldens) if _unanswerable(g)],
        leaks=_leaks(goldens, leak_threshold),
        near_duplicates=near_duplicates,
        input_words=_lengths(g.input for g in goldens),
        expected_words=_lengths(expected),
        settings=InspectionSettings(
            embedder=embedder_name,
            duplicate_threshold=duplicate_threshold,
            leak_threshold=leak_threshold,
            grounding_threshold=grounding_threshold,
        ),
        diversity=diversity,
    )


# ---- reading a golden's optional measurements ----------------------------------------------------
def _field(golden: Golden, key: str) -> Mapping[str, Any]:
    """``metadata[key]`` when it is a mapping, else empty (absent or of another tool's shape)."""
    value = golden.metadata.get(key)
    return value if isinstance(value, Mapping) else {}


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _evolutions(golden: Golden) -> list[str]:
    value = golden.metadata.get("evolutions")
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _unanswerable(golden: Golden) -> bool:
    return _field(golden, "difficulty").get("unanswerable") is True


def _lacks_citation(golden: Golden) -> bool:
    # an answer no quote backs; an unanswerable golden's answer says so and has nothing to cite
    answer = golden.expected_output
    if answer is None or not answer.strip() or _unanswerable(golden):
        return False
    citations = golden.metadata.get("citations")
    return not (isinstance(citations, list) and citations)


# ---- the numbers ---------------------------------------------------------------------------------
def _threshold(name: str, value: object) -> float:
    number = _number(value)
    if number is None or not 0.0 <= number <= 1.0:
        raise ConfigError(f"{name} must be a number between 0 and 1, got {value!r}")
    return number


def _text(golden: Golden, key: str) -> str:
    """The golden's ``metadata[key]`` when it is a non-blank string, else ``(none)``."""
    value = golden.metadata.get(key)
    return value if isinstance(value, str) and value.strip() else NONE


def _counts(keys_per_golden: Iterable[Sequence[str]]) -> dict[str, int]:
    """How many goldens name each key (a golden naming a key twice counts once), most first."""
    counts = Counter(key for keys in keys_per_golden for key in dict.fromkeys(keys))
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def _difficulty_counts(goldens: Sequence[Golden]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for golden in goldens:
        label = _field(golden, "difficulty").get("label")
        counts[label if isinstance(label, str) and label else UNMEASURED] += 1
    order = [*LABELS, *sorted(set(counts) - {*LABELS, UNMEASURED}), UNMEASURED]
    return {label: counts[label] for label in order if counts[label]}


def _leaks(goldens: Sequence[Golden], threshold: float) -> list[Leak]:
    found = []
    for index, golden in enumerate(goldens):
        measured = _number(_field(golden, "difficulty").get("overlap"))
        if measured is not None:
            leak = Leak(index=index, overlap=measured, measured="difficulty")
        else:
            share = overlap(golden.input, golden.context or [])
            leak = Leak(index=index, overlap=share, measured="computed")
        if leak.overlap >= threshold:
            found.append(leak)
    return sorted(found, key=lambda leak: (-leak.overlap, leak.index))


def _near_duplicates(
    inputs: list[str], spec: str | Embedder, threshold: float
) -> tuple[str, list[DuplicatePair], np.ndarray]:
    """The embedder's name, every pair of inputs at or above ``threshold`` (most similar first),
    and the inputs' unit vectors."""
    from synth.store.embedders import make_embedder

    if isinstance(spec, str) and not spec.strip():
        raise ConfigError("embedder: name one (hash, local:<model>, openai:<model>) or pass None")
    embedder = make_embedder(spec)
    try:
        vectors = embedder.embed_array(inputs, label="inspect")  # unit rows: dot is cosine
    finally:
        if embedder is not spec:
            embedder.close()
    pairs = []
    for start in range(0, len(inputs), _BLOCK):
        block = np.round(np.clip(vectors[start : start + _BLOCK] @ vectors.T, -1.0, 1.0), _DIGITS)
        for row, j in zip(*np.nonzero(block >= threshold), strict=True):
            i = start + int(row)
            if j > i:
                pairs.append(DuplicatePair(i=i, j=int(j), similarity=float(block[row, j])))
    pairs.sort(key=lambda pair: (-pair.similarity, pair.i, pair.j))
    return embedder.name, pairs, vectors


def _lengths(texts: Iterable[str]) -> LengthStats | None:
    counts = [len(words(text)) for text in texts]
    if not counts:
        return None
    return LengthStats(
        count=len(counts),
        mean=statistics.fmean(counts),
        median=float(statistics.median(counts)),
        max=max(counts),
    )


__all__ = [
    "DatasetInspection",
    "Diversity",
    "DuplicatePair",
    "InspectionSettings",
    "LengthStats",
    "Leak",
    "inspect_dataset",
]
