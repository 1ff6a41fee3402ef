"""Cited expected outputs: quotes located in the context, grounding scored, ungrounded answers asked
again once with what failed, then dropped; a quote not in the context is never a citation."""

from __future__ import annotations

import json
import re

import pytest

from synth.data import Context
from synth.generate import expected
from synth.generate.draft import Draft
from synth.llm.base import FunctionModel, run_sync
from synth.stage.stats import StageStats

REFUND = "Refunds are paid within 30 days of the return. Opened items are not refunded."
SHIPPING = "Orders ship from the Leeds warehouse.\nDelivery takes two to four working days."
CONTEXT = Context(
    id="ctx",
    chunk_ids=["policy.pdf#0", "policy.pdf#1"],
    texts=[REFUND, SHIPPING],
    source_files=["policy.pdf", "policy.pdf"],
    metadata={"pages": [[[3, 0]], [[4, 0], [5, 38]]]},
)
ITEM = re.compile(r'<input index="(\d+)">\n(.*?)\n</input>', re.DOTALL)


def replying(*answers: tuple[str, list[str]]):
    """A model that answers the n-th request with ``answers[n]`` for every input it is asked."""
    prompts: list[str] = []

    def reply(prompt: str, system: str | None) -> str:
        prompts.append(prompt)
        text, quotes = answers[min(len(prompts), len(answers)) - 1]
        items = ITEM.findall(prompt)
        outputs = [{"index": int(i), "expected_output": text, "quotes": quotes} for i, _ in items]
        return json.dumps({"outputs": outputs})

    return FunctionModel(reply), prompts


def drafts(n: int = 1, context: Context | None = CONTEXT) -> list[Draft]:
    return [Draft(id=f"d{i}", input=f"Question {i}?", context=context) for i in range(n)]


def test_located_quotes_are_citations_that_point_at_their_spans_and_pages() -> None:
    model, _ = replying(
        ("Delivery takes two to four working days.", ["Delivery takes two to  four working days."])
    )
    [draft] = drafts()
    run_sync(expected.run([draft], model))
    assert draft.kept and draft.expected_output == "Delivery takes two to four working days."
    [citation] = draft.metadata["citations"]
    assert citation["chunk_id"] == "policy.pdf#1" and citation["page"] == 5
    assert (
        SHIPPING[citation["start"] : citation["end"]] == "Delivery takes two to four working days."
    )
    assert draft.metadata["grounding"] == {"score": 1.0, "quotes": 1, "found": 1, "all_found": True}


def test_an_invented_quote_is_asked_again_with_what_failed_then_dropped_ungrounded() -> None:
    invented = ("Refunds are paid within 90 days, no questions asked.", ["Refunds take 90 days."])
    model, prompts = replying(invented)
    stats = StageStats(stage="expected")
    batch = drafts(2)
    run_sync(expected.run(batch, model, stats=stats))
    assert len(prompts) == 2  # the answers, then once more for both, with what failed
    assert "not supported by the context" not in prompts[0]
    assert "not supported by the context" in prompts[1] and "Refunds take 90 days" in prompts[1]
    for draft in batch:
        assert (draft.dropped_at, draft.drop_reason) == ("expected", expected.UNGROUNDED)
        assert draft.drop_detail.startswith("grounding 0.00 under 0.5: ")
        assert draft.metadata["citations"] == []  # the invented quote is not a citation
        assert draft.metadata["grounding"]["found"] == 0
    assert stats.notes["asked_again_ungrounded"] == 2 and stats.dropped == {"ungrounded": 2}


def test_an_answer_its_found_quotes_support_too_little_is_dropped_saying_so() -> None:
    """Both attempts quote the context but say much more; the better second one is kept, and its
    own shortfall is the drop's detail."""
    quote = ["Refunds are paid within 30 days"]
    padded = (
        "Refunds are paid within 30 days, and the shop also offers gift wrapping, loyalty points "
        "and a price match on televisions bought in any of its stores.",
        quote,
    )
    less = (
        "Refunds are paid within 30 days; gift wrapping is free in all stores and loyalty points too.",
        quote,
    )
    model, prompts = replying(padded, less)
    [draft] = drafts()
    run_sync(expected.run([draft], model))
    assert len(prompts) == 2 and "the quotes support only" in prompts[1]
    assert draft.drop_reason == expected.UNGROUNDED and draft.expected_output == less[0]
    score = draft.metadata["grounding"]["score"]
    assert draft.metadata["grounding"]["all_found"] and score < 0.5
    assert draft.drop_detail.startswith(f"grounding {score:.2f} under 0.5: the quotes support only")
    assert draft.drop_detail.endswith("or leave out what the context does not say")


