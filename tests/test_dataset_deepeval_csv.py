"""deepeval's CSV (synth/dataset/_deepeval_csv.py).
The refusal of a separator in a list item word for word, a cell pandas reads as a number shown
as the number, the sixty-character cut at its edge, and rows shorter than the header or with a
bad field read back naming the row."""

from __future__ import annotations

from pathlib import Path

import pytest

from synth import Dataset, Golden
from synth.errors import DatasetError

JSON_HINT = "export as deepeval JSON (--format deepeval)"


def refusal(goldens: list[Golden], path: Path) -> str:
    with pytest.raises(DatasetError) as caught:
        Dataset(goldens).export(path, format="deepeval-csv")
    assert not path.exists()
    return str(caught.value)


def test_a_list_item_holding_the_separator_is_refused_naming_the_item(tmp_path: Path) -> None:
    path = tmp_path / "out.csv"
    message = refusal([Golden(input="a", context=["fine", "x\x1fy"])], path)
    assert message == (
        f"cannot export {path} as deepeval CSV: index 0: field 'context' item 1 holds the "
        f"separator U+001F; {JSON_HINT}"
    )


def test_a_text_pandas_reads_as_a_number_is_shown_as_that_number(tmp_path: Path) -> None:
    message = refusal([Golden(input="q", expected_output="42")], tmp_path / "out.csv")
    assert message.endswith(
        f"index 0: field 'expected_output' would be read by deepeval as 42, not '42'; {JSON_HINT}"
    )
    message = refusal([Golden(input="q", actual_output="2.50")], tmp_path / "out.csv")
    assert "field 'actual_output' would be read by deepeval as 2.5, not '2.50'" in message


def test_a_value_is_shown_whole_up_to_sixty_characters_and_cut_after(tmp_path: Path) -> None:
    sixty = "0" * 57 + "1"  # its repr is 60 characters; pandas reads it as 1
    message = refusal([Golden(input="q", expected_output=sixty)], tmp_path / "out.csv")
    assert message.endswith(f"as 1, not {sixty!r}; {JSON_HINT}")
    longer = "0" * 58 + "1"  # 61 characters shown: cut to 57 and "..."
    message = refusal([Golden(input="q", expected_output=longer)], tmp_path / "out.csv")
    assert message.endswith(f"as 1, not {repr(longer)[:57]}...; {JSON_HINT}")


def test_a_row_shorter_than_the_header_reads_its_missing_cells_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("input,expected_output,context,source_file\nq\nr,a,x|y\n", encoding="utf-8")
    assert Dataset.load(path).goldens == [
        Golden(input="q", context=[]),
        Golden(input="r", expected_output="a", context=["x", "y"]),
    ]


def test_a_bad_field_of_a_row_names_the_file_and_row(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text(
        'input,additional_metadata\nq,{}\nr,"{""_synth"": {""context_ids"": 5}}"\n',
        encoding="utf-8",
    )
    with pytest.raises(DatasetError) as caught:
        Dataset.load(path)
    assert str(caught.value).startswith(f"{path}: row 3: ")
