"""An answer copied word for word from its context is in the context's language: its check does not
load lingua's full models, which a short phrase would otherwise need (seconds of a core, holding
the interpreter, in the middle of a run)."""

from __future__ import annotations

import json
import re

import pytest

from synth import _language
from synth.data import Context
from synth.generate import expected
from synth.generate.citations import copied
from synth.generate.draft import Draft
from synth.llm.base import FunctionModel, run_sync

LINE = (
    "- Grid export limit: installers can set a maximum export power between 0 and 10 kW to meet "
    "the rules\n  of the local grid operator."
)
#: a phrase of LINE whose few words leave the trigrams in doubt (they find it Italian likelier)
PHRASE = "of the local grid operator."
#: the same doubt, in words the context does not hold
NOT_COPIED = "of the regional grid operator."
ITEM = re.compile(r'<input index="(\d+)">\n(.*?)\n</input>', re.DOTALL)


def answering(text: str) -> FunctionModel:
    """A model answering every input with ``text``, quoting the context's phrase."""

    def reply(prompt: str, system: str | None) -> str:
        outputs = [
            {"index": int(i), "expected_output": text, "quotes": [PHRASE]}
            for i, _ in ITEM.findall(prompt)
        ]
        return json.dumps({"outputs": outputs})

    return FunctionModel(reply)


def english_draft(language: str = "en") -> Draft:
    context = Context(id="c", chunk_ids=["k"], texts=[LINE], source_files=["notes.txt"])
    context.metadata["language"] = "en"
    draft = Draft(id="d0", input="Whose rules does the export limit meet?", context=context)
    return draft.model_copy(update={"metadata": {"language": language}})


@pytest.fixture
def full_models(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts judged with lingua's full models (none loaded: each is found unsure)."""
    judged: list[str] = []
    monkeypatch.setattr(_language, "load_full_models", lambda codes: None)

    def full_confidences(codes: frozenset[str], text: str) -> dict[str, float]:
        judged.append(text)
        return {}

    monkeypatch.setattr(_language, "_full_confidences", full_confidences)
    return judged


def test_the_phrase_leaves_the_trigrams_in_doubt() -> None:
    # the premise of the tests below: checked on its own, the phrase needs the full models
    for text in (PHRASE, NOT_COPIED):
        assert not isinstance(_language._settled(text, "en", ["en"]), _language.LanguageVerdict)


def test_a_text_is_copied_when_its_words_stand_in_a_chunk_whatever_the_spacing_and_case() -> None:
    chunks = expected.source_chunks(english_draft().context)
    assert copied(PHRASE, chunks)
    assert copied("Of the  local grid\noperator.", chunks)
    assert not copied(NOT_COPIED, chunks)
    assert not copied("grid oper", chunks)  # not at word bounds
    assert not copied("  ", chunks)


def test_an_answer_copied_from_its_context_is_not_weighed_by_the_full_models(
    full_models: list[str],
) -> None:
    draft = english_draft()
    run_sync(expected.run([draft], answering(PHRASE)))
    assert draft.kept and draft.expected_output == PHRASE
    assert full_models == []


def test_an_answer_in_its_own_words_is_still_weighed_by_the_full_models(
    full_models: list[str],
) -> None:
    draft = english_draft()
    run_sync(expected.run([draft], answering(NOT_COPIED)))
    assert NOT_COPIED in full_models


def test_a_copied_answer_is_checked_when_another_language_than_its_contexts_is_asked(
    full_models: list[str],
) -> None:
    # a German golden of an English context: the English phrase may well be the wrong language
    chunks = expected.source_chunks(english_draft().context)
    assert expected.needs_language_check(PHRASE, chunks, "de", "en")
    assert not expected.needs_language_check(PHRASE, chunks, "en", "en")
    assert not expected.needs_language_check(PHRASE, chunks, None, "en")
    expected.check_answer(expected.Answer(PHRASE, (PHRASE,)), chunks, 0.5, "de", "en")
    assert full_models == [PHRASE]
