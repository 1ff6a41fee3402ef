"""Bootstrap intervals and the paired sign-flip test, exact against brute force."""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import numpy as np
import pytest

from synth import ConfigError, bootstrap_interval, compare_reports, sign_flip_test
from synth.evaluate.report import AnswerEvaluation, Evaluation, ItemResult, PreferenceEvaluation
from synth.evaluate.retrieval import RetrievalEvaluation
from synth.evaluate.stats import mean_score


def brute_force_p(diffs: list[float]) -> float:
    observed = abs(sum(diffs))
    hits = 0
    for signs in itertools.product((1, -1), repeat=len(diffs)):
        if abs(sum(s * d for s, d in zip(signs, diffs, strict=True))) >= observed - 1e-12:
            hits += 1
    return hits / 2 ** len(diffs)


def test_exact_p_value_equals_brute_force() -> None:
    rng = random.Random(5)
    for _ in range(60):
        n = rng.randint(1, 11)
        # quarter steps, as judge scores are; some zeros, some ties in magnitude
        diffs = [rng.choice([-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 1]) for _ in range(n)]
        p, exact = sign_flip_test(diffs)
        assert exact
        assert p == pytest.approx(brute_force_p(diffs), abs=1e-12)


def test_p_value_edge_cases() -> None:
    assert sign_flip_test([]) == (1.0, True)
    assert sign_flip_test([0.0, 0.0]) == (1.0, True)
    assert sign_flip_test([1.0]) == (1.0, True)  # one difference: both signs are as extreme
    assert sign_flip_test([1.0] * 6)[0] == pytest.approx(2 / 64)
    assert sign_flip_test([1.0, math.nan, 1.0])[0] == pytest.approx(0.5)  # NaN left out
    with pytest.raises(ConfigError):
        sign_flip_test([1.0], exact_max=30)


def test_monte_carlo_is_seeded_and_close_to_exact() -> None:
    rng = np.random.default_rng(0)
    diffs = (rng.normal(0.1, 1.0, 18)).tolist()
    exact, was_exact = sign_flip_test(diffs)
    assert was_exact
    mc1, flag = sign_flip_test(diffs, exact_max=10, n_resamples=20000, seed=7)
    mc2, _ = sign_flip_test(diffs, exact_max=10, n_resamples=20000, seed=7)
    mc3, _ = sign_flip_test(diffs, exact_max=10, n_resamples=20000, seed=8)
    assert not flag
    assert mc1 == mc2
    assert mc1 != mc3
    assert mc1 == pytest.approx(exact, abs=0.02)


def test_bootstrap_interval() -> None:
    values = [0.0, 0.25, 0.5, 0.75, 1.0, 1.0, 0.5, math.nan]
    low, high = bootstrap_interval(values, seed=3)
    assert (low, high) == bootstrap_interval(values, seed=3)
    assert 0.0 <= low < np.nanmean(values) < high <= 1.0
    assert bootstrap_interval([0.4]) == (0.4, 0.4)
    assert bootstrap_interval([0.4, 0.4, 0.4]) == (0.4, 0.4)
    assert all(math.isnan(x) for x in bootstrap_interval([math.nan]))
    with pytest.raises(ConfigError):
        bootstrap_interval(values, confidence=1.5)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("position", [0, 1, 2, 3])
def test_bootstrap_resamples_every_value(position: int, seed: int) -> None:
    """Three zeros and a one: a resample's mean is k/4 with k ~ Binomial(4, 1/4), so the mean is 0
    with probability 81/256 (over the 2.5% tail), 1 with 1/256 (under it) and 0.75 or more with
    13/256 (over it). The 95% interval is therefore exactly (0, 0.75) wherever the one sits; a
    resampler that never picks some position gives (0, 0) or (0.25, 1) instead."""
    values = [0.0, 0.0, 0.0, 0.0]
    values[position] = 1.0
    assert bootstrap_interval(values, seed=seed) == (0.0, 0.75)


def test_mean_score_leaves_nan_out() -> None:
    assert mean_score([0.5, math.nan, 1.0]) == 0.75
    assert math.isnan(mean_score([math.nan]))
    assert math.isnan(mean_score([]))


