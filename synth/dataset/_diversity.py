"""How varied a dataset's inputs are: :func:`measure_diversity` and its :class:`Diversity`.

Five numbers, each over the goldens' inputs (docs/quality.md says how to read them):

- ``distinct_1`` / ``distinct_2``: distinct words (word pairs) over all words (word pairs) of the
  inputs, lowercased; 1.0 means no word (pair) is used twice;
- ``self_repetition``: the mean, over inputs, of the share of an input's word triples that
  another input also has (0: no input repeats another's phrasing; high: templated questions);
- ``embedding_spread``: the mean cosine distance of the inputs' embeddings to their centroid
  (0: all alike); the embedder is the one given, else the run's when it is the hash embedder
  (it needs no model and no request), else the hash embedder, and ``embedder`` says which;
- ``files_covered`` / ``sections_covered``: distinct source files, and distinct sections (a
  golden's ``metadata["heading"]`` path when it records one, else its seed chunk), with their
  share of the corpus when the run's totals are known (``files_total``, ``chunks_total``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from synth._words import words
from synth.data import Golden

if TYPE_CHECKING:
    from synth.store.embedder import Embedder

#: the n of the n-grams self-repetition compares
REPEAT_N = 3
#: the embedder used when none is given and the run's cannot be used without a model or a request
DEFAULT_EMBEDDER = "hash"


class Diversity(BaseModel):
    """The diversity numbers of a dataset's inputs (None where there is nothing to measure)."""

    model_config = ConfigDict(extra="forbid")

    inputs: int
    distinct_1: float | None
    distinct_2: float | None
    self_repetition: float | None
    embedding_spread: float | None
    #: the embedder's name, and why it was chosen: ``given``, ``run`` or ``default``
    embedder: str | None
    embedder_source: str | None
    files_covered: int
    files_total: int | None
    files_share: float | None
    sections_covered: int
    #: what a section is here: ``heading`` (recorded heading paths) or ``seed chunk``
    sections_by: str
    chunks_total: int | None
    sections_share: float | None


def measure_diversity(
    goldens: Sequence[Golden],
    *,
    embedder: str | Embedder | None = None,
    vectors: np.ndarray | None = None,
    files_total: int | None = None,
    chunks_total: int | None = None,
) -> Diversity:
    """The diversity of ``goldens``' inputs (see the module docstring).

    ``vectors``: the inputs' unit embeddings already made by ``embedder`` (then nothing is embedded
    again). ``files_total`` / ``chunks_total``: the corpus's files and chunks, when known.
    """
    inputs = [g.input for g in goldens]
    tokens = [[w.lower() for w in words(text)] for text in inputs]
    spread, name, source = None, None, None
    if len(inputs) >= 2:
        spec, source = _choose(goldens, embedder)
        if vectors is None:
            vectors, name = _embed(inputs, spec)
        else:
            name = spec if isinstance(spec, str) else spec.name
        spread = _spread(vectors)
    files = {f for g in goldens for f in g.source_files}
    headings = [_heading(g) for g in goldens]
    by_heading = any(h is not None for h in headings)
    if by_heading:
        sections = {(tuple(g.source_files), h) for g, h in zip(goldens, headings, strict=True)}
    else:
        sections = {(tuple(g.source_files), g.context_ids[0]) for g in goldens if g.context_ids}
    return Diversity(
        inputs=len(inputs),
        distinct_1=_distinct(tokens, 1),
        distinct_2=_distinct(tokens, 2),
        self_repetition=_self_repetition(tokens, REPEAT_N),
        embedding_spread=spread,
        embedder=name,
        embedder_source=source,
        files_covered=len(files),
        files_total=files_total,
        files_share=_share(len(files), files_total),
        sections_covered=len(sections),
        sections_by="heading" if by_heading else "seed chunk",
        chunks_total=chunks_total,
        sections_share=None if by_heading else _share(len(sections), chunks_total),
    )


