"""Several systems on the same items, the same judges and one cache: a leaderboard and comparisons.

:func:`benchmark` evaluates every system with :func:`~synth.evaluate.answers.evaluate_answers` on
the same items. Every judge call goes through one cache (an in-memory one unless ``cache=`` is
given), so a judge asked the same thing twice, for two systems that gave the same answer or in a
rerun with a persistent cache, is paid once. The result ranks the systems by one metric with
bootstrap intervals, and compares every pair with the paired sign-flip test.
"""

from __future__ import annotations

import difflib
import inspect
import math
import warnings
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from synth.errors import ConfigError, FailedItemsWarning
from synth.evaluate._document import OneDocument
from synth.evaluate._items import as_items
from synth.evaluate._jobs import failure_summary
from synth.evaluate._scores import Score
from synth.evaluate.answers import (
    DEFAULT_TEXT_METRICS,
    AnswerEvaluation,
    TextMetric,
    close_judges,
    evaluate_answers,
    judge_metric_names,
    make_judges,
    metric_order,
    text_metric_functions,
)
from synth.evaluate.compare import Comparison
from synth.evaluate.judge import LLMJudge


class LeaderboardRow(BaseModel):
    """One system's place, with the mean, interval and coverage of every metric."""

    model_config = ConfigDict(extra="forbid")

    rank: int
    system: str
    metrics: dict[str, Score]
    intervals: dict[str, tuple[Score, Score]]
    coverage: dict[str, int]
    errors: int  # failures of the system and of its judges


class PairComparison(BaseModel):
    """System ``b`` compared with system ``a`` (deltas are b - a)."""

    model_config = ConfigDict(extra="forbid")

    a: str
    b: str
    comparison: Comparison


class BenchmarkResult(OneDocument):
    """The leaderboard (best first by ``rank_by``), every pairwise comparison, and each report."""

    noun: ClassVar[str] = "a benchmark"

    rank_by: str
    tie_breakers: list[str] = Field(default_factory=list)  # in order, after rank_by
    leaderboard: list[LeaderboardRow] = Field(default_factory=list)
    comparisons: list[PairComparison] = Field(default_factory=list)
    reports: dict[str, AnswerEvaluation] = Field(default_factory=dict)
    usage: dict[str, dict[str, int]] = Field(default_factory=dict)  # per judge, over all systems

    def comparison(self, a: str, b: str) -> Comparison:
        """Return the comparison of system ``b`` with system ``a`` (either order was computed)."""
        for pair in self.comparisons:
            if (pair.a, pair.b) == (a, b):
                return pair.comparison
            if (pair.a, pair.b) == (b, a):
                return pair.comparison.model_copy(
                    update={"metrics": [_flip(m) for m in pair.comparison.metrics]}
                )
        raise KeyError((a, b))


def _flip(row: Any) -> Any:
    return row.model_copy(
        update={
            "a": row.b,
            "b": row.a,
            "delta": -row.delta,
            "ci_low": -row.ci_high,
            "ci_high": -row.ci_low,
        }
    )


def _sort_key(values: Sequence[float]) -> list[tuple[int, float]]:
    """Best first: higher is better, NaN last; later metrics break ties."""
    return [(1, 0.0) if math.isnan(v) else (0, -v) for v in values]


#: the built-in text metrics, those that tell answers apart most finely first: exact match is 0
#: for every answer worded otherwise than its reference, so it ranks free-text answers by chance
_TEXT_RANKING = ("token_f1", "exact_match")


def _default_order(text_names: Sequence[str], judge_metrics: Sequence[str]) -> list[str]:
    """The metrics that rank when none is named, first ranking: the judges' metrics (what judges
    are asked for), then the text metrics (a user's own first, as given, then the built-in ones
    finest first)."""
    own = [m for m in text_names if m not in _TEXT_RANKING]
    built_in = [m for m in _TEXT_RANKING if m in text_names]
    return [*judge_metrics, *own, *built_in]


