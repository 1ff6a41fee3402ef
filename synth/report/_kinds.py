"""What a file given to ``synth report`` holds: a dataset, an evaluation report, a comparison or a
benchmark, told from its contents (the suffixes overlap: a ``.json`` may be any of the four).

- ``.csv``, ``.parquet``: a dataset (only datasets are written so).
- ``.jsonl``: an evaluation report when its first line is the ``{"report": ...}`` header that
  ``synth evaluate -o`` writes, else a dataset (one golden a line).
- ``.json``, ``.yaml``, ``.toml``: a mapping with a ``kind`` is an evaluation report, one with
  ``match``, ``overall`` and ``items`` a tool call evaluation (``synth evaluate --tool-calls
  -o``; an evaluation report too), one with ``leaderboard`` a benchmark, one with ``n_paired`` a
  comparison; a ``.json`` list or a mapping with ``goldens`` (or ``examples``) is a dataset.
  Anything else is refused with one line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from synth.errors import ConfigError

if TYPE_CHECKING:
    from synth.evaluate.tools import ToolCallEvaluation

Kind = Literal["dataset", "evaluation", "comparison", "benchmark"]
_DATASET_ONLY = (".csv", ".parquet")
_DOCUMENTS = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml"}
_WHAT = "not a dataset, evaluation report, comparison or benchmark"
#: what each kind is called in a sentence
NOUNS: dict[str, str] = {
    "dataset": "a dataset",
    "evaluation": "an evaluation report",
    "comparison": "a comparison",
    "benchmark": "a benchmark",
}


def kind_of(path: str | os.PathLike[str]) -> Kind:
    """Which report ``path`` makes; a :class:`~synth.errors.ConfigError` naming the file when it
    is missing or none of the four."""
    target = Path(path)
    suffix = target.suffix.lower()
    if target.is_dir():
        raise ConfigError(f"{target}: a folder; name a dataset or a report file in it")
    if not target.is_file():
        raise ConfigError(f"{target}: no such file")
    if suffix in _DATASET_ONLY:
        return "dataset"
    if suffix == ".jsonl":
        first = _first_line(target)
        return "evaluation" if isinstance(first, dict) and "report" in first else "dataset"
    if suffix not in _DOCUMENTS:
        raise ConfigError(
            f"{target}: {_WHAT} (unknown suffix {suffix or '(none)'!r}; a report is made from "
            ".json, .jsonl, .yaml, .toml, .csv or .parquet)"
        )
    return _kind_of_document(target, _read(target, _DOCUMENTS[suffix]))


def _kind_of_document(path: Path, document: Any) -> Kind:
    if isinstance(document, list) and path.suffix.lower() == ".json":
        return "dataset"
    if isinstance(document, dict):
        if "kind" in document or _holds_tool_calls(document):
            return "evaluation"
        if "leaderboard" in document and "rank_by" in document:
            return "benchmark"
        if "n_paired" in document and "metrics" in document:
            return "comparison"
        if ("goldens" in document or "examples" in document) and path.suffix.lower() == ".json":
            return "dataset"
        keys = ", ".join(sorted(map(str, document))[:6]) or "none"
        raise ConfigError(f"{path}: {_WHAT} (a mapping with the keys {keys})")
    raise ConfigError(f"{path}: {_WHAT} (it holds a {type(document).__name__})")


def _holds_tool_calls(document: Any) -> bool:
    return isinstance(document, dict) and {"match", "overall", "items"} <= set(document)


def read_tool_calls(path: str | os.PathLike[str]) -> ToolCallEvaluation | None:
    """The tool call evaluation ``path`` holds (a ``.json`` file written by ``synth evaluate
    --tool-calls -o``), or None when it holds something else."""
    from synth.evaluate.tools import ToolCallEvaluation

    target = Path(path)
    if target.suffix.lower() != ".json" or not target.is_file():
        return None
    document = _read(target, "json")
    if not _holds_tool_calls(document):
        return None
    try:
        return ToolCallEvaluation.model_validate(document)
    except ValueError as exc:
        raise ConfigError(f"{target}: not a tool call evaluation ({exc})") from None


def _read(path: Path, format: str) -> Any:
    import tomllib

    import yaml

    try:
        text = path.read_text(encoding="utf-8")
        if format == "json":
            return json.loads(text)
        if format == "yaml":
            return yaml.safe_load(text)
        return tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it: {exc}") from None
    except (json.JSONDecodeError, yaml.YAMLError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {_WHAT} (not valid {format}: {exc})") from None


def _first_line(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as lines:
            first = next((line for line in lines if line.strip()), "")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it: {exc}") from None
    try:
        return json.loads(first) if first else None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: {_WHAT} (its first line is not JSON: {exc})") from None


__all__ = ["NOUNS", "Kind", "kind_of", "read_tool_calls"]
