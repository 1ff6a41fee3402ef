"""The question types (synth/generate/question_types.py) as functions: the mix checked, each type's
exact count, the one type a mix names, the prompt lines, the multi-hop check and what a golden
records. tests/test_question_types.py makes whole runs of the types (seconds each)."""

from __future__ import annotations

import asyncio
import math

import pytest

from synth.data import Context, Golden
from synth.generate.base import Source
from synth.generate.draft import Draft
from synth.generate.question_types import (
    DISTRACTING,
    OUT_OF_SCOPE,
    QUESTION_TYPES,
    SIMPLE,
    SINGLE_HOP,
    HopsStep,
    check_types,
    cited_chunks,
    expected_note,
    inputs_instruction,
    single_type,
    tag_type,
    type_counts,
)

CTX = Context(id="c", chunk_ids=["a#0", "a#1"], texts=["Flour.", "Yeast."], source_files=["a"])


def test_each_type_names_the_part_of_the_system_it_tests() -> None:
    assert QUESTION_TYPES == {
        "simple": "generator",
        "multi_hop": "retriever",
        "situational": "generator",
        "double": "generator",
        "distracting": "retriever",
        "out_of_scope": "refusal",
    }
    assert (SIMPLE, DISTRACTING, OUT_OF_SCOPE, SINGLE_HOP) == (
        "simple",
        "distracting",
        "out_of_scope",
        "single_hop",
    )


def test_a_good_mix_passes_and_each_bad_one_is_named() -> None:
    check_types({"simple": 1})
    check_types({"simple": 0, "double": 2, "multi_hop": 0.5})  # one share above 0 is enough
    check_types(dict.fromkeys(QUESTION_TYPES, 1))
    with pytest.raises(ValueError) as caught:
        check_types({"zeta": 1, "alpha": 1, "simple": 1})
    assert str(caught.value) == (
        "unknown question type 'alpha'; use one of simple, multi_hop, situational, double, "
        "distracting, out_of_scope"
    )
    for bad in (-0.001, math.inf, math.nan, "1", None):
        with pytest.raises(ValueError) as caught:
            check_types({"simple": 1, "double": bad})  # type: ignore[dict-item]
        assert str(caught.value) == f"question type 'double' needs a share >= 0, got {bad!r}"
    with pytest.raises(ValueError, match="^at least one question type needs a share above 0$"):
        check_types({"simple": 0, "double": 0.0})
    with pytest.raises(ValueError, match="^at least one question type needs a share above 0$"):
        check_types({})


def test_each_share_is_rounded_down_and_the_rest_goes_to_the_largest_remainders() -> None:
    # 10 * 0.55 = 5.5, 10 * 0.3 = 3, 10 * 0.15 = 1.5: the one left goes to the first remainder
    assert type_counts({"simple": 0.55, "multi_hop": 0.3, "double": 0.15}, 10) == {
        "simple": 6,
        "multi_hop": 3,
        "double": 1,
    }
    # 7 * 0.4 = 2.8, 7 * 0.6 = 4.2: the larger remainder (0.8) gets the golden left over
    assert type_counts({"simple": 0.6, "double": 0.4}, 7) == {"simple": 4, "double": 3}
    # weights need not sum to 1: 3 and 1 of 8
    assert type_counts({"situational": 3, "double": 1}, 8) == {"situational": 6, "double": 2}


def test_ties_go_to_the_type_listed_first_and_every_weighed_type_is_listed() -> None:
    # listed out of order: the tie for the one left goes to simple, QUESTION_TYPES' first
    assert type_counts({"double": 1, "simple": 1}, 1) == {"simple": 1, "double": 0}
    assert list(type_counts({"double": 1, "simple": 1}, 3)) == ["simple", "double"]
    assert type_counts({"out_of_scope": 1, "multi_hop": 1, "distracting": 1}, 2) == {
        "multi_hop": 1,
        "distracting": 1,
        "out_of_scope": 0,
    }
    assert type_counts({"simple": 1, "double": 0}, 0) == {"simple": 0}
    assert type_counts({"simple": 2}, 5) == {"simple": 5}


def test_one_type_asked_for_is_named_and_a_mix_is_not() -> None:
    assert single_type({"double": 1}) == "double"
    assert single_type({"simple": 0, "double": 0.5}) == "double"
    assert single_type({"simple": 1, "double": 1}) is None
    assert single_type({}) is None


def test_each_type_adds_its_own_lines_and_simple_or_none_adds_none() -> None:
    kinds = ["multi_hop", "situational", "double", "distracting"]
    lines = [inputs_instruction(kind) for kind in kinds]
    assert all(lines) and len(set(lines)) == len(lines)
    assert "two different passages" in inputs_instruction("multi_hop")
    assert "<aside>" in inputs_instruction("distracting")
    notes = [expected_note(kind) for kind in kinds]
    assert all(notes) and len(set(notes)) == len(notes)
    assert "both questions" in (expected_note("double") or "")
    for nothing in (None, "simple", "out_of_scope"):
        assert inputs_instruction(nothing) == ""
        assert expected_note(nothing) is None


def cited(*chunks: str, expected: str | None = "an answer") -> Draft:
    draft = Draft(id="d", input="q?", context=CTX, expected_output=expected)
    draft.metadata["citations"] = [{"chunk_id": c, "quote": "x"} for c in chunks]
    return draft


def test_the_cited_chunks_are_distinct_in_order_of_first_citation() -> None:
    assert cited_chunks(cited("a#1", "a#0", "a#1", "a#2")) == ["a#1", "a#0", "a#2"]
    assert cited_chunks(Draft(id="d", input="q?")) == []
    none = Draft(id="d", input="q?", metadata={"citations": None})
    assert cited_chunks(none) == []


def test_an_answer_citing_fewer_than_two_chunks_is_dropped_saying_how_many() -> None:
    one, two, none = cited("a#0", "a#0"), cited("a#1", "a#0"), cited()
    out = asyncio.run(HopsStep().run([one, two, none], Source("k")))
    assert out == [one, two, none] and HopsStep.name == "hops"
    assert (one.dropped_at, one.drop_reason) == ("hops", SINGLE_HOP)
    assert one.drop_detail == "its answer cites 1 chunk(s); a multi-hop question needs two"
    assert none.drop_detail == "its answer cites 0 chunk(s); a multi-hop question needs two"
    assert two.kept and two.metadata["hops"] == ["a#1", "a#0"]
    assert none.metadata["hops"] == []


def test_drafts_dropped_or_without_an_answer_are_left_alone() -> None:
    dropped = cited("a#0")
    dropped.drop("expected", "earlier")
    unanswered = cited("a#0", expected=None)
    after = cited("a#0", "a#1")  # the drafts after those are still checked
    asyncio.run(HopsStep().run([dropped, unanswered, after], Source("k")))
    assert (dropped.dropped_at, dropped.drop_reason) == ("expected", "earlier")
    assert unanswered.kept and after.kept and after.metadata["hops"] == ["a#0", "a#1"]
    assert "hops" not in dropped.metadata and "hops" not in unanswered.metadata


def test_each_golden_records_its_type_and_the_part_it_tests_when_a_type_was_asked() -> None:
    goldens = [Golden(input="a?"), Golden(input="b?")]
    tag_type(goldens, "multi_hop")
    for golden in goldens:
        assert golden.metadata["question_type"] == "multi_hop"
        assert golden.metadata["tests"] == "retriever"
    plain = [Golden(input="c?")]
    tag_type(plain, "double", asked=False)
    tag_type(plain, None)
    assert "question_type" not in plain[0].metadata and "tests" not in plain[0].metadata
