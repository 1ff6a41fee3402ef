"""The ``synth`` program leaves its heap to the operating system when it ends.

Tearing down a heap of cyclic objects (the openai SDK's types, numpy's) took up to 1.7 s of
``synth evaluate``'s exit on a busy machine, past its last output. Run as the program, synth freezes the collector's
view of the heap once the command is done; called as a function (tests, notebooks), it does not.
Checked by the collector's own count, never by a clock.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: ``python -m synth ARGV`` as the program runs, saying at exit how many objects were frozen
_AS_PROGRAM = """
import atexit, gc, runpy, sys
atexit.register(lambda: print("frozen", gc.get_freeze_count()))
sys.argv = ["synth", *{argv!r}]
runpy.run_module("synth", run_name="__main__", alter_sys=True)
"""
#: ``main(ARGV)`` called as a function
_AS_FUNCTION = """
import gc
from synth.cli import main
code = main({argv!r})
print("frozen", gc.get_freeze_count(), "code", code)
"""


def _run(code: str, cwd: Path) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return done.returncode, done.stdout


def _answered(tmp_path: Path) -> list[str]:
    items = [{"id": "a", "question": "Where?", "reference": "Here.", "answer": "Here."}]
    (tmp_path / "data.json").write_text(json.dumps(items), encoding="utf-8")
    return ["evaluate", "data.json", "--text-metric", "exact_match"]


def test_the_program_freezes_its_heap_once_the_command_is_done(tmp_path: Path) -> None:
    code, out = _run(_AS_PROGRAM.format(argv=_answered(tmp_path)), tmp_path)
    assert code == 0, out
    assert "exact_match" in out  # the command ran and printed its table first
    frozen = int(out.rsplit("frozen", 1)[1].split()[0])
    assert frozen > 10_000


def test_main_called_as_a_function_leaves_the_collector_as_it_was(tmp_path: Path) -> None:
    code, out = _run(_AS_FUNCTION.format(argv=_answered(tmp_path)), tmp_path)
    assert code == 0, out
    assert out.rsplit("frozen", 1)[1].split() == ["0", "code", "0"]
