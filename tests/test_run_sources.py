"""Where a golden's ``source_files`` point (synth/pipeline/sources.py): each file's display path
mapped to a path that opens from the working folder, or to an absolute one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from synth.data import Golden
from synth.dataset import Dataset
from synth.pipeline.sources import locate_source_files, source_locations


def _corpus(root: Path) -> list[str]:
    (root / "docs" / "sub").mkdir(parents=True)
    (root / "docs" / "a.md").write_text("alpha", encoding="utf-8")
    (root / "docs" / "sub" / "b.txt").write_text("beta", encoding="utf-8")
    (root / "docs" / "skip.bin").write_bytes(b"\x00")  # no loader: not a source
    (root / "c.md").write_text("gamma", encoding="utf-8")
    return [str(root / "docs"), str(root / "c.md")]


def test_each_display_path_opens_from_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _corpus(tmp_path / "far")
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    assert source_locations(paths) == {
        "docs/a.md": "../far/docs/a.md",
        "docs/sub/b.txt": "../far/docs/sub/b.txt",
        "c.md": "../far/c.md",
    }


def test_absolute_locations_are_whole_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _corpus(tmp_path / "far")
    monkeypatch.chdir(tmp_path)
    far = os.path.abspath(tmp_path / "far")
    assert source_locations(paths, absolute=True) == {
        "docs/a.md": f"{far}/docs/a.md",
        "docs/sub/b.txt": f"{far}/docs/sub/b.txt",
        "c.md": f"{far}/c.md",
    }
    assert source_locations([str(tmp_path / "far" / "c.md")]) == {"c.md": "far/c.md"}


def test_source_files_are_mapped_in_place_and_unknown_names_kept() -> None:
    moved = Golden(input="q1", source_files=["docs/a.md", "gone.md", "c.md"])
    kept = Golden(input="q2", source_files=["gone.md"])
    empty = Golden(input="q3")
    dataset = Dataset([moved, kept, empty], {"seed": 1})
    located = locate_source_files(dataset, {"docs/a.md": "../a.md", "c.md": "/abs/c.md"})
    assert located is dataset
    assert [g.source_files for g in dataset] == [
        ["../a.md", "gone.md", "/abs/c.md"],
        ["gone.md"],
        [],
    ]
    assert dataset[0].input == "q1" and moved.source_files == ["docs/a.md", "gone.md", "c.md"]
    # the corpus's names stay beside the paths: they are what a shared copy names
    assert dataset[0].metadata == {"corpus_files": ["docs/a.md", "gone.md", "c.md"]}
    assert moved.metadata == {}
    assert dataset[1] is kept and dataset[2] is empty  # nothing to change: the same golden
    assert dataset.metadata == {"seed": 1}
