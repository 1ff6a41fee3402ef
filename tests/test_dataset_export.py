"""Exports for deepeval, ragas and judgeval use their field names, and load back unchanged."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synth import ConfigError, Dataset, DatasetError, Golden
from synth.dataset._public import public_goldens
from synth.dataset._records import JUDGEVAL_FIELDS

# the field names of each tool's record, from their models (deepeval.dataset.golden.Golden,
# ragas.dataset_schema.SingleTurnSample, judgeval.data.Example)
DEEPEVAL_GOLDEN = {
    "input", "actual_output", "expected_output", "context", "retrieval_context",
    "additional_metadata", "comments", "tools_called", "expected_tools", "source_file", "name",
}  # fmt: skip
RAGAS_SAMPLE = {
    "user_input", "retrieved_contexts", "reference_contexts", "retrieved_context_ids",
    "reference_context_ids", "response", "multi_responses", "reference", "rubrics",
    "persona_name", "query_style", "query_length",
}  # fmt: skip
JUDGEVAL_EXAMPLE = {
    "input", "actual_output", "expected_output", "context", "retrieval_context",
    "additional_metadata", "tools_called", "expected_tools", "name", "example_id",
    "example_index", "timestamp", "trace_id",
}  # fmt: skip


def goldens() -> list[Golden]:
    return [
        Golden(
            input='Which pump, "P-3" or P-4, runs at night?\nAnswer briefly.',
            actual_output=None,
            expected_output="P-4, from 22:00 to 06:00.",
            context=["Pump P-4 runs nightly, 22:00\u201306:00.", "P-3 is on standby."],
            retrieval_context=None,
            context_ids=["manual.pdf:3", "manual.pdf:4"],
            source_files=["manuals/manual.pdf", "notes/\u00e9t\u00e9.md"],
            metadata={"evolutions": ["reasoning"], "quality": {"critic": 0.75}, "seed": 7},
        ),
        Golden(input="Bare question?", actual_output="", context=[], retrieval_context=["r1"]),
    ]


def dataset() -> Dataset:
    return Dataset(goldens(), {"seed": 7})


def _read(path: str) -> object:
    text = Path(path).read_text(encoding="utf-8")
    if path.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines()]
    return json.loads(text)


def test_deepeval_export_is_a_list_of_deepeval_goldens() -> None:
    path = dataset().export("out.json", format="deepeval")
    records = _read(str(path))
    assert isinstance(records, list) and len(records) == 2
    first = records[0]
    assert set(first) <= DEEPEVAL_GOLDEN
    assert first["input"] == goldens()[0].input
    assert first["expected_output"] == "P-4, from 22:00 to 06:00."
    assert first["context"] == goldens()[0].context
    assert first["source_file"] == "manuals/manual.pdf"
    # synth's metadata is deepeval's additional_metadata; the rest under _synth
    assert first["additional_metadata"]["quality"] == {"critic": 0.75}
    assert first["additional_metadata"]["_synth"] == {
        "context_ids": ["manual.pdf:3", "manual.pdf:4"],
        "source_files": ["manuals/manual.pdf", "notes/\u00e9t\u00e9.md"],
    }
    assert records[1]["source_file"] is None and records[1]["retrieval_context"] == ["r1"]


def test_ragas_export_is_single_turn_sample_rows() -> None:
    path = dataset().export("out.jsonl", format="ragas")
    rows = _read(str(path))
    assert isinstance(rows, list) and len(rows) == 2
    for row in rows:  # a testset row: a sample, its synthesizer's name (Testset.from_list)
        assert set(row) - {"_synth", "synthesizer_name"} <= RAGAS_SAMPLE
    assert [row["synthesizer_name"] for row in rows] == ["synth:reasoning", "synth"]
    assert rows[0]["user_input"] == goldens()[0].input
    assert rows[0]["reference"] == "P-4, from 22:00 to 06:00."
    assert rows[0]["reference_contexts"] == goldens()[0].context
    assert rows[0]["reference_context_ids"] == ["manual.pdf:3", "manual.pdf:4"]
    assert "response" not in rows[0] and "retrieved_contexts" not in rows[0]  # nulls left out
    assert rows[1]["response"] == "" and rows[1]["reference_contexts"] == []
    assert rows[1]["retrieved_contexts"] == ["r1"]
    assert rows[1]["reference_context_ids"] == []  # made from no chunk: [], not left out
    assert rows[0]["_synth"]["metadata"] == goldens()[0].metadata


def test_judgeval_export_is_a_list_of_example_properties_under_synths_names() -> None:
    path = dataset().export("out.json", format="judgeval")
    records = _read(str(path))
    assert isinstance(records, list) and len(records) == 2
    first, second = records
    assert first == goldens()[0].model_dump()
    # one schema for all examples: every field, in one order, null where the golden has none
    assert list(first) == list(second) == list(JUDGEVAL_FIELDS)
    assert first["retrieval_context"] is None and first["actual_output"] is None
    assert second["actual_output"] == "" and second["context"] == [] and second["metadata"] == {}
    assert second["context_ids"] == [] and second["source_files"] == []


def test_judgeval_legacy_export_is_an_examples_object() -> None:
    path = dataset().export("out.json", format="judgeval-legacy")
    document = _read(str(path))
    assert isinstance(document, dict) and list(document) == ["examples"]
    for example in document["examples"]:
        assert set(example) <= JUDGEVAL_EXAMPLE
    assert document["examples"][0]["additional_metadata"]["seed"] == 7
    assert document["examples"][1]["actual_output"] == ""


def test_reads_judgeval_1x_save_as_json() -> None:
    # judgeval 1.x Dataset.save_as("json"): example_id, created_at and name beside the properties
    example = {
        "example_id": "e-1", "created_at": "2026-01-01T00:00:00", "name": None,
        "input": "q", "context": ["c"], "context_ids": ["i"], "source_files": ["a.md"],
        "metadata": {"team": "x"},
    }  # fmt: skip
    Path("judgeval.json").write_text(json.dumps({"examples": [example]}))
    (golden,) = Dataset.load("judgeval.json")
    assert golden == Golden(
        input="q",
        context=["c"],
        context_ids=["i"],
        source_files=["a.md"],
        metadata={"team": "x", "example_id": "e-1", "created_at": "2026-01-01T00:00:00"},
    )


@pytest.mark.parametrize(
    ("tool", "name"),
    [
        ("deepeval", "out.json"),
        ("deepeval", "out.jsonl"),
        ("ragas", "out.jsonl"),
        ("ragas", "out.json"),
        ("judgeval", "out.json"),
        ("judgeval-legacy", "out.json"),
    ],
)
def test_every_export_loads_back_with_goldens_unchanged(tool: str, name: str) -> None:
    loaded = Dataset.load(dataset().export(name, format=tool))  # type: ignore[arg-type]
    assert loaded.goldens == goldens()
    assert loaded.metadata == {}  # dataset metadata is not part of any tool's format


_keys = st.text(max_size=8).filter(lambda key: key != "_synth")
_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_lists = st.lists(st.text(max_size=20), max_size=3)
_goldens = st.builds(
    Golden,
    input=st.text(min_size=1, max_size=30).filter(str.strip),
    actual_output=st.none() | st.text(max_size=20),
    expected_output=st.none() | st.text(max_size=20),
    context=st.none() | _lists,
    retrieval_context=st.none() | _lists,
    context_ids=_lists,
    source_files=_lists,
    metadata=st.dictionaries(_keys, _json, max_size=3),
)


@pytest.mark.parametrize("tool", ["deepeval", "ragas", "judgeval", "judgeval-legacy"])
@settings(max_examples=30, deadline=None)
@given(items=st.lists(_goldens, max_size=3))
def test_any_goldens_survive_every_export(tool: str, items: list[Golden]) -> None:
    suffix = ".jsonl" if tool == "ragas" else ".json"
    # what an export holds is the goldens' shareable form (no base URL, no local path)
    exported = Dataset(items).export(f"h{suffix}", format=tool)  # type: ignore[arg-type]
    assert Dataset.load(exported).goldens == public_goldens(items)


# ---- deepeval's CSV -------------------------------------------------------------------------------
def csv_goldens() -> list[Golden]:
    """Goldens whose every cell deepeval's CSV loader reads back as written."""
    return [
        Golden(
            input='Which pump, "P-3" | P-4, runs?\nSay,  briefly.',
            expected_output="P-4 | nightly",
            context=['A | B, "quoted"\nline two', "second\u00e9"],
            context_ids=["c1", "c2"],
            source_files=["a.md", "b.md"],
            metadata={"evolutions": ["reasoning"], "score": 0.5},
        ),
        Golden(input="Bare?", context=[]),
    ]


