"""The language of each draft (synth/generate/language.py) driven directly, in this thread: the
target a candidate gets, the prompt line, and the check wrapped around a step that writes inputs."""

from __future__ import annotations

import asyncio
import json

import pytest
from language_corpus import TEXTS

from synth import FunctionModel
from synth.data import Context
from synth.errors import OutputParseError
from synth.generate import language
from synth.generate.base import Source
from synth.generate.draft import Draft
from synth.generate.language import (
    WRONG_LANGUAGE,
    LanguageChecked,
    build_prompt,
    check_draft,
    context_language,
    draft_language,
    language_line,
    parse,
    target_language,
)
from synth.stage.templates import PromptSet, default_prompts

GERMAN = "Wie oft muss ein Fachbetrieb die Wärmepumpe im Jahr warten und was wird dabei geprüft?"
ENGLISH = "How often must a specialist service the heat pump each year, and what do they check?"
FRENCH = "À quelle fréquence un technicien doit-il entretenir la pompe à chaleur chaque année ?"


def ctx(text: str, lang: str | None = None) -> Context:
    metadata = {"language": lang} if lang is not None else {}
    return Context(id="c", chunk_ids=["k"], texts=[text], source_files=["a"], metadata=metadata)


def test_the_target_is_the_setting_else_the_contexts_else_the_examples() -> None:
    assert target_language("fr", ctx(TEXTS["de"], "de")) == "fr"
    assert target_language("auto", ctx(TEXTS["en"], "de")) == "de"  # recorded at ingest
    assert target_language("auto", ctx(TEXTS["de"])) == "de"  # detected from its texts
    assert target_language("auto", ctx(TEXTS["de"]), [TEXTS["fr"]]) == "de"  # before examples
    assert target_language("auto", None, [TEXTS["fr"]]) == "fr"
    assert target_language("auto", None, None) is None and target_language("auto", None, []) is None
    # a context whose language cannot be told, with examples: the examples'
    assert target_language("auto", ctx("zq xv"), [TEXTS["de"]]) == "de"
    assert context_language(None) is None and context_language(ctx("x", "")) is None
    assert context_language(ctx("x", "ja")) == "ja"


def test_a_drafts_language_is_what_the_inputs_step_recorded() -> None:
    assert draft_language(Draft(id="d", input="x", metadata={"language": "de"})) == "de"
    assert draft_language(Draft(id="d", input="x", metadata={"language": ""})) is None
    assert draft_language(Draft(id="d", input="x")) is None


def test_the_language_line_names_the_language_and_what_to_write() -> None:
    assert language_line("de") == "\nLanguage: write every input in German.\n"
    assert language_line("ja", "the answer") == "\nLanguage: write the answer in Japanese.\n"
    assert language_line(None) == "" and language_line("") == ""


def test_a_draft_is_checked_against_its_target_with_its_contexts_language_a_candidate() -> None:
    draft = Draft(
        id="d", input=ENGLISH, context=ctx(TEXTS["fr"], "fr"), metadata={"language": "de"}
    )
    verdict = check_draft(draft, ENGLISH)
    assert verdict is not None and verdict.mismatch and verdict.found == "en"
    french = check_draft(draft, FRENCH)
    assert french is not None and french.found == "fr"
    assert check_draft(Draft(id="d", input=ENGLISH), ENGLISH) is None  # no target: not checked
    # the corpus' own language is a candidate beside the common ones: Danish is told from Swedish
    danish = (
        "Hvor ofte skal en fagmand efterse varmepumpen hvert år, og hvad bliver der kontrolleret?"
    )
    draft = Draft(id="d", input=danish, context=ctx("x", "da"), metadata={"language": "de"})
    found = check_draft(draft, danish)
    assert found is not None and found.found == "da"


def test_the_reask_prompt_shows_the_input_the_reason_and_the_language() -> None:
    draft = Draft(id="d", input=ENGLISH, metadata={"language": "de"})
    verdict = check_draft(draft, ENGLISH)
    assert verdict is not None
    prompt = build_prompt(ENGLISH, verdict, ctx(TEXTS["de"]))
    assert f"<input>\n{ENGLISH}\n</input>" in prompt
    assert f"What is wrong: {verdict.reason('input')}." in prompt
    assert "Write it again in German" in prompt and "Wärmepumpe" in prompt
    own = PromptSet({"language": "MINE $input $language"})
    assert build_prompt(ENGLISH, verdict, None, own).startswith("MINE <input>")


def test_a_reply_is_its_input_and_a_blank_one_is_refused() -> None:
    assert parse(json.dumps({"input": GERMAN})) == GERMAN
    with pytest.raises(OutputParseError, match="^the rewritten input is blank$") as caught:
        parse(json.dumps({"input": "  "}))
    assert caught.value.raw == json.dumps({"input": "  "})


