"""Datasets as Hugging Face ``datasets``: typed features, lossless round trips, the hf folder that
``synth export --format hf`` writes, and synth reading such a folder wherever it takes a dataset."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest

from synth import (
    ConfigError,
    ConversationalGolden,
    Dataset,
    DatasetError,
    Golden,
    ToolCall,
    Turn,
)
from synth.cli import main
from synth.dataset._hf import (
    JSON_FIELDS,
    from_hf,
    goldens_from_rows,
    header_text,
    hf_features,
    hf_records,
    metadata_from_header,
    require,
    to_hf,
)
from synth.dataset._hf_folder import read_hf_folder, write_hf_folder
from synth.dataset._io import FORMAT_NAME, FORMAT_VERSION
from synth.dataset._records import CONVERSATION_FIELDS, FIELDS

CARD = "---\nlicense: unknown\n---\n\n# test\n"


def dataset() -> Dataset:
    return Dataset(
        [
            Golden(
                input="Wie lange hält der Akku? \u2028 \U0001f50b",
                expected_output="",
                context=[],
                retrieval_context=None,
                context_ids=["c1", ""],
                metadata={"evolutions": [], "nested": {"a": [1, 2.5, None, {"b": {}}]}, "n": None},
            ),
            Golden(input="q2", actual_output="a", context=["x|y", "\x00"], metadata={"n": "text"}),
            Golden(input="q3", metadata={}),
        ],
        {"run_id": "r1", "seed": 7, "config": {"generation": {"grounding_threshold": 0.5}}},
    )


def test_to_hf_has_typed_features_and_one_row_per_golden() -> None:
    table = dataset().to_hf()
    features = table.features
    assert features["input"] == datasets.Value("string")
    for name in ("context", "retrieval_context", "context_ids", "source_files"):
        assert features[name] == datasets.List(datasets.Value("string")), name
    assert features["metadata"] == datasets.Value("string")
    assert table.num_rows == 3
    row = table[0]
    assert (
        row["context"] == [] and row["retrieval_context"] is None and row["expected_output"] == ""
    )
    # metadata of any shape, one JSON text per golden: keys one golden lacks stay absent
    assert json.loads(row["metadata"])["nested"] == {"a": [1, 2.5, None, {"b": {}}]}
    assert json.loads(table[2]["metadata"]) == {}


def test_every_golden_field_has_a_column() -> None:
    """A field Golden grows gets a column: a JSON one unless typed here; a conversation adds its
    three text columns and ``turns``, JSON like ``metadata``."""
    assert list(hf_features()) == list(FIELDS)  # a golden about no tools has no tool columns
    assert JSON_FIELDS == ("metadata", "expected_tools", "tools_called", "turns")
    talk = ConversationalGolden(turns=[Turn(role="user", content="q")])
    assert list(hf_features([talk])) == [*FIELDS, *CONVERSATION_FIELDS]
    agent = Golden(input="q", expected_tools=[ToolCall(name="t")])
    assert list(hf_features([agent])) == [*FIELDS, "expected_tools"]


def test_from_hf_reads_back_goldens_and_metadata() -> None:
    original = dataset()
    back = Dataset.from_hf(original.to_hf())
    assert back == original
    assert Dataset.from_hf(original.to_hf(), metadata={"x": 1}).metadata == {"x": 1}


def test_from_hf_reads_another_tools_table_by_column_names() -> None:
    table = datasets.Dataset.from_list([{"user_input": "q", "reference": "a", "response": None}])
    (golden,) = Dataset.from_hf(table)
    assert golden.input == "q" and golden.expected_output == "a" and golden.actual_output is None


def test_from_hf_names_the_row_of_bad_metadata() -> None:
    table = datasets.Dataset.from_list(
        [{"input": "q", "metadata": "{}"}, {"input": "q", "metadata": "{"}]
    )
    with pytest.raises(DatasetError, match=r"index 1: field 'metadata': expected JSON text"):
        Dataset.from_hf(table)
    with pytest.raises(ConfigError, match="expected a datasets.Dataset, got an integer"):
        Dataset.from_hf(3)  # type: ignore[arg-type]


def test_save_to_disk_and_back_keeps_everything() -> None:
    original = dataset()
    original.to_hf().save_to_disk("disk")
    assert Dataset.from_hf(datasets.load_from_disk("disk")) == original
    assert Dataset.load("disk") == original  # a save_to_disk folder is a dataset to synth


def test_a_dataset_dicts_save_to_disk_folder_is_a_dataset_when_it_has_one_split() -> None:
    original = dataset()
    datasets.DatasetDict({"train": original.to_hf()}).save_to_disk("one")
    assert Dataset.load("one") == original
    both = datasets.DatasetDict({"train": original.to_hf(), "test": original.to_hf()})
    both.save_to_disk("two")
    with pytest.raises(DatasetError, match="holds the splits train, test; load one with"):
        Dataset.load("two")


def test_hf_folder_holds_disk_output_shards_and_card(tmp_path: Path) -> None:
    original = dataset()
    folder = write_hf_folder(Path("out"), original.goldens, original.metadata, CARD)
    assert (folder / "README.md").read_text(encoding="utf-8") == CARD
    assert (folder / "state.json").is_file() and (folder / "dataset_info.json").is_file()
    (shard,) = sorted((folder / "data").glob("*.parquet"))
    assert shard.name == "train-00000-of-00001.parquet"
    assert set(pq.read_schema(shard).metadata) == {b"huggingface", b"synth"}
    # what the field reads it with
    loaded = datasets.load_dataset(
        "parquet",
        data_files=str(folder / "data/*.parquet"),
        split="train",
        cache_dir=str(tmp_path / "c"),
    )
    assert loaded.features == hf_features()
    assert Dataset.from_hf(loaded, original.metadata) == original
    assert Dataset.from_hf(datasets.load_from_disk(str(folder))) == original
    assert Dataset.load(folder) == original
    assert Dataset.load(shard) == original  # a shard is a synth .parquet file too


def test_a_folder_with_only_shards_is_read_without_datasets(monkeypatch) -> None:
    original = dataset()
    folder = write_hf_folder(Path("out"), original.goldens, original.metadata, CARD)
    for name in ("state.json", "dataset_info.json", "data-00000-of-00001.arrow"):
        (folder / name).unlink()
    block_import(monkeypatch, "datasets")
    assert Dataset.load(folder) == original


def test_shards_split_at_the_row_limit(monkeypatch) -> None:
    monkeypatch.setattr("synth.dataset._hf_folder.SHARD_ROWS", 2)
    original = dataset()
    folder = write_hf_folder(Path("out"), original.goldens, original.metadata, CARD)
    names = sorted(p.name for p in (folder / "data").iterdir())
    assert names == ["train-00000-of-00002.parquet", "train-00001-of-00002.parquet"]
    assert Dataset.load(folder) == original


def test_an_empty_dataset_is_one_empty_shard() -> None:
    folder = write_hf_folder(Path("out"), [], {"seed": 1}, CARD)
    assert len(list((folder / "data").iterdir())) == 1
    assert Dataset.load(folder) == Dataset([], {"seed": 1})
    assert Dataset.from_hf(datasets.load_from_disk(str(folder))) == Dataset([], {"seed": 1})


def test_a_failed_write_leaves_the_previous_folder(monkeypatch) -> None:
    original = dataset()
    folder = write_hf_folder(Path("out"), original.goldens, original.metadata, CARD)

    def refuse(tmp: Path) -> None:
        assert (tmp / "README.md").is_file()  # called with the finished folder
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_hf_folder(folder, original.goldens[:1], {}, CARD, refuse)
    assert Dataset.load(folder) == original
    assert sorted(p.name for p in Path(".").iterdir()) == ["out"]  # no temporary folder left
    with pytest.raises(OSError):
        write_hf_folder(Path("new"), original.goldens, {}, CARD, refuse)
    assert not Path("new").exists()


def test_rewriting_an_hf_folder_replaces_it() -> None:
    original = dataset()
    folder = write_hf_folder(Path("out"), original.goldens, original.metadata, CARD)
    write_hf_folder(folder, original.goldens[:1], {}, CARD)
    assert Dataset.load(folder) == Dataset(original.goldens[:1])


def test_a_folder_of_other_files_or_a_file_is_refused() -> None:
    Path("mine").mkdir()
    (Path("mine") / "notes.txt").write_text("keep me")
    with pytest.raises(ConfigError, match="holding other files"):
        write_hf_folder(Path("mine"), [], {}, CARD)
    assert (Path("mine") / "notes.txt").read_text() == "keep me"
    Path("f.json").write_text("{}")
    with pytest.raises(ConfigError, match="is a file"):
        write_hf_folder(Path("f.json"), [], {}, CARD)
    with pytest.raises(DatasetError, match="is a folder, but no dataset"):
        Dataset.load("mine")


def block_import(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Make ``import name`` fail as it does where the package is not installed (a None in
    sys.modules stops the import; modules that imported it already keep their reference)."""
    monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize("package", ["datasets", "huggingface_hub"])