def test_defaults_are_the_documented_ones() -> None:
    """The same scores give the same numbers as the documented seed and resample counts."""
    values = np.random.default_rng(4).random(12).tolist()  # continuous: every resample counts
    assert bootstrap_interval(values) == bootstrap_interval(values, n_resamples=2000, seed=0)
    diffs = [0.25 * (1 + i % 3) * (-1) ** i for i in range(21)]
    assert sign_flip_test(diffs) == sign_flip_test(diffs, n_resamples=10000, seed=0, exact_max=20)
    assert sign_flip_test(diffs[:20])[1] is True  # 20 differences: still enumerated
    assert sign_flip_test(diffs)[1] is False  # 21: estimated


def test_settings_out_of_range_are_refused_by_name() -> None:
    values = [0.0, 1.0]
    for confidence in (0.0, 1.0):
        with pytest.raises(ConfigError, match="confidence must be between 0 and 1"):
            bootstrap_interval(values, confidence=confidence)
    with pytest.raises(ConfigError, match="n_resamples must be at least 1"):
        bootstrap_interval(values, n_resamples=0)
    low, high = bootstrap_interval(values, n_resamples=1)
    assert low == high and low in (0.0, 0.5, 1.0)  # one resample: the mean of one draw
    with pytest.raises(ConfigError, match="exact_max is at most 24"):
        sign_flip_test(values, exact_max=25)
    assert sign_flip_test([1.0, -1.0], exact_max=24) == (1.0, True)
    with pytest.raises(ConfigError, match="n_resamples must be at least 1"):
        sign_flip_test([1.0, 1.0], exact_max=1, n_resamples=0)
    p, exact = sign_flip_test([1.0, 1.0], exact_max=1, n_resamples=1)
    assert not exact and p in (0.5, 1.0)  # (1 + hits) / (1 + 1)


def test_bootstrap_resamples_every_value_over_several_blocks() -> None:
    """1,500 values take two blocks of resamples; the interval is the seeded percentile bootstrap."""
    values = np.random.default_rng(2).random(1500)
    picks = np.random.default_rng(9).integers(0, values.size, size=(2000, values.size))
    expected = np.quantile(values[picks].mean(axis=1), [0.025, 0.975])
    assert bootstrap_interval(values.tolist(), seed=9) == (expected[0], expected[1])


def test_monte_carlo_p_value_counts_ties_over_several_blocks() -> None:
    """50,000 seeded sign patterns (two blocks) give (1 + hits) / (1 + n), ties counted as hits."""
    diffs = np.array([0.25, -0.5, 0.75, 0.25, -0.25] * 5)  # exact in binary: ties are exact
    n = 50_000
    signs = np.random.default_rng(6).integers(0, 2, size=(n, diffs.size)) * 2 - 1
    hits = int((np.abs(signs @ diffs) >= abs(diffs.sum())).sum())
    assert sign_flip_test(diffs.tolist(), exact_max=5, n_resamples=n, seed=6) == (
        (1 + hits) / (1 + n),
        False,
    )
    # 25 differences of +-0.25 never sum to less than 0.25: every pattern ties or beats it
    odd = [0.25, -0.25] * 12 + [0.25]
    assert sign_flip_test(odd, exact_max=5, n_resamples=n, seed=6) == (1.0, False)


def test_ties_are_judged_relative_to_the_size_of_the_differences() -> None:
    # a flip that moves the sum by 1.5e-9 on differences of about 1 is a real difference ...
    assert sign_flip_test([0.5, 0.25, 0.75e-9])[0] == pytest.approx(2 / 8)
    # ... and by 1e-8 on differences summing to 75, rounding: both signs of it tie
    assert sign_flip_test([50.0, 25.0, 5e-9])[0] == pytest.approx(4 / 8)


def _report(scores: dict[str, float]) -> RetrievalEvaluation:
    items = [ItemResult(id=i, scores={"m": s}) for i, s in scores.items()]
    return RetrievalEvaluation(items=items, metrics={"m": float(np.nanmean(list(scores.values())))})


