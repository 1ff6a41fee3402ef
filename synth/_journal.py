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

    Only where each key's last line starts is held, not the record: :meth:`get` reads it back (a
    run asks for a record it wrote only when it resumes a candidate). A run's journals hold every
    step's drafts and every kept input's vector, about 40 KB a golden that stayed in memory until
    the run ended; records read back are as JSON gives them (a ``Path`` written is a string).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._starts: dict[str, int] = {}
        self._end = 0
        self._load()
        self._fh = open(self.path, "ab")  # noqa: SIM115 (closed in close())

    def _load(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            with open(self.path, "r+b") as fh:
                fh.truncate(end)
        self._end = end
        start = 0
        for number, line in enumerate(data[:end].splitlines(keepends=True), start=1):
            at, start = start, start + len(line)
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
            self._starts[str(key)] = at

    @property
    def records(self) -> dict[str, dict[str, Any]]:
        """Every key's last record, read back from the file."""
        return dict(zip(self._starts, self._read(list(self._starts.values())), strict=True))

    def get(self, key: str) -> dict[str, Any] | None:
        at = self._starts.get(key)
        return None if at is None else self._read([at])[0]

    def __contains__(self, key: object) -> bool:
        return key in self._starts

    def __len__(self) -> int:
        return len(self._starts)

    def append(self, key: str, record: Mapping[str, Any]) -> None:
        """Write ``{"key": key, **record}`` as one line and flush it."""
        row = {"key": key, **record}
        line = (json.dumps(row, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        with writing(self.path):  # a full disk names the journal
            self._fh.write(line)
            self._fh.flush()
        self._starts[key] = self._end
        self._end += len(line)

    def _read(self, starts: list[int]) -> list[dict[str, Any]]:
        """The records whose lines start at ``starts``, read back from the file."""
        if not starts:
            return []
        with open(self.path, "rb") as fh:
            records = []
            for at in starts:
                fh.seek(at)
                records.append(json.loads(fh.readline()))
            return records

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
