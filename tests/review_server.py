"""A real ``synth review`` in a subprocess, for the tests that drive it from a browser or kill it.

The test waits for the URL the command prints (the socket is listening by then), never for a fixed
time; every process started here is killed and reaped at the end of its block.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from synth_runs import child_env, end_process


class ReviewProcess:
    """``synth review DATASET --no-browser`` running; ``url`` is the URL it printed.

    ``env`` replaces the child's environment (``child_env()`` by default); with ``browser`` the
    command is left to open a browser as it would for a user (no ``--no-browser``).
    """

    def __init__(
        self,
        dataset: Path,
        *extra: str,
        env: dict[str, str] | None = None,
        browser: bool = False,
    ) -> None:
        self.stderr = dataset.with_name(f"review-{dataset.stem}.stderr")
        self._err = self.stderr.open("w", encoding="utf-8")
        flags = [] if browser else ["--no-browser"]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "synth", "review", str(dataset), *flags, *extra],
            cwd=dataset.parent,
            env=env if env is not None else child_env(),
            stdout=subprocess.PIPE,
            stderr=self._err,
            text=True,
        )
        self.lines: list[str] = []
        self.url = self._printed_url()
        self.origin = self.url.split("/?")[0]
        self.token = self.url.split("token=")[1]

    def _printed_url(self) -> str:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:  # ends at EOF, when the command exits without serving
            self.lines.append(line)
            if line.strip().startswith("http://127.0.0.1:"):
                return line.strip()
        raise AssertionError(f"synth review printed no URL: {self.lines} {self.stderr.read_text()}")

    def close(self) -> None:
        end_process(self.proc)
        self._err.close()


@contextlib.contextmanager
def reviewing(dataset: Path, *extra: str) -> Iterator[ReviewProcess]:
    """A ``synth review`` of ``dataset`` for the block; killed and reaped after it."""
    process = ReviewProcess(dataset, *extra)
    try:
        yield process
    finally:
        process.close()


__all__ = ["ReviewProcess", "reviewing"]