def test_compare_pairs_by_id_and_counts_only_common_defined_items() -> None:
    a = _report({"1": 0.0, "2": 0.5, "3": 1.0, "4": math.nan, "5": 0.0})
    b = _report({"3": 1.0, "2": 1.0, "1": 0.5, "4": 1.0, "6": 1.0})
    comparison = compare_reports(a, b)
    row = comparison["m"]
    assert row.n == 3  # ids 1, 2, 3 are in both with defined scores
    assert row.delta == pytest.approx((0.5 + 0.5 + 0.0) / 3)
    assert row.a == pytest.approx(0.5) and row.b == pytest.approx(2.5 / 3)
    assert row.p_value == pytest.approx(brute_force_p([0.5, 0.5, 0.0]))
    assert comparison.n_paired == 4
    assert any("only 4 item ids" in w for w in comparison.warnings)
    flipped = compare_reports(b, a)["m"]
    assert flipped.delta == pytest.approx(-row.delta)
    assert flipped.p_value == row.p_value


def test_compare_uses_monte_carlo_for_many_items() -> None:
    rng = np.random.default_rng(1)
    a = _report({str(i): float(v) for i, v in enumerate(rng.random(40))})
    b = _report({str(i): float(v) for i, v in enumerate(rng.random(40))})
    row = compare_reports(a, b, seed=4, n_resamples=2000)["m"]
    assert not row.exact
    assert row == compare_reports(a, b, seed=4, n_resamples=2000)["m"]
    assert row.ci_low <= row.delta <= row.ci_high


def _scored(
    scores: dict[str, dict[str, float]], kind: type[Evaluation] = RetrievalEvaluation
) -> Any:
    """A report of ``kind`` with ``{item id: {metric: score}}`` (a metric an item lacks is absent)."""
    items = [ItemResult(id=i, scores=s) for i, s in scores.items()]
    metrics = sorted({m for s in scores.values() for m in s})
    return kind(items=items, metrics={m: 0.5 for m in metrics})


def test_each_metric_is_compared_with_the_statistics_of_its_own_seed() -> None:
    """Metric i's interval and p-value are those of its differences with ``seed + i``, the
    caller's resamples and exact limit; the defaults are seed 0, 10000 resamples, 20 exact."""
    rng = random.Random(3)
    ids = [str(i) for i in range(21)]
    a = _scored({i: {"m": rng.random(), "n": rng.random()} for i in ids})
    b = _scored({i: {"m": rng.random(), "n": rng.random()} for i in ids})
    diffs = {
        m: [b.items[k].scores[m] - a.items[k].scores[m] for k in range(len(ids))] for m in "mn"
    }
    given = compare_reports(a, b, seed=5, n_resamples=300, exact_max=3)
    for offset, metric in enumerate("mn"):
        row = given[metric]
        seed = 5 + offset
        assert (row.ci_low, row.ci_high) == bootstrap_interval(diffs[metric], seed=seed)
        assert (row.p_value, row.exact) == sign_flip_test(
            diffs[metric], n_resamples=300, seed=seed, exact_max=3
        )
    default = compare_reports(a, b)["m"]  # 21 differences: one past the exact limit
    assert (default.ci_low, default.ci_high) == bootstrap_interval(diffs["m"], seed=0)
    assert (default.p_value, default.exact) == sign_flip_test(
        diffs["m"], n_resamples=10000, seed=0, exact_max=20
    )
    assert not default.exact
    assert compare_reports(a, b, exact_max=21)["m"].exact


def test_a_comparison_counts_the_items_of_each_report_and_records_its_seed() -> None:
    a = _scored({"1": {"m": 0.0}, "2": {"m": 1.0}, "3": {"m": 0.5}})
    b = _scored({"2": {"m": 0.0}, "3": {"m": 1.0}})
    comparison = compare_reports(a, b, seed=9)
    assert (comparison.n_a, comparison.n_b, comparison.n_paired, comparison.seed) == (3, 2, 2, 9)
    with pytest.raises(KeyError, match="absent"):
        comparison["absent"]


