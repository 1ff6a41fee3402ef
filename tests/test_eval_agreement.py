"""Agreement statistics against scikit-learn, statsmodels and the krippendorff package."""

from __future__ import annotations

import math
import re

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from synth import ConfigError, cohen_kappa, fleiss_kappa, krippendorff_alpha

LEVELS = ["nominal", "ordinal", "interval", "ratio"]


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_matches_scikit_learn(weights: str | None) -> None:
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(200):
        n_labels = int(rng.integers(2, 7))
        n = int(rng.integers(2, 40))
        a = rng.integers(0, n_labels, n)
        b = np.where(rng.random(n) < 0.6, a, rng.integers(0, n_labels, n))
        if len(set(a) | set(b)) < 2:
            continue
        expected = cohen_kappa_score(a, b, weights=weights)
        assert cohen_kappa(a.tolist(), b.tolist(), weights=weights) == pytest.approx(
            expected, abs=1e-9
        )
        checked += 1
    assert checked > 150


def test_cohen_kappa_weights_use_label_order_not_values() -> None:
    # scikit-learn weighs by the position in the sorted labels, so 1, 5, 10 are 0, 1, 2 apart
    a, b = [1, 5, 10, 10, 5], [1, 10, 10, 5, 5]
    assert cohen_kappa(a, b, weights="linear") == pytest.approx(
        cohen_kappa_score(a, b, weights="linear"), abs=1e-12
    )
    assert cohen_kappa(["x", "y", "y"], ["x", "y", "x"]) == pytest.approx(
        cohen_kappa_score(["x", "y", "y"], ["x", "y", "x"]), abs=1e-12
    )


def test_cohen_kappa_refuses_bad_input() -> None:
    with pytest.raises(ConfigError):
        cohen_kappa([1, 2], [1])
    with pytest.raises(ConfigError):
        cohen_kappa([1, None], [1, 2])
    with pytest.raises(ConfigError):
        cohen_kappa([1, 2], [1, 2], weights="cubic")
    assert math.isnan(cohen_kappa([1, 1], [1, 1]))
    assert math.isnan(fleiss_kappa([["a", "a"], ["a", "a"]]))  # one label: chance is perfect


def test_bad_input_is_refused_with_a_message_that_names_the_problem() -> None:
    refusals = [
        (lambda: cohen_kappa([1, 2], [1, 2], weights="cubic"), "weights must be None"),
        (lambda: cohen_kappa([1, 2], [1]), "both raters must rate the same items: 2 != 1"),
        (lambda: cohen_kappa([], []), "cohen_kappa needs at least one rated item"),
        (lambda: cohen_kappa([1, None], [1, 2]), "cohen_kappa does not take missing ratings"),
        (lambda: fleiss_kappa([["a", None], ["a", "b"]]), "fleiss_kappa does not take missing"),
        (lambda: fleiss_kappa([["a", "b"]]), "fleiss_kappa needs at least two raters"),
        (lambda: fleiss_kappa([]), "fleiss_kappa needs at least one rater and one item"),
        (lambda: fleiss_kappa([[], []]), "fleiss_kappa needs at least one rater and one item"),
        (lambda: fleiss_kappa("ab"), "fleiss_kappa takes one list of ratings per rater"),
        (lambda: krippendorff_alpha({(1, 2)}), "krippendorff_alpha takes one list of ratings"),
        (lambda: krippendorff_alpha([[1, 2], [1]]), "every rater needs one entry per item"),
        (
            lambda: krippendorff_alpha([[1, 2], [1, 2]], level="cardinal"),  # type: ignore[arg-type]
            "level must be one of nominal, ordinal, interval, ratio, got 'cardinal'",
        ),
        (lambda: krippendorff_alpha([["a"], ["b"]], level="ordinal"), "ordinal ratings must be"),
    ]
    for call, message in refusals:
        with pytest.raises(ConfigError, match=re.escape(message)):
            call()


def test_weighted_kappa_orders_numbers_by_value_and_takes_unorderable_labels() -> None:
    # marginals that are not symmetric, so an order by repr (1, 10, 2) would change the result
    a, b = [1, 2, 10, 10, 2, 1, 1], [2, 2, 10, 1, 10, 1, 2]
    assert cohen_kappa(a, b, weights="quadratic") == pytest.approx(
        cohen_kappa_score(a, b, weights="quadratic"), abs=1e-12
    )
    # labels that cannot be compared are ordered by repr rather than refused
    mixed_a, mixed_b = ["a", 1, "a", 1], ["a", 1, 1, 1]
    assert cohen_kappa(mixed_a, mixed_b) == pytest.approx(
        cohen_kappa(["a", "b", "a", "b"], ["a", "b", "b", "b"]), abs=1e-12
    )
    # ordinal alpha depends on ranks only: 1 < 2 < 10 as numbers, not as text
    ranked = [[1, 2, 10, 10, 2], [2, 2, 10, 1, 1], [1, 10, 10, 2, 2]]
    as_ranks = [[{1: 1, 2: 2, 10: 3}[v] for v in row] for row in ranked]
    assert krippendorff_alpha(ranked, level="ordinal") == pytest.approx(
        krippendorff_alpha(as_ranks, level="ordinal"), abs=1e-12
    )
    assert krippendorff_alpha([mixed_a, mixed_b], level="nominal") == pytest.approx(
        krippendorff_alpha([["a", "b", "a", "b"], ["a", "b", "b", "b"]], level="nominal"),
        abs=1e-12,
    )


