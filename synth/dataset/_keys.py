"""A golden's identity for review: what a decision, a journal line and a refill find it by.

Kept apart from :mod:`synth.dataset.review` so that :class:`~synth.Dataset` (which applies the
review journal by these keys) does not import the review functions, which import it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from synth._ids import ID_LENGTH, joined_hash
from synth.data import Golden

REVIEW_KEY: Final = "review"


def golden_key(golden: Golden) -> str:
    """The golden's identity for review: its ``draft_id``, else its ``id``, else a content hash.

    The hash is of the input (as first generated, so an edit does not change it) and the context.
    """
    for name in ("draft_id", "id"):
        value = golden.metadata.get(name)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    record = golden.metadata.get(REVIEW_KEY)
    original = record.get("original") if isinstance(record, dict) else None
    text = original.get("input", golden.input) if isinstance(original, dict) else golden.input
    return joined_hash(["golden", str(text), *(golden.context or [])], ID_LENGTH)


def review_keys(goldens: Iterable[Golden]) -> list[str]:
    """Each golden's :func:`golden_key`, a key seen before suffixed ``~2``, ``~3``... (copies of
    one golden in a file are still reviewed one by one)."""
    seen: dict[str, int] = {}
    keys = []
    for golden in goldens:
        key = golden_key(golden)
        seen[key] = seen.get(key, 0) + 1
        keys.append(key if seen[key] == 1 else f"{key}~{seen[key]}")
    return keys


__all__ = ["REVIEW_KEY", "golden_key", "review_keys"]