def test_deepeval_csv_splits_lists_on_the_unit_separator_and_loads_back() -> None:
    path = Dataset(csv_goldens()).export("out.csv", format="deepeval-csv")
    import csv

    with open(path, newline="", encoding="utf-8") as handle:
        header, first, second = list(csv.reader(handle))
    assert header == [
        "input", "actual_output", "expected_output", "context", "source_file",
        "additional_metadata",
    ]  # fmt: skip
    assert first[3] == 'A | B, "quoted"\nline two\x1fsecond\u00e9'
    assert first[4] == "a.md" and second[3] == "" and second[4] == ""
    assert json.loads(first[5])["_synth"] == {
        "context_ids": ["c1", "c2"],
        "source_files": ["a.md", "b.md"],
    }
    assert Dataset.load(path).goldens == csv_goldens()


@pytest.mark.parametrize(
    ("golden", "field", "read"),
    [
        (Golden(input="NA", context=["c"]), "input", "None"),
        (Golden(input="q", actual_output="", context=["c"]), "actual_output", "None"),
        (Golden(input="q", expected_output="42", context=["c"]), "expected_output", "42.0"),
        (Golden(input="q", context=["null"]), "context", "[]"),
    ],
)
def test_deepeval_csv_refuses_a_cell_deepeval_would_read_differently(
    golden: Golden, field: str, read: str
) -> None:
    # pandas reads a column of numbers and empty cells as floats
    first = Golden(input="fine", context=["c"])
    with pytest.raises(
        DatasetError,
        match=rf"^cannot export out\.csv as deepeval CSV: index 1: field '{field}' would be "
        rf"read by deepeval as {re.escape(read)}, not .*; export as deepeval JSON",
    ):
        Dataset([first, golden]).export("out.csv", format="deepeval-csv")
    assert not Path("out.csv").exists()


