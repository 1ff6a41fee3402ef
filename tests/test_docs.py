"""Every code block in README.md and docs/*.md runs, so the docs cannot rot.

The blocks of one page run in order, in one fresh folder that holds the repo's ``sample_docs/``
and ``pipelines/``, with the openai provider pointed at a fake OpenAI-compatible server
(``OPENAI_BASE_URL``; fixture ``fake_openai_docs`` in conftest.py) that answers synth's stage
prompts like a model would and judges with schema-shaped JSON.

- ```python blocks run in one namespace per page. A line ``expr  # value`` (the comment may
  continue on the next lines) is checked: ``repr(expr)`` must equal ``value`` (whitespace aside).
- ```sh / ```console blocks: each line that starts with ``synth`` (optionally after ``$ ``) runs as
  the command line would (``synth.cli.main`` with its arguments, in the test's process; one with
  ``--ray`` as ``python -m synth``; a ``#`` comment ends it) and must exit 0. A line that
  starts with ``pytest`` runs ``python -m pytest`` with synth's plugin (``-p synth.pytest_plugin``:
  the entry point's install is tests/test_ci_action.py's to check).
- A block whose info string says ``file=NAME`` (```python file=my_system.py) is written to NAME in
  the folder instead of being run, so later commands can use it.
- An HTML comment ``<!-- no-run -->`` right before a block skips it (for set-up commands and
  snippets that need a real key); ``<!-- fails -->`` expects every command of the block to exit
  non-zero with a one-line ``synth: error: ...`` (no traceback), or a pytest run to end with
  failed tests (exit 1, not a usage error).
"""

from __future__ import annotations

import ast
import gc
import os
import re
import shlex
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
FAKE_KEY = "sk-test-docs-not-a-real-key"

_BLOCK = re.compile(
    r"(?P<marker><!--\s*(?P<flag>no-run|fails)\s*-->\s*\n)?"
    r"```(?P<lang>[a-z]*)(?P<info>[^\n]*)\n(?P<body>.*?)\n```",
    re.DOTALL,
)
_FILE = re.compile(r"\bfile=(?P<name>\S+)")
_COMMAND_LANGS = ("sh", "console", "bash", "shell")


@dataclass
class Block:
    path: Path
    line: int
    lang: str
    body: str
    flag: str | None
    file: str | None = None

    @property
    def where(self) -> str:
        return f"{_doc_id(self.path)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    found = []
    for m in _BLOCK.finditer(text):
        line = text.count("\n", 0, m.start("body")) + 1
        named = _FILE.search(m.group("info"))
        found.append(
            Block(
                path,
                line,
                m.group("lang"),
                m.group("body"),
                m.group("flag"),
                named.group("name") if named else None,
            )
        )
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
        if expected is None:
            exec(compile(code, block.where, "exec"), namespace)
        else:
            value = eval(compile(code, block.where, "eval"), namespace)
            got = " ".join(repr(value).split())
            assert got == " ".join(expected.split()), f"{block.where}: {code}\n  got: {got}"


def _synth_commands(block: Block) -> list[str]:
    commands = []
    for raw in block.body.splitlines():
        line = raw.strip().removeprefix("$ ")
        if line.startswith(("synth ", "pytest ")) or line == "synth":
            commands.append(line)
    return commands


