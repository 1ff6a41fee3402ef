"""The language check's full models in a worker process (synth/_language_worker.py).

Loading lingua's high-accuracy models holds the interpreter for seconds; a run's checks send the
texts the trigrams leave in doubt to a worker process instead, and get the verdict the process
would have given. A worker that cannot start or dies leaves the check to the process.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import pytest

from synth import _language
from synth._language import check_language
from synth._language_worker import LanguageWorker, check_language_async
from synth.generate import language
from synth.generate.draft import Draft
from synth.generate.language import LanguageChecked
from synth.generate.templates import default_prompts

#: made-up words: the trigrams lean to Spanish, not surely enough to settle it
DOUBTFUL = "whileixix Stormenen Watchanet is activeanan."
#: half English, half German: the trigrams say German, the full models see no language ahead
MIXED = "Hi, quick question: Wie lange dauert die Garantie?"
GERMAN = "Wie lange dauert die Garantie für die Batterie im Keller?"


@pytest.fixture
def worker():
    made = LanguageWorker()
    yield made
    made.close()


def test_doubtful_texts_are_judged_by_the_worker_as_this_process_would(
    worker: LanguageWorker, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[bool] = []
    real = _language._check_detector

    def spy(codes: frozenset[str], quick: bool = False) -> object:
        built.append(quick)
        return real(codes, quick)

    monkeypatch.setattr(_language, "_check_detector", spy)
    texts = (DOUBTFUL, MIXED, GERMAN)
    verdicts = [asyncio.run(check_language_async(t, "en", worker=worker)) for t in texts]
    assert worker.answered == 3 and worker.pid is not None and not worker.broken
    assert built and all(built)  # this process asked the trigrams only
    assert verdicts == [check_language(t, "en") for t in texts]  # now judged here too
    assert [v.status for v in verdicts] == ["unsure", "unsure", "mismatch"]


def test_a_text_the_trigrams_settle_starts_no_worker(worker: LanguageWorker) -> None:
    verdict = asyncio.run(
        check_language_async("How long does the warranty last?", "en", worker=worker)
    )
    assert verdict.status == "match" and worker.pid is None and worker.answered == 0


def test_a_worker_that_cannot_start_leaves_the_check_to_this_process(
    worker: LanguageWorker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", "/nonexistent/python3")
    assert worker.verdict(GERMAN, "en") == check_language(GERMAN, "en")
    assert worker.broken and worker.pid is None and worker.answered == 0


def test_a_worker_that_dies_leaves_the_next_checks_to_this_process(
    worker: LanguageWorker,
) -> None:
    assert worker.verdict(DOUBTFUL, "en").status == "unsure"
    pid = worker.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    assert worker.verdict(GERMAN, "en") == check_language(GERMAN, "en")  # no hang, same verdict
    assert worker.broken and worker.pid is None and worker.answered == 1


def test_a_forked_child_does_not_talk_down_its_parents_pipe(worker: LanguageWorker) -> None:
    worker.verdict(DOUBTFUL, "en")
    assert worker.pid is not None
    child = os.fork()
    if child == 0:  # the child: the worker is not its own
        os._exit(0 if worker.pid is None else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert worker.pid is not None and worker.verdict(MIXED, "en").status == "unsure"


class Recording(LanguageWorker):
    """A worker that notes what it was asked."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[tuple[str, str]] = []

    def verdict(self, text, target, also=()):
        self.asked.append((text, target))
        return super().verdict(text, target, also)


class Writer:
    name = "evolve"

    async def run(self, drafts, source):
        for draft in drafts:
            draft.input = DOUBTFUL
        return drafts


def test_a_runs_language_step_sends_its_doubtful_inputs_to_the_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recording = Recording()
    monkeypatch.setattr("synth._language_worker.WORKER", recording)
    try:
        draft = Draft(id="d", input="How long does the warranty last?", metadata={"language": "en"})
        step = LanguageChecked(Writer(), language_model_never_called(), default_prompts())
        asyncio.run(step.run([draft], language.Source("k")))
        assert recording.asked == [(DOUBTFUL, "en")] and recording.answered == 1
        assert draft.kept and draft.input == DOUBTFUL  # unsure: kept, not asked again
    finally:
        recording.close()


def language_model_never_called():
    from synth.llm.base import FunctionModel

    def reply(prompt: str, system: str | None = None) -> str:
        raise AssertionError("an unsure input is not asked again")

    return FunctionModel(reply, name="never")


def test_an_answers_doubtful_language_goes_to_the_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    from synth.generate import expected

    recording = Recording()
    monkeypatch.setattr("synth._language_worker.WORKER", recording)
    try:
        answer = expected.Answer(DOUBTFUL, ())
        checked = asyncio.run(expected._checked(answer, [], 0.0, ("en", None)))
        assert recording.asked == [(DOUBTFUL, "en")]
        assert not checked.wrong_language  # unsure is no mismatch
        german = asyncio.run(expected._checked(expected.Answer(GERMAN, ()), [], 0.0, ("en", None)))
        assert german.wrong_language and recording.asked[-1] == (GERMAN, "en")
    finally:
        recording.close()
