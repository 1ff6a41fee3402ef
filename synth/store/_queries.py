"""What a store query is made of: its vectors as a 2-d array, its source filter, and reading one
row of Chroma's column-wise answer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from synth.errors import ConfigError


def query_matrix(embeddings: Any, n_results: int) -> np.ndarray:
    """``embeddings`` as a float32 matrix, one row per query (a single vector becomes one row);
    ConfigError for another shape or an ``n_results`` under 1."""
    queries = np.asarray(embeddings, dtype=np.float32)
    if queries.ndim == 1:
        queries = queries[None, :]
    if queries.ndim != 2:
        raise ConfigError(f"query embeddings must be a 2-d array, got shape {queries.shape}")
    if n_results < 1:
        raise ConfigError(f"n_results must be at least 1, got {n_results}")
    return queries


def source_filter(source: str | Sequence[str] | None) -> dict[str, Any] | None:
    """The Chroma ``where`` that keeps chunks of ``source`` (one file or several); None for all."""
    if source is None:
        return None
    if isinstance(source, str):
        return {"source": source}
    sources = list(source)
    if not sources:
        raise ConfigError("source filter is an empty list")
    return {"source": sources[0]} if len(sources) == 1 else {"source": {"$in": sources}}


def column(answer: Mapping[str, Any], key: str, row: int) -> Any:
    """Row ``row`` of the column ``key`` of a Chroma answer, or None when it was not asked for."""
    values = answer.get(key)
    return None if values is None else values[row]


__all__ = ["column", "query_matrix", "source_filter"]
