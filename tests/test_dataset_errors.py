"""Malformed dataset files fail with a DatasetError naming the file, where in it, and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synth import ConfigError, Dataset, DatasetError, Golden

GOOD = {"input": "What is a golden?", "context": ["A golden is an example."]}


def _jsonl(name: str, *lines: str) -> Path:
    path = Path(name)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _error(path: str | Path) -> str:
    with pytest.raises(DatasetError) as info:
        Dataset.load(path)
    return str(info.value)


# ---- .jsonl --------------------------------------------------------------------------------------
def test_jsonl_wrong_type_names_file_line_and_field() -> None:
    _jsonl(
        "goldens.jsonl", json.dumps(GOOD), "", json.dumps({"input": "q", "context": "one string"})
    )
    assert _error("goldens.jsonl") == (
        "goldens.jsonl: line 3: field 'context': expected a list of strings or null, got a string"
    )


def test_jsonl_bad_json_names_the_line_and_column() -> None:
    _jsonl("goldens.jsonl", json.dumps(GOOD), json.dumps(GOOD), '{"input": "q", "context": [}')
    message = _error("goldens.jsonl")
    assert message.startswith("goldens.jsonl: line 3: invalid JSON: ")
    assert "(column 28)" in message


def test_jsonl_missing_input() -> None:
    _jsonl("g.jsonl", json.dumps({"expected_output": "no question"}))
    assert _error("g.jsonl") == "g.jsonl: line 1: field 'input': missing (every golden needs one)"


def test_jsonl_blank_input_and_item_type_and_unknown_field() -> None:
    _jsonl("a.jsonl", json.dumps({"input": "   "}))
    assert (
        _error("a.jsonl")
        == "a.jsonl: line 1: field 'input': expected a non-empty string, got an empty string"
    )
    _jsonl("b.jsonl", json.dumps({"input": "q", "context_ids": ["a", 7]}))
    assert _error("b.jsonl") == (
        "b.jsonl: line 1: field 'context_ids': expected a list of strings, got a list whose item 1 is an integer"
    )
    _jsonl("c.jsonl", json.dumps({"input": "q", "contxt": ["typo"]}))
    assert "c.jsonl: line 1: unknown field 'contxt' (a golden has: input, actual_output" in _error(
        "c.jsonl"
    )
    _jsonl("d.jsonl", "[1, 2]")
    assert _error("d.jsonl") == (
        "d.jsonl: line 1: expected an object with a golden's fields, got a list whose item 0 is an integer"
    )


def test_jsonl_reports_every_bad_field_of_the_golden() -> None:
    _jsonl("g.jsonl", json.dumps({"input": 3, "metadata": [], "actual_output": 1.5}))
    message = _error("g.jsonl")
    assert message.startswith("g.jsonl: line 1: ")
    assert "field 'input': expected a non-empty string, got an integer" in message
    assert "field 'actual_output': expected a string or null, got a number" in message
    assert "field 'metadata': expected an object, got a list" in message


def test_jsonl_bad_sidecar_names_the_sidecar() -> None:
    _jsonl("g.jsonl", json.dumps(GOOD))
    Path("g.jsonl.meta.json").write_text('{"format": "synth-dataset-metadata",\n "metadata": [1]}')
    assert _error("g.jsonl") == "g.jsonl.meta.json: field 'metadata': expected an object"
    Path("g.jsonl.meta.json").write_text('{"format": "synth-dataset-metadata",\n "metadata": {]}')
    assert _error("g.jsonl").startswith("g.jsonl.meta.json: line 2, column 15: invalid JSON")


def test_a_sidecar_that_is_not_synths_or_of_a_newer_version() -> None:
    _jsonl("g.jsonl", json.dumps(GOOD))
    for text in ('{"metadata": {}}', "[]"):
        Path("g.jsonl.meta.json").write_text(text)
        assert _error("g.jsonl") == (
            'g.jsonl.meta.json: not a synth metadata sidecar (no "format": "synth-dataset-metadata")'
        )
    Path("g.jsonl.meta.json").write_text('{"format": "synth-dataset-metadata", "version": "1"}')
    assert _error("g.jsonl") == (
        "g.jsonl.meta.json: field 'version': '1' is not a format version this synth reads "
        "(up to 1); upgrade synth"
    )
    Path("g.jsonl.meta.json").write_text('{"format": "synth-dataset-metadata", "version": 1}')
    assert Dataset.load("g.jsonl").metadata == {}  # no metadata field: empty


def test_metadata_json_cannot_hold_is_refused_in_full() -> None:
    with pytest.raises(DatasetError) as info:
        Dataset([Golden(input="q")], {"when": object()}).save("m.jsonl")
    assert str(info.value) == (
        "cannot save m.jsonl: the dataset's metadata cannot be written as JSON "
        "(Object of type object is not JSON serializable); it may hold only strings, numbers "
        "(not NaN or infinity), booleans, null, lists and objects"
    )
    assert not Path("m.jsonl").exists()


# ---- .json ---------------------------------------------------------------------------------------
def test_json_syntax_error_names_line_and_column() -> None:
    Path("g.json").write_text('{\n  "goldens": [\n    {"input": "q",}\n  ]\n}\n')
    assert _error("g.json") == (
        "g.json: line 3, column 19: invalid JSON: Expecting property name enclosed in double quotes"
    )


def test_json_wrong_type_names_the_index_and_field() -> None:
    document = {
        "metadata": {},
        "goldens": [GOOD, GOOD, {"input": "q", "retrieval_context": [None]}],
    }
    Path("g.json").write_text(json.dumps(document))
    assert _error("g.json") == (
        "g.json: index 2: field 'retrieval_context': expected a list of strings or null, "
        "got a list whose item 0 is null"
    )


def test_json_document_shape_errors() -> None:
    Path("a.json").write_text('{"goldens": {"input": "q"}}')
    assert _error("a.json") == "a.json: field 'goldens': expected a list, got an object"
    Path("b.json").write_text('{"goldens": [], "metadata": "x"}')
    assert _error("b.json") == "b.json: field 'metadata': expected an object, got a string"
    Path("c.json").write_text('{"rows": []}')
    assert "c.json: expected a synth dataset" in _error("c.json")
    Path("d.json").write_text('"text"')
    assert _error("d.json") == "d.json: expected an object or a list of goldens, got a string"
    Path("e.json").write_text('{"version": 99, "goldens": []}')
    assert "e.json: field 'version': 99 is not a format version" in _error("e.json")


def test_json_object_of_unknown_shape_lists_its_first_six_keys() -> None:
    Path("a.json").write_text(json.dumps({key: 1 for key in "abcdefg"}))
    assert _error("a.json") == (
        'a.json: expected a synth dataset ({"goldens": [...]}), a judgeval file '
        '({"examples": [...]}) or a list of goldens; found an object with keys '
        "'a', 'b', 'c', 'd', 'e', 'f'"
    )
    Path("b.json").write_text("{}")
    assert _error("b.json").endswith("; found an object with keys none")
    Path("c.json").write_text('{"examples": 5}')
    assert _error("c.json") == "c.json: field 'examples': expected a list, got an integer"


def test_json_dataset_with_null_or_no_metadata_has_empty_metadata() -> None:
    Path("a.json").write_text('{"goldens": [{"input": "q"}], "metadata": null}')
    assert Dataset.load("a.json") == Dataset([Golden(input="q")])
    Path("b.json").write_text('{"goldens": [{"input": "q"}]}')
    assert Dataset.load("b.json") == Dataset([Golden(input="q")])


def test_loading_a_sidecar_points_at_its_dataset() -> None:
    Dataset([Golden(input="q")]).save("g.jsonl")
    assert (
        _error("g.jsonl.meta.json")
        == "g.jsonl.meta.json: is the metadata sidecar of 'g.jsonl'; load that file"
    )


def test_missing_file_folder_and_non_utf8() -> None:
    assert _error("nope.json") == "nope.json: no such file"
    Path("folder.jsonl").mkdir()
    assert _error("folder.jsonl") == "folder.jsonl: is a folder, not a dataset file"
    Path("latin.csv").write_bytes("input\nCaf\xe9\n".encode("latin-1"))
    assert _error("latin.csv") == "latin.csv: not UTF-8 text (bad byte at offset 9)"


def test_a_path_through_a_file_cannot_be_read_and_says_why() -> None:
    Path("notes.txt").write_text("x")
    assert _error("notes.txt/g.json") == "notes.txt/g.json: cannot read: Not a directory"


# ---- .csv ----------------------------------------------------------------------------------------
def test_csv_bad_cell_names_row_and_field() -> None:
    Path("g.csv").write_text(
        'input,context,metadata\nq1,"[""a""]",{}\nq2,not json,{}\n',
        encoding="utf-8",
    )
    assert _error("g.csv") == (
        "g.csv: row 3: field 'context': expected a JSON list in the cell, got invalid JSON (Expecting value)"
    )


def test_csv_wrong_type_in_cell_and_missing_input() -> None:
    Path("a.csv").write_text('input,metadata\nq,"[1, 2]"\n', encoding="utf-8")
    assert (
        _error("a.csv")
        == "a.csv: row 2: field 'metadata': expected an object, got a list whose item 0 is an integer"
    )
    Path("b.csv").write_text('input,context\nq,"[""ok""]"\n,"[]"\n', encoding="utf-8")
    assert _error("b.csv") == "b.csv: row 3: field 'input': missing (every golden needs one)"


def test_csv_header_problems() -> None:
    Path("a.csv").write_text("question,answer\nq,a\n", encoding="utf-8")
    assert _error("a.csv").startswith(
        "a.csv: row 1: unknown column 'question' (a golden has: input,"
    )
    Path("b.csv").write_text("context\n[]\n", encoding="utf-8")
    assert _error("b.csv") == "b.csv: row 1: missing column 'input'"
    Path("c.csv").write_text("", encoding="utf-8")
    assert _error("c.csv").startswith("c.csv: empty file (expected a header row: input,")
    Path("d.csv").write_text("input,input\nq,q\n", encoding="utf-8")
    assert _error("d.csv") == "d.csv: row 1: a column appears twice in the header"


def test_csv_row_with_too_many_cells_counts_rows_not_lines() -> None:
    Path("g.csv").write_text(
        'input,expected_output\n"multi\nline",a\nq,a,extra\n', encoding="utf-8"
    )
    assert _error("g.csv") == "g.csv: row 3: has 3 cells but the header has 2 columns"


def test_csv_quoted_cell_never_closed_is_an_error_not_a_swallowed_file() -> None:
    Path("g.csv").write_text(
        'input,context\n"multi\nline",[]\n"never closed,[]\nnext question,[]\n',
        encoding="utf-8",
    )
    assert _error("g.csv") == (
        "g.csv: row 3 (line 4): unreadable CSV: unexpected end of data "
        "(a quoted cell is never closed)"
    )


def test_csv_text_after_a_closing_quote_is_an_error() -> None:
    Path("g.csv").write_text('input,context\nq,[]\n"quoted" tail,[]\n', encoding="utf-8")
    assert _error("g.csv") == "g.csv: row 3 (line 3): unreadable CSV: ',' expected after '\"'"


def test_csv_blank_rows_are_skipped_but_counted() -> None:
    Path("g.csv").write_text('input,context\nq,[]\n,\n\nr,"[1]"\n', encoding="utf-8")
    assert _error("g.csv") == (
        "g.csv: row 5: field 'context': expected a list of strings or null, "
        "got a list whose item 0 is an integer"
    )


def test_csv_save_of_a_value_json_cannot_hold_names_the_file_golden_and_field() -> None:
    bad = Dataset([Golden(input="ok"), Golden(input="q", metadata={"s": {1}})])
    with pytest.raises(DatasetError) as info:
        bad.save("g.csv")
    assert str(info.value) == (
        "cannot save g.csv: index 1: field 'metadata' cannot be written as JSON "
        "(Object of type set is not JSON serializable)"
    )
    assert not Path("g.csv").exists()


# ---- .parquet ------------------------------------------------------------------------------------
def test_parquet_bad_file_and_bad_metadata_cell() -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    Path("folder.parquet").mkdir()
    assert _error("folder.parquet") == "folder.parquet: is a folder, not a dataset file"
    Path("junk.parquet").write_bytes(b"not parquet at all")
    assert _error("junk.parquet").startswith("junk.parquet: not a readable parquet file: ")
    table = pa.table({"input": ["q", "r"], "metadata": ["{}", "{broken"]})
    pq.write_table(table, "cell.parquet")
    assert _error("cell.parquet").startswith(
        "cell.parquet: index 1: field 'metadata': expected a JSON object, got invalid JSON"
    )
    pq.write_table(pa.table({"input": ["q"], "context": [[1, 2]]}), "typed.parquet")
    assert _error("typed.parquet") == (
        "typed.parquet: index 0: field 'context': expected a list of strings or null, "
        "got a list whose item 0 is an integer"
    )


def test_parquet_schema_metadata_problems_name_the_file() -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    assert _error("nope.parquet") == "nope.parquet: no such file"

    def table_with(header: bytes) -> object:
        return pa.table({"input": ["q"]}).replace_schema_metadata({b"synth": header})

    pq.write_table(table_with(b"{not json"), "a.parquet")
    assert _error("a.parquet") == "a.parquet: the 'synth' schema metadata is not valid JSON"
    pq.write_table(table_with(b"[1]"), "b.parquet")
    assert _error("b.parquet") == (
        "b.parquet: the 'synth' schema metadata is a list whose item 0 is an integer, not an object"
    )
    pq.write_table(table_with(b'{"version": 2}'), "c.parquet")
    assert _error("c.parquet") == (
        "c.parquet: field 'version': 2 is not a format version this synth reads (up to 1); "
        "upgrade synth"
    )
    pq.write_table(table_with(b'{"version": 1, "metadata": "x"}'), "d.parquet")
    assert _error("d.parquet") == "d.parquet: field 'metadata': expected an object, got a string"
    pq.write_table(table_with(b'{"format": "synth-dataset", "version": 1}'), "e.parquet")
    assert Dataset.load("e.parquet") == Dataset([Golden(input="q")])  # no metadata: empty


def test_parquet_save_of_a_value_json_cannot_hold_names_the_file_golden_and_field() -> None:
    pytest.importorskip("pyarrow")
    bad = Dataset([Golden(input="ok"), Golden(input="bad", metadata={"s": {1}})])
    with pytest.raises(DatasetError) as info:
        bad.save("g.parquet")
    assert str(info.value).startswith("cannot save g.parquet: index 1: field 'metadata' ")
    assert not Path("g.parquet").exists()


# ---- in memory -----------------------------------------------------------------------------------
def test_bad_goldens_given_in_memory() -> None:
    with pytest.raises(
        DatasetError, match=r"^index 1: field 'context': expected a list of strings"
    ):
        Dataset([GOOD, {"input": "q", "context": "x"}])
    with pytest.raises(
        DatasetError, match=r"^index 0: expected a Golden or a dict, got an integer"
    ):
        Dataset([1])
    with pytest.raises(ConfigError, match="metadata must be a dict"):
        Dataset([], metadata=[("a", 1)])  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="expected an iterable of goldens"):
        Dataset("goldens.json")  # type: ignore[arg-type]


def test_null_for_a_list_or_object_field_means_not_given() -> None:
    _jsonl(
        "g.jsonl",
        json.dumps({"input": "q", "context_ids": None, "source_files": None, "metadata": None}),
    )
    assert Dataset.load("g.jsonl")[0] == Golden(input="q")
    row = {
        "user_input": "q",
        "name_of_persona": "Ann",
        "_synth": {"metadata": None, "source_files": None},
    }
    _jsonl("r.jsonl", json.dumps(row))
    assert Dataset.load("r.jsonl")[0] == Golden(input="q", metadata={"name_of_persona": "Ann"})


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"input": True}, "field 'input': expected a non-empty string, got a boolean"),
        ({"input": {1}}, "field 'input': expected a non-empty string, got a set"),
        (
            {"input": "q", "context": ("a", 1)},
            "field 'context': expected a list of strings or null, got a list whose item 1 is an integer",
        ),
        (
            {"input": "q", "context": [1, 2, 3]},  # one phrase for the field, not one per item
            "field 'context': expected a list of strings or null, got a list whose item 0 is an integer",
        ),
        ({"input": "q", "metadata": 1.5}, "field 'metadata': expected an object, got a number"),
    ],
)
def test_each_bad_value_is_described_in_words(record: dict[str, object], message: str) -> None:
    with pytest.raises(DatasetError) as info:
        Dataset([record])
    assert str(info.value) == f"index 0: {message}"


def test_ragas_rows_keep_synths_metadata_over_their_own_fields_and_name_the_synth_block() -> None:
    row = {
        "user_input": "q",
        "synthesizer_name": "single_hop",
        "persona": None,
        "_synth": {"metadata": {"synthesizer_name": "mine"}},
    }
    _jsonl("r.jsonl", json.dumps(row))
    assert Dataset.load("r.jsonl")[0].metadata == {"synthesizer_name": "mine"}
    _jsonl("r.jsonl", json.dumps({"user_input": "q", "_synth": {"context_ids": "x"}}))
    assert _error("r.jsonl") == (
        "r.jsonl: line 1: field '_synth.context_ids': expected a list of strings, got a string"
    )
    _jsonl("r.jsonl", json.dumps({"user_input": "q", "_synth": [1]}))
    assert _error("r.jsonl") == (
        "r.jsonl: line 1: field '_synth': expected an object, got a list whose item 0 is an integer"
    )


def test_json_save_of_a_value_json_cannot_hold_names_the_file_golden_and_field() -> None:
    bad = Dataset([Golden(input="ok"), Golden(input="q", metadata={"score": float("nan")})])
    with pytest.raises(DatasetError) as info:
        bad.save("g.json")
    assert str(info.value) == (
        "cannot save g.json: index 1: field 'metadata' cannot be written as JSON (Out of range "
        "float values are not JSON compliant); it may hold only strings, numbers (not NaN or "
        "infinity), booleans, null, lists and objects"
    )
    assert not Path("g.json").exists()