def _ranking(
    rank_by: str | None,
    judges: Mapping[str, Any],
    metrics: Sequence[str] | None,
    text_metrics: Sequence[str] | Mapping[str, TextMetric],
    criteria: Mapping[str, str] | None,
) -> tuple[str, list[str]]:
    """Return the ranking metric and the tie-breakers, checked before any system or judge runs."""
    text_names = list(text_metric_functions(text_metrics))
    judge_metrics = judge_metric_names(metrics, dict(criteria or {}), bool(judges))
    names = metric_order(text_names, judge_metrics, list(judges))
    # the summary metrics: text metrics and each judge metric's panel score, not per judge
    summary = _default_order(text_names, judge_metrics)
    if rank_by is None and not summary:
        raise ConfigError("nothing to rank by: give text metrics or judges")
    ranking = rank_by or summary[0]
    if ranking not in names:
        close = difflib.get_close_matches(ranking, names, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ConfigError(
            f"cannot rank by {ranking!r}; {hint}the metrics are {', '.join(names) or 'none'}"
        )
    return ranking, [m for m in summary if m != ranking]


def benchmark(
    systems: Mapping[str, Callable[[str], Any]],
    dataset: Any,
    *,
    judges: Any = None,
    metrics: Sequence[str] | None = None,
    text_metrics: Sequence[str] | Mapping[str, TextMetric] = DEFAULT_TEXT_METRICS,
    criteria: Mapping[str, str] | None = None,
    rank_by: str | None = None,
    cache: MutableMapping[str, Any] | None = None,
    on_error: str = "record",
    n_jobs: int = 1,
    keep_verdicts: bool = False,
    seed: int = 0,
) -> BenchmarkResult:
    """Run every system on the same items with the same judges; rank them and compare each pair.

    ``systems`` is ``{name: fn(question)}`` (what :func:`evaluate_answers` takes as a system).
    ``rank_by`` names the ranking metric (by default, with judges, the first judge metric's panel
    score; without, the text metric that tells answers apart most finely: token F1 before exact
    match); the other metrics break ties (``tie_breakers``), and systems still tied keep the order
    they were given in. Every judge call is cached in ``cache``
    (a new dict by default; an :class:`LLMJudge` made with its own cache keeps it then).
    When items failed, one :class:`~synth.errors.FailedItemsWarning` names each system they
    failed for (each row's ``errors`` counts them).
    """
    _check_systems(systems)
    items = as_items(dataset)  # once, so every system sees the same items
    made = make_judges(judges, on_error=on_error, cache=cache)
    judge_map = _sharing_one_cache(made, cache)
    try:
        ranking, tie_breakers = _ranking(rank_by, judge_map, metrics, text_metrics, criteria)
        score = inspect.unwrap(evaluate_answers)  # without its warning: one for all, below
        reports: dict[str, AnswerEvaluation] = {
            name: score(
                system,
                items,
                judges=judge_map or None,
                metrics=metrics,
                text_metrics=text_metrics,
                criteria=criteria,
                on_error=on_error,
                n_jobs=n_jobs,
                keep_verdicts=keep_verdicts,
                cache=cache,  # None: each judge keeps the cache set above
                seed=seed,
            )
            for name, system in systems.items()
        }
    finally:
        close_judges(made)  # the models made from specs (the copies above share them)
    failures = [f"{name}: {line}" for name, r in reports.items() if (line := failure_summary(r))]
    if failures:
        warnings.warn("; ".join(failures), FailedItemsWarning, stacklevel=2)
    return BenchmarkResult(
        rank_by=ranking,
        tie_breakers=tie_breakers,
        leaderboard=_leaderboard(reports, [ranking, *tie_breakers]),
        comparisons=_every_pair(reports, seed),
        reports=reports,
        usage=_total_usage(reports),
    )


def _check_systems(systems: Any) -> None:
    if not isinstance(systems, Mapping) or not systems:
        raise ConfigError("systems must be a non-empty mapping {name: fn(question)}")
    for name, system in systems.items():
        if not isinstance(name, str) or not name:
            raise ConfigError(f"a system name must be a non-empty string, got {name!r}")
        if not callable(system):
            raise ConfigError(f"system {name!r} is not callable")


def _sharing_one_cache(
    made: Mapping[str, LLMJudge], cache: MutableMapping[str, Any] | None
) -> dict[str, LLMJudge]:
    """The judges, each answering from one cache across every system's run.

    Models are made once; each system's run gets fresh usage counts over the shared cache. A judge
    that brought its own cache keeps it (unless ``cache=`` is given): it is still one cache.
    """
    shared: MutableMapping[str, Any] = {} if cache is None else cache
    return {
        name: judge if judge.cache is not None else judge.with_options(cache=shared)
        for name, judge in made.items()
    }


def _leaderboard(reports: Mapping[str, AnswerEvaluation], keys: list[str]) -> list[LeaderboardRow]:
    """The systems best first by the metrics in ``keys`` (the first ranks, the rest break ties)."""
    order = sorted(reports, key=lambda name: _sort_key([reports[name].metrics[m] for m in keys]))
    return [
        LeaderboardRow(
            rank=rank,
            system=name,
            metrics=dict(reports[name].metrics),
            intervals=dict(reports[name].intervals),
            coverage=dict(reports[name].coverage),
            errors=sum(reports[name].errors.values()),
        )
        for rank, name in enumerate(order, start=1)
    ]


def _every_pair(reports: Mapping[str, AnswerEvaluation], seed: int) -> list[PairComparison]:
    """Every pair of systems compared, each once, in the order the systems were given."""
    names = list(reports)
    return [
        PairComparison(a=a, b=b, comparison=reports[a].compare(reports[b], seed=seed))
        for i, a in enumerate(names)
        for b in names[i + 1 :]
    ]


def _total_usage(reports: Mapping[str, AnswerEvaluation]) -> dict[str, dict[str, int]]:
    """Each judge's usage summed over every system's run."""
    usage: dict[str, dict[str, int]] = {}
    for report in reports.values():
        for judge, counts in report.usage.items():
            total = usage.setdefault(judge, dict.fromkeys(counts, 0))
            for key, value in counts.items():
                total[key] = total.get(key, 0) + value
    return usage


__all__ = ["BenchmarkResult", "LeaderboardRow", "PairComparison", "benchmark"]
