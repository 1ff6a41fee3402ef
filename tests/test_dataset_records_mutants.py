"""Goldens from other tools' records (synth/dataset/_records.py): what mutation testing found
unchecked, read back exactly. A bad field is named as the file spells it."""

from __future__ import annotations

import pytest

from synth import DatasetError, Golden
from synth.dataset._records import golden_from_record, kind, to_judgeval, to_ragas


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


def test_judgeval_and_ragas_rows_leave_nulls_out() -> None:
    golden = Golden(input="q", context=["c"], context_ids=["i"], metadata={"m": 1})
    assert to_judgeval(golden, "w") == {
        "input": "q",
        "context": ["c"],
        "context_ids": ["i"],
        "source_files": [],
        "metadata": {"m": 1},
    }
    assert to_ragas(Golden(input="q"), "w") == {
        "user_input": "q",
        "reference_context_ids": [],
        "_synth": {"source_files": [], "metadata": {}},
    }
