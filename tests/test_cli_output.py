"""What the command prints when its stdout is a pipe: whole tables, and a quiet end when the
reader closes the pipe early (``synth ... | head``)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table

from synth import Dataset, Golden
from synth.cli import EXIT_CLOSED_PIPE
from synth.cli.console import print_fitted

REPO = Path(__file__).resolve().parent.parent
LONG_JUDGE = "a-judge-with-a-rather-long-name-2025-04-14"
USER_CODE = f"""
import json
import time
from pathlib import Path

def answer(question):
    return "4"

def answer_when_told(question):
    Path("started").touch()
    deadline = time.monotonic() + 120
    while not Path("go").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return "4"

def {LONG_JUDGE.replace("-", "_")}(prompt, system):
    if '"claims"' in prompt:
        quote = prompt.split('<context index="1">\\n')[1].split('\\n</context>')[0]
        verdict = {{"index": 1, "evidence": quote, "supported": True}}
        return json.dumps({{"claims": ["c"], "verdicts": [verdict]}})
    return json.dumps({{"score": 5, "reason": ""}})
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return env


def _project(folder: Path, items: int) -> None:
    (folder / "user_code.py").write_text(USER_CODE, encoding="utf-8")
    goldens = [
        Golden(input=f"What is 2 + 2? ({n})", expected_output="4", context=["2 + 2 = 4."])
        for n in range(items)
    ]
    Dataset(goldens).save(folder / "goldens.jsonl")


def _synth(*args: str) -> list[str]:
    return [sys.executable, "-m", "synth", *args]


def test_a_piped_table_keeps_every_column(tmp_path: Path) -> None:
    _project(tmp_path, 3)
    judge = f"{LONG_JUDGE}=user_code:{LONG_JUDGE.replace('-', '_')}"
    proc = subprocess.run(
        _synth("evaluate", "goldens.jsonl", "--system", "user_code:answer", "--judge", judge),
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if "judge" in line and "replies" in line)
    for column in ("judge", "model", "replies", "cached", "in tokens", "out tokens", "errors"):
        assert column in header, header
    row = next(line for line in lines if line.startswith(f"│ {LONG_JUDGE} "))
    assert f"function:user_code.{LONG_JUDGE.replace('-', '_')}" in row or "user_code" in row
    assert row.rstrip().endswith("0 │")  # the errors column, whole
    assert max(len(line) for line in lines) > 80  # wider than rich's default for a pipe


@pytest.mark.parametrize("width", [40, 60, 100])
def test_a_table_on_a_narrow_terminal_folds_and_keeps_every_column(width: int) -> None:
    table = Table(title="judges")
    table.add_column("judge")
    table.add_column("model", overflow="fold", min_width=14)
    for name in ("replies", "cached", "in tokens", "out tokens", "errors"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_row(LONG_JUDGE, f"openai:{LONG_JUDGE}", "123456", "1000", "123456789", "1234", "7")
    console = Console(force_terminal=True, color_system=None, width=width, record=True)
    print_fitted(console, table)
    lines = console.export_text().splitlines()
    assert all(len(line) <= width for line in lines)
    top = next(line for line in lines if line.startswith("┏"))
    assert top.endswith("┓") and top.count("┳") == 6  # seven columns, none cut off
    assert any(line.rstrip().endswith("7 │") for line in lines)  # the last cell, whole


def _wait_for(path: Path, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while not path.exists():
        assert proc.poll() is None, "the command ended before its system was called"
        assert time.monotonic() < deadline, f"gave up waiting for {path}"
        time.sleep(0.01)


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["tables", "json"])
def test_a_pipe_closed_while_the_command_runs_ends_quietly_with_141(
    tmp_path: Path, json_flag: list[str]
) -> None:
    """The reader goes away while the command still works (``synth ... | head`` that has read
    what it wanted): no traceback, no "[Errno 32] Broken pipe", exit 141, every time."""
    _project(tmp_path, 1)
    codes = []
    for attempt in range(2):
        for marker in ("started", "go"):
            (tmp_path / marker).unlink(missing_ok=True)
        proc = subprocess.Popen(
            _synth("evaluate", "goldens.jsonl", "--system", "user_code:answer_when_told",
                   "-o", f"report-{attempt}.json", *json_flag),
            cwd=tmp_path,
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        assert proc.stdout is not None and proc.stderr is not None
        _wait_for(tmp_path / "started", proc)
        proc.stdout.close()  # the reader is gone before anything was printed
        (tmp_path / "go").touch()
        err = proc.stderr.read().decode()
        proc.stderr.close()
        codes.append(proc.wait(timeout=300))
        assert err == ""
        assert (tmp_path / f"report-{attempt}.json").exists()  # the work was kept
    assert codes == [EXIT_CLOSED_PIPE, EXIT_CLOSED_PIPE]


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["evaluate", "--help"],
        ["evaluate", "goldens.jsonl", "--system", "user_code:answer"],
    ],
    ids=["help", "evaluate-help", "evaluate"],
)
def test_a_pipe_closed_before_anything_is_written_ends_quietly_with_141(
    tmp_path: Path, args: list[str]
) -> None:
    _project(tmp_path, 3)
    read, write = os.pipe()
    os.close(read)  # a reader that is already gone: the first write fails
    try:
        done = subprocess.run(
            _synth(*args), cwd=tmp_path, env=_env(), stdout=write, stderr=subprocess.PIPE,
            timeout=300,
        )  # fmt: skip
    finally:
        os.close(write)
    assert (done.returncode, done.stderr.decode()) == (EXIT_CLOSED_PIPE, "")
