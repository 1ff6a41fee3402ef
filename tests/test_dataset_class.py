"""The Dataset class (synth/dataset/__init__.py) read back exactly: the shortfall it carries and
the messages it gives, its repr, the suffix table, its refusals, and what pandas gives it."""

from __future__ import annotations

from pathlib import Path

import pytest

from synth import ConfigError, Dataset, DatasetError, Golden
from synth.dataset import SUFFIXES, Shortfall

SHORT = {"num_goldens": 5, "delivered": 2, "shortfall": ["the corpus ran out", 7]}


def test_a_shortfall_is_read_from_the_metadata_exactly() -> None:
    short = Dataset([Golden(input="q")], SHORT).shortfall
    assert short == Shortfall(5, 2, ("the corpus ran out", "7"))
    assert short.reason == "the corpus ran out"
    assert str(short) == "delivered 2 of 5 goldens: the corpus ran out"
    bare = Dataset([], {"num_goldens": 3, "delivered": 0}).shortfall
    assert bare == Shortfall(3, 0, ()) and bare.reason == "no reason was recorded"
    assert Dataset([], {"num_goldens": 3, "delivered": 0, "shortfall": None}).shortfall == bare
    assert Shortfall(1, 0).reasons == ()


@pytest.mark.parametrize(
    "metadata",
    [
        {},
        {"num_goldens": 3},
        {"delivered": 1},
        {"num_goldens": 3, "delivered": 3},
        {"num_goldens": 3, "delivered": 4},
        {"num_goldens": "3", "delivered": 1},
        {"num_goldens": 3, "delivered": "1"},
        {"num_goldens": None, "delivered": 1},
    ],
)
def test_no_shortfall_without_two_numbers_and_fewer_delivered(metadata: dict) -> None:
    assert Dataset([], metadata).shortfall is None


def test_an_index_past_a_short_runs_goldens_says_why() -> None:
    dataset = Dataset([Golden(input="q0"), Golden(input="q1")], SHORT)
    with pytest.raises(IndexError) as caught:
        dataset[2]
    assert str(caught.value) == "no golden 2: the run delivered 2 of 5 goldens: the corpus ran out"
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    with pytest.raises(IndexError) as plain:
        Dataset([Golden(input="q")])[3]
    assert str(plain.value) == "list index out of range"


def test_repr_names_the_count_and_the_first_five_keys_in_order() -> None:
    metadata = {key: 1 for key in ("f", "b", "a", "e", "c", "d", "g")}
    assert repr(Dataset([Golden(input="q")] * 2, metadata)) == (
        "Dataset(2 goldens, metadata keys: [a, b, c, d, e])"
    )
    assert repr(Dataset()) == "Dataset(0 goldens, metadata keys: [])"


def test_comparing_with_something_else_is_left_to_it() -> None:
    assert Dataset().__eq__([]) is NotImplemented
    assert (Dataset() == Dataset()) is True


def test_the_suffix_names_the_format_in_any_case(tmp_path: Path) -> None:
    assert SUFFIXES == (".json", ".jsonl", ".csv", ".parquet")
    dataset = Dataset([Golden(input="q", context=["c"])], {"seed": 3})
    for suffix in (".JSON", ".Jsonl", ".CSV"):
        path = tmp_path / f"d{suffix}"
        assert dataset.save(path) == path and isinstance(dataset.save(str(path)), Path)
        assert Dataset.load(str(path)) == dataset
    with pytest.raises(ConfigError) as caught:
        dataset.save(tmp_path / "d.txt")
    assert str(caught.value) == (
        f"{tmp_path / 'd.txt'}: unsupported dataset suffix '.txt'; "
        "use one of .json, .jsonl, .csv, .parquet"
    )
    with pytest.raises(ConfigError) as none:
        Dataset.load(tmp_path / "dataset")
    assert str(none.value) == (
        f"{tmp_path / 'dataset'}: unsupported dataset suffix '(none)'; "
        "use one of .json, .jsonl, .csv, .parquet"
    )


def test_metadata_json_cannot_hold_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    with pytest.raises(DatasetError, match="the dataset's metadata cannot be written as JSON"):
        Dataset([Golden(input="q")], {"when": {1, 2}}).save(path)
    assert not path.exists()


def test_the_constructors_refusals() -> None:
    with pytest.raises(ConfigError) as caught:
        Dataset([], ["not", "a", "dict"])  # type: ignore[arg-type]
    assert str(caught.value) == "Dataset metadata must be a dict, got a list of strings"
    assert Dataset([], None).metadata == {}
    with pytest.raises(ConfigError) as one:
        Dataset(Golden(input="q"))  # type: ignore[arg-type]
    assert str(one.value) == "expected an iterable of goldens, got a Golden"
    for value, shown in (
        ("text", "a string"),
        (b"bytes", "a bytes"),
        ({"input": "q"}, "an object"),
    ):
        with pytest.raises(ConfigError) as bad:
            Dataset(value)  # type: ignore[arg-type]
        assert str(bad.value) == f"expected an iterable of goldens, got {shown}"
    with pytest.raises(DatasetError) as item:
        Dataset([Golden(input="q"), 3])  # type: ignore[list-item]
    assert str(item.value) == "index 1: expected a Golden or a dict, got an integer"
    with pytest.raises(DatasetError, match=r"^index 2: field 'input': missing"):
        Dataset([{"input": "a"}, {"input": "b"}, {"context": ["c"]}])


def test_export_writes_the_tools_format_and_returns_the_path(tmp_path: Path) -> None:
    dataset = Dataset([Golden(input="q", expected_output="a")], {"seed": 1})
    path = dataset.export(str(tmp_path / "g.json"), "deepeval")
    assert path == tmp_path / "g.json"
    assert Dataset.load(path) == Dataset([Golden(input="q", expected_output="a")])


def test_pandas_carries_the_metadata_unless_given_other(tmp_path: Path) -> None:
    dataset = Dataset([Golden(input="q")], {"seed": 1})
    frame = dataset.to_pandas()
    assert Dataset.from_pandas(frame) == dataset
    assert Dataset.from_pandas(frame, {"seed": 2}).metadata == {"seed": 2}
    frame.attrs.clear()
    assert Dataset.from_pandas(frame).metadata == {}
    frame.attrs["synth_metadata"] = None
    assert Dataset.from_pandas(frame).metadata == {}


def test_coerce_refuses_bytes() -> None:
    with pytest.raises(ConfigError) as caught:
        Dataset.coerce(b"d.json")  # type: ignore[arg-type]
    assert str(caught.value) == "expected a Dataset, a list of goldens or a path; got a bytes"
    with pytest.raises(ConfigError) as one:
        Dataset.coerce(Golden(input="q"))  # type: ignore[arg-type]
    assert str(one.value) == "expected a Dataset, a list of goldens or a path; got one Golden"
