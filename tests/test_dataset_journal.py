"""The review journal's own functions (synth/dataset/_journal.py): where it lives, each line as
written byte for byte, rewritten or removed, and applied to the goldens read: which lines are
skipped (blank, a last one cut off), which are errors and what they say, and what a line changes.
tests/test_review_journal.py drives it through a review store."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from synth.data import Golden
from synth.dataset import _journal as journal
from synth.errors import DatasetError

RECORD = {"status": "accepted", "reviewer": "ann"}


def goldens() -> list[Golden]:
    return [
        Golden(input="One?", expected_output="1.", metadata={"draft_id": "a", "n": 1}),
        Golden(input="Two?", expected_output="2.", metadata={"draft_id": "b"}),
        Golden(input="Copy?", metadata={"draft_id": "c"}),
        Golden(input="Copy?", metadata={"draft_id": "c"}),
    ]


def write(path: Path, text: str) -> None:
    journal.journal_path(path).write_text(text, encoding="utf-8")


def test_the_journal_lives_beside_its_dataset_named_after_it(tmp_path: Path) -> None:
    path = tmp_path / "goldens.jsonl"
    assert journal.journal_path(path) == tmp_path / "goldens.jsonl.review-journal"
    assert journal.SUFFIX == ".review-journal"


def test_an_entry_holds_the_key_texts_and_review_record() -> None:
    golden = Golden(input="Q?", expected_output="A.", metadata={"review": RECORD, "x": 1})
    assert journal.entry("k1", golden) == {
        "key": "k1",
        "input": "Q?",
        "expected_output": "A.",
        "review": RECORD,
    }
    assert journal.entry("k2", Golden(input="Q?"))["review"] is None


def test_appended_lines_are_one_json_line_each_kept_in_order(tmp_path: Path) -> None:
    path = tmp_path / "goldens.jsonl"
    journal.append(path, {"key": "a", "input": "Naïve\u2028line\u2029?"})
    journal.append(path, {"key": "b"})
    data = journal.journal_path(path).read_bytes()
    assert data == ('{"key": "a", "input": "Naïve\\u2028line\\u2029?"}\n{"key": "b"}\n').encode()
    mode = stat.S_IMODE(os.stat(journal.journal_path(path)).st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o644 & ~umask


def test_a_rewrite_leaves_only_the_lines_given_and_none_removes_the_journal(
    tmp_path: Path,
) -> None:
    path = tmp_path / "goldens.jsonl"
    journal.append(path, {"key": "old"})
    journal.rewrite(path, [{"key": "b", "input": "é"}, {"key": "c"}])
    text = journal.journal_path(path).read_text(encoding="utf-8")
    assert text == '{"key": "b", "input": "é"}\n{"key": "c"}\n'
    journal.rewrite(path, [])
    assert not journal.journal_path(path).exists()
    journal.discard(path)  # none there: nothing to do
    assert list(tmp_path.iterdir()) == []


def test_without_a_journal_the_goldens_are_given_back_as_read(tmp_path: Path) -> None:
    read = goldens()
    assert journal.apply(tmp_path / "goldens.jsonl", read) is read


def test_a_line_sets_its_goldens_record_and_texts_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "goldens.jsonl"
    lines = [
        {"key": "a", "input": "First?", "expected_output": None, "review": RECORD},
        {"key": "c~2", "input": "Second copy?", "review": {"status": "rejected"}},
        {"key": "b", "review": RECORD},
    ]
    write(path, "\n" + "\n  \n".join(json.dumps(line) for line in lines) + "\n")
    read = goldens()
    result = journal.apply(path, read)
    assert result[0] == Golden(
        input="First?", expected_output=None, metadata={"draft_id": "a", "n": 1, "review": RECORD}
    )
    assert result[1] == Golden(
        input="Two?", expected_output="2.", metadata={"draft_id": "b", "review": RECORD}
    )
    assert result[2] is read[2]
    assert result[3].input == "Second copy?"
    assert result[3].metadata == {"draft_id": "c", "review": {"status": "rejected"}}
    assert read[0].input == "One?"  # the goldens read are left alone


def test_the_later_of_two_lines_for_one_golden_wins(tmp_path: Path) -> None:
    path = tmp_path / "goldens.jsonl"
    first = {"key": "b", "input": "Edited?", "review": {"status": "pending"}}
    second = {"key": "b", "review": RECORD}
    write(path, json.dumps(first) + "\n" + json.dumps(second) + "\n")
    result = journal.apply(path, goldens())
    assert result[1].input == "Edited?"
    assert result[1].metadata["review"] == RECORD


def test_a_last_line_cut_off_is_skipped_with_or_without_its_line_break(tmp_path: Path) -> None:
    path = tmp_path / "goldens.jsonl"
    whole = json.dumps({"key": "a", "review": RECORD})
    for cut in ('{"key": "b", "rev', '{"key": "b", "rev\n'):
        write(path, whole + "\n" + cut)
        result = journal.apply(path, goldens())
        assert result[0].metadata["review"] == RECORD
        assert "review" not in result[1].metadata


def test_a_broken_line_before_the_last_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "goldens.jsonl"
    whole = json.dumps({"key": "a", "review": RECORD})
    write(path, "{broken\n" + whole + "\n")
    where = f"{journal.journal_path(path)}: line 1"
    with pytest.raises(DatasetError) as error:
        journal.apply(path, goldens())
    assert str(error.value) == f"{where}: not a JSON decision"
    assert error.value.__cause__ is None
    assert error.value.__suppress_context__


@pytest.mark.parametrize(
    "line",
    [
        {"key": "zz", "review": {}},
        {"key": 1, "review": {}},
        {"key": ["a"], "review": {}},
        ["a"],
        {"review": {}},
    ],
    ids=["unknown key", "a number", "a list", "not an object", "no key"],
)
def test_a_line_naming_no_golden_of_the_file_is_an_error(tmp_path: Path, line: object) -> None:
    path = tmp_path / "goldens.jsonl"
    write(path, "\n" + json.dumps(line) + "\n")
    with pytest.raises(DatasetError) as error:
        journal.apply(path, goldens())
    assert str(error.value) == (
        f"{journal.journal_path(path)}: line 2: names a golden that goldens.jsonl does not hold "
        "(the file was replaced during a review?); remove the journal to keep the file as it is"
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"key": "a"}, "field 'review': expected an object"),
        ({"key": "a", "review": "accepted"}, "field 'review': expected an object"),
        ({"key": "a", "review": {}, "input": None}, "field 'input': expected a string"),
        ({"key": "a", "review": {}, "input": 3}, "field 'input': expected a string"),
        ({"key": "a", "review": {}, "expected_output": 3}, "field 'expected_output': expected a"),
    ],
)
def test_a_line_with_a_field_of_the_wrong_kind_is_an_error_naming_it(
    tmp_path: Path, line: dict[str, object], message: str
) -> None:
    path = tmp_path / "goldens.jsonl"
    write(path, json.dumps(line) + "\n")
    with pytest.raises(DatasetError) as error:
        journal.apply(path, goldens())
    assert str(error.value).startswith(f"{journal.journal_path(path)}: line 1: {message}")