def test_an_answer_grounded_when_asked_again_is_kept_with_its_new_citations() -> None:
    model, prompts = replying(
        ("Refunds come fast.", []),
        ("Refunds are paid within 30 days of the return.", ["Refunds are paid within 30 days"]),
    )
    [draft] = drafts()
    run_sync(expected.run([draft], model))
    assert len(prompts) == 2 and "came with no quotes" in prompts[1]
    assert draft.kept and draft.expected_output == "Refunds are paid within 30 days of the return."
    assert [c["chunk_id"] for c in draft.metadata["citations"]] == ["policy.pdf#0"]
    assert draft.metadata["citations"][0]["page"] == 3


def test_a_worse_second_answer_does_not_replace_the_first() -> None:
    half = (
        "Refunds are paid within 30 days; shipping is free everywhere on earth.",
        ["Refunds are paid within 30 days"],
    )
    model, prompts = replying(half, ("Nothing.", []))
    [draft] = drafts()
    run_sync(expected.run([draft], model, grounding_threshold=0.9))
    assert len(prompts) == 2 and draft.drop_reason == expected.UNGROUNDED
    assert draft.expected_output == half[0] and draft.metadata["grounding"]["found"] == 1


def test_threshold_zero_keeps_every_answer_and_still_records_its_grounding() -> None:
    model, prompts = replying(("Anything at all.", ["not in the context at all, invented"]))
    [draft] = drafts()
    run_sync(expected.run([draft], model, grounding_threshold=0.0))
    assert len(prompts) == 1 and draft.kept
    assert draft.metadata["grounding"]["all_found"] is False and draft.metadata["citations"] == []


def test_without_a_context_answers_are_kept_and_nothing_is_cited() -> None:
    model, _ = replying(("Paris.", []))
    [draft] = drafts(context=None)
    run_sync(expected.run([draft], model))
    assert draft.kept and draft.expected_output == "Paris."
    assert "citations" not in draft.metadata and "grounding" not in draft.metadata


def test_a_quote_copied_from_the_escaped_context_is_found_in_the_chunk_itself() -> None:
    text = "Press <Enter> to confirm the order. Then wait for the receipt."
    context = Context(id="c", chunk_ids=["k#0"], texts=[text], source_files=["k.md"])
    prompt = expected.build_prompt(["How?"], context)
    assert "<\\Enter>" in prompt  # what the model sees, and copies
    model, _ = replying(
        ("Press Enter to confirm the order.", ["Press <\\Enter> to confirm the order."])
    )
    [draft] = drafts(context=context)
    run_sync(expected.run([draft], model))
    [citation] = draft.metadata["citations"]
    assert text[citation["start"] : citation["end"]] == "Press <Enter> to confirm the order."


def test_source_chunks_carry_each_chunks_pages_and_none_without() -> None:
    chunks = expected.source_chunks(CONTEXT)
    assert [c.pages for c in chunks] == [((3, 0),), ((4, 0), (5, 38))]
    plain = Context(id="p", chunk_ids=["a", "b"], texts=["x", "y"], source_files=["a", "b"])
    assert [c.pages for c in expected.source_chunks(plain)] == [(), ()]
    assert expected.source_chunks(None) == []


# ---- the language of an answer ---------------------------------------------------------------------
GERMAN = "Eine volle Ladung dauert an einem sonnigen Tag etwa vier Stunden."
FRENCH = "Une charge complète prend environ quatre heures par une journée ensoleillée."
CHARGE = "A full charge takes about four hours on a sunny day."


def german_drafts(context: Context | None) -> list[Draft]:
    return [
        Draft(id="d0", input="Wie lange dauert eine Ladung?", context=context).model_copy(
            update={"metadata": {"language": "de"}}
        )
    ]


