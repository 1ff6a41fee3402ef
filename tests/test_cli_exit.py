"""How the ``synth`` program ends: after its exit functions, without the interpreter's teardown.

The teardown (every module and object freed one by one) took 0.55 to 0.85 s of a core after a
``synth generate`` and only delayed the shell's prompt (docs/benchmarks.md, "The program's end").
The program skips it, and still runs every exit function registered while its command ran, keeps
its exit code and output, and stands aside where exit functions came before it (coverage).

The command also leaves the garbage collector alone: it once froze its heap before the teardown,
removed with the rest of the start-up machinery (docs/benchmarks.md, "Start-up machinery
removed").
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

from synth import Dataset, Golden
from synth.cli import EXIT_ERROR, EXIT_OK, main

REPO = Path(__file__).resolve().parent.parent

#: runs ``python -m synth ARGS`` as the program, then says at exit how many objects were frozen
PROGRAM = """
import atexit, gc, runpy, sys
atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count(), file=sys.stderr))
sys.argv = ["synth", *sys.argv[1:]]
runpy.run_module("synth", run_name="__main__", alter_sys=True)
"""

#: a user's system under test: answers, and closes its own resources at exit
SYSTEM = """
import atexit, os

def _close():
    with open(os.environ["SYSTEM_CLOSED"], "w") as fh:
        fh.write("closed")

atexit.register(_close)

def answer(question):
    return "Quiet."
"""

#: loaded by the interpreter at start-up: an object that says so if the teardown frees it, and
#: (with SITE_EXIT set) an exit function registered before the program starts, as coverage does
SITE = """
import atexit, os

class _Probe:  # what it calls is bound now: the teardown empties the modules' names first
    def __del__(self, path=os.environ["TORN_DOWN"], o=os.open, w=os.write, c=os.close,
                flags=os.O_WRONLY | os.O_CREAT):
        fd = o(path, flags, 0o644)
        w(fd, b"torn down")
        c(fd)

_probe = _Probe()
if os.environ.get("SITE_EXIT"):
    atexit.register(lambda: open(os.environ["SITE_EXIT"], "w").write("ran"))
"""


def _dataset(tmp_path: Path) -> Path:
    goldens = [Golden(input="How loud is the pump?", expected_output="Quiet.")]
    return Dataset(goldens).save(tmp_path / "goldens.jsonl")


def _synth(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m synth ARGS`` with tmp_path's modules (``SITE`` as sitecustomize) importable."""
    (tmp_path / "sitecustomize.py").write_text(SITE)
    (tmp_path / "my_system.py").write_text(SYSTEM)
    return subprocess.run(
        [sys.executable, "-m", "synth", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)]),
            "TORN_DOWN": str(tmp_path / "torn_down"),
            "SYSTEM_CLOSED": str(tmp_path / "system_closed"),
            **env,
        },
        timeout=120,
    )


def test_the_program_ends_without_tearing_down_its_heap(tmp_path: Path) -> None:
    proc = _synth(tmp_path, "inspect", str(_dataset(tmp_path)), "--json")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert json.loads(proc.stdout)["goldens"] == 1  # the whole output, flushed before the end
    assert not (tmp_path / "torn_down").exists()


def test_exit_functions_registered_while_the_command_ran_still_run(tmp_path: Path) -> None:
    dataset = _dataset(tmp_path)
    proc = _synth(
        tmp_path, "evaluate", str(dataset), "--system", "my_system:answer", "--text-metric",
        "token_f1", "-o", "report.json",
    )  # fmt: skip
    assert proc.returncode == EXIT_OK, proc.stderr
    assert (tmp_path / "system_closed").read_text() == "closed"
    assert json.loads((tmp_path / "report.json").read_text())["items"]
    assert not (tmp_path / "torn_down").exists()


def test_the_program_keeps_its_exit_code_and_error_line(tmp_path: Path) -> None:
    proc = _synth(tmp_path, "inspect", str(tmp_path / "missing.jsonl"))
    assert proc.returncode == EXIT_ERROR
    assert proc.stderr.startswith("synth: error:"), proc.stderr
    assert not (tmp_path / "torn_down").exists()


def test_the_program_ends_as_usual_after_exit_functions_registered_before_it(
    tmp_path: Path,
) -> None:
    proc = _synth(
        tmp_path, "inspect", str(_dataset(tmp_path)), "--json", SITE_EXIT=str(tmp_path / "site")
    )
    assert proc.returncode == EXIT_OK, proc.stderr
    assert (tmp_path / "site").read_text() == "ran"  # coverage's data is saved at exit this way
    assert (tmp_path / "torn_down").read_text() == "torn down"


def test_main_called_inside_another_program_leaves_the_interpreters_end_alone(
    tmp_path: Path,
) -> None:
    import atexit

    before = atexit._ncallbacks()  # type: ignore[attr-defined]
    assert main(["inspect", str(_dataset(tmp_path)), "--json"]) == EXIT_OK
    assert atexit._ncallbacks() == before  # type: ignore[attr-defined]


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
