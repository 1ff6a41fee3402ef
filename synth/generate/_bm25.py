"""BM25 over tokenized chunks, the Lucene variant, in numpy: what the difficulty index ranks by.

The scores are bm25s's default ones, computed the same way (k1 1.5, b 0.75; idf
``ln(1 + (N - df + 0.5) / (df + 0.5))``; a term's score in a chunk ``idf * tf / (tf + k1 * (1 - b +
b * len / avg_len))`` kept in float32, and a query's score the float32 sum of its terms' in query
order), without bm25s's import: it brings scipy, half a second of a run's CPU that landed when the
first golden was finished, where every candidate waited for it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

K1 = 1.5
B = 0.75


class BM25:
    """An index of ``documents`` (each a list of tokens); :meth:`scores` of a query's tokens."""

    def __init__(self, documents: Sequence[Sequence[str]], k1: float = K1, b: float = B) -> None:
        self.size = len(documents)
        lengths = np.array([len(doc) for doc in documents])
        average = lengths.mean() if self.size else 0.0
        counts = [Counter(doc) for doc in documents]
        frequency: Counter[str] = Counter()
        for doc in counts:
            frequency.update(doc.keys())
        rows: dict[str, list[int]] = {term: [] for term in frequency}
        values: dict[str, list[float]] = {term: [] for term in frequency}
        idf = {term: np.float32(_idf(df, self.size)) for term, df in frequency.items()}
        for row, doc in enumerate(counts):
            if not doc:
                continue
            terms = list(doc)
            tf = np.array([doc[t] for t in terms], dtype=np.float32)
            weights = np.array([idf[t] for t in terms], dtype=np.float32)
            part = tf / (k1 * ((1 - b) + b * len(documents[row]) / average) + tf)
            for term, value in zip(terms, (weights * part).astype(np.float32), strict=True):
                rows[term].append(row)
                values[term].append(float(value))
        #: term -> (the rows holding it, its float32 score in each)
        self._postings = {
            term: (np.array(rows[term], dtype=np.int64), np.array(values[term], dtype=np.float32))
            for term in frequency
        }

    def scores(self, query: Sequence[str]) -> np.ndarray:
        """Every document's score for ``query`` (float32; a term not indexed adds nothing)."""
        total = np.zeros(self.size, dtype=np.float32)
        for term in query:
            posting = self._postings.get(term)
            if posting is not None:
                total[posting[0]] += posting[1]
        return total


def _idf(df: int, n: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


__all__ = ["B", "BM25", "K1"]
