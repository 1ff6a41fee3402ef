"""The run directory: where one run keeps its stage outputs and its manifest, so it can resume.

A run's id is a hash of everything that decides its goldens (the inputs' contents, the config, the
models' identities, the seed, the number of goldens asked for), so starting the same command again
finds the same directory and carries on. Inside it::

    manifest.json      config, seed, models, versions and per-stage counts (rewritten atomically)
    <stage>.jsonl      one line per item a stage finished, appended and flushed as it is produced
    rejects.jsonl      every dropped item with its stage and reason
    goldens.jsonl      the delivered goldens, written when the run ends

A line is only trusted when it ends with a newline: a process killed mid-write leaves at most one
partial last line, which the next run cuts off before appending.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from synth._files import file_in_the_way, write_atomic
from synth._ids import canonical_json, file_hash, text_hash
from synth._journal import Journal
from synth._manifest import MANIFEST, RUNS_FOLDER
from synth.errors import ConfigError, SynthError

#: bump when the layout of a run directory changes, so old runs are not misread
RUN_FORMAT = 1


def run_id(key: Mapping[str, Any]) -> str:
    """The id of the run that ``key`` describes: 16 hex digits of its SHA-256."""
    return text_hash(canonical_json({"run_format": RUN_FORMAT, **key}), 16)


def fingerprint_paths(paths: list[str]) -> list[list[str]]:
    """``[path as given, file under it, sha256 of its bytes]`` for every file under ``paths``.

    Hidden files and folders are left out, as ingestion leaves them out. A path that does not exist
    is listed with ``"missing"`` (ingestion reports it). A URL is listed as ``"url"``: its pages
    are not fetched to name the run, so the same command replays a finished web run (``synth
    update`` follows the pages as they change).
    """
    from synth.ingest.web import is_url

    rows: list[list[str]] = []
    for given in paths:
        root = Path(given)
        if is_url(given):
            rows.append([given, "", "url"])
        elif root.is_file():
            rows.append([given, "", _file_digest(root)])
        elif root.is_dir():
            for file in sorted(_walk(root)):
                rows.append([given, file.relative_to(root).as_posix(), _file_digest(file)])
        else:
            rows.append([given, "", "missing"])
    return rows


def _walk(root: Path) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if not name.startswith("."):
                yield Path(folder) / name


def _file_digest(path: Path) -> str:
    try:
        return file_hash(path)
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"


class RunDir:
    """One run's folder: its journals, its manifest, and a lock so two processes never share it.

    ``RunDir.open(path, key)`` creates the folder or reopens it; reopening a folder that holds a
    different run (another config, inputs or seed) raises :class:`ConfigError`.
    """

    def __init__(self, path: Path, run_id: str) -> None:
        self.path = path
        self.id = run_id
        self._journals: dict[str, Journal] = {}
        self._lock_fh: Any = None
        self.resumed = False
        # the manifest may be written by a thread ending the process by force (see RunSession)
        self._manifest_lock = threading.Lock()

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None, key: Mapping[str, Any]) -> RunDir:
        identifier = run_id(key)
        folder = Path(path) if path is not None else RUNS_FOLDER / identifier
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            blocker = file_in_the_way(folder, exc)
            why = f"{blocker} is a file, not a folder" if blocker else exc.strerror
            raise ConfigError(f"cannot create the run directory {folder}: {why}") from None
        run = cls(folder, identifier)
        run._lock()
        try:
            run._check_identity()
        except BaseException:  # refused or damaged: let go of the folder's lock at once
            run.close()
            raise
        return run

    def _lock(self) -> None:
        try:
            import fcntl
        except ImportError:  # not on this platform: runs are not guarded against sharing
            return
        fh = open(self.path / ".lock", "a+")  # noqa: SIM115 (held until close())
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            raise ConfigError(
                f"the run directory {self.path} is in use by another synth process; "
                "wait for it to finish or choose another --run-dir"
            ) from None
        self._lock_fh = fh

    def _check_identity(self) -> None:
        manifest = self.read_manifest()
        if manifest is None:
            return
        found = manifest.get("run_id")
        if found != self.id:
            raise ConfigError(
                f"the run directory {self.path} holds run {found}, made with other inputs, "
                f"settings or seed (this command is run {self.id}); choose another --run-dir "
                "or delete that one"
            )
        self.resumed = True

    # ---- journals --------------------------------------------------------------------------------
    def journal(self, name: str) -> Journal:
        """The journal ``<name>.jsonl`` (opened once, then shared)."""
        if name not in self._journals:
            self._journals[name] = Journal(self.path / f"{name}.jsonl")
        return self._journals[name]

    # ---- manifest --------------------------------------------------------------------------------
    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def read_manifest(self) -> dict[str, Any] | None:
        try:
            manifest: dict[str, Any] = json.loads(self.manifest_path.read_text(encoding="utf-8"))
            return manifest
        except FileNotFoundError:
            return None
        except ValueError:
            # a manifest is replaced atomically, so this is damage from outside synth
            raise SynthError(
                f"{self.manifest_path} is not valid JSON; delete the run directory to start over"
            ) from None

    def write_manifest(self, manifest: Mapping[str, Any], *, compact: bool = False) -> None:
        """Replace the manifest atomically (a reader never sees half of one); indented, or on
        one line when ``compact`` (the rewrites while a run goes)."""
        # rewritten every few seconds while a run goes: a rename lost in a power cut leaves the
        # previous manifest, still whole, so the folder is not flushed each time
        if compact:  # json's C encoder, which it uses only without indent: a tenth of the time
            # (a manifest's coverage has a row per file: 60 ms a rewrite for 200 files indented)
            text = json.dumps(manifest, ensure_ascii=False, separators=(",", ":")) + "\n"
        else:
            text = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
        with self._manifest_lock:  # one temporary file per process: one writer at a time
            write_atomic(self.manifest_path, text, sync_folder=False)

    def close(self) -> None:
        for journal in self._journals.values():
            journal.close()
        self._journals.clear()
        if self._lock_fh is not None:
            self._lock_fh.close()
            self._lock_fh = None

    def __enter__(self) -> RunDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def replay_note(run_dir: str, failures: int) -> str:
    """What a rerun of a finished run tells the user: nothing was asked, and how to retry."""
    failed = (
        f"; its {failures} request{'s' if failures != 1 else ''} that failed after retries "
        "were not retried"
        if failures
        else ""
    )
    return (
        f"run {run_dir} had already finished: its saved goldens were returned and no request was "
        f"made{failed}; to run it afresh (retrying what failed), choose a new --run-dir"
    )


__all__ = [
    "RUN_FORMAT",
    "RunDir",
    "fingerprint_paths",
    "replay_note",
    "run_id",
]
