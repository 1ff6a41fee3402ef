"""The evaluation platforms' dataset files: promptfoo tests, LangSmith examples, Langfuse items and
the Phoenix table, written under each platform's field names and read back unchanged."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from synth import ConversationalGolden, Dataset, Golden, Turn
from synth.dataset import PHOENIX_KEYS
from synth.errors import ConfigError, DatasetError


def goldens() -> list[Golden]:
    """What each format has to carry: a context with ``|`` and unicode, a null and an empty
    context, a recorded answer and retrieval context, nested metadata, a null expected output."""
    return [
        Golden(
            input='Which pump, "P-3" | P-4, runs at night?\nAnswer briefly.',
            expected_output="P-4, 22:00\u201306:00.",
            context=["Pump P-4 runs nightly | see table 3.", "P-3: standby."],
            context_ids=["manual.pdf:3", "manual.pdf:4"],
            source_files=["manuals/manual.pdf", "notes/\u00e9t\u00e9.md"],
            metadata={"evolutions": ["reasoning"], "quality": {"critic": 0.75}},
        ),
        Golden(input="Bare?", actual_output="yes", context=[], retrieval_context=["r1", "r2"]),
        Golden(input="No context?", expected_output="", metadata={"persona": None}),
    ]


FILES = [
    ("promptfoo", "g.promptfoo.yaml"),
    ("promptfoo", "g.promptfoo.json"),
    ("langsmith", "g.langsmith.jsonl"),
    ("langfuse", "g.langfuse.jsonl"),
    ("phoenix", "g.phoenix.csv"),
]


@pytest.mark.parametrize(("fmt", "name"), FILES)
def test_each_platform_file_loads_back_as_the_same_goldens(
    fmt: str, name: str, tmp_path: Path
) -> None:
    path = Dataset(goldens()).export(tmp_path / name, format=fmt)  # type: ignore[arg-type]
    assert list(Dataset.load(path)) == goldens()


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_promptfoo_tests_have_vars_a_factuality_assert_and_metadata(tmp_path: Path) -> None:
    path = Dataset(goldens()).export(tmp_path / "t.yaml", format="promptfoo")
    tests = yaml.safe_load(path.read_text(encoding="utf-8"))
    as_json = Dataset(goldens()).export(tmp_path / "t.json", format="promptfoo")
    assert json.loads(as_json.read_text(encoding="utf-8")) == tests
    first, bare, empty = tests
    assert first["vars"] == {
        "input": goldens()[0].input,
        # one string: promptfoo runs a test per item of a list var
        "context": "Pump P-4 runs nightly | see table 3.\n\nP-3: standby.",
    }
    assert first["assert"] == [{"type": "factuality", "value": "P-4, 22:00\u201306:00."}]
    assert first["metadata"]["quality"] == {"critic": 0.75}
    assert first["metadata"]["_synth"]["source_files"][1] == "notes/\u00e9t\u00e9.md"
    assert bare["vars"] == {"input": "Bare?"} and "assert" not in bare
    assert empty["assert"] == [{"type": "factuality", "value": ""}]


def test_langsmith_examples_hold_inputs_reference_outputs_and_metadata(tmp_path: Path) -> None:
    path = Dataset(goldens()).export(tmp_path / "s.jsonl", format="langsmith")
    first, bare, _ = _lines(path)
    assert first["inputs"] == {"input": goldens()[0].input}
    assert first["outputs"] == {
        "expected_output": "P-4, 22:00\u201306:00.",
        "context": ["Pump P-4 runs nightly | see table 3.", "P-3: standby."],
    }
    assert first["metadata"] == {
        "evolutions": ["reasoning"],
        "quality": {"critic": 0.75},
        "_synth": {
            "actual_output": None,
            "retrieval_context": None,
            "context_ids": ["manual.pdf:3", "manual.pdf:4"],
            "source_files": ["manuals/manual.pdf", "notes/\u00e9t\u00e9.md"],
        },
    }
    assert bare["outputs"] == {"context": []}


def test_langfuse_items_are_create_dataset_item_arguments(tmp_path: Path) -> None:
    path = Dataset(goldens()).export(tmp_path / "f.jsonl", format="langfuse")
    items = _lines(path)
    assert all(set(item) == {"input", "expected_output", "metadata"} for item in items)
    assert items[0]["input"] == goldens()[0].input
    assert items[1]["expected_output"] is None
    assert items[0]["metadata"]["_synth"]["context"] == goldens()[0].context  # type: ignore[index]


def test_the_phoenix_table_names_every_column_in_one_key_list(tmp_path: Path) -> None:
    path = Dataset(goldens()).export(tmp_path / "x.csv", format="phoenix")
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    keys = [c for cs in PHOENIX_KEYS.values() for c in cs]
    assert rows[0] == keys and len(set(keys)) == len(keys)
    assert PHOENIX_KEYS["input_keys"] == ("input",)
    assert PHOENIX_KEYS["output_keys"] == ("expected_output",)
    assert rows[1][:2] == [goldens()[0].input, "P-4, 22:00\u201306:00."]
    assert json.loads(rows[1][keys.index("context")]) == goldens()[0].context
    frame = Dataset(goldens()).to_phoenix()
    assert list(frame.columns) == keys
    cells = [[cell if cell is not None else "" for cell in row] for row in frame.values.tolist()]
    assert cells == rows[1:]  # the frame uploads as the CSV does
    assert not (tmp_path / "x.csv.meta.json").exists()


def test_the_phoenix_frame_names_no_model_server_or_local_path(tmp_path: Path) -> None:
    """``to_phoenix()`` is uploaded as the CSV is: both hold the goldens' shareable form."""
    private = Golden(
        input="q",
        source_files=["../../home-alice/docs/guide.md", "/home/alice/notes.md"],
        metadata={
            "models": {"generator": {"provider": "openai", "base_url": "http://10.1.2.3/v1"}}
        },
    )
    path = Dataset([private]).export(tmp_path / "x.csv", format="phoenix")
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    frame = Dataset([private]).to_phoenix()
    cells = [[cell if cell is not None else "" for cell in row] for row in frame.values.tolist()]
    assert cells == rows[1:]
    shown = frame.to_csv()
    for word in ("10.1.2.3", "base_url", "alice", "../"):
        assert word not in shown
    assert json.loads(frame["source_files"][0]) == ["guide.md", "notes.md"]


