"""The conversation step (synth/generate/conversation.py) driven directly, in this thread: the
prompt, the reply parsed, each conversation's shape, cut, grounding and drops, and the step's one
request per candidate with its personas and language. The whole runs of tests/test_conversations.py
and tests/test_run_conversations.py reach it on a run's worker thread, where mutmut records
nothing."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

from synth import FunctionModel
from synth.data import Context
from synth.errors import ConfigError, OutputParseError
from synth.generate.base import Source
from synth.generate.config import StylingConfig
from synth.generate.conversation import (
    MISSING_TURNS,
    NO_SCENARIO,
    UNGROUNDED,
    ConversationConfig,
    ConversationReply,
    ConversationStep,
    as_text,
    build_prompt,
    parse,
    shape_problem,
    to_draft,
)
from synth.generate.draft import Draft, draft_id
from synth.generate.expected import source_chunks
from synth.stage.batch import batch_schema
from synth.stage.templates import SYSTEM, PromptSet, default_prompts

TEXT = (
    "Heat pumps move heat from the outside air into the house. A specialist services the heat "
    "pump once a year and checks the filters."
)
SERVICE = "A specialist services the heat pump once a year"
MOVE = "Heat pumps move heat from the outside air into the house"
#: a template showing every value the step fills in
OWN = "[$context|$count|$max_turns|$personas|$language]"


def context(*texts: str, language: str | None = "en") -> Context:
    metadata = {"language": language} if language else {}
    texts = texts or (TEXT,)
    ids = [f"k{i}" for i in range(1, len(texts) + 1)]
    return Context(
        id="c", chunk_ids=ids, texts=list(texts), source_files=["a.md"], metadata=metadata
    )


def exchange(user: str, assistant: str, *quotes: str) -> dict:
    return {"user": user, "assistant": assistant, "quotes": list(quotes)}


def grounded(user: str = "Who services it?") -> dict:
    """An exchange whose reply is its one quote, word for word."""
    return exchange(user, f"{SERVICE}.", SERVICE)


def entry(*exchanges: dict, index: int = 1, **fields: str):
    data = {"index": index, "scenario": "A tenant plans the upkeep.", **fields}
    [conversation] = parse(json.dumps({"conversations": [{**data, "exchanges": exchanges}]}), 1)
    return conversation


def convert(conversation, *, max_turns=3, threshold=0.5, persona=None, ctx=None) -> Draft:
    ctx = ctx or context()
    draft = Draft(id="d", input="(none)", context=ctx)
    return to_draft(conversation, draft, source_chunks(ctx), max_turns, threshold, persona)


class Writer(FunctionModel):
    """Sends ``replies`` in turn (the last one again when they run out); keeps what it was sent."""

    def __init__(self, *replies: object) -> None:
        self.prompts: list[str] = []
        self.systems: list[str | None] = []
        self.schemas: list[object] = []
        self.labels: list[str | None] = []
        texts = [r if isinstance(r, str) else json.dumps(r) for r in replies]

        # async: answered in this thread, not in the pool a sync callable model runs in
        async def answer(prompt: str, system: str | None = None) -> str:
            self.prompts.append(prompt)
            self.systems.append(system)
            return texts[min(len(self.prompts), len(texts)) - 1]

        super().__init__(answer, name="writer")

    async def arequest(self, prompt, *, system=None, schema=None, label=None):
        self.schemas.append(schema)
        self.labels.append(label)
        return await super().arequest(prompt, system=system, schema=schema, label=label)


def reply(*conversations: list[dict], **fields: str) -> dict:
    """A reply holding one conversation (numbered from 1) per list of exchanges."""
    return {
        "conversations": [
            {"index": i, "scenario": "A tenant plans the upkeep.", **fields, "exchanges": c}
            for i, c in enumerate(conversations, start=1)
        ]
    }


def step(model: Writer, **kw) -> ConversationStep:
    kw.setdefault("config", ConversationConfig())
    kw.setdefault("per_context", 2)
    kw.setdefault("styling", StylingConfig())
    kw.setdefault("prompts", default_prompts())
    kw.setdefault("seed", 7)
    return ConversationStep(model, **kw)


def run(model: Writer, source: Source | None = None, **kw) -> list[Draft]:
    return asyncio.run(step(model, **kw).run([], source or Source("k", context())))


# ---- the prompt and the reply ----------------------------------------------------------------


def test_the_prompt_shows_the_context_the_count_the_turns_and_the_language() -> None:
    prompt = build_prompt(context("Heat pumps move heat."), 2, 4, language="de")
    assert "You write conversations for evaluating an AI assistant" in prompt
    assert "Context:\n<context>\nHeat pumps move heat.\n</context>\n" in prompt
    assert "Write 2 distinct conversations" in prompt and "have 2 to 4 user turns" in prompt
    line = "\nLanguage: write every turn (the user's and the assistant's) in German.\n"
    assert line in prompt
    assert "<personas>" not in prompt and "user_description):" not in prompt


def test_a_prompt_with_personas_lists_them_in_order_and_fills_a_template_of_ones_own() -> None:
    own = PromptSet({"conversation": OWN})
    assert build_prompt(context("Heat pumps move heat."), 2, 4, (), own) == (
        "[<context>\nHeat pumps move heat.\n</context>|2|4||]"
    )
    prompt = build_prompt(context("Heat."), 3, 5, [" a tenant ", "a plumber"], own, "fr")
    assert prompt == (
        "[<context>\nHeat.\n</context>|3|5|"
        "\nThe user of each conversation, in order (its user_description):\n<personas>\n"
        '<persona index="1">\na tenant\n</persona>\n<persona index="2">\na plumber\n</persona>\n'
        "</personas>\n|\nLanguage: write every turn (the user's and the assistant's) in French.\n]"
    )


def test_a_language_with_its_own_prompt_set_is_asked_in_it() -> None:
    own = PromptSet({"de": {"conversation": "GERMAN $count $context"}})
    assert build_prompt(context("Heat."), 2, 3, (), own, "de").startswith("GERMAN 2 <context>")
    assert "You write" in build_prompt(context("Heat."), 2, 3, (), own, "fr")


def test_the_reply_keeps_its_conversations_in_order_up_to_the_count_asked() -> None:
    text = json.dumps(reply([grounded()], [grounded("And then?")], [grounded("Third?")]))
    entries = parse(text, 2)
    assert [e.index for e in entries] == [1, 2]
    assert entries[1].exchanges[0].user == "And then?"
    assert [e.index for e in parse(text, 5)] == [1, 2, 3]
    bare = parse(json.dumps({"conversations": [{"index": 4}]}), 1)[0]
    assert (bare.scenario, bare.expected_outcome, bare.user_description) == ("", "", "")
    assert bare.exchanges == []
    loose = parse(json.dumps(reply([{"user": "u", "assistant": "a"}])), 1)[0]
    assert loose.exchanges[0].quotes == []


def test_a_reply_without_conversations_is_refused_with_its_text() -> None:
    text = '{"conversations": []}'
    with pytest.raises(OutputParseError, match="^the reply holds no conversation$") as caught:
        parse(text, 2)
    assert caught.value.raw == text


def test_the_reply_schema_asks_for_two_exchanges_or_more() -> None:
    schema = ConversationReply.model_json_schema()
    assert schema["$defs"]["_Conversation"]["properties"]["exchanges"]["minItems"] == 2


# ---- one conversation ----------------------------------------------------------------------


def test_the_shape_needs_two_exchanges_each_with_both_turns_written() -> None:
    [one, two] = entry(grounded(), grounded("And?")).exchanges
    assert shape_problem([]) == "0 user turn(s); a conversation needs two or more"
    assert shape_problem([one]) == "1 user turn(s); a conversation needs two or more"
    assert shape_problem([one, two]) == ""
    blank_user = entry(grounded(), exchange("  ", "An answer.")).exchanges
    assert shape_problem(blank_user) == "exchange 2 has a blank turn"
    blank_reply = entry(exchange("Q?", " \n"), grounded()).exchanges
    assert shape_problem(blank_reply) == "exchange 1 has a blank turn"


def test_the_text_of_a_conversation_is_one_role_and_content_line_per_turn() -> None:
    turns = [{"role": "user", "content": "Q?"}, {"role": "assistant", "content": "A."}]
    assert as_text(turns) == "user: Q?\nassistant: A."
    assert as_text([]) == ""


def test_a_grounded_conversation_keeps_its_turns_stripped_with_the_last_citations() -> None:
    conversation = entry(
        exchange(" Who moves the heat? ", f" {MOVE}. ", f"  {MOVE}  ", "   "),
        grounded("  And who services it?"),
        scenario="  A tenant plans the upkeep. ",
        expected_outcome=" The tenant knows who to call. ",
        user_description=" a tenant ",
    )
    draft = convert(conversation)
    assert draft.kept and draft.persona == "a tenant"
    rows = draft.conversation["turns"]
    assert [(r["role"], r["content"]) for r in rows] == [
        ("user", "Who moves the heat?"),
        ("assistant", f"{MOVE}."),
        ("user", "And who services it?"),
        ("assistant", f"{SERVICE}."),
    ]
    assert rows[0]["metadata"] == {} and rows[2]["metadata"] == {}
    first = rows[1]["metadata"]
    assert first["grounding"] == {"score": 1.0, "quotes": 1, "found": 1, "all_found": True}
    assert first["citations"] == [
        {"quote": MOVE, "chunk_id": "k1", "start": 0, "end": 56, "page": None, "ratio": 1.0}
    ]
    last = rows[3]["metadata"]
    assert last["citations"][0]["start"] == 58 and last["citations"][0]["end"] == 105
    assert {k: draft.metadata[k] for k in ("citations", "grounding")} == last
    assert draft.input == as_text(rows)
    assert {k: v for k, v in draft.conversation.items() if k != "turns"} == {
        "scenario": "A tenant plans the upkeep.",
        "expected_outcome": "The tenant knows who to call.",
        "user_description": "a tenant",
    }
    assert "turns_cut" not in draft.metadata


def test_a_quote_with_an_escaped_tag_is_found_as_the_context_writes_it() -> None:
    ctx = context("Set the mode to <b>eco</b> in the winter months.")
    said = "Set the mode to <b>eco</b> in the winter months."
    conversation = entry(exchange("Q?", said, "Set the mode to <\\b>eco<\\/b> in"), grounded())
    draft = convert(conversation, ctx=ctx, threshold=0.0)
    [citation] = draft.conversation["turns"][1]["metadata"]["citations"]
    assert citation["quote"] == "Set the mode to <b>eco</b> in"


def test_turns_past_the_maximum_are_cut_and_counted() -> None:
    asked = [grounded(f"Question {i}?") for i in range(1, 6)]
    draft = convert(entry(*asked), max_turns=3)
    assert draft.metadata["turns_cut"] == 4  # two exchanges: four turns
    users = [r["content"] for r in draft.conversation["turns"][::2]]
    assert users == ["Question 1?", "Question 2?", "Question 3?"]
    exact = convert(entry(*asked[:3]), max_turns=3)
    assert "turns_cut" not in exact.metadata and len(exact.conversation["turns"]) == 6


def test_the_persona_given_wins_over_the_reply_and_a_blank_one_is_none() -> None:
    described = entry(grounded(), grounded(), user_description=" a landlord ")
    draft = convert(described, persona="a plumber")
    assert draft.persona == "a plumber"
    assert draft.conversation["user_description"] == "a plumber"
    blank = convert(entry(grounded(), grounded(), user_description="  "))
    assert blank.persona is None and blank.conversation["user_description"] is None


def test_too_few_turns_drop_the_conversation_before_its_missing_scenario() -> None:
    draft = convert(entry(exchange(" Q? ", "A."), scenario=" "))
    assert (draft.dropped_at, draft.drop_reason) == ("conversation", "missing_turns")
    assert draft.drop_reason == MISSING_TURNS
    assert draft.drop_detail == "1 user turn(s); a conversation needs two or more"
    assert draft.input == "user:  Q? \nassistant: A."  # as the reply wrote it
    assert draft.conversation == {
        "scenario": None,
        "expected_outcome": None,
        "user_description": None,
        "turns": [],
    }
    empty = convert(entry())
    assert empty.input == "(none)" and empty.drop_reason == MISSING_TURNS


def test_a_conversation_without_a_scenario_is_dropped_ungrounded_or_not() -> None:
    draft = convert(entry(grounded(), exchange("And?", "Nothing quoted."), scenario="  "))
    assert (draft.dropped_at, draft.drop_reason) == ("conversation", "no_scenario")
    assert draft.drop_reason == NO_SCENARIO
    assert draft.drop_detail == "the conversation came without a scenario"
    assert draft.conversation["turns"] == []
    said = f"user: Who services it?\nassistant: {SERVICE}.\nuser: And?\nassistant: Nothing quoted."
    assert draft.input == said


def test_the_worst_grounded_turn_drops_the_conversation_named_by_its_number() -> None:
    partly = exchange("Q?", f"{MOVE} and they cost a lot of money.", MOVE)  # 0.67
    draft = convert(entry(partly, exchange("And?", "It depends."), grounded()), threshold=0.9)
    assert (draft.dropped_at, draft.drop_reason) == ("conversation", "ungrounded")
    assert draft.drop_reason == UNGROUNDED
    assert draft.drop_detail == (
        "turn 4: grounding 0.00 under 0.9: the answer came with no quotes from the context"
    )
    assert len(draft.conversation["turns"]) == 6  # the turns are kept with their grounding
    assert draft.metadata["grounding"]["score"] == 1.0  # the last turn's
    weaker_first = convert(entry(partly, grounded()), threshold=0.9)
    assert weaker_first.drop_detail is not None
    assert weaker_first.drop_detail.startswith("turn 2: grounding 0.67 under 0.9: ")


def test_of_two_equally_ungrounded_turns_the_first_is_named() -> None:
    missing = exchange("And?", "Heat pumps move heat.", "not in the context at all")
    draft = convert(entry(exchange("Q?", "Nothing."), missing))
    assert draft.drop_detail == (
        "turn 2: grounding 0.00 under 0.5: the answer came with no quotes from the context"
    )


def test_a_turn_grounded_exactly_at_the_threshold_is_kept() -> None:
    half = exchange("Q?", f"{SERVICE}, and it also cleans the garden hoses nicely.", SERVICE)
    draft = convert(entry(half, grounded()), threshold=0.5)
    assert draft.kept
    assert draft.conversation["turns"][1]["metadata"]["grounding"]["score"] == 0.5
    assert convert(entry(half, grounded()), threshold=0.51).drop_reason == UNGROUNDED


def test_without_chunks_the_turns_are_kept_with_no_grounding() -> None:
    draft = Draft(id="d", input="(none)")
    to_draft(entry(exchange("Q?", "Nothing."), exchange("And?", "No.")), draft, [], 3, 0.5, None)
    assert draft.kept
    assert all(row["metadata"] == {} for row in draft.conversation["turns"])
    assert draft.metadata == {}
    assert draft.input == "user: Q?\nassistant: Nothing.\nuser: And?\nassistant: No."


# ---- the step ------------------------------------------------------------------------------


def test_the_config_allows_two_to_ten_turns() -> None:
    assert ConversationConfig().max_turns == 3
    assert ConversationConfig(max_turns=2).max_turns == 2
    assert ConversationConfig(max_turns=10).max_turns == 10
    for wrong in (1, 11):
        with pytest.raises(ConfigError):
            ConversationConfig(max_turns=wrong)


def test_each_conversation_gets_a_persona_drawn_with_the_seed_and_the_candidate() -> None:
    styling = StylingConfig(personas=["a tenant", "a plumber", "a landlord"])
    made = step(Writer(), styling=styling, per_context=4, seed=3)
    rng = random.Random("3:conversation:k")
    assert made.personas("k") == [rng.choice(styling.personas) for _ in range(4)]
    assert made.personas("k") == made.personas("k")
    assert step(Writer(), per_context=4).personas("k") == []


def test_the_step_asks_once_and_makes_one_draft_per_conversation() -> None:
    model = Writer(reply([grounded(), grounded("And?")], [exchange("Q?", "A.")]))
    made = step(model, config=ConversationConfig(max_turns=4))
    assert made.name == "conversation"
    assert (made.grounding_threshold, made.language) == (0.5, "auto")
    out = asyncio.run(made.run([], Source("k", context())))
    assert model.labels == ["conversation"] and model.systems == [SYSTEM]
    assert model.schemas == [batch_schema(ConversationReply, 2)]
    assert model.prompts == [build_prompt(context(), 2, 4, (), default_prompts(), "en")]
    assert [d.id for d in out] == [draft_id("k", 0), draft_id("k", 1)]
    assert [d.drop_reason for d in out] == [None, MISSING_TURNS]
    assert all(d.context == context() for d in out)
    assert out[0].metadata["language"] == "en" and out[1].metadata == {"language": "en"}
    assert out[0].persona is None


def test_the_step_hands_each_conversation_its_persona_and_settings() -> None:
    styling = StylingConfig(personas=["a tenant", "a plumber"])
    cut = [grounded(), grounded("And?"), grounded("And then?")]
    partly = exchange("Q?", f"{MOVE} and they cost a lot of money.", MOVE)
    model = Writer(reply(cut, [partly, grounded()]))
    kw = {"styling": styling, "seed": 1, "grounding_threshold": 0.9}
    out = run(model, config=ConversationConfig(max_turns=2), **kw)
    personas = step(model, **kw).personas("k")
    assert [d.persona for d in out] == personas
    assert f'<persona index="2">\n{personas[1]}\n</persona>' in model.prompts[0]
    assert out[0].metadata["turns_cut"] == 2 and "turns_cut" not in out[1].metadata
    assert out[1].drop_reason == UNGROUNDED  # 0.67 under the step's 0.9


def test_the_step_asks_with_the_runs_own_prompts() -> None:
    model = Writer(reply([grounded(), grounded()]))
    run(model, prompts=PromptSet({"conversation": OWN}), per_context=1)
    line = "\nLanguage: write every turn (the user's and the assistant's) in English.\n"
    assert model.prompts == [f"[<context>\n{TEXT}\n</context>|1|3||{line}]"]


def test_without_personas_each_conversation_takes_its_own_description() -> None:
    two = reply([grounded(), grounded()], [grounded(), grounded()], user_description=" a cook ")
    out = run(Writer(two), per_context=1)
    assert [d.persona for d in out] == ["a cook"]  # one asked for, one kept


def test_a_failed_request_gives_one_draft_dropped_as_a_model_error() -> None:
    model = Writer("not json")
    [failed] = run(model)
    assert failed.id == draft_id("k", "failed")
    assert (failed.input, failed.context) == ("(none)", context())
    assert (failed.dropped_at, failed.drop_reason) == ("conversation", "model_error:invalid_output")
    assert failed.drop_raw == "not json"
    assert len(model.prompts) == 1


def test_a_reply_without_conversations_is_asked_again() -> None:
    model = Writer({"conversations": []}, reply([grounded(), grounded("And?")]))
    out = run(model)
    assert len(model.prompts) == 2 and len(out) == 1 and out[0].kept


def test_the_language_is_the_configs_else_the_contexts_else_none() -> None:
    german = Writer(reply([grounded(), grounded()]))
    [draft] = run(german, language="de")
    assert draft.metadata["language"] == "de"
    assert "in German." in german.prompts[0]
    unknown = Writer(reply([grounded(), grounded()]))
    made = context("Zorblax quint flemmish vortigan", language=None)
    [plain] = run(unknown, Source("k", made))
    assert "language" not in plain.metadata and "Language:" not in unknown.prompts[0]


def test_a_candidate_without_a_context_is_refused() -> None:
    with pytest.raises(ValueError, match="^conversations are written from a context$"):
        run(Writer(), Source("k"))
