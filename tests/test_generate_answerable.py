"""Answerability in the expected output: quotes, then how fully they answer, then the answer;
hedged or partial answers dropped as ``unanswerable``; a question that gives its answer away dropped
as ``answer_leaked`` (synth/generate/expected.py)."""

from __future__ import annotations

import json
import re

from synth.data import Context
from synth.generate import expected
from synth.generate.draft import Draft
from synth.llm.base import FunctionModel, run_sync
from synth.stage.stats import StageStats

FACT = "The X200 battery has a warranty of ten years from the date of purchase."
CONTEXT = Context(id="ctx", chunk_ids=["m#0"], texts=[FACT], source_files=["manual.md"])
ITEM = re.compile(r'<input index="(\d+)">\n(.*?)\n</input>', re.DOTALL)


class Answers:
    """Answers from a queue of ``(answerable, text)`` per request; every answer quotes FACT."""

    def __init__(self, *replies: tuple[str, str]) -> None:
        self.replies = list(replies)
        self.prompts: list[str] = []

    def __call__(self, prompt: str, system: str | None) -> str:
        self.prompts.append(prompt)
        answerable, text = self.replies.pop(0)
        outputs = [
            {"index": int(i), "quotes": [FACT], "answerable": answerable, "expected_output": text}
            for i, _ in ITEM.findall(prompt)
        ]
        return json.dumps({"outputs": outputs})


def answer(model: Answers, question: str = "How long is the X200 warranty?", **draft) -> Draft:  # type: ignore[no-untyped-def]
    made = Draft(id="d", input=question, context=CONTEXT, **draft)
    stats = StageStats(stage="expected")
    run_sync(expected.run([made], FunctionModel(model), stats=stats))
    made.metadata["_stats"] = stats
    return made


def test_the_schema_asks_for_the_quotes_and_the_verdict_before_the_answer() -> None:
    fields = list(expected.ExpectedReply.model_json_schema()["$defs"]["_Output"]["properties"])
    assert fields == ["index", "quotes", "answerable", "expected_output"]
    prompt = expected.build_prompt(["Q?"], CONTEXT)
    assert (
        prompt.index('"quotes"') < prompt.index('"answerable"') < prompt.index('"expected_output"')
    )


def test_a_full_answer_is_kept_in_one_request() -> None:
    model = Answers(("fully", "Ten years from purchase."))
    draft = answer(model)
    assert draft.kept and draft.expected_output == "Ten years from purchase."
    assert len(model.prompts) == 1


def test_a_partial_answer_is_asked_again_once_then_dropped_unanswerable() -> None:
    model = Answers(("partly", "Ten years."), ("partly", "Ten years."))
    draft = answer(model)
    assert draft.drop_reason == "unanswerable" and draft.dropped_at == "expected"
    assert "'partly'" in draft.drop_detail and draft.drop_detail.endswith("asked again")
    problems = model.prompts[1].split("<problems>")[1].split("</problems>")[0]
    assert len(model.prompts) == 2
    assert (
        "the reply says the context answers it 'partly': answer every part of the input from the "
        'quotes, stating it plainly, or say "partly" or "no" in "answerable" when the context '
        "does not answer it all\n</problem>"
    ) in problems
    notes = draft.metadata["_stats"].notes
    assert notes["asked_again_unanswerable"] == 1 and notes["asked_again_ungrounded"] == 0
    # grounded exactly at the threshold, it is still the answer's verdict that fails it
    at_threshold = Draft(id="t", input="How long is the X200 warranty?", context=CONTEXT)
    stats = StageStats(stage="expected")
    again = Answers(("partly", "Ten years."), ("partly", "Ten years."))
    run_sync(expected.run([at_threshold], FunctionModel(again), stats=stats, grounding_threshold=1))
    assert at_threshold.drop_reason == "unanswerable"
    assert "the reply says the context answers it 'partly'" in again.prompts[1]
    assert (
        stats.notes["asked_again_unanswerable"] == 1 and stats.notes["asked_again_ungrounded"] == 0
    )


def test_a_partial_answer_whose_quotes_are_not_in_the_context_is_told_about_its_quotes() -> None:
    """Quotes that are not found come first: the retry is told which, not that the answer is
    partial, and the draft is dropped as ungrounded, saying so."""
    calls: list[str] = []

    def reply(prompt: str, system: str | None) -> str:
        calls.append(prompt)
        entry = {"quotes": ["Batteries last forever."], "answerable": "partly"}
        outputs = [
            {"index": int(i), **entry, "expected_output": "Ten years."}
            for i, _ in ITEM.findall(prompt)
        ]
        return json.dumps({"outputs": outputs})

    draft = Draft(id="d", input="How long is the X200 warranty?", context=CONTEXT)
    run_sync(expected.run([draft], FunctionModel(reply)))
    problems = calls[1].split("<problems>")[1].split("</problems>")[0]
    assert "Batteries last forever." in problems and "answerable" not in problems
    assert draft.drop_reason == "ungrounded" and "Batteries last forever." in draft.drop_detail


