"""Head to head: which of two answers each judge prefers, asked in both orders.

Some models prefer whichever answer comes first. Each judge sees every pair twice, once in each
order; a verdict that changes with the order counts as a tie and lowers ``position_consistency``.
An item's ``preference/<judge>`` score is 1 when answer a wins, 0 when answer b wins, 0.5 for a tie.
"""

from __future__ import annotations

import asyncio
import functools
import math
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

from synth.errors import ConfigError
from synth.evaluate._items import EvalItem, as_items
from synth.evaluate._jobs import (
    call_user,
    check_n_jobs,
    check_on_error,
    describe,
    gather_all,
    limited,
    run_jobs,
    system_output,
)
from synth.evaluate.answers import (
    close_judges,
    make_judges,
    panel_agreement,
    per_judge,
    record_judges,
)
from synth.evaluate.judge import JudgeResult, LLMJudge
from synth.evaluate.report import (
    ItemResult,
    PreferenceEvaluation,
    PreferenceSummary,
    summarize,
)
from synth.evaluate.stats import mean_score

AnswerSource = Sequence[str] | Mapping[str, str] | Callable[[str], Any]


def _answer_getter(
    source: AnswerSource, items: Sequence[EvalItem], label: str
) -> Callable[[EvalItem, int], Any]:
    """Return ``get(item, index)``: an answer, or an awaitable for a system's answer."""
    if isinstance(source, Mapping):
        missing = [item.id for item in items if item.id not in source]
        if missing:
            raise ConfigError(f"answers {label} have no answer for item ids {missing[:5]}")
        return lambda item, index: source[item.id]
    if callable(source):
        return lambda item, index: call_user(source, item.question)
    if isinstance(source, str) or not isinstance(source, Sequence):
        raise ConfigError(
            f"answers {label} must be a list (one per item), a mapping by id or a system"
        )
    if len(source) != len(items):
        raise ConfigError(f"answers {label}: {len(source)} answers for {len(items)} items")
    return lambda item, index: source[index]


async def _resolve(value: Any, limiter: asyncio.Semaphore) -> str:
    if asyncio.iscoroutine(value):
        value = await limited(limiter, value)
    answer, _ = system_output(value)
    return answer


def evaluate_preference(
    dataset: Any,
    answers_a: AnswerSource,
    answers_b: AnswerSource,
    *,
    judges: Any,
    names: tuple[str, str] = ("a", "b"),
    on_error: str = "record",
    n_jobs: int = 1,
    keep_verdicts: bool = False,
    cache: MutableMapping[str, Any] | None = None,
    seed: int = 0,
) -> PreferenceEvaluation:
    """Ask each judge which answer is better for every item, once in each order.

    ``answers_a`` and ``answers_b`` are lists (one answer per item, in dataset order), mappings by
    item id, or systems ``fn(question)``. ``names`` names the two sides in the summary. A judge
    sees the item's contexts, and its reference when it has exactly one.
    """
    check_on_error(on_error)
    check_n_jobs(n_jobs)
    if len(names) != 2 or names[0] == names[1] or not all(isinstance(n, str) and n for n in names):
        raise ConfigError(f"names must be two different non-empty strings, got {names!r}")
    items = as_items(dataset)
    judge_map = make_judges(judges, on_error=on_error, cache=cache)
    if not judge_map:
        raise ConfigError("evaluate_preference needs at least one judge")
    get_a = _answer_getter(answers_a, items, names[0])
    get_b = _answer_getter(answers_b, items, names[1])

    score = functools.partial(
        _score_pair,
        answers=(get_a, get_b),
        judges=judge_map,
        on_error=on_error,
        keep_verdicts=keep_verdicts,
    )

    async def main(limiter: asyncio.Semaphore) -> list[tuple[ItemResult, dict[str, JudgeResult]]]:
        return await gather_all(score(item, i, limiter) for i, item in enumerate(items))

    try:
        outcomes = run_jobs(n_jobs, main)
    finally:
        close_judges(judge_map)
    rows = [row for row, _ in outcomes]
    config = {"names": list(names), "judges": list(judge_map), "n_items": len(items), "seed": seed}
    report = PreferenceEvaluation(items=rows, config=config, names=names)
    summarize(report, [*per_judge("preference", list(judge_map)), "preference"], seed)
    report.summary = {name: _summary(name, names, outcomes) for name in judge_map}
    record_judges(report, judge_map)
    report.errors.update({name: report.summary[name]["errors"] for name in judge_map})
    report.agreement = panel_agreement(rows, ["preference"], list(judge_map))
    return report


async def _score_pair(
    item: EvalItem,
    index: int,
    limiter: asyncio.Semaphore,
    *,
    answers: tuple[Callable[[EvalItem, int], Any], Callable[[EvalItem, int], Any]],
    judges: Mapping[str, LLMJudge],
    on_error: str,
    keep_verdicts: bool,
) -> tuple[ItemResult, dict[str, JudgeResult]]:
    """One item's row and each judge's result: both answers, then every judge in both orders."""
    row = ItemResult(id=item.id, question=item.question, references=list(item.references))
    results: dict[str, JudgeResult] = {}
    try:
        answer_a = await _resolve(answers[0](item, index), limiter)
        answer_b = await _resolve(answers[1](item, index), limiter)
    except Exception as exc:  # a system may raise anything; the item is recorded, not fatal
        if on_error == "raise":
            raise
        row.errors["system"] = describe(exc)
        row.scores = dict.fromkeys([*per_judge("preference", list(judges)), "preference"], math.nan)
        return row, results
    reference = item.references[0] if len(item.references) == 1 else None
    calls = [
        limited(
            limiter,
            judge.apreference(
                item.question, answer_a, answer_b, contexts=item.contexts, reference=reference
            ),
        )
        for judge in judges.values()
    ]
    for name, result in zip(judges, await gather_all(calls), strict=True):
        results[name] = result
        if len(judges) > 1:  # one judge's score is the preference itself
            row.scores[f"preference/{name}"] = result.score
        if result.error is not None:
            row.errors[f"preference/{name}"] = f"{result.error_kind}: {result.error}"
        if keep_verdicts and result.verdict is not None:
            row.verdicts[f"preference/{name}"] = {**result.verdict, **result.details}
    row.scores["preference"] = mean_score([results[name].score for name in judges])
    return row, results


def _summary(
    judge: str,
    names: tuple[str, str],
    outcomes: Sequence[tuple[ItemResult, dict[str, JudgeResult]]],
) -> PreferenceSummary:
    judged = [r[judge] for _, r in outcomes if judge in r and r[judge].error is None]
    errors = sum(1 for _, r in outcomes if judge in r and r[judge].error is not None)
    winners = [r.details["winner"] for r in judged]
    consistent = sum(bool(r.details["consistent"]) for r in judged)
    return PreferenceSummary(
        n=len(judged),
        wins={names[0]: winners.count("a"), names[1]: winners.count("b")},
        ties=winners.count("tie"),
        position_consistency=consistent / len(judged) if judged else math.nan,
        win_rate=mean_score([r.score for r in judged]),
        errors=errors,
    )


__all__ = ["PreferenceEvaluation", "PreferenceSummary", "evaluate_preference"]
