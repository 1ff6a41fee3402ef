"""A fatal failure in one call of an evaluation: the other calls are cancelled and awaited.

A refused API key fails every judge call at about the same time. When the first failure ends the
run, the calls still in flight must be cancelled and their errors retrieved inside the run, or
``asyncio.run`` prints each one as "unhandled exception during asyncio.run() shutdown" (or "Task
exception was never retrieved") after the one-line error. ``late_failure`` plays such a call: on
Python 3.11 a call finishing as it is cancelled raises its own error rather than CancelledError
(``asyncio.wait_for``, used by the model layer's timeout, does this), which is exactly the error
``asyncio.run`` then reports.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from synth import evaluate_answers, evaluate_preference, evaluate_retrieval
from synth.errors import AuthenticationError

ITEMS = [
    {"id": "q1", "question": "Capital of France?", "reference": "Paris", "answer": "Paris"},
    {"id": "q2", "question": "Largest planet?", "reference": "Jupiter", "answer": "Jupiter"},
]


class Calls:
    """Counts the calls that started and the ones cancelled while in flight."""

    def __init__(self) -> None:
        self.started = 0
        self.cancelled = 0

    async def late_failure(self, *args: object) -> str:
        """Waits until cancelled, then fails as a refused key would."""
        self.started += 1
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise AuthenticationError("the API key was refused (late)") from None
        raise AssertionError("unreachable")  # pragma: no cover


async def refused(prompt: str, system: str | None) -> str:
    raise AuthenticationError("the API key was refused")


def asyncio_complaints(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "asyncio" and r.levelno >= logging.WARNING
    ]


def test_answers_cancel_and_await_the_other_judge_calls(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls = Calls()
    judges = {"a": refused, "b": calls.late_failure}
    with caplog.at_level(logging.WARNING, logger="asyncio"):
        with pytest.raises(AuthenticationError, match=r"refused$"):
            evaluate_answers(None, ITEMS[:1], judges=judges, metrics=["answer_relevance"], n_jobs=2)
    assert calls.started == calls.cancelled == 1
    assert asyncio_complaints(caplog) == []


def test_answers_cancel_and_await_the_other_items(caplog: pytest.LogCaptureFixture) -> None:
    calls = Calls()

    async def system(question: str) -> str:
        if question.startswith("Capital"):
            raise AuthenticationError("the API key was refused")
        return await calls.late_failure()

    with caplog.at_level(logging.WARNING, logger="asyncio"):
        with pytest.raises(AuthenticationError, match=r"refused$"):
            evaluate_answers(system, ITEMS, on_error="raise", n_jobs=2)
    assert calls.started == calls.cancelled == 1
    assert asyncio_complaints(caplog) == []


def test_preference_cancels_and_awaits_the_other_judge_calls(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls = Calls()
    judges = {"a": refused, "b": calls.late_failure}
    with caplog.at_level(logging.WARNING, logger="asyncio"):
        with pytest.raises(AuthenticationError, match=r"refused$"):
            evaluate_preference(ITEMS[:1], ["Paris"], ["Lyon"], judges=judges, n_jobs=2)
    assert calls.started == calls.cancelled == 1
    assert asyncio_complaints(caplog) == []


def test_retrieval_cancels_and_awaits_the_other_items(caplog: pytest.LogCaptureFixture) -> None:
    calls = Calls()

    async def retriever(question: str) -> list[str]:
        if question.startswith("Capital"):
            raise AuthenticationError("the API key was refused")
        await calls.late_failure()
        return []  # pragma: no cover

    items = [dict(item, context_ids=["c1"]) for item in ITEMS]
    with caplog.at_level(logging.WARNING, logger="asyncio"):
        with pytest.raises(AuthenticationError, match=r"refused$"):
            evaluate_retrieval(retriever, items, on_error="raise", n_jobs=2)
    assert calls.started == calls.cancelled == 1
    assert asyncio_complaints(caplog) == []


def test_results_keep_their_order_when_nothing_fails() -> None:
    second_done = asyncio.Event()

    async def system(question: str) -> str:
        if question.startswith("Capital"):
            await second_done.wait()  # the first item finishes last
        else:
            second_done.set()
        return question.split()[0]

    report = evaluate_answers(system, ITEMS, n_jobs=2)
    assert [item.answer for item in report.items] == ["Capital", "Largest"]
