"""What a nearest-neighbour query checks first: its vectors as a 2-d array, and how many it asks."""

from __future__ import annotations

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


__all__ = ["query_matrix"]