def test_a_cross_lingual_answer_is_scored_by_its_quotes_found_and_says_so() -> None:
    english = Context(id="en", chunk_ids=["k"], texts=[CHARGE], source_files=["a.txt"])
    english.metadata["language"] = "en"
    model, prompts = replying((GERMAN, [CHARGE]))
    [draft] = german_drafts(english)
    run_sync(expected.run([draft], model))
    assert draft.kept and draft.expected_output == GERMAN and len(prompts) == 1
    grounding = draft.metadata["grounding"]
    assert grounding["measure"] == "quotes_found" and grounding["score"] == 1.0


@pytest.mark.slow  # French and German need lingua's full models: seconds of a core to load
def test_an_answer_in_another_language_with_nothing_to_cite_is_asked_again() -> None:
    model, prompts = replying((FRENCH, []), (GERMAN, []))
    [draft] = german_drafts(None)
    stats = StageStats(stage="expected")
    run_sync(expected.run([draft], model, stats=stats))
    assert len(prompts) == 2 and "French" in prompts[1]
    assert draft.kept and draft.expected_output == GERMAN
    assert stats.notes["asked_again_wrong_language"] == 1
    model, _ = replying((FRENCH, []), (FRENCH, []))
    [again] = german_drafts(None)
    run_sync(expected.run([again], model))
    assert (again.dropped_at, again.drop_reason) == ("expected", "wrong_language")
    assert again.drop_detail.endswith(", after it was asked again")


def test_a_quote_copied_with_the_contexts_escapes_is_located_as_the_original_text() -> None:
    """The context is shown with its closing tags escaped (``<\\/context>``); a quote copied
    from it carries the escape and still cites the original text."""
    text = "Close the block with </context> and save the file."
    context = Context(id="c", chunk_ids=["t#0"], texts=[text], source_files=["t.md"])
    model, prompts = replying(
        ("Close the block with </context> and save.", ["Close the block with <\\/context>"])
    )
    [draft] = drafts(context=context)
    run_sync(expected.run([draft], model))
    assert "<\\/context>" in prompts[0] and len(prompts) == 1
    [citation] = draft.metadata["citations"]
    assert citation["quote"] == "Close the block with </context>"
    assert text[citation["start"] : citation["end"]] == citation["quote"]


# answers in another script: a Japanese answer for a German draft is told by its letters, a Greek
# one by the trigrams alone, so several can be judged in a fast test (in a run, an answer the
# trigrams leave to the full models loads them: seconds of a core)
JAPANESE = "晴れた日には、満充電にはおよそ四時間かかります。"
GREEK = "Μια πλήρης φόρτιση διαρκεί περίπου τέσσερις ώρες σε μια ηλιόλουστη μέρα."
#: too few letters to judge their language: a check says "unsure" and loads nothing
SHORT_GERMAN = "Vier Stunden."


def english_context(text: str = CHARGE) -> Context:
    context = Context(id="en", chunk_ids=["k"], texts=[text], source_files=["a.txt"])
    context.metadata["language"] = "en"
    return context


def test_answers_in_the_wrong_language_are_asked_again_counted_and_dropped_naming_it() -> None:
    """Two German drafts of an English context, both answered in Japanese twice: each retry is
    counted as one for its language (not for its grounding, which its found quote makes full),
    the prompts name the language to write in, and each drop says which language it found."""
    model, prompts = replying((JAPANESE, [CHARGE]))
    batch = german_drafts(english_context()) + german_drafts(english_context())
    stats = StageStats(stage="expected")
    run_sync(expected.run(batch, model, stats=stats))
    assert len(prompts) == 2 and stats.requests == 2
    line = "Language: write every answer (the quotes stay as the context has them) in German."
    assert all(line in prompt for prompt in prompts)
    assert "the answer is written in Japanese (confidence 1.00)" in prompts[1]
    assert stats.notes == {"asked_again_ungrounded": 0, "asked_again_wrong_language": 2}
    for draft in batch:
        assert (draft.dropped_at, draft.drop_reason) == ("expected", "wrong_language")
        assert draft.drop_detail == (
            "the answer is written in Japanese (confidence 1.00), but it must be written in "
            "German, after it was asked again"
        )
        assert draft.metadata["grounding"]["measure"] == "quotes_found"


def test_a_retried_answer_in_the_drafts_language_is_scored_by_its_quotes_found_and_kept() -> None:
    """The second answer is in German (too short to be judged otherwise) and quotes the English
    context: cross-lingual, so its grounding is the share of its quotes found, not of its words."""
    model, prompts = replying((JAPANESE, [CHARGE]), (SHORT_GERMAN, [CHARGE]))
    [draft] = german_drafts(english_context())
    run_sync(expected.run([draft], model))
    assert len(prompts) == 2 and draft.kept and draft.expected_output == SHORT_GERMAN
    assert draft.metadata["grounding"] == {
        "score": 1.0,
        "quotes": 1,
        "found": 1,
        "all_found": True,
        "measure": "quotes_found",
    }


