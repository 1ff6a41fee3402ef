"""Goldens from other tools' records (synth/dataset/_records.py): what mutation testing found
unchecked, read back exactly. A bad field is named as the file spells it."""

from __future__ import annotations

import pytest

from synth import DatasetError, Golden
from synth.data import ConversationalGolden, Turn
from synth.dataset._records import (
    JUDGEVAL_FIELDS,
    columns_of,
    golden_from_record,
    kind,
    synthesizer_name,
    to_deepeval,
    to_judgeval,
    to_judgeval_legacy,
    to_ragas,
    to_synth,
)


def _refusal(record: dict) -> str:
    with pytest.raises(DatasetError) as caught:
        golden_from_record(record, "f.jsonl: line 3")
    return str(caught.value)


def test_a_bad_field_is_named_as_the_record_spells_it() -> None:
    assert _refusal({"user_input": "q", "reference_contexts": "x"}) == (
        "f.jsonl: line 3: field 'reference_contexts': expected a list of strings or null, "
        "got a string"
    )
    assert _refusal({"user_input": "q", "_synth": {"context_ids": [1]}}) == (
        "f.jsonl: line 3: field '_synth.context_ids': expected a list of strings, "
        "got a list whose item 0 is an integer"
    )
    assert _refusal({"user_input": "q", "_synth": {"source_files": "a"}}) == (
        "f.jsonl: line 3: field '_synth.source_files': expected a list of strings, got a string"
    )
    assert _refusal({"user_input": "q", "_synth": {"metadata": []}}) == (
        "f.jsonl: line 3: field '_synth.metadata': expected an object, got a list of strings"
    )
    assert _refusal({"input": "q", "additional_metadata": {"_synth": {"source_files": "x"}}}) == (
        "f.jsonl: line 3: field 'additional_metadata._synth.source_files': expected a list of "
        "strings, got a string"
    )
    assert _refusal({"input": "q", "additional_metadata": {"_synth": {"context_ids": "x"}}}) == (
        "f.jsonl: line 3: field 'additional_metadata._synth.context_ids': expected a list of "
        "strings, got a string"
    )
    assert _refusal({"input": "q", "source_file": "a", "example_id": "e", "context_ids": "x"}) == (
        "f.jsonl: line 3: field 'context_ids': expected a list of strings, got a string"
    )
    assert _refusal({"input": "q", "additional_metadata": [1]}) == (
        "f.jsonl: line 3: field 'additional_metadata': expected an object, "
        "got a list whose item 0 is an integer"
    )
    assert _refusal({"input": "q", "additional_metadata": {"_synth": 2}}) == (
        "f.jsonl: line 3: field 'additional_metadata._synth': expected an object, got an integer"
    )
    assert _refusal({"user_input": "q", "input": "q"}) == (
        "f.jsonl: line 3: has both 'input' and 'user_input'; keep one"
    )


def test_each_bad_field_is_named_once_in_order() -> None:
    message = _refusal({"input": 3, "context": [1, 2], "other": 1})
    assert message == (
        "f.jsonl: line 3: field 'input': expected a non-empty string, got an integer; "
        "field 'context': expected a list of strings or null, got a list whose item 0 is an "
        "integer; unknown field 'other' (a golden has: input, actual_output, expected_output, "
        "context, retrieval_context, context_ids, source_files, metadata, scenario, "
        "expected_outcome, user_description, turns)"
    )


def test_other_tools_fields_are_kept_in_the_metadata_unless_null() -> None:
    record = {
        "user_input": "q",
        "synthesizer_name": "s",
        "persona_name": None,
        "_synth": {"metadata": {"synthesizer_name": "mine", "k": 1}},
    }
    golden = golden_from_record(record, "w")
    assert golden.metadata == {"synthesizer_name": "mine", "k": 1}  # the golden's own wins
    assert record["_synth"]["metadata"] == {"synthesizer_name": "mine", "k": 1}  # not changed
    judged = golden_from_record(
        {"input": "q", "example_id": "e1", "name": None, "metadata": {"a": 1}}, "w"
    )
    assert judged.metadata == {"a": 1, "example_id": "e1"}
    plain = golden_from_record({"input": "q", "trace_id": "t", "metadata": None}, "w")
    assert plain.metadata == {"trace_id": "t"} and plain.context_ids == []


