"""``--status`` on synth export and synth evaluate, and synth review's own refusals."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import textwrap
import time
import urllib.error
import urllib.request
import uuid
import webbrowser
from pathlib import Path

import pytest
from review_server import ReviewProcess
from synth_runs import child_env

from synth import Dataset, Golden
from synth.cli import main
from synth.cli.review import graphical_browser
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


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["empty.jsonl"], "synth: error: nothing to review: empty.jsonl holds no goldens\n"),
        (["goldens.jsonl", "--reviewer", " "], "synth: error: --reviewer: the name must not be"),
    ],
    ids=["no goldens", "blank reviewer"],
)
def test_review_refuses_a_page_where_nothing_could_be_decided(
    reviewed: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    says: str,
) -> None:
    import synth.review

    served: list[object] = []
    monkeypatch.setattr(synth.review, "serve", lambda *a, **k: served.append(a))
    Path("empty.jsonl").write_text("", encoding="utf-8")
    assert main(["review", *argv, "--no-browser"]) == 2
    assert capsys.readouterr().err.startswith(says)
    assert not served  # no page that would refuse every decision (or show nothing)


def test_review_on_a_port_taken_is_one_line_and_claims_no_saved_decision(
    reviewed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert main(["review", str(reviewed), "--port", str(port), "--no-browser"]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"synth: error: cannot listen on 127.0.0.1:{port}")
    assert captured.out == ""  # no "stopped; every decision is saved": nothing was served


def test_review_refuses_a_port_out_of_range(
    reviewed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["review", str(reviewed), "--port", "70000", "--no-browser"]) == 2
    assert "a port is 0 to 65535" in capsys.readouterr().err


#: seconds the review server gets to answer its printed URL
ANSWER_DEADLINE = 30.0


def _answers(url: str, deadline: float) -> int:
    """The HTTP status of ``url``, asked again until it answers or ``deadline`` passes."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"{url} did not answer within {ANSWER_DEADLINE}s")
        try:
            with urllib.request.urlopen(url, timeout=min(left, 5.0)) as reply:
                return int(reply.status)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.05)  # poll interval, not a wait for readiness


def test_review_on_a_headless_machine_serves_and_runs_no_console_browser(
    reviewed: Path, tmp_path: Path
) -> None:
    """A text browser installed and no display: webbrowser would run it and wait on it."""
    bin_dir, ran = tmp_path / "bin", tmp_path / "browser-ran"
    bin_dir.mkdir()
    for name in ("www-browser", "w3m", "lynx", "links", "xdg-open"):
        fake = bin_dir / name
        fake.write_text(f'#!/bin/sh\necho "$$ $0 $*" >> {ran}\nexec sleep 100000\n')
        fake.chmod(0o755)  # blocks forever, as a console browser waits on its user
    env = child_env(TERM="xterm")
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"):
        env.pop(name, None)
    env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
    review = ReviewProcess(reviewed, env=env, browser=True)
    try:
        assert _answers(review.url, time.monotonic() + ANSWER_DEADLINE) == 200
        assert review.proc.stdout is not None
        after_url = [review.proc.stdout.readline() for _ in range(2)]  # printed before serving
        assert after_url[1].startswith("no graphical browser here: open the URL above")
    finally:
        for line in ran.read_text().splitlines() if ran.exists() else []:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(line.split()[0]), signal.SIGKILL)  # a browser run despite all: ended
        review.close()
    assert not ran.exists(), ran.read_text()


@pytest.mark.parametrize(
    ("browser", "shown"),
    [
        (webbrowser.BackgroundBrowser("firefox"), True),
        (webbrowser.GenericBrowser("w3m"), False),
        (webbrowser.GenericBrowser("/usr/bin/www-browser"), False),
        (webbrowser.Elinks("elinks"), False),  # drawn in the terminal, and waited for
    ],
)
def test_with_a_display_only_a_graphical_browser_is_opened(
    monkeypatch: pytest.MonkeyPatch, browser: webbrowser.BaseBrowser, shown: bool
) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(webbrowser, "get", lambda using=None: browser)
    assert (graphical_browser() is browser) is shown
    monkeypatch.delenv("DISPLAY")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert graphical_browser() is None  # no display: no browser, whatever is installed
