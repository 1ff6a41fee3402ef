"""The shape issue 13 set for the code, kept: no module over 400 lines, no function over 60, and
``pipeline.py`` under 300 (it reads top to bottom as the list of stages)."""

from __future__ import annotations

import ast
from pathlib import Path

SYNTH = Path(__file__).resolve().parent.parent / "synth"
MAX_MODULE, MAX_FUNCTION, MAX_PIPELINE = 400, 60, 300


def modules() -> list[Path]:
    return sorted(SYNTH.rglob("*.py"))


def test_no_module_is_over_400_lines() -> None:
    long = {p.relative_to(SYNTH).as_posix(): n for p in modules() if (n := _lines(p)) > MAX_MODULE}
    assert long == {}


def test_no_function_is_over_60_lines() -> None:
    long = {}
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > MAX_FUNCTION:
                    long[f"{path.relative_to(SYNTH).as_posix()}:{node.name}"] = size
    assert long == {}


def test_the_pipeline_module_is_under_300_lines() -> None:
    assert _lines(SYNTH / "pipeline.py") < MAX_PIPELINE


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())
