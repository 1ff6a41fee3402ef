"""Every code block in README.md and docs/*.md runs, so the docs cannot rot.

- ```python blocks run in order, one namespace per file, in a fresh folder that holds the repo's
  ``sample_docs/`` and ``pipelines/``. A line ``expr  # value`` (the comment may continue on the next
  lines) is checked: ``repr(expr)`` must equal ``value``.
- ```sh / ```console blocks: each line that starts with ``synth`` (optionally after ``$ ``) runs as a
  real command, with the openai provider pointed at the fake OpenAI-compatible server.
- An HTML comment ``<!-- no-run -->`` right before a block skips it (for set-up commands and
  snippets that need a real key); ``<!-- fails -->`` expects a non-zero exit code.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]

_BLOCK = re.compile(
    r"(?P<marker><!--\s*(?P<flag>no-run|fails)\s*-->\s*\n)?```(?P<lang>[a-z]*)[^\n]*\n(?P<body>.*?)\n```",
    re.DOTALL,
)


@dataclass
class Block:
    path: Path
    line: int
    lang: str
    body: str
    flag: str | None


def blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    found = []
    for m in _BLOCK.finditer(text):
        line = text.count("\n", 0, m.start("body")) + 1
        found.append(Block(path, line, m.group("lang"), m.group("body"), m.group("flag")))
    return found


def _doc_id(path: Path) -> str:
    return str(path.relative_to(REPO))


@pytest.fixture
def doc_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("sample_docs", "pipelines"):
        if (REPO / name).exists():
            (tmp_path / name).symlink_to(REPO / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _split_checks(source: str) -> list[tuple[str, str | None]]:
    """Split a block into statements; an expression statement with a trailing comment is a check."""
    lines = source.splitlines()
    tree = ast.parse(source)
    pieces: list[tuple[str, str | None]] = []
    for node in tree.body:
        start, end = node.lineno - 1, node.end_lineno or node.lineno
        code = "\n".join(lines[start:end])
        expected = None
        if isinstance(node, ast.Expr) and not isinstance(node.value, ast.Constant):
            last = lines[end - 1]
            tail = last[node.end_col_offset :] if node.end_col_offset is not None else ""
            m = re.match(r"\s*#\s?(.*)$", tail)
            if m:
                expected = m.group(1).strip()
                following = end
                while following < len(lines) and re.match(r"^\s*#\s", lines[following]):
                    expected += " " + lines[following].strip()[1:].strip()
                    following += 1
                code = "\n".join(lines[start:end])[: len(code) - len(tail)].rstrip()
        pieces.append((code, expected))
    return pieces


def _run_python(block: Block, namespace: dict) -> None:
    for code, expected in _split_checks(block.body):
        where = f"{_doc_id(block.path)}:{block.line}"
        if expected is None:
            exec(compile(code, where, "exec"), namespace)
        else:
            value = eval(compile(code, where, "eval"), namespace)
            assert " ".join(repr(value).split()) == " ".join(expected.split()), f"{where}: {code}"


def _synth_commands(block: Block) -> list[str]:
    commands = []
    for raw in block.body.splitlines():
        line = raw.strip().removeprefix("$ ")
        if line.startswith("synth ") or line == "synth":
            commands.append(line)
    return commands


@pytest.mark.parametrize("path", DOC_FILES, ids=_doc_id)
def test_doc_python_blocks(path: Path, doc_folder: Path) -> None:
    todo = [b for b in blocks(path) if b.lang == "python" and b.flag != "no-run"]
    if not todo:
        pytest.skip("no python blocks")
    namespace: dict = {"__name__": "__doc__"}
    for block in todo:
        _run_python(block, namespace)


@pytest.mark.parametrize("path", DOC_FILES, ids=_doc_id)
def test_doc_commands(path: Path, doc_folder: Path, request: pytest.FixtureRequest) -> None:
    todo = [b for b in blocks(path) if b.lang in ("sh", "console", "bash", "shell") and b.flag != "no-run"]
    commands = [(b, c) for b in todo for c in _synth_commands(b)]
    if not commands:
        pytest.skip("no synth commands")
    env = dict(os.environ)
    env.update(_fake_server_env(request))
    for block, command in commands:
        argv = [sys.executable, "-m", "synth", *shlex.split(command)[1:]]
        proc = subprocess.run(argv, cwd=doc_folder, env=env, capture_output=True, text=True, timeout=600)
        where = f"{_doc_id(block.path)}:{block.line}: {command}"
        if block.flag == "fails":
            assert proc.returncode != 0, where
        else:
            assert proc.returncode == 0, f"{where}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"


def _fake_server_env(request: pytest.FixtureRequest) -> dict[str, str]:
    """Point the openai provider at the fake server when the test suite provides one."""
    try:
        server = request.getfixturevalue("fake_openai_smart")
    except pytest.FixtureLookupError:
        return {}
    return {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-docs-not-a-real-key"}
