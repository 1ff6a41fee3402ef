"""Command-line specs: a user's module that fails to import, and a misspelt judge provider."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

from synth._callables import load_callable
from synth.errors import ConfigError
from synth.evaluate._specs import judge_models, systems


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def module(folder: Path, code: str) -> str:
    """Write ``code`` as a module with a unique name in ``folder``; return the name."""
    name = f"specs_user_{uuid.uuid4().hex[:8]}"
    (folder / f"{name}.py").write_text(code, encoding="utf-8")
    return name


def one_line(exc: pytest.ExceptionInfo[ConfigError]) -> str:
    text = str(exc.value)
    assert "\n" not in text and "Traceback" not in text, text
    return text


BROKEN = {
    "syntax": ("x = 1\ndef answer(q):\n    return q +\n", "SyntaxError: invalid syntax", 3),
    "indent": ("def answer(q):\nreturn q\n", "IndentationError: expected an indented block", 2),
    "raises": ("import math\nVALUE = 1 / 0\n", "raised ZeroDivisionError: division by zero", 2),
    "multiline": ('raise RuntimeError("one\\ntwo")\n', "raised RuntimeError: one two", 1),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_module_that_fails_at_import_is_one_line(folder: Path, case: str) -> None:
    code, said, line = BROKEN[case]
    name = module(folder, code)
    with pytest.raises(ConfigError) as by_name:
        load_callable(f"{name}:answer")
    text = one_line(by_name)
    assert f"{name!r}" in text and said in text and f"{name}.py, line {line})" in text
    assert name not in sys.modules  # nothing half-imported is kept
    with pytest.raises(ConfigError) as by_path:
        systems([f"{name}.py:answer"])
    text = one_line(by_path)
    assert f"'{name}.py'" in text and said in text and f"{name}.py, line {line})" in text
    assert isinstance(by_path.value.__cause__, SyntaxError | ZeroDivisionError | RuntimeError)


def test_a_file_fixed_after_a_failed_import_is_imported_afresh(folder: Path) -> None:
    name = module(folder, "def answer(q):\nreturn q\n")
    with pytest.raises(ConfigError, match="IndentationError"):
        load_callable(f"{name}.py:answer")
    (folder / f"{name}.py").write_text("def answer(q):\n    return q + '!'\n", encoding="utf-8")
    assert load_callable(f"{name}.py:answer")("hi") == "hi!"


def test_a_module_whose_own_import_is_missing_names_it(folder: Path) -> None:
    name = module(folder, "import no_such_dependency_xyz\n")
    with pytest.raises(ConfigError, match="No module named 'no_such_dependency_xyz'"):
        load_callable(f"{name}:answer")


@pytest.mark.parametrize(
    "spec", ["opnai:gpt-4.1-mini", "Gemnii:gemini-2.5-flash", "antropic:claude"]
)
def test_a_misspelt_judge_provider_says_did_you_mean(folder: Path, spec: str) -> None:
    with pytest.raises(ConfigError) as info:
        judge_models([spec])
    text = one_line(info)
    assert "unknown model provider" in text and "did you mean" in text
    assert "cannot import" not in text


def test_a_local_module_near_a_provider_name_is_still_a_judge_function(folder: Path) -> None:
    (folder / "opena.py").write_text("def judge(prompt, system):\n    return '{}'\n")
    try:
        judges = judge_models(["opena:judge"])
    finally:
        sys.modules.pop("opena", None)
    assert list(judges) == ["judge"] and judges["judge"]("p", None) == "{}"


def test_a_judge_module_far_from_any_provider_is_a_plain_import_error(folder: Path) -> None:
    with pytest.raises(ConfigError, match="cannot import 'no_such_judges_xyz'"):
        judge_models(["no_such_judges_xyz:judge"])
