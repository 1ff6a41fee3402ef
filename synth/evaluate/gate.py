"""The regression gate: a run's per-item scores against a baseline's, metric by metric, paired.

A gate does not compare means with yesterday's means, nor each golden with a threshold (both fail
on noise): it pairs every item's score with the same item's score in the baseline and fails a
metric only when the mean change is worse than ``-margin`` *and* the bootstrap 95% interval of the
change lies wholly below zero (:func:`~synth.evaluate.compare.compare_reports` computes both).

What a run scored is a :class:`GateScores`; written to a file it is the baseline. It records what
makes two runs comparable (the dataset's fingerprint, the metrics, the judges' identities and the
criteria rubrics), and :func:`check_comparable` refuses a pair that differ in any of them with one
line saying what changed, so a new dataset or judge is an error, never a silent comparison.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from synth._ids import canonical_json, joined_hash
from synth.dataset._public import public_metadata
from synth.errors import ConfigError
from synth.evaluate import _io
from synth.evaluate._document import OneDocument
from synth.evaluate._items import EvalItem, as_items
from synth.evaluate._scores import Score
from synth.evaluate.compare import compare_reports
from synth.evaluate.report import AnswerEvaluation, Evaluation, ItemResult
from synth.evaluate.stats import mean_score

#: the baseline format's version; a file of another version is refused with a line saying so
GATE_FORMAT = 1


class GateItem(BaseModel):
    """One item's scores in a gated run, with why any is missing."""

    model_config = ConfigDict(extra="forbid")

    id: str
    question: str = ""
    scores: dict[str, Score] = Field(default_factory=dict)
    errors: dict[str, str] = Field(default_factory=dict)  # by source: "system", "<metric>/<judge>"
    skipped: dict[str, str] = Field(default_factory=dict)  # by metric: "no reference", ...


class GateScores(OneDocument):
    """What one run scored, with what makes two runs comparable; as a file, a gate's baseline."""

    noun: ClassVar[str] = "a gate baseline"

    kind: Literal["synth-gate-scores"] = "synth-gate-scores"
    format: int = GATE_FORMAT
    dataset: str  # the fingerprint of the dataset's items (see dataset_fingerprint)
    n_items: int
    metrics: list[str]
    judges: dict[str, dict[str, Any]] = Field(default_factory=dict)  # name: identity
    criteria: dict[str, str] = Field(default_factory=dict)  # name: rubric
    system: str = ""
    items: list[GateItem] = Field(default_factory=list)

    @property
    def failed_items(self) -> int:
        """How many items failed (the system raised, or a judge failed on them)."""
        return sum(1 for item in self.items if item.errors)

    @classmethod
    def read(cls, path: str | Path, *, format: str | None = None) -> GateScores:
        """Read a baseline; a missing file, another kind of file or another format is one line."""
        if not Path(path).is_file():
            raise ConfigError(f"no baseline at {path}: make one with --update-baseline")
        document = _io.loads(_io.read_text(path), _io.format_of(path, format), source=str(path))
        if not isinstance(document, dict) or document.get("kind") != "synth-gate-scores":
            raise ConfigError(f"{path}: not a synth gate baseline (written by --update-baseline)")
        if document.get("format") != GATE_FORMAT:
            raise ConfigError(
                f"{path}: a gate baseline of format {document.get('format')!r}, this synth reads "
                f"format {GATE_FORMAT}; make it again with --update-baseline"
            )
        try:
            return cls.model_validate(document)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"{path}: invalid gate baseline at {where}: {first['msg']}") from None


class MetricGate(BaseModel):
    """One metric's verdict: the paired change from the baseline, its interval and its margin."""

    model_config = ConfigDict(extra="forbid")

    metric: str
    n: int  # items scored in both runs
    baseline: Score
    current: Score
    delta: Score  # mean of current - baseline over those items
    ci_low: Score  # bootstrap 95% interval of the delta
    ci_high: Score
    p_value: Score  # paired sign-flip test of a zero mean delta
    margin: float
    worse: bool  # delta < -margin and ci_high < 0: the gate fails on this metric


class ItemGate(BaseModel):
    """One item and metric: both scores, and whether this item is among the regressions."""

    model_config = ConfigDict(extra="forbid")

    id: str
    question: str = ""
    metric: str
    baseline: Score
    current: Score
    error: str | None = None  # why the current run has no score (a failure)
    skipped: str | None = None  # why the metric did not apply (no call was made)
    worse: bool = False  # its metric failed the gate and it fell by more than the margin