def test_without_the_extra_the_error_names_it(monkeypatch, capsys, package: str) -> None:
    Dataset([Golden(input="q")]).save("g.jsonl")
    block_import(monkeypatch, package)
    if package == "datasets":
        with pytest.raises(
            ConfigError, match=r"need the datasets package: pip install 'synth\[hf\]'"
        ):
            Dataset([Golden(input="q")]).to_hf()
    argv = ["export", "g.jsonl", "--format", "hf", "-o", "out"]
    if package == "huggingface_hub":
        argv += ["--push-to-hub", "me/set"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert (
        err
        == f"synth: error: Hugging Face datasets need the {package} package: pip install 'synth[hf]'\n"
    )
    assert not Path("out").exists()


def test_import_synth_does_not_import_datasets() -> None:
    code = "import sys, synth, synth.dataset; print('datasets' in sys.modules, 'huggingface_hub' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_export_hf_then_every_command_reads_the_folder(capsys) -> None:
    original = dataset()
    original.save("goldens.jsonl")
    assert main(["export", "goldens.jsonl", "--format", "hf"]) == 0
    out = capsys.readouterr().out
    assert (
        out
        == "wrote 3 goldens to goldens_hf/ (Hugging Face dataset folder, card without a run manifest)\n"
    )
    assert Dataset.load("goldens_hf") == original
    assert main(["export", "goldens_hf", "-o", "back.json"]) == 0
    assert Dataset.load("back.json") == original
    capsys.readouterr()
    assert main(["inspect", "goldens_hf", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["goldens"] == 3


def test_export_hf_refuses_push_options_for_other_formats(capsys) -> None:
    dataset().save("goldens.jsonl")
    assert main(["export", "goldens.jsonl", "-o", "x.json", "--push-to-hub", "me/set"]) == 2
    assert capsys.readouterr().err == "synth: error: --push-to-hub: only with --format hf\n"
    assert main(["export", "goldens.jsonl", "-o", "x.json", "--private", "--title", "t"]) == 2
    assert capsys.readouterr().err == "synth: error: --private, --title: only with --format hf\n"
    assert not Path("x.json").exists()


# ---- The Hugging Face table (synth/dataset/_hf.py). The extra a missing module names, synth's header
# in the description and what is not one, JSON columns left null where a golden has no value, the
# table's typed columns, and errors naming where.


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