def test_deepeval_csv_refuses_a_null_list_beside_lists_and_the_separator_in_a_text() -> None:
    mixed = Dataset([Golden(input="a", context=["c"]), Golden(input="b")])
    with pytest.raises(DatasetError, match=r"index 1: field 'context' is null but other goldens"):
        mixed.export("out.csv", format="deepeval-csv")
    unit = Dataset([Golden(input="a", retrieval_context=["x\x1fy"])])
    with pytest.raises(DatasetError, match=r"index 0: field 'retrieval_context' item 0 holds"):
        unit.export("out.csv", format="deepeval-csv")
    # no golden has a retrieval context: the column is left out, so deepeval reads None
    Dataset([Golden(input="a", context=["c"])]).export("out.csv", format="deepeval-csv")
    assert "retrieval_context" not in Path("out.csv").read_text().splitlines()[0]


def test_reads_a_deepeval_csv_split_on_its_default_separator() -> None:
    Path("mine.csv").write_text(
        'input,context,source_file,additional_metadata\nq,"a|b",f.txt,"{""team"": ""x""}"\nq2,,,\n'
    )
    assert Dataset.load("mine.csv").goldens == [
        Golden(input="q", context=["a", "b"], source_files=["f.txt"], metadata={"team": "x"}),
        Golden(input="q2", context=[]),
    ]


def test_deepeval_csv_refusal_cuts_long_values_to_sixty_characters() -> None:
    long = "1" * 70  # pandas reads it as a number
    with pytest.raises(DatasetError) as info:
        Dataset([Golden(input="fine"), Golden(input="q", expected_output=long)]).export(
            "out.csv", format="deepeval-csv"
        )
    shown = repr(long)[:57] + "..."
    assert str(info.value).endswith(
        f"field 'expected_output' would be read by deepeval as {long[:57]}..., not {shown}; "
        "export as deepeval JSON (--format deepeval)"
    )