def test_a_deepeval_source_file_is_the_first_source() -> None:
    golden = golden_from_record({"input": "q", "source_file": "a.md"}, "w")
    assert golden.source_files == ["a.md"] and golden.metadata == {}
    both = golden_from_record(
        {
            "input": "q",
            "source_file": "a.md",
            "additional_metadata": {"_synth": {"source_files": ["b", "c"]}},
        },
        "w",
    )
    assert both.source_files == ["b", "c"]  # synth's own list wins over deepeval's one file


def test_kind_in_words() -> None:
    assert [kind(v) for v in (None, True, " ", "x", 3, 2.5, {}, [], ["a"], ("a", 1), b"x")] == [
        "null",
        "a boolean",
        "an empty string",
        "a string",
        "an integer",
        "a number",
        "an object",
        "a list of strings",
        "a list of strings",
        "a list whose item 1 is an integer",
        "a bytes",
    ]


def test_a_judgeval_row_has_every_field_in_one_order_and_ragas_leaves_nulls_out() -> None:
    golden = Golden(input="q", context=["c"], context_ids=["i"], metadata={"m": 1})
    row = to_judgeval(golden, "w")
    assert row == {
        "input": "q",
        "actual_output": None,
        "expected_output": None,
        "retrieval_context": None,
        "context": ["c"],
        "tools_called": None,
        "expected_tools": None,
        "context_ids": ["i"],
        "source_files": [],
        "metadata": {"m": 1},
    }
    assert list(row) == list(JUDGEVAL_FIELDS)
    assert list(to_judgeval(_full_golden(), "w")) == list(JUDGEVAL_FIELDS)
    assert set(JUDGEVAL_FIELDS) == set(Golden.model_fields)  # a field Golden grows is exported
    assert to_ragas(Golden(input="q"), "w") == {
        "user_input": "q",
        "reference_context_ids": [],
        "synthesizer_name": "synth",
        "_synth": {"source_files": [], "metadata": {}},
    }


def test_a_ragas_row_names_its_synthesizer_persona_and_query_style() -> None:
    metadata = {
        "question_type": "simple",
        "evolutions": ["reasoning", "in_breadth"],
        "persona": "a night-shift technician",
        "query_style": "terse",
        "query_length": "short",
    }
    row = to_ragas(Golden(input="q", metadata=metadata), "w")
    assert row["synthesizer_name"] == "synth:simple:reasoning+in_breadth"
    assert row["persona_name"] == "a night-shift technician"
    assert (row["query_style"], row["query_length"]) == ("terse", "short")
    only = Golden(input="q", metadata={"evolutions": ["reasoning"], "persona": None})
    assert synthesizer_name(only) == "synth:reasoning"
    assert "persona_name" not in to_ragas(only, "w")  # null left out, as ragas writes it
    # read back, the row is the golden: what the row derived from its metadata is not added
    back = golden_from_record(row, "w")
    assert back == Golden(input="q", context_ids=[], metadata=metadata)
    # another tool's row keeps its synthesizer name in the golden's metadata
    theirs = golden_from_record({"user_input": "q", "synthesizer_name": "single_hop"}, "w")
    assert theirs.metadata == {"synthesizer_name": "single_hop"}


def test_a_record_that_is_not_an_object_is_refused_with_what_it_is() -> None:
    with pytest.raises(DatasetError) as caught:
        golden_from_record(["q"], "f.jsonl: line 3")
    assert str(caught.value) == (
        "f.jsonl: line 3: expected an object with a golden's fields, got a list of strings"
    )


def test_a_messages_record_is_a_conversation_unless_it_has_an_input() -> None:
    turns = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    golden = golden_from_record({"messages": turns}, "w")
    assert isinstance(golden, ConversationalGolden)
    assert (golden.input, golden.expected_output) == ("hi", "yo")
    assert [(t.role, t.content, t.metadata) for t in golden.turns] == [
        ("user", "hi", {}),
        ("assistant", "yo", {}),
    ]
    # with an input beside them, the messages are an unknown field of a synth golden
    assert _refusal({"messages": turns, "input": "hi"}).startswith(
        "f.jsonl: line 3: unknown field 'messages' (a golden has: input, "
    )
    # a bad conversation is named as the file spells it
    assert _refusal({"messages": "x"}) == (
        "f.jsonl: line 3: field 'input': missing (every golden needs one); field 'messages': "
        "expected a list of turns (role 'user' or 'assistant', content), got a string"
    )


def test_a_check_of_the_whole_conversation_is_reported_as_its_own_words() -> None:
    turns = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    assert _refusal({"messages": turns}) == (
        "f.jsonl: line 3: turns must alternate user and assistant"
    )


