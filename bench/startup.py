"""Start-up bench: how long a ``synth`` command takes from process start to exit, and what it imports.

Each command runs ``--repeat`` times as its own process (``python -m synth ...``, as the console
script does: the ``synth`` package, then ``synth.cli``), timed from spawn to exit; the table gives
the fastest and the median run, and the heavy packages the command loaded (read from one more run
under ``python -X importtime``, which is not timed). ``python -c pass`` is the interpreter's own
floor. The commands:

- ``import synth``: the library's public surface;
- ``synth --help`` and ``synth generate --help``: argument parsing, every command declared;
- ``synth export``: a 60-golden dataset written as deepeval goldens;
- ``synth inspect``: the same dataset's numbers.

``--synth-path DIR`` measures another checkout (a ``git worktree`` of an older commit, say), to
compare before and after::

    python bench/startup.py --out bench-results/startup.json
    python bench/startup.py --synth-path /work/main --repeat 10
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import REPO, header, markdown_table, work_dir, write_json  # noqa: E402

#: the packages worth naming when a command loads them
HEAVY = (
    "chromadb",
    "torch",
    "openai",
    "pandas",
    "numpy",
    "tiktoken",
    "langchain_text_splitters",
    "pypdf",
    "docx",
    "rich",
    "pydantic",
)


def commands(dataset: Path) -> dict[str, list[str]]:
    """What each row runs, after ``python``."""
    export_to = str(dataset.with_name("goldens.deepeval.json"))
    return {
        "python -c pass": ["-c", "pass"],
        "import synth": ["-c", "import synth"],
        "synth --help": ["-m", "synth", "--help"],
        "synth generate --help": ["-m", "synth", "generate", "--help"],
        "synth export": ["-m", "synth", "export", str(dataset), "-f", "deepeval", "-o", export_to],
        "synth inspect": ["-m", "synth", "inspect", str(dataset)],
    }


def _env(synth_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(synth_path)}


def time_once(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from spawning ``python argv`` to its exit (which must be 0)."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *argv], env=env, cwd=cwd, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"python {' '.join(argv)} failed:\n{done.stderr.decode()[-2000:]}")
    return elapsed


def heavy_imports(argv: list[str], env: dict[str, str], cwd: Path) -> list[str]:
    """The packages of :data:`HEAVY` that ``python argv`` imports (from ``-X importtime``)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    loaded = {
        line.rsplit("|", 1)[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    return [name for name in HEAVY if name in loaded]


def make_dataset(folder: Path, synth_path: Path) -> Path:
    """A 60-golden dataset written by the synth under test."""
    path = folder / "goldens.jsonl"
    code = (
        "from synth import Dataset, Golden; "
        "Dataset([Golden(input=f'What does clause {i} say?', expected_output='It says so.', "
        f"context=['Clause text.']) for i in range(60)]).save({str(path)!r})"
    )
    subprocess.run([sys.executable, "-c", code], env=_env(synth_path), check=True)
    return path


def measure(synth_path: Path, repeat: int, work: Path) -> list[dict[str, Any]]:
    """One row per command: fastest and median seconds, and the heavy packages imported."""
    env = _env(synth_path)
    dataset = make_dataset(work, synth_path)
    rows = []
    for name, argv in commands(dataset).items():
        time_once(argv, env, work)  # warm the file cache and the bytecode
        times = [time_once(argv, env, work) for _ in range(repeat)]
        rows.append(
            {
                "command": name,
                "min_s": round(min(times), 3),
                "median_s": round(statistics.median(times), 3),
                "heavy_imports": heavy_imports(argv, env, work),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synth-path", type=Path, default=REPO, help="the checkout to measure")
    parser.add_argument("--repeat", type=int, default=10, help="timed runs per command (10)")
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args(argv)
    with work_dir(args.work, "startup") as work:
        rows = measure(args.synth_path.resolve(), args.repeat, work)
    payload = {
        **header(sys.argv, ("synth", "pydantic", "chromadb", "openai")),
        "synth_path": str(args.synth_path),
        "repeat": args.repeat,
        "rows": rows,
    }
    write_json(args.out, payload)
    table = [
        [row["command"], row["min_s"], row["median_s"], ", ".join(row["heavy_imports"]) or "-"]
        for row in rows
    ]
    print(markdown_table(["command", "fastest s", "median s", "heavy imports"], table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
