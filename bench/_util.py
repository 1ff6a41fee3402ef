"""Helpers shared by the bench scripts: versions, memory readings, tables, JSON, child runs."""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib.metadata
import json
import platform
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def versions(*packages: str) -> dict[str, str]:
    """Python and the installed version of each package (``"missing"`` when not installed)."""
    found = {"python": platform.python_version()}
    for name in packages:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "missing"
    return found


def header(argv: Sequence[str], packages: Sequence[str]) -> dict[str, Any]:
    """What every bench JSON starts with: when, on what, with which command."""
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.system()} {platform.machine()}, {_cpu_count()} cores",
        "versions": versions(*packages),
        "command": shlex.join(["python", *argv]),
    }


def _cpu_count() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def max_rss_mib() -> float:
    """This process's peak resident set size so far (``ru_maxrss``, KiB on Linux), in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub markdown table; numbers right-aligned."""
    cells = [[_cell(value) for value in row] for row in rows]
    widths = [max([len(h), *(len(row[i]) for row in cells)]) for i, h in enumerate(headers)]
    numeric = [
        all(isinstance(row[i], int | float) or row[i] in ("", None) for row in rows) and rows
        for i in range(len(headers))
    ]
    lines = [
        "| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |",
        "| "
        + " | ".join(
            ("-" * (w - 1) + ":") if num else "-" * w
            for w, num in zip(widths, numeric, strict=True)
        )
        + " |",
    ]
    for row in cells:
        lines.append(
            "| "
            + " | ".join(
                value.rjust(w) if num else value.ljust(w)
                for value, w, num in zip(row, widths, numeric, strict=True)
            )
            + " |"
        )
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value >= 100:
            return f"{value:,.0f}"
        if value >= 10:
            return f"{value:.1f}"
        return f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


@contextlib.contextmanager
def work_dir(given: Path | None, name: str, *, keep: bool | None = None) -> Iterator[Path]:
    """The bench's scratch folder: ``given`` (created if missing) or a new temporary one, removed
    afterwards unless ``keep`` (default: keep a folder given, remove a temporary one)."""
    work = Path(tempfile.mkdtemp(prefix=f"synth-bench-{name}-")) if given is None else given
    work.mkdir(parents=True, exist_ok=True)
    try:
        yield work
    finally:
        if not (given is not None if keep is None else keep):
            shutil.rmtree(work, ignore_errors=True)


def write_json(path: str | Path | None, payload: dict[str, Any]) -> None:
    """Write ``payload`` as indented JSON when a path is given."""
    if path is None:
        return
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")


def run_child(script: Path, args: Sequence[str], *, timeout: float = 3600) -> dict[str, Any]:
    """Run ``script`` with ``args`` in a fresh interpreter; its last stdout line is JSON."""
    done = subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{script.name} {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-4000:]}"
        )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if not lines:
        raise RuntimeError(
            f"{script.name} {' '.join(args)} printed nothing:\n{done.stderr[-4000:]}"
        )
    return json.loads(lines[-1])