@pytest.mark.parametrize(("fmt", "name"), FILES)
def test_platform_formats_refuse_conversations_and_the_reserved_key(
    fmt: str, name: str, tmp_path: Path
) -> None:
    talk = ConversationalGolden(turns=[Turn(role="user", content="hi")])
    with pytest.raises(ConfigError, match=f"a {fmt} export holds single-turn goldens"):
        Dataset([talk]).export(tmp_path / name, format=fmt)  # type: ignore[arg-type]
    reserved = Golden(input="q", metadata={"_synth": 1})
    if fmt != "phoenix":  # the table has a column per field: nothing is nested under _synth
        with pytest.raises(DatasetError, match="'_synth' is reserved"):
            Dataset([reserved]).export(tmp_path / name, format=fmt)  # type: ignore[arg-type]


def test_a_promptfoo_yaml_that_is_not_a_list_is_refused_with_its_name(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("tests: file://x.yaml\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="t.yaml: expected a list of promptfoo test cases"):
        Dataset.load(path)
    path.write_text("- vars: [\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="t.yaml: line 2: invalid YAML"):
        Dataset.load(path)


@pytest.mark.parametrize(
    ("fmt", "written"),
    [
        ("promptfoo", "g.promptfoo.yaml"),
        ("langsmith", "g.langsmith.jsonl"),
        ("langfuse", "g.langfuse.jsonl"),
        ("phoenix", "g.phoenix.csv"),
    ],
)
def test_synth_export_writes_each_platform_format_next_to_the_dataset(
    fmt: str, written: str, tmp_path: Path
) -> None:
    Dataset(goldens()).save(tmp_path / "g.jsonl")
    done = subprocess.run(
        [sys.executable, "-m", "synth", "export", str(tmp_path / "g.jsonl"), "--format", fmt],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert f"wrote 3 goldens to {tmp_path / written}" in done.stdout
    assert list(Dataset.load(tmp_path / written)) == goldens()


def test_a_text_with_a_character_yaml_reads_as_a_line_break_survives_promptfoo_yaml(
    tmp_path: Path,
) -> None:
    golden = Golden(input="a\x85b \u2028 c\u2029", source_files=["\x85"])
    path = Dataset([golden]).export(tmp_path / "t.yaml", format="promptfoo")
    assert list(Dataset.load(path)) == [golden]