class GateResult(OneDocument):
    """The gate's verdict: per metric and per item, and whether the run passed."""

    noun: ClassVar[str] = "a gate result"

    passed: bool
    metrics: list[MetricGate] = Field(default_factory=list)
    items: list[ItemGate] = Field(default_factory=list)
    n_items: int = 0
    failed_items: int = 0
    failures: list[str] = Field(default_factory=list)  # the first failure lines, by item
    dataset: str = ""
    seed: int = 0

    @property
    def worse(self) -> list[MetricGate]:
        """The metrics that failed the gate."""
        return [row for row in self.metrics if row.worse]

    def verdict(self) -> str:
        """One line: passed, or which metrics failed and by how much."""
        if self.passed:
            return (
                "gate passed: no metric is worse than the baseline by more than its margin "
                f"({len(self.metrics)} metric{'' if len(self.metrics) == 1 else 's'}, "
                f"{self.n_items} item{'' if self.n_items == 1 else 's'})"
            )
        return "gate failed: " + "; ".join(
            f"{row.metric} is worse by {-row.delta:.3f} (95% CI {row.ci_low:+.3f} to "
            f"{row.ci_high:+.3f}, margin {row.margin:g})"
            for row in self.worse
        )


def dataset_fingerprint(items: Sequence[EvalItem]) -> str:
    """A hash of what the items ask and are checked against (not their stored answers).

    Ids, questions, references, contexts, relevant ids and conversation turns, in order: any
    edited, added, removed or moved golden changes it; new answers to the same goldens do not.
    """
    return joined_hash(
        (
            canonical_json([i.id, i.question, i.references, i.contexts, i.context_ids, i.history])
            for i in items
        ),
        32,
    )


def gated_metrics(report: AnswerEvaluation) -> list[str]:
    """The metrics a gate compares: the text metrics and each judge metric as the panel scores it
    (a panel's per-judge rows, ``<metric>/<judge>``, are not gated apart)."""
    return [name for name in report.metrics if "/" not in name]


def scores_of(report: AnswerEvaluation, dataset: Any) -> GateScores:
    """The gate's record of ``report``, scored on ``dataset`` (the same items, in order)."""
    items = as_items(dataset)
    metrics = gated_metrics(report)
    return GateScores(
        dataset=dataset_fingerprint(items),
        n_items=len(items),
        metrics=metrics,
        judges=report.judges,
        criteria=dict(report.config.get("criteria") or {}),
        system=str(report.config.get("system", "")),
        items=[
            GateItem(
                id=row.id,
                question=row.question or "",
                scores={m: row.scores.get(m, math.nan) for m in metrics},
                errors=dict(row.errors),
                skipped={m: reason for m, reason in row.skipped.items() if m in metrics},
            )
            for row in report.items
        ],
    )


def gate_scores(
    system: Any,
    dataset: Any,
    *,
    judges: Any = None,
    metrics: Sequence[str] | None = None,
    text_metrics: Sequence[str] | None = None,
    criteria: Mapping[str, str] | None = None,
    n_jobs: int = 1,
    cache: MutableMapping[str, Any] | None = None,
    seed: int = 0,
) -> GateScores:
    """Score ``system`` on ``dataset`` as a gate does (``system=None``: the stored answers).

    The arguments are :func:`~synth.evaluate.answers.evaluate_answers`'s; failures are recorded
    in the items (a gate counts them), never raised.
    """
    from synth.evaluate.answers import DEFAULT_TEXT_METRICS, evaluate_answers

    items = as_items(dataset)
    # evaluate_answers.__wrapped__: the gate reports failed items itself, with its exit code
    report = evaluate_answers.__wrapped__(  # type: ignore[attr-defined]
        system,
        items,
        judges=judges,
        metrics=metrics,
        text_metrics=DEFAULT_TEXT_METRICS if text_metrics is None else text_metrics,
        criteria=criteria,
        n_jobs=n_jobs,
        cache=cache,
        seed=seed,
    )
    return scores_of(report, items)


