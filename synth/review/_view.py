"""What the review page is given: the dataset report's table (context chunks once each, cited spans
in UTF-16 offsets, see :mod:`synth.report._rows`) plus, per golden, what a review reads and
changes: its key, its texts, its review record, the lists the filters offer.

Everything here is data for ``JSON.parse``; the page's script puts it into the page with
``textContent``, so no document or model text is ever read as markup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from synth.data import Golden
from synth.dataset.review import REJECT_REASONS, REVIEW_KEY, Status, counts, status_of
from synth.report._html import script_json
from synth.report._rows import mapping, table, text

if TYPE_CHECKING:
    from markupsafe import Markup


def page_data(name: str, keys: Sequence[str], goldens: Sequence[Golden]) -> dict[str, Any]:
    """Everything the page shows of the dataset ``name``: one entry per golden, in file order."""
    return {
        **static_data(name, goldens),
        "goldens": [golden_view(key, golden) for key, golden in zip(keys, goldens, strict=True)],
        "counts": counts(goldens),
    }


def static_data(name: str, goldens: Sequence[Golden]) -> dict[str, Any]:
    """The part of :func:`page_data` no decision changes (the contexts and cited spans above
    all): serialised once per server, not once per page."""
    return {"name": name, "reasons": list(REJECT_REASONS), "table": table(goldens)}


class PageData:
    """:func:`page_data` as script-safe JSON, the unchanging part serialised once and each
    golden's view recomputed only when its golden was replaced (a decision)."""

    def __init__(self, name: str, goldens: Sequence[Golden]) -> None:
        text = script_json(static_data(name, goldens))
        self._static = text[:-1]  # the object without its closing brace, to append to
        self._views: dict[str, tuple[Golden, dict[str, Any]]] = {}

    def views(self, keys: Sequence[str], goldens: Sequence[Golden]) -> list[dict[str, Any]]:
        """Each golden's :func:`golden_view`, reused while the golden is the same object."""
        result = []
        for key, golden in zip(keys, goldens, strict=True):
            cached = self._views.get(key)
            if cached is None or cached[0] is not golden:
                cached = self._views[key] = (golden, golden_view(key, golden))
            result.append(cached[1])
        return result

    def json(
        self, keys: Sequence[str], goldens: Sequence[Golden], tally: Mapping[Status, int]
    ) -> Markup:
        """The whole page data, as :func:`page_data` would serialise (``tally``: the counts)."""
        from markupsafe import Markup

        views = script_json(self.views(keys, goldens))
        return Markup(f'{self._static},"goldens":{views},"counts":{script_json(dict(tally))}}}')


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


__all__ = ["PageData", "golden_view", "page_data", "static_data"]