def test_fleiss_kappa_matches_statsmodels() -> None:
    rng = np.random.default_rng(2)
    checked = 0
    for _ in range(200):
        n_raters = int(rng.integers(2, 7))
        n_items = int(rng.integers(2, 40))
        n_labels = int(rng.integers(2, 6))
        truth = rng.integers(0, n_labels, n_items)
        ratings = np.where(
            rng.random((n_raters, n_items)) < 0.5,
            truth,
            rng.integers(0, n_labels, (n_raters, n_items)),
        )
        table, _ = aggregate_raters(ratings.T)
        expected = sm_fleiss_kappa(table, method="fleiss")
        if not np.isfinite(expected):
            continue
        assert fleiss_kappa(ratings.tolist()) == pytest.approx(expected, abs=1e-9)
        checked += 1
    assert checked > 150


def test_fleiss_kappa_takes_one_list_per_rater_with_any_labels() -> None:
    ratings = [["yes", "no", "yes"], ["yes", "no", "no"], ["yes", "yes", "no"]]
    table, _ = aggregate_raters(np.array([[1, 0, 1], [1, 0, 0], [1, 1, 0]]).T)
    assert fleiss_kappa(ratings) == pytest.approx(sm_fleiss_kappa(table), abs=1e-12)
    with pytest.raises(ConfigError):
        fleiss_kappa([["a", None], ["a", "b"]])
    with pytest.raises(ConfigError):
        fleiss_kappa([["a", "b"]])
    with pytest.raises(ConfigError):
        fleiss_kappa([["a", "b"], ["a"]])


@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_alpha_matches_the_package_with_missing_values(level: str) -> None:
    rng = np.random.default_rng(3 + LEVELS.index(level))
    checked = 0
    for _ in range(150):
        n_raters = int(rng.integers(2, 6))
        n_items = int(rng.integers(2, 30))
        n_values = int(rng.integers(2, 7))
        truth = rng.integers(1, n_values + 1, n_items)
        data = np.where(
            rng.random((n_raters, n_items)) < 0.6,
            truth,
            rng.integers(1, n_values + 1, (n_raters, n_items)),
        ).astype(float)
        data[rng.random(data.shape) < 0.25] = np.nan
        try:
            with np.errstate(divide="ignore", invalid="ignore"):
                expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        except ValueError:  # fewer than two values, or no item rated twice
            continue
        if not np.isfinite(expected):
            continue
        ratings = [[None if np.isnan(v) else int(v) for v in row] for row in data]
        assert krippendorff_alpha(ratings, level=level) == pytest.approx(expected, abs=1e-9)
        checked += 1
    assert checked > 100


@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_alpha_on_real_valued_scores(level: str) -> None:
    # judge scores are fractions such as 0.25 or 0.75; NaN marks a missing one
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(50):
        data = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=(3, 12))
        data[rng.random(data.shape) < 0.2] = np.nan
        try:
            with np.errstate(divide="ignore", invalid="ignore"):
                expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        except ValueError:
            continue
        if np.isfinite(expected):
            assert krippendorff_alpha(data.tolist(), level=level) == pytest.approx(
                expected, abs=1e-9
            )
            checked += 1
    assert checked > 30


def test_krippendorff_alpha_textbook_example() -> None:
    data = [
        [None, None, None, None, None, 3, 4, 1, 2, 1, 1, 3, 3, None, 3],
        [1, None, 2, 1, 3, 3, 4, 3, None, None, None, None, None, None, None],
        [None, None, 2, 1, 3, 4, 4, None, 2, 1, 1, 3, 3, None, 4],
    ]
    assert round(krippendorff_alpha(data, level="nominal"), 6) == 0.691358
    assert round(krippendorff_alpha(data, level="interval"), 6) == 0.810845


def test_krippendorff_alpha_undefined_and_invalid() -> None:
    assert math.isnan(krippendorff_alpha([[1, None], [None, 2]]))  # no item rated twice
    assert math.isnan(krippendorff_alpha([[3, 3], [3, 3]]))  # one value throughout
    assert math.isnan(krippendorff_alpha([[0.75], [0.75]]))
    with pytest.raises(ConfigError):
        krippendorff_alpha([["a", "b"], ["a", "a"]], level="interval")
    with pytest.raises(ConfigError):
        krippendorff_alpha([[1, 2], [1, 2]], level="cardinal")
    with pytest.raises(ConfigError):
        krippendorff_alpha([[1, 2], [1]])
    assert krippendorff_alpha([["a", "b", "a"], ["a", "b", "b"]], level="nominal") == pytest.approx(
        krippendorff.alpha(
            reliability_data=np.array([[0, 1, 0], [0, 1, 1]], dtype=float),
            level_of_measurement="nominal",
        ),
        abs=1e-12,
    )
