"""Evaluate a system's answers: text metrics against the references, and each judge's verdicts.

:func:`evaluate_answers` asks the system every question (or takes the stored answers), scores each
answer with the deterministic text metrics and with every judge, and returns an
:class:`AnswerEvaluation`: per-item scores, means with bootstrap intervals, coverage, the judges'
identities and usage, failures, and the judges' agreement.
"""

from __future__ import annotations

import asyncio
import difflib
import functools
import math
from collections.abc import Awaitable, Callable, Coroutine, Mapping, MutableMapping, Sequence
from typing import Any

from synth.errors import ConfigError
from synth.evaluate._calls import callable_name
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
    warns_on_failures,
)
from synth.evaluate.judge import JUDGE_METRICS, JudgeResult, LLMJudge, as_judge
from synth.evaluate.report import AnswerEvaluation, ItemResult, PreferenceEvaluation, summarize
from synth.evaluate.stats import mean_score
from synth.evaluate.text import TEXT_METRICS
from synth.llm.base import LLM

DEFAULT_JUDGE_METRICS = ("faithfulness", "answer_relevance")
DEFAULT_TEXT_METRICS = ("exact_match", "token_f1")

TextMetric = Callable[[str, Sequence[str]], float]


def _suggest(name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def judge_name(model: Any) -> str:
    """Return the name a judge gets when the caller did not name it ("/" becomes "_").

    A name holds no "/" because ``<metric>/<judge>`` names the judge's scores; model names such
    as ``org/model`` are common, so they are made safe rather than refused.
    """
    if isinstance(model, LLMJudge):
        name = model.name
    elif isinstance(model, str):
        name = model
    elif isinstance(model, LLM):
        name = model.model or model.provider or "judge"
    else:
        name = getattr(model, "__name__", None) or type(model).__name__
    return name.replace("/", "_")


def make_judges(
    judges: Any, *, on_error: str, cache: MutableMapping[str, Any] | None
) -> dict[str, LLMJudge]:
    """Return ``{name: LLMJudge}`` from a mapping, a list of models, or one model."""
    if judges is None:
        return {}
    if isinstance(judges, Mapping):
        named = dict(judges)
    elif isinstance(judges, list | tuple):
        named = {}
        for model in judges:
            base = judge_name(model)
            name, n = base, 1
            while name in named:
                n += 1
                name = f"{base}-{n}"
            named[name] = model
    else:
        named = {judge_name(judges): judges}
    made = {}
    for name, model in named.items():
        if not isinstance(name, str) or not name or "/" in name or name == "system":
            raise ConfigError(
                f"a judge name is a non-empty string without '/', not 'system': {name!r}"
            )
        made[name] = as_judge(model, name=name, on_error=on_error, cache=cache)  # type: ignore[arg-type]
    return made


def close_judges(judges: Mapping[str, LLMJudge]) -> None:
    """Close the judges :func:`make_judges` made (a judge made from a spec owns its model)."""
    for judge in judges.values():
        judge.close()


def judge_metric_names(
    metrics: Sequence[str] | None, criteria: Mapping[str, str] | None, has_judges: bool
) -> list[str]:
    """Return the judge metrics to run: ``metrics`` (validated) then the ``criteria`` names.

    The default judge metrics are run only when judges are given and neither ``metrics`` nor
    ``criteria`` is: rubrics alone do not triple the judge calls behind the caller's back.
    """
    defaults = metrics is None and has_judges and not criteria
    names = list(DEFAULT_JUDGE_METRICS if defaults else metrics or [])
    for name in names:
        if name not in JUDGE_METRICS:
            raise ConfigError(f"unknown judge metric {name!r}{_suggest(name, JUDGE_METRICS)}")
    for name, text in (criteria or {}).items():
        if name in JUDGE_METRICS or name in TEXT_METRICS or "/" in name or not name:
            raise ConfigError(f"criteria name {name!r} clashes with a metric name or holds '/'")
        if not isinstance(text, str) or not text.strip():
            raise ConfigError(f"criteria {name!r} needs its rubric as a non-empty string")
        names.append(name)
    if len(set(names)) != len(names):
        raise ConfigError(f"judge metrics repeat: {names}")
    if names and not has_judges:
        raise ConfigError(f"judge metrics {names} need judges=; pass judges or metrics=[]")
    return names


def text_metric_functions(
    text_metrics: Sequence[str] | Mapping[str, TextMetric],
) -> dict[str, TextMetric]:
    """Return ``{name: fn(prediction, references)}`` from names or a mapping of functions."""
    if isinstance(text_metrics, Mapping):
        bad = [name for name, fn in text_metrics.items() if not callable(fn)]
        if bad:
            raise ConfigError(f"text metrics must be callables fn(prediction, references): {bad}")
        return dict(text_metrics)
    if isinstance(text_metrics, str):
        text_metrics = [text_metrics]
    functions: dict[str, TextMetric] = {}
    for name in text_metrics:
        if name not in TEXT_METRICS:
            raise ConfigError(f"unknown text metric {name!r}{_suggest(name, list(TEXT_METRICS))}")
        functions[name] = TEXT_METRICS[name]
    return functions


def per_judge(metric: str, judge_names: Sequence[str]) -> list[str]:
    """Return ``<metric>/<judge>`` for each judge of a panel of several; none for one judge.

    One judge's score is the metric's own: a second row with the judge's name would show the same
    numbers twice (the judge is named once, in the report's ``judges``).
    """
    return [f"{metric}/{name}" for name in judge_names] if len(judge_names) > 1 else []


def metric_order(
    text_names: Sequence[str], metric_names: Sequence[str], judge_names: Sequence[str]
) -> list[str]:
    """Return a report's metrics in order: text metrics, then each judge's (with several) and
    the panel's."""
    order = list(text_names)
    for metric in metric_names:
        order.extend(per_judge(metric, judge_names))
        order.append(metric)
    return order


#: what each judge metric needs besides the question
_NEEDS = {
    "faithfulness": ("answer", "contexts"),
    "answer_relevance": ("answer",),
    "context_precision": ("contexts",),
    "context_recall": ("contexts", "reference"),
    "answer_correctness": ("answer", "reference"),
}


def missing_input(
    metric: str, item: EvalItem, answer: str | None, contexts: list[str]
) -> str | None:
    """Why ``metric`` cannot be scored for this item (no call is made), or None when it can."""
    for need in _NEEDS.get(metric, ("answer",)):  # a criteria metric needs the answer
        if need == "answer" and answer is None:
            return "no answer"
        if need == "contexts" and not contexts:
            return "no contexts"
        if need == "reference" and len(item.references) != 1:
            # a judge sees a reference only when there is exactly one; several go to text metrics
            return "no reference" if not item.references else "several references"
    return None


#: the metrics whose verdicts are lists (a verdict per claim, context or statement): the longest
#: replies, so their calls leave first and the evaluation does not wait on one that left last
LONG_REPLIES = frozenset(
    {"faithfulness", "context_precision", "context_recall", "answer_correctness"}
)


async def _after_a_turn(call: Coroutine[Any, Any, JudgeResult]) -> JudgeResult:
    """``call`` awaited one turn of the event loop late, its place in the queue for a slot too:
    the calls every item starts in this turn (its long replies) are sent before it."""
    try:
        await asyncio.sleep(0)
    except BaseException:
        call.close()  # cancelled before it started: it will never run, say so quietly
        raise
    return await call


def _judge_call(
    judge: LLMJudge,
    metric: str,
    item: EvalItem,
    answer: str,
    contexts: list[str],
    criteria: Mapping[str, str],
) -> Awaitable[JudgeResult]:
    """The judge's call for one metric whose inputs the item has."""
    reference = item.references[0] if len(item.references) == 1 else None
    question = item.judged_question
    if metric in criteria:
        return judge.acriteria_score(
            question,
            answer,
            criteria[metric],
            contexts=contexts,
            reference=reference,
            metric=metric,
        )
    if metric == "faithfulness":
        return judge.afaithfulness(question, answer, contexts)
    if metric == "answer_relevance":
        return judge.aanswer_relevance(question, answer)
    if metric == "context_precision":
        return judge.acontext_precision(question, contexts, reference)
    if metric == "context_recall":
        return judge.acontext_recall(question, contexts, reference or "")
    if metric == "answer_correctness":
        return judge.aanswer_correctness(question, answer, reference or "")
    raise ConfigError(f"unknown judge metric {metric!r}")  # pragma: no cover - validated before


async def _score_item(
    item: EvalItem,
    system: Callable[[str], Any] | None,
    judges: Mapping[str, LLMJudge],
    metric_names: Sequence[str],
    text_fns: Mapping[str, TextMetric],
    criteria: Mapping[str, str],
    limiter: asyncio.Semaphore,
    on_error: str,
    keep_verdicts: bool,
) -> ItemResult:
    row = ItemResult(id=item.id, question=item.question, references=list(item.references))
    answer, contexts = item.answer, list(item.contexts)
    if system is not None:
        answer = None
        try:
            # a conversation's system is given the turns before the question (``history=``)
            turns = {"history": item.history} if item.history else {}
            output = await limited(limiter, call_user(system, item.question, **turns))
            answer, returned = system_output(output)
            if returned is not None:
                contexts = returned
        except Exception as exc:  # the user's system may raise anything; it is recorded, not fatal
            if on_error == "raise":
                raise
            row.errors["system"] = describe(exc)
    row.answer = answer
    for name, fn in text_fns.items():
        if answer is None or not item.references:
            row.scores[name] = math.nan
            row.skipped[name] = "no answer" if answer is None else "no reference"
        else:
            row.scores[name] = float(fn(answer, item.references))
    calls: list[tuple[str, str, Awaitable[JudgeResult]]] = []
    for metric in metric_names:
        reason = missing_input(metric, item, answer, contexts)
        if reason is not None:
            row.skipped[metric] = reason
            continue
        for judge_name_, judge in judges.items():
            call = _judge_call(judge, metric, item, answer or "", contexts, criteria)
            calls.append((metric, judge_name_, call))
    results = await gather_all(
        limited(limiter, call) if metric in LONG_REPLIES else _after_a_turn(limited(limiter, call))
        for metric, _, call in calls
    )
    by_key = {
        (metric, name): result for (metric, name, _), result in zip(calls, results, strict=True)
    }
    panel_of_several = len(judges) > 1
    for metric in metric_names:
        panel = []
        for name in judges:
            key = f"{metric}/{name}"  # failures and verdicts name their judge, even a lone one
            result = by_key.get((metric, name))
            score = result.score if result is not None else math.nan
            if panel_of_several:
                row.scores[key] = score
            panel.append(score)
            if result is not None and result.error is not None:
                row.errors[key] = f"{result.error_kind}: {result.error}"
            if result is not None and keep_verdicts and result.verdict is not None:
                row.verdicts[key] = result.verdict
        row.scores[metric] = mean_score(panel)
    return row


def panel_agreement(
    items: Sequence[ItemResult], metric_names: Sequence[str], judge_names: Sequence[str]
) -> dict[str, float]:
    """Krippendorff's alpha (interval) between the judges, per metric; empty with one judge."""
    if len(judge_names) < 2:
        return {}
    from synth.evaluate.agreement import krippendorff_alpha  # numpy: only a panel needs it

    agreement = {}
    for metric in metric_names:
        ratings = [
            [item.scores.get(f"{metric}/{name}", math.nan) for item in items]
            for name in judge_names
        ]
        agreement[metric] = krippendorff_alpha(ratings, level="interval") if items else math.nan
    return agreement


def _check_arguments(system: Any, on_error: str, n_jobs: int) -> None:
    check_on_error(on_error)
    check_n_jobs(n_jobs)
    if system is not None and not callable(system):
        raise ConfigError(
            f"system must be a callable fn(question) or None, got {type(system).__name__}"
        )


@warns_on_failures
def evaluate_answers(
    system: Callable[[str], Any] | None,
    dataset: Any,
    *,
    judges: Any = None,
    metrics: Sequence[str] | None = None,
    text_metrics: Sequence[str] | Mapping[str, TextMetric] = DEFAULT_TEXT_METRICS,
    criteria: Mapping[str, str] | None = None,
    on_error: str = "record",
    n_jobs: int = 1,
    keep_verdicts: bool = False,
    cache: MutableMapping[str, Any] | None = None,
    seed: int = 0,
) -> AnswerEvaluation:
    """Ask ``system`` every question of ``dataset`` and score every answer.

    ``system(question)`` returns a string, a mapping with ``"answer"`` (and the ``"contexts"`` it
    retrieved, which replace the dataset's) or an object with ``.answer`` (a conversation's last
    question comes with its earlier turns: ``system(question, history=[{"role", "content"}])``).
    ``None`` evaluates each item's stored answer. ``judges`` is ``{name: model}`` (a callable, an LLM, a ``provider:model``
    spec or an :class:`LLMJudge`); ``metrics`` the judge metrics (default, when no ``criteria``
    either: faithfulness and answer_relevance); ``criteria`` rubric metrics ``{name: rubric}``. A metric whose input an
    item lacks is NaN and costs no call. ``on_error="record"`` keeps going past failures and counts
    them (and warns with :class:`~synth.errors.FailedItemsWarning` when any item failed);
    ``n_jobs`` runs calls on threads, results in dataset order; ``cache`` reuses judge replies.
    """
    _check_arguments(system, on_error, n_jobs)
    items = as_items(dataset)
    judge_map = make_judges(judges, on_error=on_error, cache=cache)
    try:
        criteria = dict(criteria or {})
        metric_names = judge_metric_names(metrics, criteria, bool(judge_map))
        text_fns = text_metric_functions(text_metrics)
        score = functools.partial(
            _score_item,
            system=system,
            judges=judge_map,
            metric_names=metric_names,
            text_fns=text_fns,
            criteria=criteria,
            on_error=on_error,
            keep_verdicts=keep_verdicts,
        )

        async def main(limiter: asyncio.Semaphore) -> list[ItemResult]:
            return await gather_all(score(item, limiter=limiter) for item in items)

        rows = run_jobs(n_jobs, main)
    finally:
        close_judges(judge_map)
    config: dict[str, Any] = {
        "system": callable_name(system) if system is not None else "stored answers",
        "metrics": list(metric_names),
        "text_metrics": list(text_fns),
        "criteria": criteria,
        "judges": list(judge_map),
        "n_items": len(items),
        "seed": seed,
    }
    return _report(AnswerEvaluation(items=rows, config=config), judge_map, metric_names, seed)


def _report(
    report: AnswerEvaluation, judges: Mapping[str, LLMJudge], metric_names: list[str], seed: int
) -> AnswerEvaluation:
    """``report`` (its items scored) with its means, judges, usage, failures and agreement."""
    text_names = report.config["text_metrics"]
    summarize(report, metric_order(text_names, metric_names, list(judges)), seed)
    record_judges(report, judges)
    for name in judges:
        report.errors[name] = sum(
            f"{metric}/{name}" in row.errors for row in report.items for metric in metric_names
        )
    report.agreement = panel_agreement(report.items, metric_names, list(judges))
    return report


def record_judges(
    report: AnswerEvaluation | PreferenceEvaluation, judges: Mapping[str, LLMJudge]
) -> None:
    """Fill the report's judge identities and usage, and count the items the system failed on."""
    report.judges = {name: judge.identity() for name, judge in judges.items()}
    report.usage = {name: judge.usage.as_dict() for name, judge in judges.items()}
    report.errors = {"system": sum("system" in row.errors for row in report.items)}


__all__ = ["AnswerEvaluation", "evaluate_answers"]
