"""How far raters agree beyond chance: Cohen's kappa, Fleiss' kappa and Krippendorff's alpha.

The ratings can come from models or from people. ``fleiss_kappa`` and ``krippendorff_alpha`` take
them the same way round: one list per rater, one entry per item (``None`` or NaN for a missing
rating, where allowed). The results agree with scikit-learn, statsmodels and the ``krippendorff``
package, none of which are needed.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np

from synth.errors import ConfigError

Level = Literal["nominal", "ordinal", "interval", "ratio"]
_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def cohen_kappa(
    rater_a: Sequence[Hashable],
    rater_b: Sequence[Hashable],
    *,
    weights: Literal["linear", "quadratic"] | None = None,
) -> float:
    """Return Cohen's kappa between two raters who rated the same items.

    With ``weights`` the disagreement between two labels grows with the distance between their
    positions in the sorted list of labels seen, linearly or quadratically (as scikit-learn does).
    Returns NaN when the agreement expected by chance is perfect (a single label everywhere).
    """
    if weights not in (None, "linear", "quadratic"):
        raise ConfigError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    if len(rater_a) != len(rater_b):
        raise ConfigError(f"both raters must rate the same items: {len(rater_a)} != {len(rater_b)}")
    if not rater_a:
        raise ConfigError("cohen_kappa needs at least one rated item")
    if any(_is_missing(v) for v in (*rater_a, *rater_b)):
        raise ConfigError("cohen_kappa does not take missing ratings; use krippendorff_alpha")
    labels = _sorted_labels(set(rater_a) | set(rater_b))
    index = {label: i for i, label in enumerate(labels)}
    n = len(labels)
    confusion = np.zeros((n, n))
    for a, b in zip(rater_a, rater_b, strict=True):
        confusion[index[a], index[b]] += 1
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / confusion.sum()
    positions = np.arange(n)
    if weights is None:
        disagreement = (positions[:, None] != positions[None, :]).astype(float)
    elif weights == "linear":
        disagreement = np.abs(positions[:, None] - positions[None, :]).astype(float)
    else:
        disagreement = ((positions[:, None] - positions[None, :]) ** 2).astype(float)
    chance = float((disagreement * expected).sum())
    if chance == 0:
        return math.nan
    return 1.0 - float((disagreement * confusion).sum()) / chance


def fleiss_kappa(ratings: Sequence[Sequence[Hashable]]) -> float:
    """Return Fleiss' kappa for any number of raters giving nominal labels.

    ``ratings`` holds one list per rater, one label per item; every rater rates every item.
    Returns NaN when all ratings share one label (no disagreement is possible by chance).
    """
    table = _rater_table(ratings, "fleiss_kappa")
    if any(_is_missing(v) for row in table for v in row):
        raise ConfigError("fleiss_kappa does not take missing ratings; use krippendorff_alpha")
    n_raters = len(table)
    if n_raters < 2:
        raise ConfigError("fleiss_kappa needs at least two raters")
    labels = _sorted_labels({v for row in table for v in row})
    index = {label: i for i, label in enumerate(labels)}
    counts = np.zeros((len(table[0]), len(labels)))
    for row in table:
        for item, label in enumerate(row):
            counts[item, index[label]] += 1
    n_items = counts.shape[0]
    p_label = counts.sum(axis=0) / (n_items * n_raters)
    per_item = ((counts**2).sum(axis=1) - n_raters) / (n_raters * (n_raters - 1))
    observed = float(per_item.mean())
    chance = float((p_label**2).sum())
    if chance == 1.0:
        return math.nan
    return (observed - chance) / (1.0 - chance)


def krippendorff_alpha(ratings: Sequence[Sequence[Any]], *, level: Level = "interval") -> float:
    """Return Krippendorff's alpha for any number of raters, missing ratings allowed.

    ``ratings`` holds one list per rater, one entry per item; ``None`` or NaN marks a missing
    rating. ``level`` is ``"nominal"``, ``"ordinal"``, ``"interval"`` or ``"ratio"``; all but
    nominal need numbers. Items rated fewer than twice carry no information and are ignored.
    Returns NaN when alpha is undefined: no item rated twice, or a single value throughout.
    """
    if level not in _LEVELS:
        raise ConfigError(f"level must be one of {', '.join(_LEVELS)}, got {level!r}")
    table = _rater_table(ratings, "krippendorff_alpha")
    present = [v for row in table for v in row if not _is_missing(v)]
    if level != "nominal" and any(
        isinstance(v, bool) or not isinstance(v, int | float | np.integer | np.floating)
        for v in present
    ):
        raise ConfigError(f"{level} ratings must be numbers")
    values = sorted(set(present)) if level != "nominal" else sorted(set(present), key=repr)
    if len(values) < 1:
        return math.nan
    index = {v: i for i, v in enumerate(values)}
    n_items = len(table[0])
    counts = np.zeros((n_items, len(values)))
    for row in table:
        for item, v in enumerate(row):
            if not _is_missing(v):
                counts[item, index[v]] += 1
    raters_per_item = counts.sum(axis=1)
    pairable = counts[raters_per_item >= 2]
    if pairable.shape[0] == 0:
        return math.nan
    m_u = pairable.sum(axis=1)
    # coincidence matrix: ordered pairs of values within each item, weighted 1 / (m_u - 1)
    pairs = pairable[:, :, None] * pairable[:, None, :]
    pairs -= pairable[:, :, None] * np.eye(len(values))[None, :, :]
    coincidences = (pairs / (m_u - 1)[:, None, None]).sum(axis=0)
    n_v = coincidences.sum(axis=0)
    n = n_v.sum()
    expected = (np.outer(n_v, n_v) - np.diag(n_v)) / (n - 1)
    distance = _distances(np.asarray(values, dtype=object), n_v, level)
    disagreement_expected = float((expected * distance).sum())
    if disagreement_expected == 0:
        return math.nan
    return 1.0 - float((coincidences * distance).sum()) / disagreement_expected


def _distances(values: np.ndarray, n_v: np.ndarray, level: str) -> np.ndarray:
    size = len(values)
    if level == "nominal":
        return 1.0 - np.eye(size)
    numbers = values.astype(float)
    if level == "interval":
        squared: np.ndarray = (numbers[:, None] - numbers[None, :]) ** 2
        return squared
    if level == "ratio":
        total = numbers[:, None] + numbers[None, :]
        diff = numbers[:, None] - numbers[None, :]
        safe = np.where(total == 0, 1.0, total)
        ratio: np.ndarray = np.where(total == 0, 0.0, (diff / safe) ** 2)
        return ratio
    # ordinal: the mass of values between two ranks, both ends counted by half
    cumulative = np.concatenate([[0.0], np.cumsum(n_v)])
    low = np.minimum(np.arange(size)[:, None], np.arange(size)[None, :])
    high = np.maximum(np.arange(size)[:, None], np.arange(size)[None, :])
    between = cumulative[high + 1] - cumulative[low]
    ordinal: np.ndarray = (between - (n_v[low] + n_v[high]) / 2.0) ** 2
    return ordinal


def _sorted_labels(labels: set[Any]) -> list[Any]:
    """Labels in their natural order (weights depend on it), by repr when they cannot be ordered."""
    try:
        return sorted(labels)
    except TypeError:
        return sorted(labels, key=repr)


def _rater_table(ratings: Sequence[Sequence[Any]], name: str) -> list[list[Any]]:
    if isinstance(ratings, str | bytes) or not isinstance(ratings, Sequence | np.ndarray):
        raise ConfigError(f"{name} takes one list of ratings per rater")
    table = [list(row) for row in ratings]
    if not table or not table[0]:
        raise ConfigError(f"{name} needs at least one rater and one item")
    lengths = {len(row) for row in table}
    if len(lengths) != 1:
        raise ConfigError(
            f"{name}: every rater needs one entry per item (got lengths {sorted(lengths)})"
        )
    return table


__all__ = ["cohen_kappa", "fleiss_kappa", "krippendorff_alpha"]
