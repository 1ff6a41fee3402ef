"""Paired comparison of two reports: per metric, the delta, its interval and a sign-flip p-value.

Items are paired by id; a metric is compared on the items both reports scored. ``delta`` is the
mean of ``b - a`` over those items (``a`` is the report ``compare`` is called on). Compare reports
scored by the same judges: a mismatch is recorded in ``warnings``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from synth.errors import ConfigError
from synth.evaluate._document import OneDocument
from synth.evaluate._scores import Score
from synth.evaluate.stats import bootstrap_interval, sign_flip_test

if TYPE_CHECKING:
    from synth.evaluate.report import Evaluation


class MetricComparison(BaseModel):
    """One metric of two reports, on the items both scored."""

    model_config = ConfigDict(extra="forbid")

    metric: str
    n: int  # paired items with a defined score in both reports
    a: Score  # mean of report a on those items
    b: Score  # mean of report b on those items
    delta: Score  # mean of b - a
    ci_low: Score  # bootstrap 95% interval of the delta
    ci_high: Score
    p_value: Score  # paired sign-flip test of a zero mean delta
    exact: bool  # True when every sign pattern was enumerated


class Comparison(OneDocument):
    """Report ``b`` against report ``a``, metric by metric."""

    noun: ClassVar[str] = "a comparison"

    metrics: list[MetricComparison] = Field(default_factory=list)
    n_a: int = 0  # items in report a
    n_b: int = 0  # items in report b
    n_paired: int = 0  # item ids in both
    seed: int = 0
    warnings: list[str] = Field(default_factory=list)

    def __getitem__(self, metric: str) -> MetricComparison:
        for row in self.metrics:
            if row.metric == metric:
                return row
        raise KeyError(metric)


def compare_reports(
    a: Evaluation,
    b: Evaluation,
    *,
    seed: int = 0,
    n_resamples: int = 10000,
    exact_max: int = 20,
) -> Comparison:
    """Return ``b`` compared with ``a`` on every metric both have, paired by item id.

    The p-value is exact (all sign patterns) with at most ``exact_max`` non-zero differences, and a
    seeded Monte Carlo estimate from ``n_resamples`` patterns otherwise.
    """
    by_id_b = {item.id: item for item in b.items}
    if len(by_id_b) != len(b.items) or len({item.id for item in a.items}) != len(a.items):
        raise ConfigError("cannot pair reports whose item ids repeat")
    paired = [(item, by_id_b[item.id]) for item in a.items if item.id in by_id_b]
    warnings = _warnings(a, b, len(paired))
    rows = []
    for offset, metric in enumerate(m for m in a.metrics if m in b.metrics):
        pairs = [
            (x.scores.get(metric, math.nan), y.scores.get(metric, math.nan)) for x, y in paired
        ]
        pairs = [(x, y) for x, y in pairs if not (math.isnan(x) or math.isnan(y))]
        rows.append(_compare_metric(metric, pairs, seed + offset, n_resamples, exact_max))
    return Comparison(
        metrics=rows,
        n_a=len(a.items),
        n_b=len(b.items),
        n_paired=len(paired),
        seed=seed,
        warnings=warnings,
    )


def _compare_metric(
    metric: str, pairs: list[tuple[float, float]], seed: int, n_resamples: int, exact_max: int
) -> MetricComparison:
    if not pairs:
        nan = math.nan
        return MetricComparison(
            metric=metric,
            n=0,
            a=nan,
            b=nan,
            delta=nan,
            ci_low=nan,
            ci_high=nan,
            p_value=nan,
            exact=True,
        )
    diffs = [y - x for x, y in pairs]
    low, high = bootstrap_interval(diffs, seed=seed)
    p_value, exact = sign_flip_test(diffs, n_resamples=n_resamples, seed=seed, exact_max=exact_max)
    n = len(pairs)
    return MetricComparison(
        metric=metric,
        n=n,
        a=sum(x for x, _ in pairs) / n,
        b=sum(y for _, y in pairs) / n,
        delta=sum(diffs) / n,
        ci_low=low,
        ci_high=high,
        p_value=p_value,
        exact=exact,
    )


def _warnings(a: Evaluation, b: Evaluation, n_paired: int) -> list[str]:
    warnings = []
    if a.kind != b.kind:
        warnings.append(f"the reports are of different kinds ({a.kind} and {b.kind})")
    if n_paired < max(len(a.items), len(b.items)):
        warnings.append(
            f"only {n_paired} item ids are in both reports ({len(a.items)} and {len(b.items)} items)"
        )
    judges_a: Any = getattr(a, "judges", None)
    judges_b: Any = getattr(b, "judges", None)
    if judges_a is not None and judges_b is not None and judges_a != judges_b:
        warnings.append(
            "the reports were scored by different judges; their deltas may reflect that"
        )
    skipped = sorted(set(a.metrics) ^ set(b.metrics))
    if skipped:
        warnings.append(f"metrics in only one report are not compared: {', '.join(skipped)}")
    return warnings


__all__ = ["Comparison", "MetricComparison", "compare_reports"]