def test_nulls_in_fields_that_are_never_null_mean_not_given() -> None:
    golden = golden_from_record(
        {
            "input": "q",
            "context_ids": None,
            "source_files": None,
            "metadata": None,
            "context": None,
        },
        "w",
    )
    assert golden == Golden(input="q")


def test_conversation_fields_need_turns_unless_they_are_null() -> None:
    assert _refusal({"input": "q", "scenario": "s"}) == (
        "f.jsonl: line 3: field 'scenario' is set but the golden has no turns"
    )
    # the first field that is set is named, not the first one the golden could have
    assert _refusal({"input": "q", "scenario": None, "expected_outcome": "o"}) == (
        "f.jsonl: line 3: field 'expected_outcome' is set but the golden has no turns"
    )
    nulls = {"scenario": None, "expected_outcome": None, "user_description": None, "turns": None}
    golden = golden_from_record({"input": "q", **nulls}, "w")
    assert type(golden) is Golden and golden == Golden(input="q")


def test_a_missing_input_and_a_field_with_no_expectation_of_its_own() -> None:
    assert _refusal({}) == "f.jsonl: line 3: field 'input': missing (every golden needs one)"
    record = {"turns": [{"role": "user", "content": "hi"}], "scenario": 3}
    assert _refusal(record) == (
        "f.jsonl: line 3: field 'scenario': expected a valid value, got an integer"
    )


def test_a_ragas_row_keeps_its_extras_and_takes_synths_own_fields() -> None:
    golden = golden_from_record({"user_input": "q", "synthesizer_name": "s"}, "w")
    assert golden == Golden(input="q", metadata={"synthesizer_name": "s"})
    row = {
        "user_input": "q",
        "response": "a",
        "reference": "r",
        "reference_contexts": ["c"],
        "retrieved_contexts": ["d"],
        "reference_context_ids": ["r1"],
        "_synth": {"context_ids": ["c1"], "source_files": ["f.md"], "metadata": {"k": 1}},
    }
    assert golden_from_record(row, "w") == Golden(
        input="q",
        actual_output="a",
        expected_output="r",
        context=["c"],
        retrieval_context=["d"],
        context_ids=["c1"],  # synth's own ids win over ragas' reference_context_ids
        source_files=["f.md"],
        metadata={"k": 1},
    )


def test_a_deepeval_golden_is_read_with_its_extras_in_the_metadata() -> None:
    record = {
        "input": "q",
        "actual_output": "a",
        "expected_output": "e",
        "context": ["c"],
        "retrieval_context": ["d"],
        "source_file": "a.md",
        "additional_metadata": {"k": 1},
        "comments": "c",
    }
    assert golden_from_record(record, "w") == Golden(
        input="q",
        actual_output="a",
        expected_output="e",
        context=["c"],
        retrieval_context=["d"],
        source_files=["a.md"],
        metadata={"k": 1, "comments": "c"},
    )
    assert _refusal({"input": "q", "source_file": 3}) == (
        "f.jsonl: line 3: field 'source_file': expected a string or null, got an integer"
    )


def test_a_judgeval_example_may_hold_synths_own_fields_as_they_are() -> None:
    record = {
        "input": "q",
        "example_id": "e",
        "source_file": "a",
        "source_files": ["s"],
        "context_ids": ["c"],
        "metadata": {"m": 1},
    }
    golden = golden_from_record(record, "w")
    assert golden == Golden(
        input="q", context_ids=["c"], source_files=["s"], metadata={"m": 1, "example_id": "e"}
    )
    # a bad one is named as it is, not as deepeval's field it took the place of
    assert _refusal({"input": "q", "source_file": "a", "example_id": "e", "source_files": "x"}) == (
        "f.jsonl: line 3: field 'source_files': expected a list of strings, got a string"
    )
    assert _refusal({"input": "q", "example_id": "e", "metadata": [1]}) == (
        "f.jsonl: line 3: field 'metadata': expected an object, got a list whose item 0 is an "
        "integer"
    )


def _deepeval_conversation(turns: object) -> dict:
    return {
        "scenario": "s",
        "expected_outcome": "o",
        "user_description": "u",
        "turns": turns,
        "additional_metadata": {"k": 1},
    }


