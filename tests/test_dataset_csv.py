"""The ``.csv`` dataset file (synth/dataset/_csv.py): what mutation testing found unchecked,
read back exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from synth import Dataset, DatasetError

HEADER = "input,context,metadata\n"


def _load(tmp_path: Path, text: str) -> Dataset:
    path = tmp_path / "d.csv"
    path.write_text(text, encoding="utf-8")
    return Dataset.load(path)


def test_a_cell_that_is_not_json_names_the_shape_its_field_takes(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    with pytest.raises(DatasetError) as caught:
        _load(tmp_path, HEADER + 'q,[],"{bad"\n')
    assert str(caught.value) == (
        f"{path}: row 2: field 'metadata': expected a JSON object in the cell, got invalid JSON "
        "(Expecting property name enclosed in double quotes)"
    )
    with pytest.raises(DatasetError) as listed:
        _load(tmp_path, HEADER + "q,[a,{}\n")
    assert str(listed.value) == (
        f"{path}: row 2: field 'context': expected a JSON list in the cell, got invalid JSON "
        "(Expecting value)"
    )


def test_empty_cells_of_lists_and_metadata_take_their_defaults(tmp_path: Path) -> None:
    header = "input,actual_output,context,retrieval_context,context_ids,source_files,metadata\n"
    dataset = _load(tmp_path, header + "q,,,,,,\n")
    golden = dataset[0]
    assert (golden.actual_output, golden.context, golden.retrieval_context) == (None, None, None)
    assert (golden.context_ids, golden.source_files, golden.metadata) == ([], [], {})


def test_a_row_that_stops_before_its_input_is_missing_one(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    with pytest.raises(DatasetError) as caught:
        _load(tmp_path, 'context,input\n"[""c""]"\n')
    assert str(caught.value) == (f"{path}: row 2: field 'input': missing (every golden needs one)")


def test_a_text_cell_in_double_quotes_is_read_as_json(tmp_path: Path) -> None:
    # the cell holds "hello" with its quotes (doubled in CSV): JSON for the text hello
    dataset = _load(tmp_path, 'input,expected_output\n"""hello""","""a"" and ""b"""\n')
    assert dataset[0].input == "hello"
    assert dataset[0].expected_output == '"a" and "b"'  # not JSON: kept as typed
