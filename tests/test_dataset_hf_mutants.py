"""The Hugging Face table (synth/dataset/_hf.py): what its first mutation run found unchecked. The
extra a missing module names, synth's header in the description and what is not one, JSON columns
left null where a golden has no value, the table's typed columns, and errors naming where."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synth import ConversationalGolden, Golden, Turn
from synth.dataset._hf import (
    from_hf,
    goldens_from_rows,
    header_text,
    hf_records,
    metadata_from_header,
    require,
    to_hf,
)
from synth.dataset._hf_folder import read_hf_folder, write_hf_folder
from synth.dataset._io import FORMAT_NAME, FORMAT_VERSION
from synth.errors import ConfigError, DatasetError

datasets = pytest.importorskip("datasets")


def test_a_missing_module_names_its_package_and_the_extra() -> None:
    with pytest.raises(ConfigError) as caught:
        require("synth_no_such_package.parquet")
    assert str(caught.value) == (
        "Hugging Face datasets need the synth_no_such_package package: pip install 'synth[hf]'"
    )


def test_the_header_is_synths_format_version_and_metadata() -> None:
    assert json.loads(header_text({"seed": 3})) == {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "metadata": {"seed": 3},
    }
    assert metadata_from_header(header_text({"seed": 3}), "t") == {"seed": 3}


def test_a_description_that_is_not_synths_header_has_no_metadata() -> None:
    for text in (None, "", "a card of my own", "[1, 2]", '"text"'):
        assert metadata_from_header(text, "t") is None
    other = json.dumps({"format": "someone-else", "metadata": {"a": 1}})
    assert metadata_from_header(other, "t") is None
    plain = json.dumps({"format": FORMAT_NAME})  # no metadata: none
    assert metadata_from_header(plain, "t") == {}


def test_a_header_of_a_newer_format_or_bad_metadata_is_refused_naming_where() -> None:
    newer = json.dumps({"format": FORMAT_NAME, "version": FORMAT_VERSION + 1, "metadata": {}})
    with pytest.raises(DatasetError) as caught:
        metadata_from_header(newer, "my table")
    assert str(caught.value).startswith("my table: field 'version': ")
    bad = json.dumps({"format": FORMAT_NAME, "metadata": [1]})
    with pytest.raises(DatasetError) as caught:
        metadata_from_header(bad, "my table")
    assert str(caught.value) == (
        "my table: field 'metadata': expected an object, got a list whose item 0 is an integer"
    )


def test_json_columns_are_text_and_stay_null_where_a_golden_has_none() -> None:
    talk = ConversationalGolden(scenario="s", turns=[Turn(role="user", content="q?")])
    single, conversation = hf_records([Golden(input="q"), talk], "t")
    assert single["metadata"] == "{}"  # metadata is always text, even empty
    assert single.get("turns") is None  # a single-turn golden has no turns: null, not "null"
    assert json.loads(conversation["turns"]) == [{"role": "user", "content": "q?", "metadata": {}}]
    table = to_hf([Golden(input="q"), talk], {})
    assert table[0]["turns"] is None and table[0]["metadata"] == "{}"


def test_a_value_json_cannot_hold_names_the_table_or_the_folder(tmp_path: Path) -> None:
    # the message once read "cannot save cannot convert to a Hugging Face dataset: index 0: ...",
    # and an hf folder's export did not name the folder
    bad = [Golden(input="q"), Golden(input="r", metadata={"tags": {1, 2}})]
    with pytest.raises(DatasetError) as caught:
        to_hf(bad, {})
    assert str(caught.value).startswith(
        "cannot save a Hugging Face dataset: index 1: field 'metadata' cannot be written as JSON"
    )
    folder = tmp_path / "hf"
    with pytest.raises(DatasetError) as caught:
        write_hf_folder(folder, bad, {}, "card")
    assert str(caught.value).startswith(f"cannot save {folder}: index 1: field 'metadata' ")
    assert not folder.exists()


def test_the_tables_columns_are_typed_even_when_every_value_is_null() -> None:
    table = to_hf([Golden(input="q"), Golden(input="r")], {})
    assert table.features["expected_output"] == datasets.Value("string")
    assert table.features["context"] == datasets.List(datasets.Value("string"))


def test_errors_in_rows_name_the_table_and_the_rows_index() -> None:
    with pytest.raises(DatasetError) as caught:
        goldens_from_rows(iter([{"input": "q"}, 3]), "t")  # type: ignore[list-item]
    assert str(caught.value) == "t: index 1: expected a row with a golden's fields, got an integer"
    with pytest.raises(DatasetError) as caught:
        from_hf(datasets.Dataset.from_list([{"input": "q"}, {"input": None}]))
    assert str(caught.value).startswith("dataset: index 1: ")


# ---- the hf folder (synth/dataset/_hf_folder.py): what its first mutation run found unchecked


def folder_of(tmp_path: Path, goldens: list[Golden], metadata: dict | None = None) -> Path:
    return write_hf_folder(tmp_path / "hf", goldens, metadata or {}, "card")


def test_an_unreadable_shard_is_named(tmp_path: Path) -> None:
    folder = folder_of(tmp_path, [Golden(input="q")])
    [shard] = sorted((folder / "data").glob("*.parquet"))
    shard.write_bytes(b"not parquet")
    with pytest.raises(DatasetError) as caught:
        read_hf_folder(folder)
    assert str(caught.value).startswith(f"{shard}: not a readable parquet file: ")


def test_the_metadata_is_the_first_header_a_shard_carries(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = folder_of(tmp_path, [Golden(input="q")], {"seed": 3})
    data = folder / "data"
    first = data / "train-00000-of-00001.parquet"
    table = pq.read_table(first)
    # a shard without synth's header sorted before the one with it
    plain = table.replace_schema_metadata({})
    pq.write_table(plain, data / "train-00000-of-00000.parquet")
    goldens, metadata = read_hf_folder(folder)
    assert metadata == {"seed": 3} and [g.input for g in goldens] == ["q", "q"]
    assert isinstance(table, pa.Table)


def test_a_bad_row_in_the_shards_or_on_disk_names_the_folder(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "shards"
    (folder / "data").mkdir(parents=True)
    pq.write_table(pa.table({"input": ["q", None]}), folder / "data" / "train-0.parquet")
    with pytest.raises(DatasetError) as caught:
        read_hf_folder(folder)
    assert str(caught.value).startswith(f"{folder}: index 1: ")
    disk = tmp_path / "disk"
    datasets.Dataset.from_dict({"input": ["q", None]}).save_to_disk(str(disk))
    with pytest.raises(DatasetError) as caught:
        read_hf_folder(disk)
    assert str(caught.value).startswith(f"{disk}: index 1: ")


def test_a_save_to_disk_folder_datasets_cannot_read_is_named(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "state.json").write_text("{", encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        read_hf_folder(broken)
    assert str(caught.value).startswith(f"{broken}: not a readable save_to_disk folder: ")
