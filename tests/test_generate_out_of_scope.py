"""The out-of-scope check (synth/generate/out_of_scope.py) driven directly, in this thread: the
prompt the critic reads, the batches, the search and its vectors, and what each verdict leaves."""

from __future__ import annotations

import asyncio
import json
import re

from synth import FunctionModel, Golden
from synth.data import Context
from synth.generate.base import Source
from synth.generate.draft import Draft
from synth.generate.out_of_scope import (
    ANSWERABLE,
    MAX_BATCH,
    NEAR_MISS_KEY,
    NEAREST,
    TOPIC_KEY,
    ScopeStep,
    Verdict,
    build_prompt,
    near_chunks,
    unscoped,
)
from synth.stage.templates import PromptSet, default_prompts

CTX = Context(
    id="c", chunk_ids=["a#0"], texts=["The pump needs three checks a year."], source_files=["a"]
)


class Search:
    """A corpus search that finds ``found`` for every question, recording each call."""

    def __init__(self, found: list[tuple[str, str]]) -> None:
        self.found, self.calls = found, []

    async def nearest(self, queries, k, exclude=None, vectors=None):
        self.calls.append((list(queries), k, exclude, vectors))
        return [list(self.found) for _ in queries]


class Embedder:
    """Embeds each text as its length, recording the calls and their labels."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], str | None]] = []

    async def aembed(self, texts, label=None):
        self.calls.append((list(texts), label))
        return [[float(len(t)), 1.0] for t in texts]


class Critic(FunctionModel):
    """A critic replying with ``verdicts(questions)`` for the questions of each prompt; it keeps
    each prompt and the label it was asked under."""

    def __init__(self, verdicts) -> None:
        self.prompts: list[str] = []
        self.labels: list[str | None] = []

        def reply(prompt: str, system: str | None = None) -> str:
            self.prompts.append(prompt)
            questions = re.findall(r"<input>\n(.*?)\n</input>", prompt, re.DOTALL)
            return json.dumps({"verdicts": verdicts(questions)})

        super().__init__(reply, name="critic")

    async def arequest(self, prompt, *, system=None, schema=None, label=None):
        self.labels.append(label)
        return await super().arequest(prompt, system=system, schema=schema, label=label)


def answering(answered: set[str]):
    def verdicts(questions: list[str]) -> list[dict]:
        return [
            {"index": i, "answered": q in answered, "reason": f"  reason {q}  "}
            for i, q in enumerate(questions, start=1)
        ]

    return verdicts


def drafts(*questions: str, context: Context | None = CTX) -> list[Draft]:
    return [Draft(id=f"d{i}", input=q, context=context) for i, q in enumerate(questions)]


def test_the_prompt_numbers_items_and_passages_from_one_and_says_when_none_was_found() -> None:
    prompt = build_prompt([("Who?", ["  First.  ", "Second."]), ("Why?", [])])
    items = (
        '<items>\n<item index="1">\n<input>\nWho?\n</input>\n<passages>\n'
        '<passage index="1">\nFirst.\n</passage>\n<passage index="2">\nSecond.\n</passage>\n'
        '</passages>\n</item>\n<item index="2">\n<input>\nWhy?\n</input>\n'
        "<passages>\n(none found)\n</passages>\n</item>\n</items>"
    )
    assert items in prompt
    assert prompt.startswith("You check whether documents answer questions")
    own = PromptSet({"scope": "MINE $count\n$items"})
    assert build_prompt([("Who?", []), ("Why?", [])], own).startswith("MINE 2\n<items>\n")


def test_the_chunks_shown_are_the_contexts_then_the_others_found() -> None:
    context = Context(id="c", chunk_ids=["a#0", "a#1"], texts=["A.", "B."], source_files=["a"])
    [draft] = drafts("Who?", context=context)
    found = [("b#0", "C."), ("a#1", "B again."), ("d#2", "D.")]
    assert near_chunks(draft, found) == [("a#0", "A."), ("a#1", "B."), ("b#0", "C."), ("d#2", "D.")]
    [bare] = drafts("Who?", context=None)
    assert near_chunks(bare, found) == found
    # a context given as texts alone (no chunk ids) shows what search found, without failing
    [texts_only] = drafts(
        "Who?", context=Context(id="t", chunk_ids=[], texts=["A."], source_files=[])
    )
    assert near_chunks(texts_only, found) == found


def test_the_critic_is_asked_ten_questions_at_a_time_under_its_label() -> None:
    questions = [f"Question {i}?" for i in range(MAX_BATCH + 1)]
    critic = Critic(answering({"Question 10?"}))
    search, embedder = Search([("b#1", "Heat pumps hum.")]), Embedder()
    given = drafts(*questions)
    step = ScopeStep(critic, search, default_prompts(), "No idea.", embedder)
    assert asyncio.run(step.run(given, Source("k"))) is given
    assert [len(re.findall("<input>", p)) for p in critic.prompts] == [MAX_BATCH, 1]
    assert critic.labels == ["scope", "scope"] and ScopeStep.name == "scope"
    assert [call[0] for call in search.calls] == [questions[:MAX_BATCH], questions[MAX_BATCH:]]
    assert {call[1] for call in search.calls} == {NEAREST} == {3}
    assert [call[2] for call in search.calls] == [None, None]
    assert search.calls[1][3] == [[12.0, 1.0]]  # the questions' own vectors, for the cosine half
    assert embedder.calls == [(questions[:MAX_BATCH], "scope"), (questions[MAX_BATCH:], "scope")]
    assert [d.kept for d in given] == [True] * MAX_BATCH + [False]
    assert given[0].metadata == {
        NEAR_MISS_KEY: ["a#0", "b#1"],
        "scope_reason": "reason Question 0?",  # stripped
    }
    last = given[-1]
    assert last.metadata == {NEAR_MISS_KEY: ["a#0", "b#1"]}
    assert last.drop_detail == "the critic found it answered in a#0, b#1: reason Question 10?"
    assert (last.dropped_at, last.drop_reason) == ("scope", ANSWERABLE)


def test_the_check_asks_with_the_runs_own_prompt() -> None:
    critic = Critic(answering(set()))
    own = PromptSet({"scope": "MINE $count\n$items"})
    asyncio.run(ScopeStep(critic, None, own, None).run(drafts("Who?"), Source("k")))
    assert critic.prompts[0].startswith("MINE 1\n<items>")


def test_without_an_embedder_the_search_is_by_words_alone() -> None:
    search = Search([])
    step = ScopeStep(Critic(answering(set())), search, default_prompts(), None)
    given = drafts("Who?")
    asyncio.run(step.run(given, Source("k")))
    assert search.calls == [(["Who?"], 3, None, None)]
    assert given[0].kept and given[0].expected_output is None


def test_an_item_the_critic_leaves_out_is_asked_again_alone() -> None:
    replies: list[list[dict]] = [
        [{"index": 2, "answered": False, "reason": "no"}],
        [{"index": 1, "answered": True, "reason": "yes"}],
    ]
    critic = Critic(lambda questions: replies.pop(0))
    given = drafts("Who?", "Why?")
    asyncio.run(ScopeStep(critic, None, default_prompts(), "R").run(given, Source("k")))
    assert "<input>\nWho?\n</input>" in critic.prompts[1]
    assert "Why?" not in critic.prompts[1]
    assert [d.kept for d in given] == [False, True] and given[1].expected_output == "R"


def test_a_critic_that_never_covers_an_item_drops_it_as_a_model_error_saying_so() -> None:
    critic = Critic(lambda questions: [])
    given = drafts("Who?")
    asyncio.run(ScopeStep(critic, None, default_prompts(), "R").run(given, Source("k")))
    [draft] = given
    assert not draft.kept and draft.dropped_at == "scope"
    assert draft.drop_reason is not None and draft.drop_reason.startswith("model_error")
    assert "the scope reply covers items" in (draft.drop_detail or "")
    assert NEAR_MISS_KEY not in draft.metadata and draft.expected_output is None


def test_a_verdict_is_whether_it_is_answered_and_why() -> None:
    assert Verdict(answered=True) == Verdict(answered=True, reason="")


def test_a_golden_without_context_gets_no_topic_and_one_with_texts_alone_an_empty_one() -> None:
    bare = Golden(input="Who?")
    unscoped(bare)
    assert TOPIC_KEY not in bare.metadata and bare.context == [] and bare.context_ids == []
    texts = Golden(input="Who?", context=["x"])
    unscoped(texts)
    assert texts.metadata[TOPIC_KEY] == [] and texts.context == []


def test_a_near_miss_records_the_fact_it_started_from() -> None:
    from synth.generate import inputs
    from synth.generate.config import GenerationConfig

    sent: list[str] = []

    def model(prompt: str, system: str | None) -> str:
        sent.append(prompt)
        entries = [
            {"fact": "The X200 stores 10 kWh.", "input": "How much did the X200 cost in 2031?"},
            {"fact": " ", "input": "Who designed the X200 casing?"},
        ]
        return json.dumps({"inputs": entries})

    context = Context(
        id="c", chunk_ids=["k"], texts=["The X200 stores 10 kWh."], source_files=["a"]
    )
    config = GenerationConfig(question_types={"out_of_scope": 1.0})
    drafts = asyncio.run(inputs.run(context, FunctionModel(model), config))
    assert [d.input for d in drafts] == [
        "How much did the X200 cost in 2031?",
        "Who designed the X200 casing?",
    ]
    assert drafts[0].metadata["near_miss_fact"] == "The X200 stores 10 kWh."
    assert "near_miss_fact" not in drafts[1].metadata  # a blank fact is not recorded
    # the recipe: a fact the documents state first, then a detail they do not give
    assert sent[0].index('"fact"') < sent[0].index('"input"') and "NOT give" in sent[0]
    assert drafts[0].to_golden().metadata["near_miss_fact"] == "The X200 stores 10 kWh."
