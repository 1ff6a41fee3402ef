"""Evaluation results made to exercise the evaluation, comparison and benchmark reports: real runs
of ``evaluate_answers``, ``evaluate_retrieval``, ``evaluate_preference`` and ``benchmark`` over
scripted judges, with more items than a page, failures of the system and of a judge, judges that
disagree, and markup in every field a system or a judge fills."""

from __future__ import annotations

import json
import warnings
from typing import Any

from judge_replies import faithfulness_reply

from synth import (
    AnswerEvaluation,
    BenchmarkResult,
    Comparison,
    FailedItemsWarning,
    PreferenceEvaluation,
    RetrievalEvaluation,
    benchmark,
    compare_reports,
    evaluate_answers,
    evaluate_preference,
    evaluate_retrieval,
)

XSS_ANSWER = "<script>alert(1)</script> about <img src=x onerror=alert(2)> kWh"
XSS_REASON = "</table><img src=x onerror=alert(3)> the answer is short</td>"
XSS_QUESTION = "What does </table> mean <b>here</b>?"
FAILING = "item-013"  # sloppy raises on it


def items(count: int = 120) -> list[dict[str, Any]]:
    """``count`` questions with a reference, a context and its id; the last one hostile."""
    rows = [
        {
            "id": f"item-{i:03d}",
            "question": f"Question {i}: how much does module {i % 7} store (variant {i % 11})?",
            "reference": f"Module {i % 7} stores {i % 7 + 1} kWh.",
            "contexts": [f"Module {i % 7} stores {i % 7 + 1} kWh of usable energy."],
            "context_ids": [f"c{i % 7}"],
        }
        for i in range(count - 1)
    ]
    rows.append({**rows[0], "id": "hostile", "question": XSS_QUESTION})
    return rows


def good(question: str) -> str:
    """The system that answers right: the reference, except on the hostile question."""
    if "</table>" in question:
        return XSS_ANSWER
    number = int(question.split("module ")[1].split(" ")[0])
    return f"Module {number} stores {number + 1} kWh."


def echo(question: str) -> str:
    """The system that answers with the question: anything can be asked of it."""
    return question


def sloppy(question: str) -> str:
    """Right on one question in three, and it fails outright on one."""
    if question.startswith("Question 13:"):
        raise RuntimeError("the retriever timed out <b>badly</b>")
    if "</table>" in question:
        return XSS_ANSWER
    index = int(question.split(":")[0].split(" ")[1])
    return good(question) if index % 3 == 0 else "I think about 5 kWh."


def lenient(prompt: str, system: str | None) -> str:
    """A judge that rates high and finds every claim supported; its reasons carry markup."""
    if '"claims"' in prompt:
        return json.dumps(faithfulness_reply(prompt, [True], ["it stores energy"]))
    return json.dumps({"score": 5 if "kWh" in prompt else 3, "reason": XSS_REASON})


def strict(prompt: str, system: str | None) -> str:
    """A judge that disagrees: harsher, claims unsupported for wrong answers, a broken reply on
    one question in twenty-five."""
    if "variant 4)" in prompt and "Question 4:" in prompt:
        return "not json at all"
    wrong = "about 5 kWh" in prompt
    if '"claims"' in prompt:
        return json.dumps(faithfulness_reply(prompt, [not wrong], ["5 kWh"]))
    return json.dumps({"score": 1 if wrong else 4, "reason": "too vague" if wrong else "fine"})


def _quietly(fn: Any, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FailedItemsWarning)
        return fn(*args, **kwargs)


def answers(count: int = 120, system: Any = sloppy) -> AnswerEvaluation:
    """``system`` scored by a two-judge panel (with the verdicts kept) and the text metrics."""
    report: AnswerEvaluation = _quietly(
        evaluate_answers,
        system,
        items(count),
        judges={"lenient": lenient, "strict": strict},
        keep_verdicts=True,
    )
    return report


def comparison(count: int = 120) -> tuple[Comparison, AnswerEvaluation, AnswerEvaluation]:
    """The comparison of ``good`` (B) with ``sloppy`` (A), and the two reports."""
    a, b = answers(count, sloppy), answers(count, good)
    return compare_reports(a, b), a, b


def board(count: int = 120) -> BenchmarkResult:
    """Three systems benchmarked with the two judges, ranked by token F1."""
    result: BenchmarkResult = _quietly(
        benchmark,
        {"good": good, "sloppy": sloppy, "<i>echo</i>": echo},
        items(count),
        judges={"lenient": lenient, "strict": strict},
        rank_by="token_f1",
        keep_verdicts=True,
    )
    return result


def retrieval(count: int = 60) -> RetrievalEvaluation:
    """A retriever that finds the right chunk first for two items in three, and fails on one."""

    def retrieve(question: str) -> list[str]:
        index = int(question.split(":")[0].split(" ")[-1]) if ":" in question else 0
        if index == 13:
            raise RuntimeError("<script>alert(4)</script> index offline")
        module = int(question.split("module ")[1].split(" ")[0]) if "module " in question else 0
        right, other = f"c{module}", f"c{(module + 1) % 7}"
        return [right, other] if index % 3 else [other, right]

    report: RetrievalEvaluation = _quietly(evaluate_retrieval, retrieve, items(count), k=[1, 5])
    return report


def preference(count: int = 60) -> PreferenceEvaluation:
    """``good`` against ``sloppy``'s answers, judged by one fair judge and one that always
    prefers the first answer it reads."""
    rows = items(count)
    mine = [good(row["question"]) for row in rows]
    theirs = ["I think about 5 kWh." if i % 3 else mine[i] for i in range(len(rows))]

    def fair(prompt: str, system: str | None) -> str:
        first = prompt.split("<answer_a>\n")[1].split("\n</answer_a>")[0]
        second = prompt.split("<answer_b>\n")[1].split("\n</answer_b>")[0]
        if (first == "I think about 5 kWh.") == (second == "I think about 5 kWh."):
            return json.dumps({"winner": "tie", "reason": "same"})
        winner = "answer_b" if first == "I think about 5 kWh." else "answer_a"
        return json.dumps({"winner": winner, "reason": XSS_REASON})

    def first(prompt: str, system: str | None) -> str:
        return json.dumps({"winner": "answer_a", "reason": "the first one"})

    report: PreferenceEvaluation = _quietly(
        evaluate_preference,
        rows,
        mine,
        theirs,
        judges={"fair": fair, "first": first},
        names=("mine", "theirs"),
        keep_verdicts=True,
    )
    return report
