"""``--status`` on synth export and synth evaluate, and synth review's own refusals."""

from __future__ import annotations

import json
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from synth import Dataset, Golden
from synth.cli import main
from synth.dataset.review import decide, status_of


@pytest.fixture
def reviewed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Six goldens: 0 and 3 accepted, 1 rejected, the rest pending; cwd is their folder."""
    goldens = [Golden(input=f"What is {n} + {n}?", expected_output=str(2 * n)) for n in range(6)]
    goldens[0] = decide(goldens[0], "accepted", reviewer="ann")
    goldens[3] = decide(goldens[3], "accepted", reviewer="ann")
    goldens[1] = decide(goldens[1], "rejected", reason="trivial", reviewer="ann")
    Dataset(goldens, {"seed": 1}).save(tmp_path / "goldens.jsonl")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "goldens.jsonl"


@pytest.mark.parametrize(
    ("status", "inputs"),
    [("accepted", [0, 3]), ("rejected", [1]), ("pending", [2, 4, 5]), ("all", list(range(6)))],
)
def test_export_takes_the_goldens_of_one_status(
    reviewed: Path, status: str, inputs: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", str(reviewed), "--status", status, "-o", "out.json"]) == 0
    out = Dataset.load("out.json")
    assert [g.input for g in out] == [f"What is {n} + {n}?" for n in inputs]
    assert out.metadata == {"seed": 1}
    shown = "" if status == "all" else f" {status}"
    assert f"wrote {len(inputs)}{shown} goldens to out.json" in capsys.readouterr().out


def test_export_without_status_takes_every_golden(reviewed: Path) -> None:
    assert main(["export", str(reviewed), "--format", "ragas"]) == 0
    lines = Path("goldens.ragas.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6


def test_export_refuses_an_unknown_status(
    reviewed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["export", str(reviewed), "--status", "done", "-o", "out.json"])
    assert "invalid choice: 'done'" in capsys.readouterr().err


def test_evaluate_scores_only_the_accepted_goldens(
    reviewed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = f"review_system_{uuid.uuid4().hex[:8]}"
    code = "def answer(question):\n    n = int(question.split()[2])\n    return str(2 * n)\n"
    (reviewed.parent / f"{module}.py").write_text(textwrap.dedent(code), encoding="utf-8")
    monkeypatch.setattr(sys, "path", list(sys.path))
    args = ["evaluate", str(reviewed), "--system", f"{module}:answer", "--json"]
    assert main([*args, "--status", "accepted"]) == 0
    accepted = json.loads(capsys.readouterr().out)
    assert main(args) == 0
    every = json.loads(capsys.readouterr().out)
    assert len(accepted["items"]) == 2 and len(every["items"]) == 6
    assert [status_of(g) for g in Dataset.load(reviewed)].count("accepted") == 2


@pytest.mark.parametrize(
    ("name", "match"),
    [("missing.jsonl", "missing.jsonl: no such dataset file"), ("notes.txt", "synth export")],
)
def test_review_refuses_what_it_cannot_review_in_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    match: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("notes.txt").write_text("hello\n", encoding="utf-8")
    assert main(["review", name, "--no-browser"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("synth: error: ") and match in err and len(err.splitlines()) == 1


def test_review_refuses_a_port_out_of_range(
    reviewed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["review", str(reviewed), "--port", "70000", "--no-browser"]) == 2
    assert "a port is 0 to 65535" in capsys.readouterr().err