def _run_command(
    block: Block,
    command: str,
    folder: Path,
    env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    program, *args = shlex.split(command, comments=True)
    # a command that starts a Ray for itself runs in a process of its own, which ends Ray with it
    if program == "synth" and "--ray" not in args:
        code, stdout, stderr = _synth_here(args, capsys)
    else:
        if program == "pytest":
            env = {**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
            args = ["-p", "synth.pytest_plugin", "-p", "no:cacheprovider", *args]
        argv = [sys.executable, "-m", program, *args]
        proc = subprocess.run(
            argv, cwd=folder, env=env, capture_output=True, text=True, timeout=600
        )
        code, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    where = f"{block.where}: {command}"
    output = f"\n{stdout[-2000:]}\n{stderr[-3000:]}"
    if block.flag == "fails" and program == "pytest":
        assert code == pytest.ExitCode.TESTS_FAILED, where + output
    elif block.flag == "fails":
        assert code != 0, where + output
        assert "Traceback" not in stderr, where + output
        assert "synth: error: " in stderr, where + output
    else:
        assert code == 0, where + output


def _synth_here(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``synth args`` in this process, as ``python -m synth`` would: its exit code, stdout
    and stderr. A page's commands run here, not each in a new interpreter: a new one spent
    about 3 s importing the SDKs before the command began, and the pages hold over a hundred
    commands. What only a new process shows (the entry point, exit codes through the
    interpreter, signals) is tests/test_cli_exit.py's, test_startup.py's and test_ctrl_c.py's.
    An exception the command lets out fails the page with its traceback, as it would print one."""
    from synth.cli import main

    capsys.readouterr()  # what the page's python blocks printed is not the command's
    try:
        code = main(args)
    except SystemExit as stop:  # argparse's usage errors, as the interpreter would end them
        if isinstance(stop.code, str):
            print(stop.code, file=sys.stderr)
        code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
    out, err = capsys.readouterr()
    return code, out, err


def _runnable(block: Block) -> bool:
    if block.flag == "no-run":
        return False
    return block.file is not None or block.lang == "python" or block.lang in _COMMAND_LANGS


def test_every_page_has_runnable_blocks_or_none_at_all() -> None:
    """A block marked ``fails`` must hold a command; a ``file=`` block must name a plain file."""
    for path in DOC_FILES:
        for block in blocks(path):
            if block.flag == "fails":
                assert _synth_commands(block), f"{block.where}: a fails block without a command"
            if block.file is not None:
                assert "/" not in block.file and block.file not in (".", ".."), block.where


@pytest.mark.slow
@pytest.mark.parametrize("path", DOC_FILES, ids=_doc_id)
def test_doc_blocks(
    path: Path,
    doc_folder: Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    todo = [b for b in blocks(path) if _runnable(b)]
    if not todo:
        pytest.skip("no runnable blocks")
    server_env = _fake_server_env(request)
    for name, value in server_env.items():
        monkeypatch.setenv(name, value)
    env = {**os.environ, **server_env}
    namespace: dict = {"__name__": "__doc__"}
    try:
        for block in todo:
            if block.file is not None:
                (doc_folder / block.file).write_text(block.body + "\n", encoding="utf-8")
            elif block.lang == "python":
                _run_python(block, namespace)
            else:
                for command in _synth_commands(block):
                    _run_command(block, command, doc_folder, env, capsys)
    finally:
        # a page's models keep HTTP clients open, as a user's script would until it exits
        namespace.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()


# ---- docs/cli.md: its usage blocks are the commands' real --help output --------------------------
CLI_PAGE = REPO / "docs" / "cli.md"
HELP_COLUMNS = "100"


def _help_command(body: str) -> list[str] | None:
    """``["ingest"]`` for a block holding ``synth ingest --help`` output, ``[]`` for ``synth --help``."""
    words = body.split()
    if words[:2] != ["usage:", "synth"] or len(words) < 3:
        return None
    return [] if words[2].startswith("[") else [words[2]]


def _help_text(command: list[str]) -> str:
    env = {**os.environ, "COLUMNS": HELP_COLUMNS}
    proc = subprocess.run(
        [sys.executable, "-m", "synth", *command, "--help"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return "\n".join(line.rstrip() for line in proc.stdout.rstrip().splitlines())


def _help_blocks() -> list[tuple[Block, list[str]]]:
    found = []
    for block in blocks(CLI_PAGE) if CLI_PAGE.exists() else []:
        command = _help_command(block.body) if block.lang == "text" else None
        if command is not None:
            found.append((block, command))
    return found


def test_cli_page_shows_every_command_help_as_it_is() -> None:
    """docs/cli.md holds every subcommand's --help; regenerate with `python tests/test_docs.py`."""
    shown = _help_blocks()
    commands = {tuple(c) for _, c in shown}
    listed = {(name,) for name in _subcommands()} | {()}
    assert commands == listed, f"docs/cli.md shows {sorted(commands)}, synth has {sorted(listed)}"
    for block, command in shown:
        body = "\n".join(line.rstrip() for line in block.body.splitlines())
        assert body == _help_text(command), (
            f"{block.where}: `synth {' '.join(command)} --help` changed; "
            "run `python tests/test_docs.py` to rewrite docs/cli.md's usage blocks"
        )


def _subcommands() -> list[str]:
    from synth.cli import build_parser

    parser = build_parser()
    for action in parser._actions:  # argparse keeps subparsers as an action
        if action.choices and isinstance(action.choices, dict):
            return sorted(action.choices)
    return []


def rewrite_cli_page() -> None:
    """Replace every usage block of docs/cli.md with the command's current --help output."""
    text = CLI_PAGE.read_text(encoding="utf-8")
    for block, command in reversed(_help_blocks()):
        start = sum(len(line) + 1 for line in text.split("\n")[: block.line - 1])
        end = start + len(block.body)
        text = text[:start] + _help_text(command) + text[end:]
    CLI_PAGE.write_text(text, encoding="utf-8")


def _fake_server_env(request: pytest.FixtureRequest) -> dict[str, str]:
    """Point the openai provider at the fake server."""
    server = request.getfixturevalue("fake_openai_docs")
    return {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": FAKE_KEY}


if __name__ == "__main__":
    rewrite_cli_page()
