"""The run directory: run ids, append-only journals that survive a kill, identity and locking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import synth._files
from synth._ids import canonical_json, file_hash, text_hash
from synth._journal import Journal
from synth.errors import ConfigError, SynthError
from synth.run.dir import RUN_FORMAT, RunDir, fingerprint_paths, run_id


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


def test_the_run_format_is_part_of_the_id() -> None:
    key = {"seed": 1}
    assert run_id(key) == text_hash(canonical_json({"run_format": RUN_FORMAT, "seed": 1}), 16)
    assert RUN_FORMAT == 1


def test_fingerprint_rows_name_the_path_given_each_file_and_its_hash(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / ".git").mkdir()
    (docs / "b.txt").write_text("bee")
    (docs / "sub" / "a.txt").write_text("ay")
    (docs / ".git" / "config").write_text("hidden folder")
    (docs / "sub" / ".swp").write_text("hidden file")
    single = tmp_path / "one.txt"
    single.write_text("one")
    rows = fingerprint_paths([str(single), str(docs), str(tmp_path / "gone")])
    assert rows == [
        [str(single), "", file_hash(single)],
        [str(docs), "b.txt", file_hash(docs / "b.txt")],
        [str(docs), "sub/a.txt", file_hash(docs / "sub" / "a.txt")],
        [str(tmp_path / "gone"), "", "missing"],
    ]


def test_an_unreadable_file_in_a_folder_is_fingerprinted_with_the_reason(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "loop").symlink_to(docs / "loop")  # a link to itself: opening it fails
    assert fingerprint_paths([str(docs)]) == [
        [str(docs), "loop", "unreadable: Too many levels of symbolic links"]
    ]


def test_a_journal_keeps_the_last_record_of_a_key_and_writes_one_line_each(tmp_path: Path) -> None:
    path = tmp_path / "stage.jsonl"
    with Journal(path) as journal:
        assert len(journal) == 0 and "a" not in journal and journal.get("a") is None
        journal.append("a", {"value": "é", "at": Path("x")})
        journal.append("a", {"value": 2})
        journal.append("b", {})
        assert len(journal) == 2 and "a" in journal and "c" not in journal
        assert journal.get("a") == {"key": "a", "value": 2}
        # flushed at once: a reader sees every line while the journal is still open
        assert path.read_text(encoding="utf-8") == (
            '{"key": "a", "value": "é", "at": "x"}\n{"key": "a", "value": 2}\n{"key": "b"}\n'
        )
    path.write_text(path.read_text(encoding="utf-8") + "\n  \n", encoding="utf-8")
    with Journal(path) as reopened:
        assert reopened.records == {"a": {"key": "a", "value": 2}, "b": {"key": "b"}}


def test_a_cut_off_line_is_removed_from_the_file_itself(tmp_path: Path) -> None:
    path = tmp_path / "stage.jsonl"
    path.write_text('{"key": "a"}\n{"key": "b", "val')
    Journal(path).close()
    assert path.read_text() == '{"key": "a"}\n'
    path.write_text('{"key": "a"}')  # not one complete line
    with Journal(path) as journal:
        assert journal.records == {}
    assert path.read_text() == ""


@pytest.mark.parametrize("line", ["not json", '{"value": 1}', "[1, 2]", '"text"'])
def test_a_line_that_is_not_a_run_record_names_the_file_and_the_line(
    tmp_path: Path, line: str
) -> None:
    path = tmp_path / "stage.jsonl"
    path.write_text('{"key": "a"}\n\n' + line + "\n")
    with pytest.raises(SynthError) as info:
        Journal(path)
    assert str(info.value) == (
        f"{path}: line 3 is not a run record; the run directory is damaged: delete it (or "
        "choose another --run-dir)"
    )


def test_a_journal_key_is_read_back_as_text(tmp_path: Path) -> None:
    path = tmp_path / "stage.jsonl"
    path.write_text('{"key": 7, "value": 1}\n')
    with Journal(path) as journal:
        assert journal.records == {"7": {"key": 7, "value": 1}} and "7" in journal


def test_a_run_directory_is_made_once_and_its_journals_are_shared(tmp_path: Path) -> None:
    folder = tmp_path / "deep" / "run"
    with RunDir.open(folder, {"seed": 1}) as run:
        assert run.path == folder and folder.is_dir() and run.id == run_id({"seed": 1})
        assert run.resumed is False and run.read_manifest() is None
        # the lock is a hidden file, which fingerprints and listings of the folder leave out
        assert [p.name for p in folder.iterdir()] == [".lock"]
        journal = run.journal("filter")
        assert run.journal("filter") is journal and journal.path == folder / "filter.jsonl"
        journal.append("k", {})
        run.write_manifest({"run_id": run.id, "note": "é"})
        assert run.manifest_path == folder / "manifest.json"
        assert run.manifest_path.read_text(encoding="utf-8") == (
            '{\n  "run_id": "' + run.id + '",\n  "note": "é"\n}\n'
        )
        assert run.read_manifest() == {"run_id": run.id, "note": "é"}
    assert journal._fh.closed
    with RunDir.open(folder, {"seed": 1}) as again:
        assert again.resumed and again.journal("filter").get("k") == {"key": "k"}
    run.close()  # closing twice is harmless


def test_a_run_directory_refusals_say_what_to_do(tmp_path: Path) -> None:
    with RunDir.open(tmp_path / "run", {"seed": 1}) as run:
        run.write_manifest({"run_id": "0123456789abcdef"})
    with pytest.raises(ConfigError) as info:
        RunDir.open(tmp_path / "run", {"seed": 1})
    assert str(info.value) == (
        f"the run directory {tmp_path / 'run'} holds run 0123456789abcdef, made with other "
        f"inputs, settings or seed (this command is run {run.id}); choose another --run-dir or "
        "delete that one"
    )
    (tmp_path / "run" / "manifest.json").write_text("{not json")
    with pytest.raises(SynthError) as damaged:
        RunDir.open(tmp_path / "run", {"seed": 1})
    assert str(damaged.value) == (
        f"{tmp_path / 'run' / 'manifest.json'} is not valid JSON; delete the run directory to "
        "start over"
    )
    # each refused open let go of the folder's lock at once (the error, still held here, keeps
    # the refused RunDir alive): with the damage removed, the folder opens
    (tmp_path / "run" / "manifest.json").unlink()
    first = RunDir.open(tmp_path / "run", {"seed": 1})
    try:
        with pytest.raises(ConfigError) as busy:
            RunDir.open(tmp_path / "run", {"seed": 1})
        assert str(busy.value) == (
            f"the run directory {tmp_path / 'run'} is in use by another synth process; wait "
            "for it to finish or choose another --run-dir"
        )
    finally:
        first.close()
    (tmp_path / "file").write_text("")
    with pytest.raises(ConfigError) as blocked:
        RunDir.open(tmp_path / "file" / "run", {"seed": 1})
    assert str(blocked.value) == (
        f"cannot create the run directory {tmp_path / 'file' / 'run'}: "
        f"{tmp_path / 'file'} is a file, not a folder"
    )
    with pytest.raises(ConfigError) as taken:  # not "File exists"
        RunDir.open(tmp_path / "file", {"seed": 1})
    assert str(taken.value) == (
        f"cannot create the run directory {tmp_path / 'file'}: "
        f"{tmp_path / 'file'} is a file, not a folder"
    )


def test_the_manifest_is_replaced_without_flushing_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flushed: list[Path] = []
    monkeypatch.setattr(synth._files, "_flush_folder", flushed.append)
    with RunDir.open(tmp_path / "run", {"seed": 1}) as run:
        run.write_manifest({"run_id": run.id})
        run.write_manifest({"run_id": run.id, "status": "complete"})
    # rewritten every few seconds while a run goes: the previous manifest is as good
    assert flushed == [] and run.read_manifest() == {"run_id": run.id, "status": "complete"}
