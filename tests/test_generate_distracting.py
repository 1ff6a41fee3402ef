"""The distracting inputs step (synth/generate/distracting.py) driven directly, in this thread:
the aside it looks up, the prompt it sends, what it records and what it drops."""

from __future__ import annotations

import asyncio
import json

from synth import FunctionModel
from synth.data import Context
from synth.generate import distracting, inputs
from synth.generate.base import Source
from synth.generate.config import GenerationConfig, StylingConfig
from synth.generate.distracting import (
    DISTRACTOR_KEY,
    NO_DISTRACTION,
    NO_DISTRACTOR,
    DistractingInputsStep,
    aside_for,
    distraction_words,
)
from synth.generate.draft import draft_id
from synth.stage.templates import PromptSet, default_prompts

CTX = Context(
    id="c",
    chunk_ids=["a#0", "a#1"],
    texts=["The pump needs three checks a year.", "Its filter lasts eight years."],
    source_files=["a", "a"],
)
ASIDE = ("b#4", "Solar panels face south and need cleaning.")
STYLING = StylingConfig(
    scenario="homeowners asking support", task="answer", input_format="short question"
)


class Search:
    """A corpus search giving ``found`` for every query, recording each call."""

    def __init__(self, found: list[list[tuple[str, str]]]) -> None:
        self.found, self.calls = found, []

    async def nearest(self, queries, k, exclude=None, vectors=None):
        self.calls.append((list(queries), k, exclude, vectors))
        return self.found


def writer(replies: list[str], prompts: list[str]) -> FunctionModel:
    """A model that answers with ``replies`` as its inputs and keeps each prompt."""

    def reply(prompt: str, system: str | None = None) -> str:
        prompts.append(prompt)
        return json.dumps({"inputs": replies})

    return FunctionModel(reply, name="writer")


def step(model: FunctionModel, search: Search, **overrides) -> DistractingInputsStep:
    config = GenerationConfig(question_types={"distracting": 1.0}, max_goldens_per_context=3)
    values = {
        "llm": model,
        "config": config,
        "styling": STYLING,
        "prompts": default_prompts(),
        "search": search,
    }
    return DistractingInputsStep(**(values | overrides))


def test_the_aside_is_the_best_chunk_outside_the_context_by_its_whole_text() -> None:
    search = Search([[ASIDE, ("c#1", "second best")]])
    assert asyncio.run(aside_for(CTX, search)) == ASIDE
    [(queries, k, exclude, vectors)] = search.calls
    assert queries == ["The pump needs three checks a year. Its filter lasts eight years."]
    assert k == 1 and exclude == [["a#0", "a#1"]] and vectors is None
    assert asyncio.run(aside_for(CTX, Search([[]]))) is None  # nothing shares a word with it
    assert asyncio.run(aside_for(CTX, Search([]))) is None


def test_distraction_words_are_the_inputs_words_from_the_aside_once_each_in_order() -> None:
    aside = "Solar panels face south and the pump room faces north."
    words = distraction_words("Do north-facing solar pumps need solar checks?", aside, CTX)
    assert words == ["north", "solar"]  # "pump" is the context's own word, "solar" once
    assert distraction_words("Does the filter need checks?", aside, CTX) == []
    # the words at the ends of the context's chunks are its words too
    joined = Context(
        id="j", chunk_ids=["x", "y"], texts=["pump checks", "filter life"], source_files=[]
    )
    assert distraction_words("Do filter checks matter?", "A filter checks list.", joined) == []


def test_each_input_takes_a_detail_of_the_aside_or_is_dropped_and_all_record_it() -> None:
    prompts: list[str] = []
    made = ["Do the solar panels change the pump's checks?", "How long does the filter last?"]
    result = asyncio.run(step(writer(made, prompts), Search([[ASIDE]])).run([], Source("k", CTX)))
    kept, plain = result
    assert [d.input for d in result] == made
    assert [d.id for d in result] == [draft_id("k", 0), draft_id("k", 1)]  # from the source's key
    assert kept.kept and kept.metadata[DISTRACTOR_KEY] == "b#4"
    assert not plain.kept and plain.metadata[DISTRACTOR_KEY] == "b#4"
    assert (plain.dropped_at, plain.drop_reason) == (inputs.LABEL, NO_DISTRACTION)
    assert plain.drop_detail == "the input takes no word from the aside chunk b#4"
    [prompt] = prompts
    assert f"<aside>\n{ASIDE[1]}\n</aside>" in prompt
    assert "Scenario: homeowners asking support" in prompt and "Write 3 distinct" in prompt
    assert "The pump needs three checks a year." in prompt


def test_the_steps_own_prompts_and_a_failed_request_are_kept() -> None:
    prompts: list[str] = []
    own = PromptSet({"inputs": "MINE $context $styling $count"})
    model = writer(["Do solar panels matter?"], prompts)
    [draft] = asyncio.run(step(model, Search([[ASIDE]]), prompts=own).run([], Source("k", CTX)))
    assert prompts[0].startswith("MINE ") and draft.kept

    def broken(prompt: str, system: str | None = None) -> str:
        return "not json"

    failed = step(FunctionModel(broken), Search([[ASIDE]]))
    [draft] = asyncio.run(failed.run([], Source("k", CTX)))
    assert not draft.kept and draft.drop_reason != NO_DISTRACTION
    assert DISTRACTOR_KEY not in draft.metadata  # nothing was written that could take a detail


def test_a_context_with_no_other_chunk_gives_one_dropped_draft_and_asks_nothing() -> None:
    prompts: list[str] = []
    [empty] = asyncio.run(step(writer(["x"], prompts), Search([[]])).run([], Source("k", CTX)))
    assert prompts == []
    assert empty.id == draft_id("k", "no-aside") and empty.input == "" and empty.context == CTX
    assert (empty.dropped_at, empty.drop_reason) == (inputs.LABEL, NO_DISTRACTOR)
    assert empty.drop_detail == (
        "the corpus has no other chunk on a related subject to take a detail from"
    )


def test_without_a_context_the_inputs_come_from_the_styling_as_in_any_run() -> None:
    prompts: list[str] = []
    search = Search([[ASIDE]])
    made = asyncio.run(step(writer(["Where is my bill?"], prompts), search).run([], Source("s")))
    assert [d.input for d in made] == ["Where is my bill?"] and made[0].kept
    assert made[0].id == draft_id("scratch:s", 0) and DISTRACTOR_KEY not in made[0].metadata
    assert search.calls == [] and "<aside>" not in prompts[0]
    assert "Scenario: homeowners asking support" in prompts[0]
    assert distracting.DistractingInputsStep.name == inputs.LABEL
    own = PromptSet({"inputs_from_scratch": "MINE $count $scenario $task $input_format"})
    mine = step(writer(["Where?"], prompts), search, prompts=own)
    asyncio.run(mine.run([], Source("s")))
    assert prompts[-1].startswith("MINE 3 homeowners asking support")
