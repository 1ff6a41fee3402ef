"""What the review page is given: the dataset report's table (context chunks once each, cited spans
in UTF-16 offsets, see :mod:`synth.report._rows`) plus, per golden, what a review reads and
changes: its key, its texts, its review record, the lists the filters offer.

Everything here is data for ``JSON.parse``; the page's script puts it into the page with
``textContent``, so no document or model text is ever read as markup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from synth.data import Golden
from synth.dataset.review import REJECT_REASONS, REVIEW_KEY, counts, status_of
from synth.report._rows import mapping, table, text


def page_data(name: str, keys: Sequence[str], goldens: Sequence[Golden]) -> dict[str, Any]:
    """Everything the page shows of the dataset ``name``: one entry per golden, in file order."""
    return {
        "name": name,
        "reasons": list(REJECT_REASONS),
        "table": table(goldens),
        "goldens": [golden_view(key, golden) for key, golden in zip(keys, goldens, strict=True)],
        "counts": counts(goldens),
    }


def golden_view(key: str, golden: Golden) -> dict[str, Any]:
    """One golden as the page reads it: what a decision can change, and what it filters on."""
    record = mapping(golden.metadata.get(REVIEW_KEY))
    return {
        "key": key,
        "input": golden.input,
        "expected": golden.expected_output,
        "status": status_of(golden),
        "reason": _text_or_none(record.get("reason")),
        "reviewer": _text_or_none(record.get("reviewer")),
        "time": _text_or_none(record.get("time")),
        "original": _original(record.get("original")),
        "files": list(golden.source_files),
        "evolutions": text(golden.metadata.get("evolutions")),
        "styling": _styling(golden.metadata),
    }


def _original(value: object) -> dict[str, str | None]:
    found = mapping(value)
    return {k: v for k, v in found.items() if k in ("input", "expected_output") and _is_text(v)}


def _styling(metadata: Mapping[str, Any]) -> list[str]:
    """``name: value`` lines of the styling the golden was written in, and its persona."""
    lines = [
        f"{k}: {v}" for k, v in mapping(metadata.get("styling")).items() if v not in (None, "")
    ]
    persona = metadata.get("persona")
    if isinstance(persona, str) and persona:
        lines.append(f"persona: {persona}")
    return lines


def _is_text(value: object) -> bool:
    return value is None or isinstance(value, str)


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


__all__ = ["golden_view", "page_data"]
