"""What a run records of each drop: the reason, the check that failed, and the raw reply.

``rejects.jsonl`` holds one row per dropped item (its stage and reason, and for a failed request
``detail``, the check that failed, e.g. "critic scored passages [2, 3], expected 1..2"). The raw
reply of a failed request is kept once in ``bad_replies.jsonl`` (keyed by its hash), and the reject
row points at it: ``"raw_reply": {"file": "bad_replies.jsonl", "key": ...}``.
"""

from __future__ import annotations

import json
from pathlib import Path

BAD_REPLIES = "bad_replies"


def first_drops(run_dir: str | Path) -> list[str]:
    """One line per drop reason: the first drop of that reason in the run's ``rejects.jsonl``."""
    path = Path(run_dir) / "rejects.jsonl"
    seen: dict[str, str] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        reason = str(row.get("reason"))
        if reason in seen:
            continue
        where = row.get("raw_reply")
        parts = [f"first drop {reason} at {row.get('stage')}"]
        if row.get("detail"):
            parts.append(str(row["detail"]))
        if isinstance(where, dict):
            parts.append(
                f"raw reply: {Path(run_dir) / str(where.get('file'))} key {where.get('key')}"
            )
        seen[reason] = ": ".join(parts[:2]) + "".join(f" ({p})" for p in parts[2:])
    return list(seen.values())


__all__ = ["BAD_REPLIES", "first_drops"]