def planned_scores(
    dataset: Any,
    *,
    judges: Any = None,
    metrics: Sequence[str] | None = None,
    text_metrics: Sequence[str] | None = None,
    criteria: Mapping[str, str] | None = None,
) -> GateScores:
    """What :func:`gate_scores` will record with these arguments, without its scores: the
    dataset's fingerprint, the gated metrics, the judges' identities and the rubrics. Checked
    against a baseline (:func:`check_comparable`) before the system and the judges are paid for."""
    from synth.evaluate.answers import (
        DEFAULT_TEXT_METRICS,
        close_judges,
        judge_metric_names,
        make_judges,
        metric_order,
        text_metric_functions,
    )

    items = as_items(dataset)
    judge_map = make_judges(judges, on_error="record", cache=None)
    try:
        names = judge_metric_names(metrics, criteria, bool(judge_map))
        identities = {name: judge.identity() for name, judge in judge_map.items()}
    finally:
        close_judges(judge_map)
    text = text_metric_functions(DEFAULT_TEXT_METRICS if text_metrics is None else text_metrics)
    order = metric_order(list(text), names, list(judge_map))
    return GateScores(
        dataset=dataset_fingerprint(items),
        n_items=len(items),
        metrics=[name for name in order if "/" not in name],
        judges=identities,
        criteria=dict(criteria or {}),
    )


def check_comparable(
    baseline: GateScores, current: GateScores, *, source: str = "the baseline"
) -> None:
    """Refuse, with one line saying what changed, a run that cannot be compared with ``baseline``:
    another dataset, a metric the baseline lacks, another judge or another rubric."""
    again = "; if that is meant, make a new baseline with --update-baseline"
    if baseline.dataset != current.dataset:
        raise ConfigError(
            f"the dataset changed since {source} was made ({baseline.n_items} items then, "
            f"{current.n_items} now, fingerprint {baseline.dataset[:12]} then, "
            f"{current.dataset[:12]} now){again}"
        )
    missing = [m for m in current.metrics if m not in baseline.metrics]
    if missing:
        raise ConfigError(
            f"{source} has no scores for {', '.join(missing)} (it scored "
            f"{', '.join(baseline.metrics) or 'nothing'}){again}"
        )
    if current.judges and sorted(baseline.judges) != sorted(current.judges):
        # a run without judges gates text metrics only, which no judge changes
        then, now = (", ".join(sorted(s.judges)) or "none" for s in (baseline, current))
        raise ConfigError(
            f"the judges changed since {source} was made (judges {then} then, {now} now){again}"
        )
    for name, identity in current.judges.items():
        # a baseline made before judges' identities left out their server's address still has it
        before = public_metadata(baseline.judges[name])
        if canonical_json(before) != canonical_json(identity):
            changed = sorted(k for k in {*before, *identity} if before.get(k) != identity.get(k))
            raise ConfigError(
                f"judge {name!r} changed since {source} was made ({', '.join(changed)}: "
                f"{_brief(before, changed)} then, {_brief(identity, changed)} now){again}"
            )
    for name, rubric in current.criteria.items():
        if name in baseline.criteria and baseline.criteria[name] != rubric:
            raise ConfigError(f"the rubric of {name!r} changed since {source} was made{again}")


def _brief(identity: Mapping[str, Any], keys: Sequence[str]) -> str:
    return ", ".join(f"{k}={identity.get(k)!r}" for k in keys)


def _error_of(item: GateItem, metric: str) -> str | None:
    """Why ``item`` has no ``metric`` score when that is a failure: the system's, else the
    metric's judges'."""
    if "system" in item.errors:
        return f"system: {item.errors['system']}"
    own = [f"{k}: {v}" for k, v in item.errors.items() if k.split("/", 1)[0] == metric]
    return "; ".join(own) or None


def _as_report(scores: GateScores) -> Evaluation:
    rows = [ItemResult(id=item.id, scores=dict(item.scores)) for item in scores.items]
    metrics = {m: mean_score([r.scores.get(m, math.nan) for r in rows]) for m in scores.metrics}
    return Evaluation(metrics=metrics, items=rows)


def _scored(scores: GateScores) -> int:
    return sum(any(not math.isnan(v) for v in item.scores.values()) for item in scores.items)


