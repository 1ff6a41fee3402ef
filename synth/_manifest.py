"""The run manifest a dataset came from: given as a path, or found from the dataset's ``run_id``."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from synth.errors import ConfigError

#: where runs live unless ``--run-dir`` says otherwise, under the current folder
RUNS_FOLDER = Path(".synth") / "runs"
#: the file in a run directory that records the run (``synth.run.dir`` writes it)
MANIFEST = "manifest.json"


def load_manifest(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest in ``path`` (a ``manifest.json`` or the run directory holding one)."""
    target = Path(path)
    if target.is_dir():
        target = target / MANIFEST
    try:
        value = json.loads(target.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{target}: no such manifest") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{target}: not a run manifest (not JSON: {exc})") from None
    if not isinstance(value, dict) or "run_id" not in value:
        raise ConfigError(f"{target}: not a run manifest (no run_id)")
    return value


def find_manifest(
    metadata: Mapping[str, Any], source: str | os.PathLike[str] | None = None
) -> dict[str, Any] | None:
    """The manifest of the run named by ``metadata["run_id"]``, or None when none is found.

    Looked for beside the dataset file ``source`` (a run directory's own ``goldens.jsonl``), then
    in the default run folder (``.synth/runs/<run id>``) under the current folder and under the
    dataset's folder. A manifest of another run is never taken.
    """
    run_id = metadata.get("run_id")
    if not isinstance(run_id, str) or not run_id:
        return None
    folders = [Path(source).parent] if source is not None else []
    folders += [RUNS_FOLDER / run_id, *(folder / RUNS_FOLDER / run_id for folder in folders)]
    for folder in folders:
        path = folder / MANIFEST
        if not path.is_file():
            continue
        try:
            manifest = load_manifest(path)
        except ConfigError:
            continue  # a damaged file where one was only guessed at: as if none were there
        if manifest.get("run_id") == run_id:
            return manifest
    return None


__all__ = ["MANIFEST", "RUNS_FOLDER", "find_manifest", "load_manifest"]