def diversity_rows(diversity: Diversity) -> list[tuple[str, str]]:
    """The diversity numbers as (measure, value) rows, each value with what it is of."""

    def number(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    def covered(count: int, total: int | None, share: float | None, what: str) -> str:
        if total is None or share is None:
            return f"{count} (the corpus's {what} are not known)"
        return f"{count} of {total} ({share:.1%})"

    embedder = {"given": "given", "run": "the run's", "default": "the default"}.get(
        diversity.embedder_source or "", ""
    )
    spread = number(diversity.embedding_spread)
    if diversity.embedding_spread is not None:
        spread += f" ({embedder} embedder {diversity.embedder})"
    sections = covered(
        diversity.sections_covered, diversity.chunks_total, diversity.sections_share, "chunks"
    )
    return [
        ("distinct-1 (words)", number(diversity.distinct_1)),
        ("distinct-2 (word pairs)", number(diversity.distinct_2)),
        ("self-repetition (word triples)", number(diversity.self_repetition)),
        ("embedding spread", spread),
        (
            "files covered",
            covered(diversity.files_covered, diversity.files_total, diversity.files_share, "files"),
        ),
        (f"sections covered (by {diversity.sections_by})", sections),
    ]


def corpus_totals(manifest: Mapping[str, Any] | None) -> tuple[int | None, int | None]:
    """The files and chunks of the corpus a run drew from, from its manifest (None: unknown)."""
    coverage = (manifest or {}).get("coverage")
    if not isinstance(coverage, Mapping):
        return None, None
    files, chunks = coverage.get("files_ingested"), coverage.get("chunks_stored")
    return (
        files if isinstance(files, int) and not isinstance(files, bool) else None,
        chunks if isinstance(chunks, int) and not isinstance(chunks, bool) else None,
    )


def _ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def _distinct(tokens: Iterable[Sequence[str]], n: int) -> float | None:
    grams = [g for t in tokens for g in _ngrams(t, n)]
    return round(len(set(grams)) / len(grams), 4) if grams else None


def _self_repetition(tokens: Sequence[Sequence[str]], n: int) -> float | None:
    sets = [set(_ngrams(t, n)) for t in tokens]
    # how many inputs hold each n-gram: one held by two or more is repeated across inputs
    holders = Counter(g for s in sets for g in s)
    shares = [sum(holders[g] > 1 for g in s) / len(s) for s in sets if s]
    return round(sum(shares) / len(shares), 4) if len(shares) >= 2 else None


def _spread(vectors: np.ndarray) -> float:
    centroid = vectors.mean(axis=0)
    norm = float(np.linalg.norm(centroid))
    if norm == 0.0:
        return 1.0
    cosines = vectors @ (centroid / norm)
    return round(float(np.mean(1.0 - cosines)), 4)


def _choose(goldens: Sequence[Golden], given: str | Embedder | None) -> tuple[Any, str]:
    """The embedder for the spread and why: the one given, the run's hash embedder, or hash."""
    if given is not None:
        return given, "given"
    for golden in goldens:
        models = golden.metadata.get("models")
        spec = models.get("embedder") if isinstance(models, dict) else None
        name = spec.get("embedder") if isinstance(spec, dict) else None
        if isinstance(name, str) and name.startswith("hash"):
            return DEFAULT_EMBEDDER, "run"
    return DEFAULT_EMBEDDER, "default"


def _embed(inputs: list[str], spec: str | Embedder) -> tuple[np.ndarray, str]:
    from synth.store.embedders import make_embedder

    embedder = make_embedder(spec)
    try:
        return embedder.embed_array(inputs, label="inspect"), embedder.name
    finally:
        if embedder is not spec:
            embedder.close()


def _heading(golden: Golden) -> str | None:
    value = golden.metadata.get("heading")
    if isinstance(value, list):
        value = " > ".join(str(v) for v in value)
    return value if isinstance(value, str) and value.strip() else None


def _share(part: int, whole: int | None) -> float | None:
    return round(part / whole, 4) if whole else None


__all__ = ["Diversity", "corpus_totals", "diversity_rows", "measure_diversity"]
