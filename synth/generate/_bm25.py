"""BM25 over tokenized chunks, the Lucene variant, in numpy: what the difficulty index ranks by.

The scores are bm25s's default ones, computed the same way (k1 1.5, b 0.75; idf
``ln(1 + (N - df + 0.5) / (df + 0.5))``; a term's score in a chunk ``idf * tf / (tf + k1 * (1 - b +
b * len / avg_len))`` kept in float32, and a query's score the float32 sum of its terms' in query
order), without bm25s's import: it brings scipy, half a second of a run's CPU that landed when the
first golden was finished, where every candidate waited for it.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

K1 = 1.5
B = 0.75


class BM25:
    """An index of ``documents`` (each a list of tokens, read once); :meth:`scores` of a query's
    tokens.

    The postings are flat arrays (each term's rows and scores one slice of them), built one
    document at a time, not a Python list per term after a Counter per document: a run's index
    over 200,000 chunks holds about ten million postings, a gigabyte at its peak that way.
    """

    def __init__(self, documents: Iterable[Sequence[str]], k1: float = K1, b: float = B) -> None:
        vocabulary: dict[str, int] = {}
        lengths, rows, terms, counts = array("q"), array("i"), array("i"), array("f")
        for row, doc in enumerate(documents):
            lengths.append(len(doc))
            for term, tf in Counter(doc).items():
                terms.append(vocabulary.setdefault(term, len(vocabulary)))
                rows.append(row)
                counts.append(tf)
        self.size = len(lengths)
        term_of = np.array(terms, dtype=np.intp)
        row_of = np.array(rows, dtype=np.int32)
        del terms, rows
        length = np.array(lengths, dtype=np.int64)
        average = length.mean() if self.size else 0.0
        frequency = np.bincount(term_of, minlength=len(vocabulary))
        idf = np.array([_idf(int(df), self.size) for df in frequency], dtype=np.float32)
        # as bm25s computes it: a float32 idf times a float64 term weight, stored in float32
        norm = np.zeros(self.size, dtype=np.float64)
        if average > 0:  # else no document holds a token, and there is no posting to weigh
            norm = k1 * ((1 - b) + b * length / average)
        weight = np.array(counts, dtype=np.float64)
        del counts
        denominator = norm[row_of]
        denominator += weight
        np.divide(weight, denominator, out=weight)
        del denominator
        weight *= idf[term_of]
        values = weight.astype(np.float32)
        del weight
        order = np.argsort(term_of, kind="stable")  # each term's postings in row order
        del term_of
        self._vocabulary = vocabulary
        self._idf = idf
        self._k1, self._b, self._average = k1, b, float(average)
        self._rows = row_of[order]
        self._values = values[order]
        self._starts = np.concatenate(([0], np.cumsum(frequency))).astype(np.int64)

    @property
    def postings(self) -> int:
        """How many (term, document) pairs the index holds."""
        return len(self._rows)

    def scores(self, query: Sequence[str]) -> np.ndarray:
        """Every document's score for ``query`` (float32; a term not indexed adds nothing)."""
        total = np.zeros(self.size, dtype=np.float32)
        for term in query:
            index = self._vocabulary.get(term)
            if index is not None:
                start, end = self._starts[index], self._starts[index + 1]
                total[self._rows[start:end]] += self._values[start:end]
        return total

    def score(self, query: Sequence[str], document: Sequence[str]) -> np.float32:
        """The score for ``query`` of a document the index does not hold, weighed by the index's
        statistics (its length against theirs; a word none of them holds at a document frequency
        of 0); a document the index holds gets its :meth:`scores` entry, bit for bit."""
        counts = Counter(document)
        norm = 0.0
        if self._average > 0:
            norm = self._k1 * ((1 - self._b) + self._b * len(document) / self._average)
        total = np.float32(0.0)
        for term in query:
            tf = counts.get(term, 0)
            if not tf:
                continue
            index = self._vocabulary.get(term)
            idf = self._idf[index] if index is not None else np.float32(_idf(0, self.size))
            # the same operations, in the same precisions, as the index's postings and sums
            value = np.float32(tf / (tf + norm) * np.float64(idf))
            total = np.float32(total + value)
        return total


def _idf(df: int, n: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


__all__ = ["B", "BM25", "K1"]