class Writer:
    """A step that writes or rewrites inputs: ``outputs`` maps a draft id to its new input."""

    name = "evolve"

    def __init__(self, outputs: dict[str, str]) -> None:
        self.outputs = outputs
        self.sources: list[Source] = []

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        self.sources.append(source)
        for draft in drafts:
            if draft.kept and draft.id in self.outputs:
                draft.input = self.outputs[draft.id]
        return drafts


class Rewriter(FunctionModel):
    """A model that answers each re-ask with ``text``, keeping prompts and labels."""

    def __init__(self, text: str | None) -> None:
        self.prompts: list[str] = []
        self.labels: list[str | None] = []
        self.schemas: list[object] = []

        def reply(prompt: str, system: str | None = None) -> str:
            self.prompts.append(prompt)
            return "not json" if text is None else json.dumps({"input": text})

        super().__init__(reply, name="rewriter")

    async def arequest(self, prompt, *, system=None, schema=None, label=None):
        self.labels.append(label)
        self.schemas.append(schema)
        return await super().arequest(prompt, system=system, schema=schema, label=label)


def german_draft(i: int, text: str = ENGLISH) -> Draft:
    context = ctx(TEXTS["de"], "de")
    return Draft(id=f"d{i}", input=text, context=context, metadata={"language": "de"})


def test_an_input_written_in_another_language_is_asked_again_and_revised() -> None:
    model = Rewriter(GERMAN)
    drafts = [german_draft(0), german_draft(1), german_draft(2)]
    drafts[2].drop("filter", "earlier")
    writer = Writer({"d0": ENGLISH + " ", "d2": ENGLISH + "!"})
    step = LanguageChecked(writer, model, default_prompts())
    assert step.name == "evolve"
    out = asyncio.run(step.run(drafts, Source("k")))
    assert out is drafts and writer.sources == [Source("k")]  # the step gets the source
    # d1 was not changed by the step and d2 was dropped before it: neither is checked
    assert len(model.prompts) == 1 and model.labels == ["evolve_language"]
    assert f"<input>\n{ENGLISH}\n</input>" in model.prompts[0]  # stripped
    assert "Wärmepumpe" in model.prompts[0]  # the context it must stay answerable from
    assert model.schemas == [language.LanguageReply]  # a structured reply asked for
    first = drafts[0]
    assert first.kept and first.input == GERMAN
    [entry] = first.history
    assert entry["stage"] == "evolve" and entry["input"] == ENGLISH + " "
    assert entry["language"] == "en" and "must be written in German" in entry["reason"]
    assert entry["reason"].startswith("the input is written in English (confidence ")
    assert drafts[1].input == ENGLISH and drafts[1].history == []


def test_an_input_in_its_language_or_without_a_target_is_left_alone() -> None:
    model = Rewriter(GERMAN)
    drafts = [german_draft(0), Draft(id="d1", input="x")]
    step = LanguageChecked(Writer({"d0": GERMAN, "d1": ENGLISH}), model, default_prompts())
    asyncio.run(step.run(drafts, Source("k")))
    assert model.prompts == [] and [d.input for d in drafts] == [GERMAN, ENGLISH]
    assert all(d.kept and d.history == [] for d in drafts)
    own = PromptSet({"language": "MINE $input $language"})
    mine = LanguageChecked(Writer({"d0": ENGLISH}), model, own)
    asyncio.run(mine.run([german_draft(0, GERMAN)], Source("k")))
    assert model.prompts[0].startswith("MINE <input>")


def test_an_input_still_in_another_language_after_the_reask_is_dropped_saying_so() -> None:
    drafts = [german_draft(0, GERMAN)]
    step = LanguageChecked(Writer({"d0": ENGLISH}), Rewriter(FRENCH), default_prompts())
    asyncio.run(step.run(drafts, Source("k")))
    [draft] = drafts
    assert (draft.dropped_at, draft.drop_reason) == ("evolve", WRONG_LANGUAGE)
    assert draft.drop_detail is not None
    assert draft.drop_detail.startswith("the input is written in French")
    assert draft.drop_detail.endswith("must be written in German, after it was asked again")
    assert draft.input == ENGLISH


def test_a_reask_that_fails_drops_the_input_with_both_reasons() -> None:
    drafts = [german_draft(0, GERMAN)]
    step = LanguageChecked(Writer({"d0": ENGLISH}), Rewriter(None), default_prompts())
    asyncio.run(step.run(drafts, Source("k")))
    [draft] = drafts
    assert (draft.dropped_at, draft.drop_reason) == ("evolve", WRONG_LANGUAGE)
    assert draft.drop_detail is not None
    assert draft.drop_detail.startswith("the input is written in English")
    assert "must be written in German; asked again: " in draft.drop_detail
    assert language.LABEL == "language"
