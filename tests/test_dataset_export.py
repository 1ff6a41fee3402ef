"""Exports for deepeval, ragas and judgeval use their field names, and load back unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synth import ConfigError, Dataset, DatasetError, Golden

# the field names of each tool's record, from their models (deepeval.dataset.golden.Golden,
# ragas.dataset_schema.SingleTurnSample, judgeval.data.Example)
DEEPEVAL_GOLDEN = {
    "input", "actual_output", "expected_output", "context", "retrieval_context",
    "additional_metadata", "comments", "tools_called", "expected_tools", "source_file", "name",
}  # fmt: skip
RAGAS_SAMPLE = {
    "user_input", "retrieved_contexts", "reference_contexts", "retrieved_context_ids",
    "reference_context_ids", "response", "multi_responses", "reference", "rubrics",
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
    for row in rows:
        assert set(row) - {"_synth"} <= RAGAS_SAMPLE
    assert rows[0]["user_input"] == goldens()[0].input
    assert rows[0]["reference"] == "P-4, from 22:00 to 06:00."
    assert rows[0]["reference_contexts"] == goldens()[0].context
    assert rows[0]["reference_context_ids"] == ["manual.pdf:3", "manual.pdf:4"]
    assert "response" not in rows[0] and "retrieved_contexts" not in rows[0]  # nulls left out
    assert rows[1]["response"] == "" and rows[1]["reference_contexts"] == []
    assert rows[1]["retrieved_contexts"] == ["r1"] and "reference_context_ids" not in rows[1]
    assert rows[0]["_synth"]["metadata"] == goldens()[0].metadata


def test_judgeval_export_is_an_examples_object() -> None:
    path = dataset().export("out.json", format="judgeval")
    document = _read(str(path))
    assert isinstance(document, dict) and list(document) == ["examples"]
    for example in document["examples"]:
        assert set(example) <= JUDGEVAL_EXAMPLE
    assert document["examples"][0]["additional_metadata"]["seed"] == 7
    assert document["examples"][1]["actual_output"] == ""


@pytest.mark.parametrize(
    ("tool", "name"),
    [
        ("deepeval", "out.json"),
        ("deepeval", "out.jsonl"),
        ("ragas", "out.jsonl"),
        ("ragas", "out.json"),
        ("judgeval", "out.json"),
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


@pytest.mark.parametrize("tool", ["deepeval", "ragas", "judgeval"])
@settings(max_examples=30, deadline=None)
@given(items=st.lists(_goldens, max_size=3))
def test_any_goldens_survive_every_export(tool: str, items: list[Golden]) -> None:
    suffix = ".jsonl" if tool == "ragas" else ".json"
    assert Dataset.load(Dataset(items).export(f"h{suffix}", format=tool)).goldens == items  # type: ignore[arg-type]


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
        ConfigError, match=r"unknown export format 'promptfoo'; choose one of: deepeval"
    ):
        dataset().export("out.json", format="promptfoo")  # type: ignore[arg-type]
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
