"""The command leaves the garbage collector alone, as a program and inside another one.

It once froze its heap before the interpreter's teardown (0.9 s saved against a fast fake
server); against a hosted model's seconds a request that was noise, and it was removed with the
rest of the start-up machinery (docs/benchmarks.md, "Start-up machinery removed").
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

from synth import Dataset, Golden
from synth.cli import EXIT_OK, main

REPO = Path(__file__).resolve().parent.parent

#: runs ``python -m synth ARGS`` as the program, then says at exit how many objects were frozen
PROGRAM = """
import atexit, gc, runpy, sys
atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count(), file=sys.stderr))
sys.argv = ["synth", *sys.argv[1:]]
runpy.run_module("synth", run_name="__main__", alter_sys=True)
"""


def _dataset(tmp_path: Path) -> Path:
    goldens = [Golden(input="How loud is the pump?", expected_output="Quiet.")]
    return Dataset(goldens).save(tmp_path / "goldens.jsonl")


def test_the_program_freezes_no_heap_before_the_teardown(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAM, "inspect", str(_dataset(tmp_path)), "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert proc.returncode == EXIT_OK, proc.stderr
    frozen = [line for line in proc.stderr.splitlines() if line.startswith("frozen at exit:")]
    assert frozen and int(frozen[0].split(":")[1]) == 0, proc.stderr


def test_main_called_inside_another_program_leaves_its_collector_alone(tmp_path: Path) -> None:
    before = gc.get_freeze_count()
    assert main(["inspect", str(_dataset(tmp_path)), "--json"]) == EXIT_OK
    assert gc.get_freeze_count() == before
