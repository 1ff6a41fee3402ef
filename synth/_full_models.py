"""lingua's high-accuracy models in a worker process, loaded beside the run before a text needs them.

The language check (:func:`synth._language.check_language`) settles most texts with lingua's
trigrams; a text they leave in doubt is judged again with the high-accuracy models, whose models
for short texts take seconds to load. Loaded in the run's own process, that load holds the
interpreter: the event loop sends and reads nothing until it is done. :class:`FullModels` runs them
in a worker process instead (this file, run as a script: it imports nothing of synth), started at
the first check of a process, which loads the models of :data:`WARM_CODES` at once, on the
cores' spare time, while the run goes on (any other model when a text first needs it). A doubtful
text then costs a pipe round trip, and the run's own process never holds the models.

Nothing is lost when the worker cannot help: it is started at most once a process, and when it
cannot be started, or fails, or is not answering after :data:`REPLY_TIMEOUT` seconds, it is
stopped and the caller judges the text in its own process, as before (:meth:`FullModels.confidences`
returns None). ``SYNTH_LANGUAGE_WORKER=0`` turns it off. The worker reads one JSON request a line
(``{"codes": [...], "text": ...}``) and answers one a line (``{"values": [[code, confidence],
...]}``, or ``{"error": ...}``); it ends when its input closes (its parent ended).
"""

from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import threading
from collections.abc import Iterable
from typing import Any

#: the languages whose models the worker loads as soon as it starts: those of synth._language's
#: COMMON (the candidates of every check) written in Latin letters. A check weighs all of COMMON,
#: but lingua settles a text by its letters before any model: one in Latin letters needs the
#: models of these nine only, one in Cyrillic, Chinese, Japanese or Korean letters none at all
#: (Russian is COMMON's only Cyrillic language). The rest load when a check needs them; loading
#: every COMMON model up front cost more of a core (3.0 to 3.7 s against 2.6 to 2.7 s of CPU
#: here, docs/benchmarks.md) and, on a busy machine, held the run's last doubtful text.
WARM_CODES = ("de", "en", "es", "fr", "it", "nl", "pl", "pt", "sv")
#: the text the worker judges at start, to make lingua load the models of every length
WARM_TEXT = "warm models"
#: seconds a reply may take (the first one waits for the models' load) before the worker is dropped
REPLY_TIMEOUT = 60.0
#: the worker's niceness, the lowest: its load takes seconds of a core, which the run needs more
#: at its start. At 10 it slowed the command's start (started with the command) or finished after
#: the run's last reply (started with the stages, 0.07 to 0.2 s of wait); at 19, started with the
#: command, neither (bench/cli.py, 4 alternated pairs: 3.63 s against 3.72 s)
NICE = 19
#: the environment variable that turns the worker off ("0")
ENV = "SYNTH_LANGUAGE_WORKER"


class FullModels:
    """The client of one worker process (see the module): :meth:`start` it early, then ask it
    :meth:`confidences`; None from it means "judge in this process"."""

    def __init__(self, command: list[str] | None = None) -> None:
        self.command = command or [sys.executable, "-P", os.path.abspath(__file__)]
        self._process: subprocess.Popen[str] | None = None
        self._failed = False
        self._lock = threading.Lock()

    @property
    def available(self) -> bool:
        """Whether a worker is running (started and not failed)."""
        return self._process is not None and not self._failed

    def start(self) -> None:
        """Start the worker unless it ran already, failed, or is turned off; does not wait."""
        if self._process is not None or self._failed:
            return
        if os.environ.get(ENV, "1") == "0" or os.name != "posix":
            self._failed = True  # a pipe with a timeout needs select() on pipes
            return
        with self._lock:
            if self._process is not None or self._failed:
                return
            try:
                self._process = subprocess.Popen(
                    self.command,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                    encoding="utf-8",
                    bufsize=1,
                )
            except OSError:
                self._failed = True

    def confidences(self, codes: Iterable[str], text: str) -> dict[str, float] | None:
        """lingua's high-accuracy confidences for ``text`` among ``codes``, by code; None when no
        worker can answer (the caller judges in its own process)."""
        request = json.dumps({"codes": sorted(codes), "text": text}, ensure_ascii=False)
        with self._lock:
            process = self._process
            if process is None or self._failed or process.stdin is None or process.stdout is None:
                return None
            try:
                process.stdin.write(request + "\n")
                process.stdin.flush()
                ready, _, _ = select.select([process.stdout], [], [], REPLY_TIMEOUT)
                line = process.stdout.readline() if ready else ""
                reply = json.loads(line) if line else None
            except (OSError, ValueError):
                reply = None
            if not isinstance(reply, dict) or not isinstance(reply.get("values"), list):
                if not isinstance(reply, dict) or "error" not in reply:
                    self._stop()  # dead, silent or garbled: never asked again
                return None
            return {str(code): float(value) for code, value in reply["values"]}

    def _stop(self) -> None:
        self._failed = True
        process, self._process = self._process, None
        if process is not None:
            _end(process)

    def close(self) -> None:
        """Stop the worker (it is not started again)."""
        with self._lock:
            self._stop()

    def forget(self) -> None:
        """In a forked child: the parent's worker is the parent's (its pipes are shared); the
        child starts its own when it needs one."""
        self._process = None
        self._failed = False
        self._lock = threading.Lock()


def _end(process: subprocess.Popen[str]) -> None:
    """Stop the worker at once: it holds nothing to save, and a run's exit must not wait for
    its load to finish."""
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            try:
                stream.close()
            except OSError:
                pass
    process.kill()
    process.wait()


#: the process's worker, started by the first language check
FULL_MODELS = FullModels()
atexit.register(FULL_MODELS.close)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=FULL_MODELS.forget)


def _serve() -> None:  # pragma: no cover - runs in the worker process (its tests drive it there)
    """The worker: load the warm models, then answer requests until the input closes."""
    import signal

    from lingua import IsoCode639_1, LanguageDetectorBuilder

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent's Ctrl-C is the parent's to handle
    if hasattr(os, "nice"):
        os.nice(NICE)  # a warm-up: the run's own process (and its server) come first for a core
    detectors = {}

    def detector(codes: tuple[str, ...], preloaded: bool = False) -> Any:
        if codes not in detectors:
            isos = [IsoCode639_1.from_str(c) for c in codes]  # type: ignore[attr-defined]
            builder = LanguageDetectorBuilder.from_iso_codes_639_1(*isos)
            if preloaded:  # every model at once, on as many threads as there are cores
                builder = builder.with_preloaded_language_models()
            # lingua keeps loaded models for every detector of the process: a request's
            # detector loads only the models its text needs that the warm-up did not
            detectors[codes] = builder.build()
        return detectors[codes]

    detector(WARM_CODES, preloaded=True).compute_language_confidence_values(WARM_TEXT)
    for line in sys.stdin:
        try:
            request = json.loads(line)
            found = detector(tuple(request["codes"])).compute_language_confidence_values(
                request["text"]
            )
            values = [[v.language.iso_code_639_1.name.lower(), v.value] for v in found]
            reply: dict[str, object] = {"values": values}
        except Exception as exc:  # noqa: BLE001 - one bad request is answered, not fatal
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":  # pragma: no cover
    _serve()


__all__ = ["ENV", "FULL_MODELS", "REPLY_TIMEOUT", "WARM_CODES", "FullModels"]
