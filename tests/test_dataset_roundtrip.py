"""Every field of every golden, and the dataset's metadata, survive every file format and pandas."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synth import ConfigError, Dataset, DatasetError, Golden
from synth.dataset._records import FIELDS

FORMATS = [".json", ".jsonl", ".csv", ".parquet"]

NASTY_METADATA = {
    "evolutions": ["reasoning", "multi_context"],
    "quality": {"critic": 0.8125, "scores": [0.1, 1e-300, -2.5e300, 0.0]},
    "seed": 12345678901234567890,
    "model": {"provider": "openai", "model": "gpt-4o-mini", "temperature": None},
    "flags": [True, False, None],
    "text": 'tab\there, "quotes", commas, and\nnewlines \u00e9\u4e2d\u6587 \U0001f600',
    "empty": {"list": [], "dict": {}, "string": ""},
}


def nasty_goldens() -> list[Golden]:
    return [
        Golden(
            input='What is "pH", exactly?\nExplain, briefly.',
            actual_output="",
            expected_output=None,
            context=[],
            retrieval_context=None,
            context_ids=[],
            source_files=[],
            metadata={},
        ),
        Golden(
            input="\u00bfQu\u00e9 es \u4e2d\u6587? \U0001f9ea",
            actual_output=None,
            expected_output="",
            context=["line one\nline two", 'a "quoted", comma, text', "", "\r\n\ttabs"],
            retrieval_context=[],
            context_ids=["doc-1:0", "doc-1:1"],
            source_files=["docs/a b.pdf", "\u00fcnicode/n\u00e4me.docx"],
            metadata=NASTY_METADATA,
        ),
        Golden(  # text that looks like JSON, null, or an empty cell
            input='"just quoted"',
            actual_output='"',
            expected_output='""',
            context=["null", "[]", "{}", '"'],
            retrieval_context=["x\u2028y\u2029z", "\x00nul"],
            context_ids=["only"],
            source_files=["s.txt"],
            metadata={"null": None, "nested": [[[]]], "unicode_key_\u00e9": "v"},
        ),
        Golden(input="null", actual_output="[]", expected_output="{}", context=None),
    ]


def nasty_dataset() -> Dataset:
    return Dataset(
        nasty_goldens(),
        {"generator": "synth", "params": {"chunk_size": 1024, "ratio": 0.25}, "note": 'a,"b"\n'},
    )


def _needs(suffix: str) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")


@pytest.mark.parametrize("suffix", FORMATS)
def test_nasty_goldens_survive_every_format(suffix: str) -> None:
    _needs(suffix)
    original = nasty_dataset()
    path = original.save(f"goldens{suffix}")
    loaded = Dataset.load(path)
    assert loaded == original
    for before, after in zip(original, loaded, strict=True):
        assert after.model_dump() == before.model_dump()
    # null, the empty string and the empty list stay distinct
    assert loaded[0].actual_output == "" and loaded[0].expected_output is None
    assert loaded[0].context == [] and loaded[0].retrieval_context is None
    assert loaded[1].actual_output is None and loaded[1].expected_output == ""
    assert loaded[3].context is None and loaded[3].context_ids == []
    assert loaded.metadata == original.metadata


@pytest.mark.parametrize("suffix", FORMATS)
def test_empty_dataset_round_trips(suffix: str) -> None:
    _needs(suffix)
    empty = Dataset(metadata={"why": "nothing passed the filters"})
    assert Dataset.load(empty.save(f"empty{suffix}")) == empty


@pytest.mark.parametrize("suffix", FORMATS)
def test_saving_again_replaces_goldens_and_metadata(suffix: str) -> None:
    _needs(suffix)
    nasty_dataset().save(f"d{suffix}")
    smaller = Dataset([Golden(input="only one")], {"v": 2})
    smaller.save(f"d{suffix}")
    assert Dataset.load(f"d{suffix}") == smaller
    assert not [p for p in Path().iterdir() if p.name.endswith(".tmp")]


def test_uppercase_suffix_and_nested_folder() -> None:
    path = nasty_dataset().save(Path("out") / "deep" / "GOLDENS.JSONL")
    assert path.is_file() and Path("out/deep/GOLDENS.JSONL.meta.json").is_file()
    assert Dataset.load(path) == nasty_dataset()


# ---- what the files look like to other readers ---------------------------------------------------
def test_jsonl_lines_are_goldens_for_plain_line_readers() -> None:
    Path("g.jsonl").write_text("")  # overwritten
    nasty_dataset().save("g.jsonl")
    text = Path("g.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines()]  # splits on U+2028 too
    assert len(rows) == 4
    assert all(set(row) == set(FIELDS) for row in rows)
    assert rows[1]["metadata"]["quality"]["critic"] == 0.8125
    sidecar = json.loads(Path("g.jsonl.meta.json").read_text(encoding="utf-8"))
    assert sidecar["metadata"] == nasty_dataset().metadata
    assert sidecar["dataset"] == "g.jsonl"


def test_jsonl_without_sidecar_loads_with_empty_metadata() -> None:
    nasty_dataset().save("g.jsonl")
    Path("g.jsonl.meta.json").unlink()
    loaded = Dataset.load("g.jsonl")
    assert loaded.goldens == nasty_goldens() and loaded.metadata == {}


def test_json_file_is_one_object_with_metadata_and_goldens() -> None:
    nasty_dataset().save("g.json")
    document = json.loads(Path("g.json").read_text(encoding="utf-8"))
    assert document["format"] == "synth-dataset" and document["version"] == 1
    assert document["metadata"] == nasty_dataset().metadata
    assert document["goldens"][0]["input"] == 'What is "pH", exactly?\nExplain, briefly.'


def test_json_files_are_indented_and_end_with_a_line_break() -> None:
    Dataset([Golden(input="q")], {"seed": 1}).save("g.json")
    text = Path("g.json").read_text(encoding="utf-8")
    assert text.startswith('{\n  "format": "synth-dataset",\n  "version": 1,\n  "metadata": {\n')
    assert text.endswith("\n  ]\n}\n")
    Dataset([Golden(input="q")]).export("e.json", format="deepeval")
    text = Path("e.json").read_text(encoding="utf-8")
    assert text.startswith('[\n  {\n    "input": "q",\n') and text.endswith("\n  }\n]\n")


def test_jsonl_keeps_unicode_as_is_and_its_sidecar_is_indented_json() -> None:
    Dataset([Golden(input="caf\u00e9?")], {"n": "\u00e9"}).save("g.jsonl")
    assert Path("g.jsonl").read_text(encoding="utf-8").startswith('{"input": "caf\u00e9?", ')
    assert Path("g.jsonl.meta.json").read_text(encoding="utf-8") == (
        '{\n  "format": "synth-dataset-metadata",\n  "version": 1,\n  "dataset": "g.jsonl",\n'
        '  "metadata": {\n    "n": "\u00e9"\n  }\n}\n'
    )


def test_jsonl_written_by_another_tool_may_hold_a_raw_line_separator() -> None:
    # U+2028 is a line break to str.splitlines but not to JSON: the golden is one line
    Path("g.jsonl").write_text('{"input": "a\u2028b"}\n{"input": "c"}\n', encoding="utf-8")
    assert Dataset.load("g.jsonl").goldens == [Golden(input="a\u2028b"), Golden(input="c")]


def test_csv_cells_are_plain_text_and_json() -> None:
    import csv

    nasty_dataset().save("g.csv")
    with open("g.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert rows[0]["input"] == 'What is "pH", exactly?\nExplain, briefly.'  # plain text
    assert rows[0]["actual_output"] == '""' and rows[0]["expected_output"] == ""  # "" vs null
    assert rows[0]["context"] == "[]" and rows[0]["retrieval_context"] == ""  # [] vs null
    assert json.loads(rows[1]["context"])[1] == 'a "quoted", comma, text'
    assert json.loads(rows[1]["metadata"]) == NASTY_METADATA


def test_csv_written_by_hand_with_missing_columns_and_cells() -> None:
    Path("hand.csv").write_text(
        'input,expected_output,context\nHow tall?,"About 3 m, roughly.","[""c1""]"\nShort row\n',
        encoding="utf-8",
    )
    loaded = Dataset.load("hand.csv")
    assert loaded[0] == Golden(
        input="How tall?", expected_output="About 3 m, roughly.", context=["c1"]
    )
    assert loaded[1] == Golden(input="Short row")


def test_parquet_keeps_typed_columns() -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    nasty_dataset().save("g.parquet")
    table = pq.read_table("g.parquet")
    assert table.column_names == list(FIELDS)
    import pyarrow as pa

    context_type = table.schema.field("context").type
    assert pa.types.is_list(context_type) and pa.types.is_string(context_type.value_type)
    assert table.column("context").to_pylist()[3] is None
    assert table.column("context").to_pylist()[0] == []


def test_csv_cells_longer_than_the_csv_modules_default_limit() -> None:
    long = "x" * 200_000  # the csv module refuses cells over 128 KiB unless told otherwise
    original = Dataset([Golden(input="q", expected_output=long, context=[long])])
    assert Dataset.load(original.save("g.csv")) == original


def test_csv_quotes_a_text_as_json_only_when_it_starts_and_ends_with_a_quote() -> None:
    import csv

    original = Dataset(
        [Golden(input='"starts only', expected_output='ends only"', actual_output='"both"')]
    )
    original.save("g.csv")
    with open("g.csv", newline="", encoding="utf-8") as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["input"] == '"starts only' and row["expected_output"] == 'ends only"'
    assert row["actual_output"] == '"\\"both\\""'
    assert Dataset.load("g.csv") == original


def test_csv_header_names_may_have_spaces_around_them() -> None:
    Path("g.csv").write_text(' input , context \nq,"[""c""]"\n', encoding="utf-8")
    assert Dataset.load("g.csv").goldens == [Golden(input="q", context=["c"])]


def test_a_byte_order_mark_is_dropped() -> None:
    Path("g.json").write_bytes(b"\xef\xbb\xbf" + b'[{"input": "q"}]')
    assert Dataset.load("g.json").goldens == [Golden(input="q")]
    Path("g.csv").write_bytes(b"\xef\xbb\xbfinput\nq\n")
    assert Dataset.load("g.csv").goldens == [Golden(input="q")]


def test_parquet_columns_null_only_where_a_golden_may_be_and_a_synth_header() -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    nasty_dataset().save("g.parquet")
    schema = pq.read_schema("g.parquet")
    assert {name: schema.field(name).nullable for name in schema.names} == {
        "input": False,
        "actual_output": True,
        "expected_output": True,
        "context": True,
        "retrieval_context": True,
        "context_ids": True,
        "source_files": True,
        "metadata": False,
    }
    assert json.loads(schema.metadata[b"synth"]) == {
        "format": "synth-dataset",
        "version": 1,
        "metadata": nasty_dataset().metadata,
    }


def test_parquet_without_pyarrow_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ConfigError, match=r"pyarrow.*pip install 'synth\[parquet\]'"):
        nasty_dataset().save("g.parquet")
    assert not Path("g.parquet").exists()
    Path("x.parquet").write_bytes(b"PAR1")
    with pytest.raises(ConfigError, match="pyarrow"):
        Dataset.load("x.parquet")


def test_parquet_without_pyarrow_says_how_to_get_it_and_what_else_to_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ConfigError) as info:
        Dataset([Golden(input="q")]).save("g.parquet")
    assert str(info.value) == (
        ".parquet datasets need pyarrow: pip install 'synth[parquet]' "
        "(or save as .json, .jsonl or .csv)"
    )


def test_unknown_suffix_names_the_supported_ones() -> None:
    with pytest.raises(
        ConfigError, match=r"goldens\.yaml.*'\.yaml'.*\.json, \.jsonl, \.csv, \.parquet"
    ):
        nasty_dataset().save("goldens.yaml")
    with pytest.raises(ConfigError, match=r"'\(none\)'"):
        Dataset.load("goldens")


def test_metadata_that_json_cannot_hold_fails_without_touching_the_old_file() -> None:
    nasty_dataset().save("g.jsonl")
    before = Path("g.jsonl").read_bytes()
    bad = Dataset([Golden(input="ok"), Golden(input="bad", metadata={"scores": {1.5, 2.5}})])
    with pytest.raises(DatasetError, match=r"g\.jsonl: index 1: field 'metadata'.*set"):
        bad.save("g.jsonl")
    assert Path("g.jsonl").read_bytes() == before
    with pytest.raises(DatasetError, match=r"index 0: field 'metadata'.*NaN"):
        Dataset([Golden(input="q", metadata={"score": float("nan")})]).save("n.json")
    with pytest.raises(DatasetError, match="the dataset's metadata"):
        Dataset([Golden(input="q")], {"when": object()}).save("m.csv")
    assert not [p for p in Path().iterdir() if p.name.endswith(".tmp")]


# ---- pandas --------------------------------------------------------------------------------------
def test_pandas_round_trip_keeps_nulls_empties_and_metadata() -> None:
    original = nasty_dataset()
    frame = original.to_pandas()
    assert list(frame.columns) == list(FIELDS)
    assert len(frame) == 4
    assert frame.loc[0, "expected_output"] is None and frame.loc[0, "actual_output"] == ""
    assert frame.loc[1, "context"] == [
        "line one\nline two",
        'a "quoted", comma, text',
        "",
        "\r\n\ttabs",
    ]
    assert frame.attrs["synth_metadata"] == original.metadata
    assert Dataset.from_pandas(frame) == original
    assert Dataset.from_pandas(frame, metadata={"other": 1}).metadata == {"other": 1}


def test_from_pandas_accepts_frames_made_elsewhere() -> None:
    import numpy as np
    import pandas as pd

    frame = pd.DataFrame(
        {
            "input": ["q1", "q2"],
            "expected_output": ["a1", np.nan],  # pandas' missing text
            "context": [np.array(["c1", "c2"]), '["c3"]'],  # from parquet; from our CSV
            "context_ids": [["i1"], None],  # a hole left by a concat
            "metadata": ['{"k": 1}', {"k": np.int64(2)}],
        }
    )
    loaded = Dataset.from_pandas(frame)
    assert loaded[0] == Golden(
        input="q1",
        expected_output="a1",
        context=["c1", "c2"],
        context_ids=["i1"],
        metadata={"k": 1},
    )
    assert loaded[1] == Golden(input="q2", context=["c3"], metadata={"k": 2})
    assert loaded.metadata == {}


def test_from_pandas_reads_a_csv_saved_by_synth() -> None:
    import pandas as pd

    original = Dataset(
        [g for g in nasty_goldens() if g.actual_output != "" and g.expected_output != ""]
    )
    original.save("g.csv")
    frame = pd.read_csv("g.csv", dtype=str, keep_default_na=False)
    frame = frame.replace("", None)
    assert Dataset.from_pandas(frame).goldens[0].context == original[0].context


def test_from_pandas_errors_name_the_row_label() -> None:
    import pandas as pd

    frame = pd.DataFrame({"input": ["fine", "bad"], "context": [["c"], [1, 2]]}, index=["r1", "r2"])
    with pytest.raises(
        DatasetError, match=r"DataFrame row 'r2': field 'context': expected a list of strings"
    ):
        Dataset.from_pandas(frame)


def test_an_empty_dataset_is_a_frame_with_every_column_and_its_own_metadata() -> None:
    dataset = Dataset(metadata={"params": {"ratio": 0.25}})
    frame = dataset.to_pandas()
    assert list(frame.columns) == list(FIELDS) and len(frame) == 0
    # the frame's metadata is a copy all the way down: editing it leaves the dataset alone
    frame.attrs["synth_metadata"]["params"]["ratio"] = 1.0
    assert dataset.metadata == {"params": {"ratio": 0.25}}


def test_from_pandas_reads_pandas_own_missing_values_as_null() -> None:
    import pandas as pd

    frame = pd.DataFrame(
        {
            "input": ["q", "r"],
            "expected_output": pd.array(["a", None], dtype="string"),  # <NA>
            "actual_output": [pd.NaT, pd.NaT],
        }
    )
    assert Dataset.from_pandas(frame).goldens == [
        Golden(input="q", expected_output="a"),
        Golden(input="r"),
    ]


def test_from_pandas_errors_name_numpy_values_in_plain_words() -> None:
    import numpy as np
    import pandas as pd

    frame = pd.DataFrame({"input": ["q"], "context": [np.array([1, 2])]})  # as parquet gives it
    with pytest.raises(DatasetError) as info:
        Dataset.from_pandas(frame)
    assert str(info.value) == (
        "DataFrame row 0: field 'context': expected a list of strings or null, "
        "got a list whose item 0 is an integer"
    )
    frame = pd.DataFrame({"input": [np.int64(3)]}, dtype=object)
    with pytest.raises(DatasetError) as info:
        Dataset.from_pandas(frame)
    assert str(info.value) == (
        "DataFrame row 0: field 'input': expected a non-empty string, got an integer"
    )


# ---- property-based: arbitrary values through every format ---------------------------------------
_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
_json_values = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_texts = st.text(max_size=40)
_lists = st.lists(_texts, max_size=4)
_goldens = st.builds(
    Golden,
    input=_texts.filter(lambda s: s.strip() != ""),
    actual_output=st.none() | _texts,
    expected_output=st.none() | _texts,
    context=st.none() | _lists,
    retrieval_context=st.none() | _lists,
    context_ids=_lists,
    source_files=_lists,
    metadata=st.dictionaries(st.text(max_size=8), _json_values, max_size=4),
)
_datasets = st.builds(
    Dataset,
    st.lists(_goldens, max_size=4),
    st.dictionaries(st.text(max_size=8), _json_values, max_size=3),
)


@pytest.mark.parametrize("suffix", FORMATS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dataset=_datasets)
def test_any_dataset_round_trips(suffix: str, dataset: Dataset) -> None:
    _needs(suffix)
    assert Dataset.load(dataset.save(f"h{suffix}")) == dataset


@settings(max_examples=40, deadline=None)
@given(dataset=_datasets)
def test_any_dataset_round_trips_through_pandas(dataset: Dataset) -> None:
    assert Dataset.from_pandas(dataset.to_pandas()) == dataset