def _nothing_compared(baseline: GateScores, current: GateScores, source: str) -> str:
    """The line saying why no golden was scored in both runs."""
    said = f"nothing to compare: no golden has a score both in {source} and in this run ("
    said += f"{_scored(baseline)} of {baseline.n_items} scored then, "
    said += f"{_scored(current)} of {current.n_items} now"
    first = next((item for item in current.items if item.skipped), None)
    if first is not None:
        metric, reason = next(iter(first.skipped.items()))
        said += f"; item {first.id}: {metric}: {reason}"
    return said + ")"


def margin_of(metric: str, margins: float | Mapping[str, float]) -> float:
    """The margin of ``metric``: its own in a mapping (``"*"`` for the rest, else 0), or the one
    number given for all."""
    if isinstance(margins, Mapping):
        return float(margins.get(metric, margins.get("*", 0.0)))
    return float(margins)


def judge_gate(
    baseline: GateScores,
    current: GateScores,
    *,
    margins: float | Mapping[str, float] = 0.0,
    seed: int = 0,
    source: str = "the baseline",
) -> GateResult:
    """The verdict on ``current`` against ``baseline``, each metric compared item by item.

    A metric fails when its mean paired change is below ``-margin`` and the bootstrap 95% interval
    of that change lies wholly below zero. Items that failed in either run are left out of the
    pairs (they are counted in ``failed_items``). Raises :class:`~synth.errors.ConfigError` when
    the runs are not comparable (:func:`check_comparable`), or when no golden has a score in both
    and none failed (a gate that compares nothing does not pass).
    """
    check_comparable(baseline, current, source=source)
    if isinstance(margins, Mapping):
        unknown = [m for m in margins if m != "*" and m not in current.metrics]
        if unknown:
            raise ConfigError(
                f"--margin names {', '.join(unknown)}, not a gated metric "
                f"({', '.join(current.metrics)})"
            )
    for metric in current.metrics:
        margin = margin_of(metric, margins)
        if not (math.isfinite(margin) and margin >= 0):
            raise ConfigError(f"the margin of {metric} must be a number >= 0, got {margin}")
    comparison = compare_reports(_as_report(baseline), _as_report(current), seed=seed)
    by_metric = {row.metric: row for row in comparison.metrics}
    rows = []
    for metric in current.metrics:
        c = by_metric[metric]
        margin = margin_of(metric, margins)
        worse = c.n > 0 and c.delta < -margin and c.ci_high < 0
        rows.append(
            MetricGate(
                metric=metric,
                n=c.n,
                baseline=c.a,
                current=c.b,
                delta=c.delta,
                ci_low=c.ci_low,
                ci_high=c.ci_high,
                p_value=c.p_value,
                margin=margin,
                worse=worse,
            )
        )
    if rows and all(row.n == 0 for row in rows) and not current.failed_items:
        # no pair at all: a verdict of "passed" would be a gate that compares nothing
        raise ConfigError(_nothing_compared(baseline, current, source))
    failing = {row.metric: row.margin for row in rows if row.worse}
    before = {item.id: item for item in baseline.items}
    items = []
    for item in current.items:
        old = before.get(item.id)
        for metric in current.metrics:
            was = old.scores.get(metric, math.nan) if old else math.nan
            now = item.scores.get(metric, math.nan)
            fell = metric in failing and not math.isnan(was + now) and now < was - failing[metric]
            error = _error_of(item, metric) if math.isnan(now) else None
            items.append(
                ItemGate(
                    id=item.id,
                    question=item.question,
                    metric=metric,
                    baseline=was,
                    current=now,
                    error=error,
                    # "no answer" after the system failed is the failure, not a metric's skip
                    skipped=None if error else item.skipped.get(metric),
                    worse=fell,
                )
            )
    failures = [
        f"item {item.id}: " + "; ".join(f"{k}: {v}" for k, v in item.errors.items())
        for item in current.items
        if item.errors
    ]
    return GateResult(
        passed=not failing,
        metrics=rows,
        items=items,
        n_items=current.n_items,
        failed_items=current.failed_items,
        failures=failures[:5],
        dataset=current.dataset,
        seed=seed,
    )


__all__ = [
    "GATE_FORMAT",
    "GateItem",
    "GateResult",
    "GateScores",
    "ItemGate",
    "MetricGate",
    "check_comparable",
    "dataset_fingerprint",
    "gate_scores",
    "gated_metrics",
    "judge_gate",
    "margin_of",
    "planned_scores",
    "scores_of",
]
