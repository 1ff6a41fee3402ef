"""``synth generate --tools``: goldens for an agent from the command line, exact in count, the
calls run through ``--tools-exec``; a bad source or flag is one error line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import fake_openai
import pytest
from tool_sources import write_openai_tools

from synth.cli import main

EXEC_MODULE = """
def run_tool(name, arguments):
    return {"flight_id": 7} if name == "lookup_flight" else {"ok": name}
"""


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cli-tools-not-a-real-key")
    with fake_openai.FakeOpenAI(mode="generic", seed=6) as fake:
        yield fake


def test_generate_tools_writes_exactly_n_goldens_with_calls_run(
    server: fake_openai.FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tools = write_openai_tools(tmp_path / "tools.json")
    (tmp_path / "flights_exec.py").write_text(EXEC_MODULE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "agent.jsonl"
    code = main(
        [
            "generate", "--tools", str(tools), "--goldens", "6", "--tools-exec",
            "flights_exec:run_tool", "--tool-kinds", "single_call=2,sequence=1",
            "--model", "openai:fake", "--base-url", server.url, "--embedder", "hash",
            "--run-dir", str(tmp_path / "run"), "-o", str(out), "--quiet",
        ]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 6
    kinds = [row["metadata"]["tool_kind"] for row in rows]
    assert kinds.count("single_call") == 4 and kinds.count("sequence") == 2
    for row in rows:
        assert row["expected_tools"] and all(c["output"] is not None for c in row["expected_tools"])


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--tools-exec", "m:f"], "--tools-exec needs --tools SOURCE"),
        ([], "name the documents to generate from"),
        (["--tools", "TOOLS", "--goldens", "3", "docs"], "no such file or folder: docs"),
        (["--tools", "TOOLS"], "--tools needs --goldens N"),
        (["--tools", "TOOLS", "--goldens", "3", "--tool-kinds", "x=a"], "is not KIND=SHARE"),
        (["--tools", "TOOLS", "--goldens", "3", "--tool-kinds", "odd"], "unknown tool golden kind"),
        (["--tools", "TOOLS", "--goldens", "3", "--tools-exec", "nomod_x:f"], "cannot import"),
        (["--tools", "missing.json", "--goldens", "3"], "missing.json: no such file"),
    ],
)
def test_a_bad_tools_flag_or_source_is_one_error_line(
    server: fake_openai.FakeOpenAI,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    fragment: str,
) -> None:
    tools = str(write_openai_tools(tmp_path / "tools.json"))
    argv = ["generate", *[tools if a == "TOOLS" else a for a in extra]]
    argv += ["--model", "openai:fake", "--base-url", server.url, "--embedder", "hash"]
    argv += ["--run-dir", str(tmp_path / "run"), "-o", str(tmp_path / "o.jsonl"), "--quiet"]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("synth: error: ")]
    assert len(lines) == 1 and fragment in lines[0], err
    assert server.request_count("chat") == 0  # refused before any request
