"""A full disk is one line that says so and names what was being written: a run's manifest or
journal, or the Chroma store's folder (whose failure chromadb reports as an error "in compaction").

The disk is filled by making the write at synth's seam fail as a full disk makes it fail: the
flush of a file raises ``OSError(ENOSPC)`` naming no file, and chromadb raises its InternalError.
"""

from __future__ import annotations

import errno
import shutil
from pathlib import Path
from typing import Any, NoReturn

import pytest
from synth_runs import SAMPLE

from synth import _files
from synth._journal import Journal
from synth.cli import main

NO_SPACE = "No space left on device"


def full(*args: Any, **kwargs: Any) -> NoReturn:
    raise OSError(errno.ENOSPC, NO_SPACE)


def error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("synth: error: ")]
    assert len(lines) == 1, err
    return lines[0]


def test_generate_on_a_full_disk_names_the_file_it_was_writing(
    fake_openai: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setattr(_files, "_flush_file", full)  # every atomic write: the run's manifest first
    run_dir = tmp_path / "run"
    argv = ["generate", str(SAMPLE), "--goldens", "2", "--embedder", "hash", "--quiet"]
    argv += ["--model", "openai:m", "--base-url", fake_openai.url, "--run-dir", str(run_dir)]
    argv += ["-o", str(tmp_path / "out.jsonl")]
    assert main(argv) == 2
    line = error_line(capsys)
    assert line == (
        f"synth: error: cannot write {run_dir / 'manifest.json'}: the disk is full ({NO_SPACE})"
    )


def test_a_journal_on_a_full_disk_names_itself(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "inputs.jsonl")

    class FullFile:
        def write(self, text: str) -> NoReturn:
            full()

    journal._fh.close()
    journal._fh = FullFile()
    with pytest.raises(OSError) as caught:
        journal.append("k", {"v": 1})
    assert caught.value.filename == str(tmp_path / "inputs.jsonl")
    assert _files.os_error_line(caught.value) == (
        f"cannot write {tmp_path / 'inputs.jsonl'}: the disk is full ({NO_SPACE})"
    )


@pytest.mark.parametrize("says", ["words", "free space"])
def test_chroma_on_a_full_disk_is_said_as_a_full_disk_not_a_compaction_error(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    says: str,
) -> None:
    from chromadb.api.models.Collection import Collection
    from chromadb.errors import InternalError

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("Solar panels lose a tenth of their output in winter.\n")
    store = tmp_path / "store"
    argv = ["ingest", str(docs), "--embedder", "hash:32", "--store-path", str(store), "--json"]
    assert main(argv) == 0
    capsys.readouterr()
    (docs / "b.md").write_text("An inverter changes direct current into alternating current.\n")
    if says == "words":  # what chromadb says when its SQLite file cannot grow
        message = (
            "Error in compaction: Failed to apply logs to the metadata segment: "
            "database or disk is full"
        )
    else:  # chromadb says no more than this; the folder's disk says the rest
        message = "Error in compaction: Failed to apply logs to the hnsw segment writer"
        real = shutil.disk_usage

        def usage(path: Any) -> Any:
            found = real(path)
            return type(found)(found.total, found.total, 0) if Path(path) == store else found

        monkeypatch.setattr(shutil, "disk_usage", usage)

    def fails(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
        raise InternalError(message)

    monkeypatch.setattr(Collection, "get", fails)
    assert main(argv) == 2
    line = error_line(capsys)
    assert line.startswith("synth: error: cannot read chunks: ")
    assert f": the disk holding {store} is full; free some space" in line
    assert "compaction" in line.split("Chroma said:")[1]  # chromadb's words, after what they mean