def test_a_malformed_deepeval_csv_names_the_row_and_field() -> None:
    def error(text: str) -> str:
        Path("d.csv").write_text(text, encoding="utf-8")
        with pytest.raises(DatasetError) as info:
            Dataset.load("d.csv")
        return str(info.value)

    assert error("context,source_file\n[],x\n") == "d.csv: row 1: missing column 'input'"
    assert error("input,source_file\nq,x,extra\n") == (
        "d.csv: row 2: has 3 cells but the header has 2 columns"
    )
    assert error("input,additional_metadata\nq,{bad\n") == (
        "d.csv: row 2: field 'additional_metadata': expected a JSON object in the cell, "
        "got invalid JSON (Expecting property name enclosed in double quotes)"
    )
    assert error("input,additional_metadata\nq,[1]\n") == (
        "d.csv: row 2: field 'additional_metadata': expected a JSON object, "
        "got a list whose item 0 is an integer"
    )
    # blank rows are skipped but counted; a row without its input is refused
    assert error("input,source_file\n,\n\n,x\n") == (
        "d.csv: row 4: field 'input': missing (every golden needs one)"
    )
    Path("d.csv").write_text(" input , source_file \nq,\n", encoding="utf-8")
    assert Dataset.load("d.csv").goldens == [Golden(input="q")]


@pytest.mark.parametrize(
    ("tool", "name", "field"),
    [
        ("deepeval", "out.json", "additional_metadata"),
        ("deepeval-csv", "out.csv", "additional_metadata"),
        ("judgeval", "out.json", "metadata"),
        ("judgeval-legacy", "out.json", "additional_metadata"),
        ("ragas", "out.json", "_synth"),
        ("ragas", "out.jsonl", "_synth"),
    ],
)
def test_an_export_of_a_value_json_cannot_hold_names_the_golden_and_field(
    tool: str, name: str, field: str
) -> None:
    # deepeval-csv let json's TypeError through before it was checked like the others
    bad = Dataset([Golden(input="ok"), Golden(input="q", metadata={"scores": {1}})])
    with pytest.raises(DatasetError) as info:
        bad.export(name, format=tool)  # type: ignore[arg-type]
    assert str(info.value) == (
        f"cannot save {name}: index 1: field '{field}' cannot be written as JSON (Object of "
        "type set is not JSON serializable); it may hold only strings, numbers (not NaN or "
        "infinity), booleans, null, lists and objects"
    )
    assert not Path(name).exists()


# ---- files written by the tools themselves -------------------------------------------------------
def test_reads_deepeval_save_as_json() -> None:
    # deepeval's EvaluationDataset.save_as("json") writes these keys
    records = [
        {
            "input": "q1",
            "actual_output": None,
            "expected_output": "a1",
            "context": ["c"],
            "source_file": "f.txt",
        },
        {
            "input": "q2",
            "actual_output": None,
            "expected_output": None,
            "context": None,
            "source_file": None,
        },
    ]
    Path("deepeval.json").write_text(json.dumps(records))
    loaded = Dataset.load("deepeval.json")
    assert loaded[0] == Golden(
        input="q1", expected_output="a1", context=["c"], source_files=["f.txt"]
    )
    assert loaded[1] == Golden(input="q2")


def test_reads_judgeval_save_as_json_keeping_its_extra_fields_in_metadata() -> None:
    example = {
        "input": "q", "actual_output": "a", "expected_output": None, "context": None,
        "retrieval_context": ["r"], "additional_metadata": {"team": "x"}, "tools_called": None,
        "expected_tools": None, "name": None, "example_id": "e-1", "example_index": None,
        "timestamp": "20250101_120000", "trace_id": None,
    }  # fmt: skip
    Path("judgeval.json").write_text(json.dumps({"examples": [example]}))
    (golden,) = Dataset.load("judgeval.json")
    assert golden == Golden(
        input="q",
        actual_output="a",
        retrieval_context=["r"],
        metadata={"team": "x", "example_id": "e-1", "timestamp": "20250101_120000"},
    )