def test_a_deepeval_conversation_keeps_its_turns_metadata_and_drops_their_nulls() -> None:
    turns = [
        {"role": "user", "content": "hi", "tools_called": None, "additional_metadata": {"a": 1}},
        {"role": "assistant", "content": "yo", "metadata": {"m": 1}, "additional_metadata": {}},
        {"role": "user", "content": "more", "user_id": None},
    ]
    golden = golden_from_record(_deepeval_conversation(turns), "w")
    assert isinstance(golden, ConversationalGolden)
    assert (golden.scenario, golden.expected_outcome, golden.user_description) == ("s", "o", "u")
    assert (golden.input, golden.expected_output, golden.metadata) == ("more", None, {"k": 1})
    assert [(t.role, t.content, t.metadata) for t in golden.turns] == [
        ("user", "hi", {"a": 1}),  # the older additional_metadata
        ("assistant", "yo", {"m": 1}),  # metadata wins over additional_metadata
        ("user", "more", {}),
    ]


def test_bad_deepeval_turns_are_left_for_validation_to_report() -> None:
    assert _refusal(_deepeval_conversation("x")) == (
        "f.jsonl: line 3: field 'input': missing (every golden needs one); field 'turns': "
        "expected a list of turns (role 'user' or 'assistant', content), got a string"
    )
    assert _refusal(_deepeval_conversation(["x", {"role": "user", "content": "hi"}])) == (
        "f.jsonl: line 3: field 'turns': expected a list of turns (role 'user' or 'assistant', "
        "content), got a list whose item 1 is an object"
    )


def test_a_table_has_the_conversation_columns_when_one_golden_is_a_conversation() -> None:
    single = Golden(input="q")
    talk = ConversationalGolden(input="hi", turns=[Turn(role="user", content="hi")])
    golden_columns = (
        "input",
        "actual_output",
        "expected_output",
        "context",
        "retrieval_context",
        "context_ids",
        "source_files",
        "metadata",
    )
    assert columns_of([single]) == golden_columns
    assert columns_of([]) == golden_columns
    assert columns_of([single, talk]) == (
        *golden_columns,
        "scenario",
        "expected_outcome",
        "user_description",
        "turns",
    )


def _full_golden() -> Golden:
    return Golden(
        input="q",
        actual_output="a",
        expected_output="e",
        context=["c"],
        retrieval_context=["d"],
        context_ids=["i1", "i2"],
        source_files=["a.md", "b.md"],
        metadata={"m": 1},
    )


def test_a_deepeval_golden_has_the_first_source_and_synths_fields_apart() -> None:
    synth = {"context_ids": ["i1", "i2"], "source_files": ["a.md", "b.md"]}
    expected = {
        "input": "q",
        "actual_output": "a",
        "expected_output": "e",
        "context": ["c"],
        "retrieval_context": ["d"],
        "source_file": "a.md",
        "additional_metadata": {"m": 1, "_synth": synth},
    }
    assert to_deepeval(_full_golden(), "w") == expected
    del expected["source_file"]
    assert to_judgeval_legacy(_full_golden(), "w") == expected
    bare = to_deepeval(Golden(input="q"), "w")
    assert bare["source_file"] is None
    assert bare["additional_metadata"] == {"_synth": {"context_ids": [], "source_files": []}}


def test_the_synth_metadata_key_is_reserved_in_exports() -> None:
    golden = Golden(input="q", metadata={"_synth": 1})
    for export in (to_deepeval, to_judgeval_legacy):
        with pytest.raises(DatasetError) as caught:
            export(golden, "golden 2")
        assert str(caught.value) == (
            "golden 2: metadata key '_synth' is reserved for synth's own fields in exports"
        )


def test_a_full_ragas_row_and_synth_record() -> None:
    assert to_ragas(_full_golden(), "w") == {
        "user_input": "q",
        "response": "a",
        "reference": "e",
        "reference_contexts": ["c"],
        "retrieved_contexts": ["d"],
        "reference_context_ids": ["i1", "i2"],
        "synthesizer_name": "synth",
        "_synth": {"source_files": ["a.md", "b.md"], "metadata": {"m": 1}},
    }
    assert to_synth(_full_golden()) == {
        "input": "q",
        "actual_output": "a",
        "expected_output": "e",
        "context": ["c"],
        "retrieval_context": ["d"],
        "context_ids": ["i1", "i2"],
        "source_files": ["a.md", "b.md"],
        "metadata": {"m": 1},
    }


def test_bad_deepeval_metadata_is_named_additional_metadata() -> None:
    # a dict given in Python (Dataset([...])) may have keys that are not strings
    message = _refusal({"input": "q", "additional_metadata": {1: "a"}})
    assert message == (
        "f.jsonl: line 3: field 'additional_metadata': expected an object, "
        "got an object whose key 1 is not a string"
    )
