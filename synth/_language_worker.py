"""The language check's full models in a process of their own, so that loading them stops no run.

lingua's high-accuracy models for short texts take seconds to load, once a process, and lingua
holds the interpreter while it loads: no other thread of the process runs meanwhile, a run's event
loop included. A run's checks therefore go through :func:`check_language_async`: what the length,
the scripts or the trigrams settle is settled in the process
(:func:`synth._language.settle_language`), and only a text left in doubt is sent to a worker
process (``python -m synth._language_worker``, started at the first such text, one for the
process), which loads the full models while the run goes on and judges the text with the same
:func:`synth._language.full_check`: the verdict is the one the process would have given. When the
worker cannot be started, or stops answering, the check is made in the process (and blocks it, as
it did before the worker).

The two talk in JSON lines (ASCII: ``json.dumps`` escapes the rest), a question
``{"text", "target", "also"}`` down, a :class:`~synth._language.LanguageVerdict`'s fields up. The
worker gets no API key in its environment and ends when its input closes (this process ending).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path

from synth._language import LanguageVerdict, full_check, settle_language


class LanguageWorker:
    """The worker process, started on first use; its verdicts, or the process's own on failure."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None
        #: the worker failed once: every later check is made in this process
        self.broken = False
        #: verdicts the worker gave
        self.answered = 0
        # a forked child must not talk down its parent's pipe (nor wait on a lock held there)
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self._lock = threading.Lock()
        self._proc = None

    def _start(self) -> subprocess.Popen[str]:
        root = str(Path(__file__).resolve().parent.parent)  # this synth, whatever the path says
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        path = env.get("PYTHONPATH")
        env["PYTHONPATH"] = os.pathsep.join([root, path]) if path else root
        return subprocess.Popen(
            [sys.executable, "-m", "synth._language_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="ascii",
            env=env,
            start_new_session=True,  # a Ctrl-C in the terminal is this process's to handle
        )

    @property
    def pid(self) -> int | None:
        """The worker's process id (None: not running)."""
        return self._proc.pid if self._proc is not None else None

    def verdict(self, text: str, target: str, also: Iterable[str] = ()) -> LanguageVerdict:
        """:func:`~synth._language.full_check` of ``text``, made by the worker (blocks the
        calling thread until it answers; see :func:`check_language_async`)."""
        also = list(also)
        with self._lock:
            if not self.broken:
                found = self._ask({"text": text, "target": target, "also": also})
                if found is not None:
                    self.answered += 1
                    return found
                self.broken = True
                self._stop()
        return full_check(text, target, also)

    def _ask(self, question: dict[str, object]) -> LanguageVerdict | None:
        try:
            if self._proc is None:
                self._proc = self._start()
            assert self._proc.stdin is not None and self._proc.stdout is not None
            self._proc.stdin.write(json.dumps(question) + "\n")
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
            return LanguageVerdict(**json.loads(line)) if line else None
        except (OSError, ValueError, TypeError):
            return None

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            with contextlib.suppress(OSError):  # a worker that died: its pipe is broken
                if proc.stdin is not None:
                    proc.stdin.close()
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                proc.kill()
            proc.wait()
        finally:
            if proc.stdout is not None:
                proc.stdout.close()

    def close(self) -> None:
        """End the worker (it starts again at the next doubtful text)."""
        with self._lock:
            self._stop()


#: the process's worker
WORKER = LanguageWorker()
atexit.register(WORKER.close)


async def check_language_async(
    text: str, target: str, also: Iterable[str] = (), *, worker: LanguageWorker | None = None
) -> LanguageVerdict:
    """:func:`synth._language.check_language`'s verdict, with the full models (when a text needs
    them) in the worker process (``worker``, default :data:`WORKER`), awaited on a thread: the
    event loop runs on meanwhile."""
    also = tuple(also)
    settled = settle_language(text, target, also)
    if settled is not None:
        return settled
    return await asyncio.to_thread((worker or WORKER).verdict, text, target, also)


def serve() -> None:
    """The worker's side: one verdict line for every question line, until the input closes."""
    for line in sys.stdin:
        question = json.loads(line)
        found = full_check(question["text"], question["target"], question["also"])
        sys.stdout.write(json.dumps(asdict(found)) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()


__all__ = ["WORKER", "LanguageWorker", "check_language_async", "serve"]
