"""Append-only JSONL journals, and the reject row that keeps a raw reply in one of them.

A line is only trusted when it ends with a newline: a process killed mid-write leaves at most one
partial last line, which the next opening cuts off before appending. The stages that journal
(``synth.run``'s and the seed feed in ``synth.contexts``) share this one class from the bottom layer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from synth._files import writing
from synth._ids import text_hash
from synth.errors import SynthError


class Journal:
    """An append-only JSONL file of records keyed by ``"key"``; the last record of a key wins.

    Existing complete lines are read on opening; a partial last line (a process killed while
    writing it) is cut off. Every append is flushed to the operating system at once, so a killed
    process loses nothing it had written.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: dict[str, dict[str, Any]] = {}
        self._load()
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (closed in close())

    def _load(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            with open(self.path, "r+b") as fh:
                fh.truncate(end)
        for number, line in enumerate(data[:end].splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                key = record["key"]
            except (ValueError, KeyError, TypeError):
                raise SynthError(
                    f"{self.path}: line {number} is not a run record; "
                    "the run directory is damaged: delete it (or choose another --run-dir)"
                ) from None
            self.records[str(key)] = record

    def get(self, key: str) -> dict[str, Any] | None:
        return self.records.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self.records

    def __len__(self) -> int:
        return len(self.records)

    def append(self, key: str, record: Mapping[str, Any]) -> None:
        """Write ``{"key": key, **record}`` as one line and flush it."""
        row = {"key": key, **record}
        with writing(self.path):  # a full disk names the journal
            self._fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
            self._fh.flush()
        self.records[key] = row

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def reject_row(
    record: dict[str, Any], detail: str | None, raw: str | None, bad_replies: Journal | None
) -> dict[str, Any]:
    """``record`` with the drop's ``detail`` and, when the raw reply is known, where it is kept."""
    row = dict(record)
    if detail:
        row["detail"] = detail
    if raw and bad_replies is not None:
        key = text_hash(raw, 16)
        if key not in bad_replies:
            bad_replies.append(key, {"reply": raw})
        row["raw_reply"] = {"file": bad_replies.path.name, "key": key}
    return row


__all__ = ["Journal", "reject_row"]