def test_an_item_without_a_metric_is_left_out_of_that_metric_only() -> None:
    a = _scored({"1": {"m": 0.0, "n": 0.0}, "2": {"m": 1.0}, "3": {"m": 0.0, "n": 1.0}})
    b = _scored({"1": {"m": 1.0, "n": 1.0}, "2": {"m": 1.0, "n": 0.0}, "3": {"n": 0.0}})
    comparison = compare_reports(a, b)
    assert (comparison["m"].n, comparison["m"].delta) == (2, 0.5)  # item 3 lacks m in b
    assert (comparison["n"].n, comparison["n"].delta) == (2, 0.0)  # item 2 lacks n in a


def test_a_metric_no_item_has_in_both_reports_is_all_undefined() -> None:
    a = _scored({"1": {"m": 0.5, "n": math.nan}, "2": {"m": 0.5}})
    b = _scored({"1": {"m": 0.5, "n": 1.0}, "2": {"m": 1.0, "n": 0.0}})
    row = compare_reports(a, b)["n"]
    assert (row.n, row.exact) == (0, True)
    values = (row.a, row.b, row.delta, row.ci_low, row.ci_high, row.p_value)
    assert all(math.isnan(value) for value in values)


def test_repeated_item_ids_in_either_report_cannot_be_paired() -> None:
    once = _scored({"1": {"m": 0.0}, "2": {"m": 1.0}})
    twice = RetrievalEvaluation(
        items=[ItemResult(id="1", scores={"m": 0.0}), ItemResult(id="1", scores={"m": 1.0})],
        metrics={"m": 0.5},
    )
    for a, b in ((once, twice), (twice, once)):
        with pytest.raises(ConfigError, match=r"^cannot pair reports whose item ids repeat$"):
            compare_reports(a, b)


def test_two_reports_of_one_kind_on_the_same_items_and_metrics_warn_of_nothing() -> None:
    a = _scored({"1": {"m": 0.0}, "2": {"m": 1.0}})
    b = _scored({"2": {"m": 0.5}, "1": {"m": 0.5}})
    assert compare_reports(a, b).warnings == []


def test_every_mismatch_between_the_reports_is_one_warning() -> None:
    a = _scored({"1": {"m": 0.0, "x": 1.0}, "2": {"m": 1.0, "x": 1.0}}, AnswerEvaluation)
    a.judges = {"j": {"model": "one"}}
    b = _scored({"2": {"m": 0.5, "y": 1.0}, "3": {"m": 0.5, "y": 0.0}}, PreferenceEvaluation)
    b.judges = {"j": {"model": "two"}}
    assert compare_reports(a, b).warnings == [
        "the reports are of different kinds (answers and preference)",
        "only 1 item ids are in both reports (2 and 2 items)",
        "the reports were scored by different judges; their deltas may reflect that",
        "metrics in only one report are not compared: x, y",
    ]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bootstrap_interval_matches_scipy_percentile_bootstrap(seed: int) -> None:
    from scipy.stats import bootstrap

    rng = np.random.default_rng(seed)
    values = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=30)
    low, high = bootstrap_interval(values.tolist(), n_resamples=20000, seed=seed)
    expected = bootstrap(
        (values,), np.mean, confidence_level=0.95, n_resamples=20000, method="percentile",
        random_state=np.random.default_rng(100 + seed),
    ).confidence_interval  # fmt: skip
    # two Monte Carlo estimates of the same 2.5% and 97.5% quantiles
    assert low == pytest.approx(expected.low, abs=0.01)
    assert high == pytest.approx(expected.high, abs=0.01)


def test_compare_warns_when_judges_differ() -> None:
    import json

    from synth import FunctionModel, evaluate_answers

    items = [{"id": "1", "question": "q", "answer": "a"}]

    def rate(n: int):
        return lambda prompt, system: json.dumps({"score": n, "reason": ""})

    a = evaluate_answers(None, items, judges={"j": rate(2)}, metrics=["answer_relevance"])
    b = evaluate_answers(None, items, judges={"j": rate(2)}, metrics=["answer_relevance"])
    assert not any("different judges" in w for w in a.compare(b).warnings)  # same identity
    other = evaluate_answers(
        None, items, judges={"j": FunctionModel(rate(2), name="another-model")},
        metrics=["answer_relevance"],
    )  # fmt: skip
    assert any("different judges" in w for w in a.compare(other).warnings)
