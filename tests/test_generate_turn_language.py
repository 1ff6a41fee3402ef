"""The language of every turn of a conversation (synth/generate/turn_language.py) driven directly,
in this thread: which conversations are checked, a turn asked again and rewritten, and the drop of
one still in another language. The whole runs of tests/test_languages.py reach the same check on a
run's worker thread, where mutmut records nothing."""

from __future__ import annotations

import asyncio
import json

from language_corpus import TEXTS

from synth import FunctionModel
from synth.data import Context
from synth.generate.base import Source
from synth.generate.conversation import as_text
from synth.generate.draft import Draft
from synth.generate.language import WRONG_LANGUAGE, LanguageReply
from synth.generate.turn_language import TurnsChecked
from synth.stage.templates import PromptSet, default_prompts

GERMAN_Q = "Wie oft muss ein Fachbetrieb die Wärmepumpe im Jahr warten und was wird dabei geprüft?"
ENGLISH_Q = "How often must a specialist service the heat pump each year, and what do they check?"
GERMAN_A = "Einmal im Jahr prüft der Fachbetrieb den Kältekreis, die Filter und die Steuerung."
ENGLISH_A = (
    "Once a year the specialist checks the refrigerant circuit, the filters and the controls."
)
FRENCH_A = (
    "Une fois par an, le technicien vérifie le circuit frigorifique, les filtres et la commande."
)


def turns(*pairs: tuple[str, str]) -> list[dict]:
    return [{"role": role, "content": text} for role, text in pairs]


def conversation_draft(i: int, *pairs: tuple[str, str], language: str | None = "de") -> Draft:
    context = Context(id="c", chunk_ids=["k"], texts=[TEXTS["de"]], source_files=["a"], metadata={})
    metadata = {"language": language} if language else {}
    rows = turns(*pairs)
    return Draft(
        id=f"d{i}",
        input="(before the check)",
        context=context,
        conversation={"scenario": "s", "turns": rows},
        metadata=metadata,
    )


class Writer:
    """The conversation step: gives each draft the turns ``outputs`` holds for its id."""

    name = "conversations"

    def __init__(self, outputs: dict[str, list[dict]] | None = None) -> None:
        self.outputs = outputs or {}
        self.calls: list[tuple[list[Draft], Source]] = []

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        self.calls.append((list(drafts), source))
        for draft in drafts:
            if draft.id in self.outputs:
                draft.conversation = {"turns": self.outputs[draft.id]}
        return drafts


class Rewriter(FunctionModel):
    """Answers a re-ask with the text ``answers`` gives for the turn it shows (None: not JSON)."""

    def __init__(self, answers: dict[str, str | None]) -> None:
        self.prompts: list[str] = []
        self.labels: list[str | None] = []
        self.schemas: list[object] = []

        def reply(prompt: str, system: str | None = None) -> str:
            self.prompts.append(prompt)
            for shown, text in answers.items():
                if shown in prompt:
                    return "not json" if text is None else json.dumps({"input": text})
            raise AssertionError(f"no answer for {prompt!r}")

        super().__init__(reply, name="rewriter")

    async def arequest(self, prompt, *, system=None, schema=None, label=None):
        self.labels.append(label)
        self.schemas.append(schema)
        return await super().arequest(prompt, system=system, schema=schema, label=label)


def check(drafts: list[Draft], model: Rewriter, writer: Writer | None = None, prompts=None):
    step = TurnsChecked(writer or Writer(), model, prompts or default_prompts())
    return step, asyncio.run(step.run(drafts, Source("k")))


def test_turns_in_their_language_are_kept_and_the_input_is_the_conversation() -> None:
    draft = conversation_draft(0, ("user", GERMAN_Q), ("assistant", GERMAN_A))
    model = Rewriter({})
    writer = Writer()
    step, out = check([draft], model, writer)
    assert step.name == "conversations"  # the conversation step's own name
    assert out == [draft] and writer.calls == [([draft], Source("k"))]
    assert model.prompts == []
    assert draft.kept and draft.input == f"user: {GERMAN_Q}\nassistant: {GERMAN_A}"
    assert all("metadata" not in turn for turn in draft.conversation["turns"])


