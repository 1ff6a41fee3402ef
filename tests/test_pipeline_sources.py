"""A golden's source_files open from where the run was started (or are absolute when asked),
while the store and the run directory keep the display paths that chunk ids are made from."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from synth_replies import Replies

from synth import FunctionModel, Synthesizer
from synth.cli import build_parser
from synth.cli.generate import _synthesizer, pipeline_from_args

TEXT = (
    "The {name} pump moves water from the cistern to the roof tank. It runs at night, from "
    "22:00 to 06:00, when power is cheap. Its filter is cleaned every month; a clogged filter "
    "makes the pump overheat and stop. "
)


def _corpus(root: Path) -> list[str]:
    """A folder two levels down and a file given on its own, away from the working folder."""
    (root / "corpus" / "notes").mkdir(parents=True)
    (root / "loose").mkdir()
    (root / "corpus" / "notes" / "a.md").write_text(TEXT.format(name="P-3") * 12)
    (root / "corpus" / "b.md").write_text(TEXT.format(name="P-4") * 12)
    (root / "loose" / "c.md").write_text(TEXT.format(name="P-5") * 12)
    return [str(root / "corpus"), str(root / "loose" / "c.md")]


def _run(paths: list[str], run_dir: Path, **kw: object) -> Synthesizer:
    return Synthesizer(
        FunctionModel(Replies(), name="replies"),
        embedder="hash",
        run_dir=run_dir,
        cache=None,
        store_path=run_dir.parent / "chroma",
        **kw,  # type: ignore[arg-type]
    )


def test_source_files_open_from_the_working_folder_and_the_run_keeps_display_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _corpus(tmp_path / "far" / "away")
    here = tmp_path / "work"
    here.mkdir()
    monkeypatch.chdir(here)
    synth = _run(paths, tmp_path / "state" / "run")
    dataset = synth.generate_goldens_from_docs(paths, num_goldens=6)
    assert len(dataset) == 6
    named = {name for golden in dataset for name in golden.source_files}
    assert named <= {
        "../far/away/corpus/notes/a.md",
        "../far/away/corpus/b.md",
        "../far/away/loose/c.md",
    }
    assert len(named) >= 2
    assert all(Path(name).is_file() for name in named)  # they open from here
    # the run directory (and so the store and the chunk ids) keeps the display paths
    saved_text = (tmp_path / "state" / "run" / "goldens.jsonl").read_text()
    saved = [json.loads(line) for line in saved_text.splitlines()]
    kept = {name for golden in saved for name in golden["source_files"]}
    assert kept <= {"corpus/notes/a.md", "corpus/b.md", "c.md"}
    assert [g["context_ids"] for g in saved] == [g.context_ids for g in dataset]


def test_absolute_paths_and_a_replay_from_another_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _corpus(tmp_path / "far")
    run_dir = tmp_path / "state" / "run"
    monkeypatch.chdir(tmp_path)
    first = _run(paths, run_dir, absolute_paths=True).generate_goldens_from_docs(
        paths, num_goldens=4
    )
    for golden in first:
        assert golden.source_files
        assert all(os.path.isabs(name) and Path(name).is_file() for name in golden.source_files)
    (tmp_path / "elsewhere" / "deeper").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "elsewhere" / "deeper")
    again = _run(paths, run_dir)
    replayed = again.generate_goldens_from_docs(paths, num_goldens=4)
    assert again.manifest["sessions"][-1].get("replayed")
    assert [g.input for g in replayed] == [g.input for g in first]
    for before, after in zip(first, replayed, strict=True):
        assert [os.path.abspath(name) for name in after.source_files] == before.source_files
        assert all(name.startswith("../../far/") for name in after.source_files)


def test_the_absolute_flag_reaches_the_synthesizer() -> None:
    parser = build_parser()
    for argv, expected in (([], False), (["--absolute"], True)):
        args = parser.parse_args(["generate", "docs", *argv])
        assert _synthesizer(pipeline_from_args(args), args).absolute_paths is expected
