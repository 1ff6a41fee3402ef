"""The language mix of a run: the chunks' languages found, and the goldens each language gets.

``--plan`` lists both (:func:`planned_languages`, :func:`language_notes`); once goldens exist
the mix is counted from their ``metadata["language"]`` (``synth inspect``, the report, the
manifest's ``trust``). In ``auto`` each golden takes its context's language, so the plan counts
the planned contexts' languages; a fixed language gets every golden.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from synth._language import AUTO, LANGUAGE_KEY
from synth.data import Chunk

if TYPE_CHECKING:
    from synth.run.plan import PlanInputs

#: the key of chunks and goldens whose language could not be told
UNKNOWN = "(unknown)"


def _sorted(counts: Counter[str]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def chunk_languages(chunks: Iterable[Chunk]) -> dict[str, int]:
    """Chunks per language recorded at ingest, most first."""
    return _sorted(Counter(str(c.metadata.get(LANGUAGE_KEY) or UNKNOWN) for c in chunks))


def planned_languages(
    inputs: PlanInputs, setting: str, per_context: int, goldens: int
) -> dict[str, dict[str, int]]:
    """``{"chunks": {...}, "goldens": {...}}``: the languages found and the goldens per language
    the planned contexts give (``goldens`` in all, ``per_context`` from each, in order)."""
    out: dict[str, dict[str, int]] = {}
    if inputs.chunk_languages is not None:
        out["chunks"] = inputs.chunk_languages
    if setting != AUTO:
        out["goldens"] = {setting: goldens} if goldens else {}
        return out
    per_golden = [
        str(c.metadata.get(LANGUAGE_KEY) or UNKNOWN)
        for c in inputs.contexts
        for _ in range(per_context)
    ][:goldens]
    out["goldens"] = _sorted(Counter(per_golden))
    return out


def _listed(counts: dict[str, int], unit: str) -> str:
    return ", ".join(f"{code} {n}" for code, n in counts.items()) + f" {unit}"


def language_notes(languages: dict[str, dict[str, int]]) -> list[str]:
    """The plan's line on languages: those found in the chunks, and the goldens each gets (none
    when no language is known)."""
    if not any(code != UNKNOWN for counts in languages.values() for code in counts):
        return []
    parts = []
    if languages.get("chunks"):
        parts.append(f"languages found: {_listed(languages['chunks'], 'chunks')}")
    if languages.get("goldens"):
        parts.append(f"goldens per language: {_listed(languages['goldens'], 'goldens')}")
    return ["; ".join(parts)] if parts else []


__all__ = ["UNKNOWN", "chunk_languages", "language_notes", "planned_languages"]