def test_a_turn_in_another_language_is_asked_again_and_rewritten_keeping_the_old_text() -> None:
    draft = conversation_draft(0, ("user", GERMAN_Q), ("assistant", ENGLISH_A), ("user", GERMAN_Q))
    draft.conversation["turns"][1]["metadata"] = {"citations": ["kept"]}
    model = Rewriter({ENGLISH_A: GERMAN_A})
    check([draft], model)
    assert len(model.prompts) == 1 and model.labels == ["conversations_language"]
    assert model.schemas == [LanguageReply]
    assert f"<input>\n{ENGLISH_A}\n</input>" in model.prompts[0]
    assert "Wärmepumpe" in model.prompts[0]  # the context it must stay answerable from
    assert draft.kept
    rows = draft.conversation["turns"]
    assert [t["content"] for t in rows] == [GERMAN_Q, GERMAN_A, GERMAN_Q]
    rewritten = rows[1]["metadata"]["language_rewritten"]
    assert rewritten["content"] == ENGLISH_A
    assert rewritten["reason"].startswith("the turn is written in English (confidence ")
    assert rewritten["reason"].endswith("must be written in German")
    assert rows[1]["metadata"]["citations"] == ["kept"]  # its other metadata stays
    assert "metadata" not in rows[0] and "metadata" not in rows[2]
    assert draft.input == as_text(rows)  # the input follows the rewritten turn


def test_a_user_turn_is_checked_as_an_assistant_turn_is() -> None:
    draft = conversation_draft(0, ("user", ENGLISH_Q), ("assistant", GERMAN_A))
    model = Rewriter({ENGLISH_Q: GERMAN_Q})
    check([draft], model)
    assert draft.kept and draft.conversation["turns"][0]["content"] == GERMAN_Q
    assert draft.input == f"user: {GERMAN_Q}\nassistant: {GERMAN_A}"


def test_a_turn_still_in_another_language_drops_the_conversation_naming_the_first_such_turn() -> (
    None
):
    draft = conversation_draft(0, ("user", GERMAN_Q), ("assistant", ENGLISH_A), ("user", ENGLISH_Q))
    model = Rewriter({ENGLISH_A: FRENCH_A, ENGLISH_Q: GERMAN_Q})
    check([draft], model)
    assert len(model.prompts) == 2  # every turn is checked, not only up to the first bad one
    assert (draft.dropped_at, draft.drop_reason) == ("conversations", WRONG_LANGUAGE)
    assert draft.drop_detail is not None
    assert draft.drop_detail.startswith("turn 2: the turn is written in French (confidence ")
    assert draft.drop_detail.endswith("must be written in German, after it was asked again")
    assert draft.input == "(before the check)"  # a dropped conversation's input is not rebuilt


def test_a_later_turn_that_fails_is_named_by_its_own_number() -> None:
    draft = conversation_draft(0, ("user", GERMAN_Q), ("assistant", GERMAN_A), ("user", ENGLISH_Q))
    check([draft], Rewriter({ENGLISH_Q: ENGLISH_Q}))
    assert draft.drop_detail is not None and draft.drop_detail.startswith("turn 3: ")


def test_a_reask_that_fails_drops_the_conversation_with_both_reasons() -> None:
    draft = conversation_draft(0, ("user", ENGLISH_Q), ("assistant", GERMAN_A))
    check([draft], Rewriter({ENGLISH_Q: None}))
    assert (draft.dropped_at, draft.drop_reason) == ("conversations", WRONG_LANGUAGE)
    assert draft.drop_detail is not None
    assert draft.drop_detail.startswith("turn 1: the turn is written in English (confidence ")
    assert "must be written in German; asked again: " in draft.drop_detail
    assert draft.conversation["turns"][0]["content"] == ENGLISH_Q


def test_only_live_conversations_with_a_language_are_checked() -> None:
    dropped = conversation_draft(0, ("user", ENGLISH_Q), ("assistant", ENGLISH_A))
    dropped.drop("conversations", "earlier")
    no_target = conversation_draft(1, ("user", ENGLISH_Q), ("assistant", ENGLISH_A), language=None)
    single = Draft(id="d2", input=ENGLISH_Q, metadata={"language": "de"})  # not a conversation
    model = Rewriter({})
    check([dropped, no_target, single], model)
    assert model.prompts == []
    assert dropped.drop_reason == "earlier" and dropped.input == "(before the check)"
    assert no_target.kept and no_target.input == f"user: {ENGLISH_Q}\nassistant: {ENGLISH_A}"
    assert single.kept and single.input == ENGLISH_Q


def test_the_conversations_checked_are_those_the_step_wrote_and_its_own_prompts_are_used() -> None:
    draft = conversation_draft(0, ("user", GERMAN_Q))
    writer = Writer({"d0": turns(("user", ENGLISH_Q), ("assistant", GERMAN_A))})
    own = PromptSet({"language": "MINE $input $language"})
    model = Rewriter({ENGLISH_Q: GERMAN_Q})
    check([draft], model, writer, own)
    assert model.prompts == [f"MINE <input>\n{ENGLISH_Q}\n</input> German"]
    assert draft.kept and draft.input == f"user: {GERMAN_Q}\nassistant: {GERMAN_A}"