def test_reads_ragas_testset_jsonl() -> None:
    rows = [
        {
            "user_input": "q",
            "reference_contexts": ["c1"],
            "reference": "a",
            "synthesizer_name": "single_hop",
        },
        {
            "user_input": "q2",
            "response": "r",
            "retrieved_contexts": ["x"],
            "reference_context_ids": None,
        },
    ]
    Path("ragas.jsonl").write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    loaded = Dataset.load("ragas.jsonl")
    assert loaded[0] == Golden(
        input="q", expected_output="a", context=["c1"], metadata={"synthesizer_name": "single_hop"}
    )
    assert loaded[1] == Golden(input="q2", actual_output="r", retrieval_context=["x"])


def test_reads_ragas_columns_from_pandas() -> None:
    import pandas as pd

    frame = pd.DataFrame({"user_input": ["q"], "reference": ["a"], "reference_contexts": [["c"]]})
    assert Dataset.from_pandas(frame)[0] == Golden(input="q", expected_output="a", context=["c"])


def test_errors_in_tool_files_use_the_tools_field_names() -> None:
    Path("r.jsonl").write_text(json.dumps({"user_input": "q", "reference_contexts": "c"}) + "\n")
    with pytest.raises(
        DatasetError, match=r"^r\.jsonl: line 1: field 'reference_contexts': expected a list"
    ):
        Dataset.load("r.jsonl")
    Path("both.jsonl").write_text(json.dumps({"user_input": "q", "input": "q"}) + "\n")
    with pytest.raises(DatasetError, match=r"both 'input' and 'user_input'"):
        Dataset.load("both.jsonl")
    Path("d.json").write_text(json.dumps([{"input": "q", "additional_metadata": "x"}]))
    with pytest.raises(
        DatasetError, match=r"^d\.json: index 0: field 'additional_metadata': expected an object"
    ):
        Dataset.load("d.json")
    Path("s.json").write_text(json.dumps([{"input": "q", "source_file": ["a"]}]))
    with pytest.raises(
        DatasetError, match=r"field 'source_file': expected a string or null, got a list"
    ):
        Dataset.load("s.json")
    record = {"input": "q", "additional_metadata": {"_synth": {"context_ids": "x"}}}
    Path("x.json").write_text(json.dumps({"examples": [record]}))
    with pytest.raises(
        DatasetError,
        match=r"^x\.json: examples index 0: field 'additional_metadata\._synth\.context_ids'",
    ):
        Dataset.load("x.json")


# ---- refusals ------------------------------------------------------------------------------------
def test_export_refusals() -> None:
    with pytest.raises(
        ConfigError, match=r"unknown export format 'braintrust'; choose one of: deepeval"
    ):
        dataset().export("out.json", format="braintrust")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"a judgeval export is written as \.json, not '\.jsonl'"):
        dataset().export("out.jsonl", format="judgeval")
    with pytest.raises(
        ConfigError, match=r"a ragas export is written as \.jsonl or \.json, not '\.csv'"
    ):
        dataset().export("out.csv", format="ragas")
    reserved = Dataset([Golden(input="ok"), Golden(input="q", metadata={"_synth": 1})])
    with pytest.raises(
        DatasetError, match=r"out\.json: index 1: metadata key '_synth' is reserved"
    ):
        reserved.export("out.json", format="deepeval")
    assert not Path("out.json").exists()


def test_export_suffixes_are_read_whatever_their_case() -> None:
    # .JSONL is one record a line, .JSON one list, as in lower case
    path = dataset().export("OUT.JSONL", format="ragas")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["user_input"] for line in lines] == [g.input for g in goldens()]
    path = dataset().export("OUT.JSON", format="deepeval")
    assert [record["input"] for record in json.loads(path.read_text(encoding="utf-8"))] == [
        g.input for g in goldens()
    ]


def test_an_unknown_export_format_lists_every_known_one() -> None:
    with pytest.raises(ConfigError) as info:
        dataset().export("out.json", format="braintrust")  # type: ignore[arg-type]
    assert str(info.value) == (
        "unknown export format 'braintrust'; choose one of: deepeval, deepeval-csv, judgeval, "
        "judgeval-legacy, ragas, messages, promptfoo, langsmith, langfuse, phoenix"
    )
