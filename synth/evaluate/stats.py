"""Intervals and tests for per-item scores: the bootstrap and the paired sign-flip test.

Both are seeded: the same scores and seed give the same numbers on every machine. NaN values (an
item a metric could not score) are left out.

numpy is imported by each function, not with the module: ``synth evaluate`` reads this module
before its judges' first requests leave and needs numpy only once replies are back.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from synth.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

#: sign patterns enumerated per block in the exact test (2**16 rows of at most 24 columns)
_BLOCK_BITS = 16


def _defined(values: Sequence[float]) -> np.ndarray:
    import numpy as np

    array = np.asarray([float(v) for v in values], dtype=float)
    defined: np.ndarray = array[~np.isnan(array)]
    return defined


def mean_score(values: Sequence[float]) -> float:
    """Return the mean of the defined (non-NaN) values, or NaN when there are none."""
    defined = _defined(values)
    return float(defined.mean()) if defined.size else math.nan


def bootstrap_interval(
    values: Sequence[float],
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """Return the percentile bootstrap interval of the mean of the defined values.

    One value gives a zero-width interval; no value gives ``(nan, nan)``.
    """
    import numpy as np

    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be between 0 and 1, got {confidence}")
    if n_resamples < 1:
        raise ConfigError(f"n_resamples must be at least 1, got {n_resamples}")
    defined = _defined(values)
    if defined.size == 0:
        return (math.nan, math.nan)
    if np.all(defined == defined[0]):
        return (float(defined[0]), float(defined[0]))
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    block = max(1, 2_000_000 // defined.size)  # bound memory for large datasets
    for start in range(0, n_resamples, block):
        stop = min(n_resamples, start + block)
        picks = rng.integers(0, defined.size, size=(stop - start, defined.size))
        means[start:stop] = defined[picks].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return (float(low), float(high))


def sign_flip_test(
    differences: Sequence[float],
    *,
    n_resamples: int = 10000,
    seed: int = 0,
    exact_max: int = 20,
) -> tuple[float, bool]:
    """Return ``(p_value, exact)`` of the two-sided paired sign-flip test of a zero mean difference.

    Under the null hypothesis each paired difference is as likely to have either sign. The p-value is
    the share of sign patterns whose mean is at least as far from zero as the observed one. With at
    most ``exact_max`` non-zero differences every pattern is enumerated (``exact`` is True);
    otherwise ``n_resamples`` seeded random patterns estimate it, as ``(1 + hits) / (1 + n)``.
    Zero differences do not change under a flip and are left out; none left gives ``(1.0, True)``.
    """
    import numpy as np

    if exact_max > 24:
        raise ConfigError(f"exact_max is at most 24 (2**24 sign patterns), got {exact_max}")
    defined = _defined(differences)
    nonzero = defined[defined != 0]
    if nonzero.size == 0:
        return (1.0, True)
    observed = abs(float(nonzero.sum()))
    # a pattern "ties" the observed sum up to rounding of the summation order
    tolerance = 1e-9 * max(1.0, float(np.abs(nonzero).sum()))
    if nonzero.size <= exact_max:
        return (_exact_p_value(nonzero, observed, tolerance), True)
    if n_resamples < 1:
        raise ConfigError(f"n_resamples must be at least 1, got {n_resamples}")
    rng = np.random.default_rng(seed)
    hits = 0
    block = max(1, 1_000_000 // nonzero.size)
    for start in range(0, n_resamples, block):
        size = min(block, n_resamples - start)
        signs = rng.integers(0, 2, size=(size, nonzero.size)) * 2 - 1
        hits += int((np.abs(signs @ nonzero) >= observed - tolerance).sum())
    return ((1 + hits) / (1 + n_resamples), False)


def _exact_p_value(nonzero: np.ndarray, observed: float, tolerance: float) -> float:
    import numpy as np

    m = nonzero.size
    total = 1 << m
    bits = np.arange(m)
    hits = 0
    step = 1 << min(_BLOCK_BITS, m)
    for start in range(0, total, step):
        patterns = np.arange(start, min(total, start + step))
        signs = 1 - 2 * ((patterns[:, None] >> bits[None, :]) & 1)
        hits += int((np.abs(signs @ nonzero) >= observed - tolerance).sum())
    return hits / total


__all__ = ["bootstrap_interval", "mean_score", "sign_flip_test"]
