"""The run directory: run ids, append-only journals that survive a kill, identity and locking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synth.errors import ConfigError, SynthError
from synth.run.dir import Journal, RunDir, fingerprint_paths, run_id


def test_run_id_depends_on_every_part_of_the_key_and_nothing_else() -> None:
    key = {"mode": "docs", "seed": 1, "config": {"a": 1, "b": [1, 2]}}
    assert run_id(key) == run_id({"config": {"b": [1, 2], "a": 1}, "seed": 1, "mode": "docs"})
    assert run_id(key) != run_id({**key, "seed": 2})
    assert run_id(key) != run_id({**key, "config": {"a": 1, "b": [2, 1]}})
    assert len(run_id(key)) == 16


def test_fingerprint_follows_file_contents(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("one")
    (tmp_path / "docs" / ".hidden").write_text("ignored")
    first = fingerprint_paths([str(tmp_path / "docs")])
    assert [row[1] for row in first] == ["a.txt"]
    (tmp_path / "docs" / "a.txt").write_text("two")
    assert fingerprint_paths([str(tmp_path / "docs")]) != first
    assert fingerprint_paths([str(tmp_path / "missing")])[0][2] == "missing"


def test_a_partial_last_line_is_cut_off_and_appending_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "stage.jsonl"
    journal = Journal(path)
    journal.append("a", {"value": 1})
    journal.append("b", {"value": 2})
    journal.close()
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"key": "c", "value": 3')  # a process killed mid-write
    reopened = Journal(path)
    assert sorted(reopened.records) == ["a", "b"]
    reopened.append("c", {"value": 30})
    reopened.close()
    lines = path.read_text().splitlines()
    assert [json.loads(line)["key"] for line in lines] == ["a", "b", "c"]
    with Journal(path) as last:
        assert last.get("c")["value"] == 30


def test_a_damaged_line_in_the_middle_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "stage.jsonl"
    path.write_text('{"key": "a"}\nnot json\n{"key": "b"}\n')
    with pytest.raises(SynthError, match="line 2"):
        Journal(path).close()


def test_a_run_directory_holding_another_run_is_refused(tmp_path: Path) -> None:
    with RunDir.open(tmp_path / "run", {"seed": 1}) as run:
        run.write_manifest({"run_id": run.id})
    with RunDir.open(tmp_path / "run", {"seed": 1}) as again:
        assert again.resumed
    with pytest.raises(ConfigError, match="holds run"):
        RunDir.open(tmp_path / "run", {"seed": 2})


def test_two_processes_cannot_share_a_run_directory(tmp_path: Path) -> None:
    first = RunDir.open(tmp_path / "run", {"seed": 1})
    try:
        with pytest.raises(ConfigError, match="in use"):
            RunDir.open(tmp_path / "run", {"seed": 1})
    finally:
        first.close()
    RunDir.open(tmp_path / "run", {"seed": 1}).close()


def test_default_location_is_named_by_the_run_id() -> None:
    with RunDir.open(None, {"seed": 1}) as run:
        assert run.path == Path(".synth") / "runs" / run_id({"seed": 1})
