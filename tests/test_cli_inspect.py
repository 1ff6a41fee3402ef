"""`synth inspect` through synth.cli.main, and once through the real entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from synth import Dataset, Golden, inspect_dataset
from synth.cli import EXIT_ERROR, EXIT_OK, main

REPO = Path(__file__).resolve().parent.parent
MARKUP = "Is [bold]x[/bold] the same as [/] and [red]?"


def _save(name: str = "goldens.jsonl") -> Path:
    goldens = [
        Golden(
            input=MARKUP,
            expected_output="Yes.",
            context=["Is [bold]x[/bold] the same? [red] and x, yes."],
            source_files=["[red]a.md"],
            metadata={"evolutions": ["[bold]reasoning"], "citations": []},
        ),
        Golden(input=MARKUP, source_files=["[red]a.md"]),
        Golden(
            input="How loud is the pump?",
            expected_output="Quiet.",
            metadata={
                "difficulty": {"label": "[u]hard", "overlap": 0.9, "unanswerable": False},
                "grounding": {"score": 0.8, "quotes": 1, "found": 1, "all_found": True},
            },
        ),
    ]
    Dataset(goldens).save(name)
    return Path(name)


def test_json_is_the_library_inspection(capsys: pytest.CaptureFixture[str]) -> None:
    path = _save()
    argv = ["inspect", str(path), "--json", "--embedder", "hash", "--leak-threshold", "0.5"]
    assert main(argv) == EXIT_OK
    printed = json.loads(capsys.readouterr().out)
    expected = inspect_dataset(path, embedder="hash", leak_threshold=0.5)
    assert printed == expected.model_dump(mode="json")
    assert printed["near_duplicates"] == [{"i": 0, "j": 1, "similarity": 1.0}]


def test_the_tables_print_the_datasets_text_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    """Questions, file names and labels holding rich markup print literally, never styled."""
    _save()
    assert main(["inspect", "goldens.jsonl", "--embedder", "hash", "--leak-threshold", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "goldens.jsonl: 3 goldens" in out
    for literal in ("[red]a.md", "[bold]reasoning", "[u]hard"):
        assert literal in out
    assert out.count(MARKUP) == 3  # once as a leak, twice as a near-duplicate pair
    assert "hash:384, similarity >= 0.9): 1 pair" in out
    assert "1 of 1 measured (score >= 0.5): 100.0%" in out


def test_the_tables_say_what_was_not_measured(capsys: pytest.CaptureFixture[str]) -> None:
    Dataset([Golden(input="When?", expected_output="Now.")]).save("plain.json")
    assert main(["inspect", "plain.json"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "not measured (name an embedder: --embedder hash)" in out
    assert "1 (index 0) (this dataset records no citations)" in out
    assert "questions that leak (overlap with their context >= 0.8): 0" in out


def test_show_limits_the_rows(capsys: pytest.CaptureFixture[str]) -> None:
    question = "What is the refund window?"
    goldens = [Golden(input=f"{question} {n}", context=[f"{question} {n}"]) for n in range(4)]
    Dataset(goldens).save("leaky.jsonl")
    assert main(["inspect", "leaky.jsonl", "--show", "1"]) == EXIT_OK
    out = capsys.readouterr().out
    assert f"{question} 0" in out and f"{question} 1" not in out
    assert "... and 3 more (--show N prints more, --json all)" in out


def _exit_code(argv: list[str]) -> int:
    """main()'s exit code; a usage error (argparse) ends in SystemExit, the others return."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["missing.jsonl"], "synth: error: missing.jsonl: no such file"),
        (["broken.json"], "synth: error: broken.json"),
        (["goldens.jsonl", "--leak-threshold", "1.5"], "must be between 0 and 1, got '1.5'"),
        (["goldens.jsonl", "--duplicate-threshold", "nan"], "must be between 0 and 1"),
        (["goldens.jsonl", "--grounding-threshold", "high"], "expected a number between 0 and 1"),
        (["goldens.jsonl", "--show", "-1"], "must be 0 or more"),
        (["goldens.jsonl", "--embedder", "nope"], "synth: error: unknown embedder"),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _save()
    Path("broken.json").write_text("{not json", encoding="utf-8")
    assert _exit_code(["inspect", *argv]) == EXIT_ERROR
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err and len(captured.err.strip().splitlines()) == 1


def test_the_real_command_inspects_and_exits_0(tmp_path: Path) -> None:
    path = _save(str(tmp_path / "goldens.csv"))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "synth", "inspect", str(path), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == inspect_dataset(path).model_dump(mode="json")
