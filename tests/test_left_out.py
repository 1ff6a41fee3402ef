"""Modules an SDK imports unused, left out of the command's own process (synth/llm/_left_out.py).

The program (``python -m synth``) never imports aiohttp, which the openai SDK imports whenever it
is installed, and its requests still go through; a library user's process keeps it; an SDK that
turns out to need a left-out module gets it back. Checked by what the interpreter imported
(``-X importtime`` and ``sys.modules``), never by a clock: bench/cli.py measures the time.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from synth.errors import ConfigError
from synth.llm import _left_out
from synth.llm._adapter import import_sdk

needs_aiohttp = pytest.mark.skipif(
    importlib.util.find_spec("aiohttp") is None, reason="aiohttp is not installed here"
)


def _imported(stderr: str) -> set[str]:
    """The modules a ``-X importtime`` run imported (its stderr)."""
    return {
        line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if "import time:" in line
    }


def _program(argv: list[str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """``python -X importtime -m synth argv`` run in ``cwd`` (it must succeed), and what it
    imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "synth", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": "sk-test-left-out"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done, _imported(done.stderr)


@needs_aiohttp
def test_the_program_leaves_aiohttp_out_and_its_requests_go_through(
    fake_openai_smart, tmp_path: Path
) -> None:
    items = [
        {"id": str(i), "question": f"question {i}?", "reference": "yes", "answer": "yes"}
        for i in range(3)
    ]
    (tmp_path / "items.json").write_text(json.dumps(items), encoding="utf-8")
    argv = ["evaluate", "items.json", "--judge", "openai:m", "--base-url", fake_openai_smart.url]
    _, imported = _program([*argv, "-o", "report.json"], tmp_path)
    assert "openai._client" in imported and "aiohttp" not in imported
    assert len(fake_openai_smart.requests_to("chat")) > 0
    assert (tmp_path / "report.json").exists()


def test_a_json_run_imports_neither_rich_nor_httpxs_command_line(
    fake_openai_smart, tmp_path: Path
) -> None:
    """``synth generate --json`` prints no table and no live display: rich is not imported; and
    the new store's handle imports httpx without httpx's own command line (click, rich's views,
    pygments), which the program leaves out. The run delivers all the same."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("battery", "warranty"):
        text = f"The {name} policy covers the home battery for ten years of daily use. " * 12
        (docs / f"{name}.txt").write_text(text, encoding="utf-8")
    argv = ["generate", "docs", "--goldens", "2", "--embedder", "hash", "--model", "openai:m",
            "--base-url", fake_openai_smart.url, "--json", "-o", "out.jsonl"]  # fmt: skip
    done, imported = _program(argv, tmp_path)
    assert "httpx" in imported and "openai._client" in imported
    assert not imported & {"rich", "click", "pygments"}  # httpx._main: tried, absent
    assert json.loads(done.stdout.splitlines()[-1])["goldens"] == 2


def test_httpx_without_its_command_line_still_has_everything_else() -> None:
    code = (
        "import sys; from synth.llm._left_out import leave_out; leave_out(); import httpx; "
        "print(sys.modules['httpx._main'] is None, callable(httpx.main), httpx.Client.__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "Client"]


@needs_aiohttp
def test_a_library_process_keeps_what_the_sdk_imports() -> None:
    code = (
        "import sys; from synth.llm._adapter import import_sdk; "
        "import_sdk('openai', 'openai', 'openai'); print('aiohttp' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_an_sdk_that_needs_a_left_out_module_gets_it_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "sdk_needing_it"
    package.mkdir()
    (package / "__init__.py").write_text("from . import _needed\nVALUE = _needed.VALUE\n")
    (package / "_needed.py").write_text("VALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(_left_out, "LEFT_OUT", {"sdk_needing_it._needed": "sdk_needing_it"})
    monkeypatch.delitem(sys.modules, "sdk_needing_it._needed", raising=False)
    _left_out.leave_out()
    assert sys.modules["sdk_needing_it._needed"] is None
    try:
        assert import_sdk("sdk_needing_it", "sdk-needing-it", "test").VALUE == 42
        assert sys.modules["sdk_needing_it._needed"] is not None
    finally:
        for name in ("sdk_needing_it", "sdk_needing_it._needed"):
            sys.modules.pop(name, None)


def test_nothing_is_left_out_once_its_package_is_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_left_out, "LEFT_OUT", {"json._never_there": "json"})
    _left_out.leave_out()
    assert "json._never_there" not in sys.modules
    assert _left_out.take_back() is False


def test_loading_the_users_code_takes_the_marks_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--system module:function: the user's code may use the aiohttp client, so the SDK that
    the run's models import after it must come whole."""
    from synth.evaluate._specs import load_callable

    (tmp_path / "users_system.py").write_text("def answer(question):\n    return 'yes'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(_left_out, "LEFT_OUT", {"users_sdk._optional": "users_sdk"})
    _left_out.leave_out()
    assert sys.modules["users_sdk._optional"] is None
    try:
        assert load_callable("users_system:answer")("q") == "yes"
        assert "users_sdk._optional" not in sys.modules
    finally:
        sys.modules.pop("users_sdk._optional", None)
        sys.modules.pop("users_system", None)


def test_a_missing_sdk_still_says_what_to_install() -> None:
    with pytest.raises(ConfigError, match="pip install no-such-sdk"):
        import_sdk("no_such_sdk_module", "no-such-sdk", "test")
