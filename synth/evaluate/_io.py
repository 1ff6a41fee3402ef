"""Reading and writing report documents as JSON, JSON Lines, YAML or TOML.

NaN (a score that could not be computed) is written the way each format can hold it: JSON has no
NaN, so it is written as ``null`` and the report's score fields read ``null`` back as NaN; YAML
writes ``.nan``; TOML writes ``nan``. TOML has no null either: a key whose value is null is left out,
and the field's default (``None``) comes back on reading.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import tomli_w

from synth.errors import ConfigError

FORMATS = {".json": "json", ".jsonl": "jsonl", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml"}


def format_of(path: str | Path, format: str | None = None) -> str:
    """Return the report format named by ``format``, else by the file's suffix."""
    if format is not None:
        if format not in set(FORMATS.values()):
            raise ConfigError(f"unknown report format {format!r}; use json, jsonl, yaml or toml")
        return format
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ConfigError(
            f"{path}: unknown report suffix {suffix!r}; use .json, .jsonl, .yaml or .toml"
        )
    return FORMATS[suffix]


def _nan_to_null(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _nan_to_null(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_nan_to_null(v) for v in value]
    return value


def _drop_nulls(value: Any, where: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v, f"{where}.{k}") for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        if any(v is None for v in value):
            raise ConfigError(f"TOML cannot hold a null inside a list (at {where.lstrip('.')})")
        return [_drop_nulls(v, f"{where}[{i}]") for i, v in enumerate(value)]
    return value


def _plain(value: Any) -> Any:
    """Tuples become lists, so every writer sees JSON-like data."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def dumps(data: dict[str, Any], format: str) -> str:
    """Return ``data`` (a JSON-like document) as text in ``format`` (json, yaml or toml)."""
    plain = _plain(data)
    if format == "json":
        return json.dumps(_nan_to_null(plain), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if format == "yaml":
        import yaml  # here: a report written as JSON (the common case) need not load it

        text: str = yaml.safe_dump(plain, sort_keys=False, allow_unicode=True)
        return text
    if format == "toml":
        return tomli_w.dumps(_drop_nulls(plain))
    raise ConfigError(f"cannot write one document as {format!r}")


def loads(text: str, format: str, source: str = "<string>") -> dict[str, Any]:
    """Return the document in ``text``, read as ``format``."""
    import yaml

    try:
        if format == "json":
            data = json.loads(text)
        elif format == "yaml":
            data = yaml.safe_load(text)
        elif format == "toml":
            data = tomllib.loads(text)
        else:
            raise ConfigError(f"cannot read one document as {format!r}")
    except (json.JSONDecodeError, yaml.YAMLError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{source}: not a valid {format} report: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a report is a mapping, got {type(data).__name__}")
    return data


def dumps_lines(header: dict[str, Any], rows: Iterable[dict[str, Any]]) -> str:
    """Return JSON Lines: the header as ``{"report": ...}`` on the first line, then one row a line."""
    lines = [
        json.dumps({"report": _nan_to_null(_plain(header))}, ensure_ascii=False, allow_nan=False)
    ]
    lines.extend(
        json.dumps(_nan_to_null(_plain(row)), ensure_ascii=False, allow_nan=False) for row in rows
    )
    return "\n".join(lines) + "\n"


def loads_lines(text: str, source: str = "<string>") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Return ``(header, rows)`` from JSON Lines written by :func:`dumps_lines`."""
    rows: list[dict[str, Any]] = []
    header: dict[str, Any] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{source}, line {number}: not valid JSON: {exc}") from None
        if not isinstance(row, dict):
            raise ConfigError(f"{source}, line {number}: expected a JSON object")
        if header is None:
            if not isinstance(row.get("report"), dict):
                raise ConfigError(
                    f"{source}, line {number}: not a report written by synth (the first line "
                    "must hold the report header); pass a file written by `synth evaluate -o`"
                )
            header = row["report"]
            continue
        rows.append(row)
    if header is None:
        raise ConfigError(f"{source}: empty report file")
    return header, rows


def read_text(path: str | Path) -> str:
    """Return the UTF-8 text of ``path``; a missing file is a :class:`ConfigError`."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such report file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the report: {exc}") from None


__all__ = [
    "FORMATS",
    "dumps",
    "dumps_lines",
    "format_of",
    "loads",
    "loads_lines",
    "read_text",
]