def test_a_draft_in_a_language_with_its_own_prompts_is_answered_from_them() -> None:
    from synth.stage.templates import PromptSet

    prompts = PromptSet({"de": {"expected": "Beantworte: $inputs$feedback$language"}})
    model, asked = replying((SHORT_GERMAN, [CHARGE]))
    [draft] = german_drafts(english_context())
    run_sync(expected.run([draft], model, prompts=prompts))
    assert draft.kept and len(asked) == 1 and asked[0].startswith("Beantworte: ")


def test_an_answer_in_its_contexts_own_language_is_judged_against_that_language() -> None:
    """Greek is not among the languages every check weighs: a Greek answer for a German draft is
    named Greek only because its context is in Greek."""
    context = Context(id="el", chunk_ids=["g"], texts=[GREEK], source_files=["g.txt"])
    chunks = expected.source_chunks(context)
    checked = expected.check_answer(expected.Answer(GREEK, (GREEK,)), chunks, 0.5, "de", "el")
    assert checked.wrong_language and checked.problem.startswith("the answer is written in Greek")


def test_only_an_answer_in_another_language_than_its_known_context_is_scored_by_quotes_found() -> (
    None
):
    """One of three quotes found: a cross-lingual answer scores 1/3 (to four places); with either
    language unknown, or both the same, its score is the share of its words the quotes hold."""
    chunks = expected.source_chunks(english_context())
    quotes = (CHARGE, "Solar panels are cleaned twice a year.", "The inverter lasts ten years.")
    answer = expected.Answer(SHORT_GERMAN, quotes)
    cross = expected.check_answer(answer, chunks, 0.5, "de", "en")
    assert cross.cross_lingual and cross.grounding.score == 0.3333
    for language, context_language in (("de", None), (None, "en"), ("en", "en")):
        same = expected.check_answer(answer, chunks, 0.5, language, context_language)
        assert not same.cross_lingual and same.grounding.score == 0.0


def test_an_answer_in_another_script_with_nothing_to_cite_is_asked_again_then_dropped() -> None:
    """The fast twin of the test above: a Japanese answer for a German draft, no context."""
    model, prompts = replying((JAPANESE, []), (SHORT_GERMAN, []))
    [draft] = german_drafts(None)
    stats = StageStats(stage="expected")
    run_sync(expected.run([draft], model, stats=stats))
    assert len(prompts) == 2 and "written in Japanese" in prompts[1]
    assert draft.kept and draft.expected_output == SHORT_GERMAN
    assert stats.notes == {"asked_again_ungrounded": 0, "asked_again_wrong_language": 1}
    model, _ = replying((JAPANESE, []))
    [again] = german_drafts(None)
    run_sync(expected.run([again], model))
    assert (again.dropped_at, again.drop_reason) == ("expected", "wrong_language")
    assert again.expected_output == JAPANESE


def test_without_a_context_a_partial_answer_is_not_judged_partial() -> None:
    """Generated from scratch there is no context to answer from fully: a Japanese answer is
    asked again for its language, and the German one that says "partly" is kept."""

    def reply(prompt: str, system: str | None) -> str:
        again = "<problems>" in prompt
        entry = {"quotes": [], "answerable": "partly" if again else "fully"}
        entry["expected_output"] = SHORT_GERMAN if again else JAPANESE
        outputs = [{"index": int(i), **entry} for i, _ in ITEM.findall(prompt)]
        return json.dumps({"outputs": outputs})

    [draft] = german_drafts(None)
    run_sync(expected.run([draft], FunctionModel(reply)))
    assert draft.kept and draft.expected_output == SHORT_GERMAN


def test_an_answer_without_quotes_twice_is_dropped_saying_it_came_with_none() -> None:
    model, prompts = replying(("Refunds come fast.", []))
    [draft] = drafts()
    run_sync(expected.run([draft], model))
    assert len(prompts) == 2
    assert draft.drop_detail == (
        "grounding 0.00 under 0.5: the answer came with no quotes from the context"
    )