def test_a_hedged_answer_counts_as_partly_whatever_the_reply_says() -> None:
    hedge = f"The context does not say exactly; it only mentions that {FACT[0].lower()}{FACT[1:]}"
    model = Answers(("fully", hedge), ("fully", hedge))
    draft = answer(model)
    assert draft.drop_reason == "unanswerable" and "hedges" in draft.drop_detail


def test_a_hedge_answered_plainly_when_asked_again_is_kept() -> None:
    hedge = "It is not clear; it only mentions ten years."
    model = Answers(("fully", hedge), ("fully", "Ten years from purchase."))
    draft = answer(model)
    assert draft.kept and draft.expected_output == "Ten years from purchase."


def test_a_question_that_gained_its_answer_after_it_was_first_written_is_dropped_leaked() -> None:
    first = "How long is the battery warranty?"
    leaky = "Is the X200 battery warranty ten years from purchase?"
    model = Answers(("fully", FACT))
    history = [{"stage": "evolve", "input": first, "evolution": "concretizing"}]
    draft = answer(model, leaky, history=history)
    assert draft.drop_reason == "answer_leaked" and draft.dropped_at == "expected"
    assert "ten" in draft.drop_detail
    kept = answer(
        Answers(("fully", FACT)), "How long is the X200 battery warranty?", history=history
    )
    assert kept.kept


def test_only_words_gained_in_evolution_and_styling_alone_count_as_a_leak() -> None:
    """Under the share a question may state outright, the words it gained since it was first
    written are a leak when only evolution and styling rewrote it; words it held from the first,
    or a rewrite asked with feedback since (whose words are its own), are not."""
    first = "How long is the X200 battery warranty?"
    gained = "Is the X200 battery warranty ten years?"  # 5 of the answer's 7 words: under 80%
    evolved = [{"stage": "evolve", "input": first, "evolution": "concretizing"}]
    draft = answer(Answers(("fully", FACT)), gained, history=evolved)
    assert draft.drop_reason == "answer_leaked"
    assert draft.drop_detail == "the question gained 2 of the 4 words its answer adds: ten, year"
    styled = [*evolved, {"stage": "style", "input": "How long is the X200 warranty?"}]
    assert answer(Answers(("fully", FACT)), gained, history=styled).drop_reason == "answer_leaked"
    held = [{"stage": "evolve", "input": "Is the X200 battery warranty ten years long?"}]
    restated = "For the X200, is the battery warranty ten years long?"
    assert answer(Answers(("fully", FACT)), restated, history=held).kept
    fixed = [*evolved, {"stage": "filter", "input": "Is the X200 warranty ten years?"}]
    assert answer(Answers(("fully", FACT)), gained, history=fixed).kept
    assert answer(Answers(("fully", FACT)), gained).kept  # never rewritten: the first rule alone


def test_the_leak_check_drops_each_live_draft_and_keeps_an_earlier_drop_as_it_was() -> None:
    """Two inputs of one context, both stating the whole answer: the first's quotes are not in
    the context (dropped ``ungrounded``, and so it stays); the second is checked all the same."""
    whole = "Is the X200 battery warranty ten years from the date of purchase?"

    def reply(prompt: str, system: str | None) -> str:
        outputs = [
            {
                "index": int(i),
                "quotes": ["The screen is covered too."] if i == "1" else [FACT],
                "answerable": "fully",
                "expected_output": FACT,
            }
            for i, _ in ITEM.findall(prompt)
        ]
        return json.dumps({"outputs": outputs})

    drafts = [Draft(id=f"d{i}", input=whole, context=CONTEXT) for i in range(2)]
    run_sync(expected.run(drafts, FunctionModel(reply)))
    assert [d.drop_reason for d in drafts] == ["ungrounded", "answer_leaked"]


def test_the_retry_asks_with_the_runs_prompts_and_format_and_counts_each_input() -> None:
    from synth.generate.question_types import expected_note
    from synth.stage.templates import PromptSet

    prompts = PromptSet(
        {"expected": "Custom: $count from $context\n$inputs$output_format$feedback"}
    )
    model = Answers(("partly", "Ten years."), ("partly", "Ten years."))
    drafts = [
        Draft(id=f"d{i}", input=f"How long is warranty {i}?", context=CONTEXT) for i in (1, 2)
    ]
    stats = StageStats(stage="expected")
    run_sync(
        expected.run(
            drafts, FunctionModel(model), prompts=prompts, stats=stats, question_type="double"
        )
    )
    note = expected_note("double")
    assert len(model.prompts) == 2 and note
    # no styling: the format line is the question type's note alone
    assert all(p.startswith("Custom: 2 from") for p in model.prompts)
    assert all(f"in this format: {note}\n" in p for p in model.prompts)
    assert stats.notes["asked_again_unanswerable"] == 2
    assert [d.drop_reason for d in drafts] == ["unanswerable", "unanswerable"]
