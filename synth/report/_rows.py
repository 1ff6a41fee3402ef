"""The dataset report's table: one row per golden, the context chunks once each, cited spans;
for goldens that expect tool calls, the calls.

Rows are arrays (not objects) and each chunk's text is kept once however many goldens use it, so a
5,000-golden report stays a few megabytes. Cited spans are converted to UTF-16 offsets, the units
JavaScript strings are indexed in, so a span after an emoji still marks the quoted words.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from synth.data import Golden, ToolCall

#: the table's columns, in the order of a row's values (``index`` is the golden's position)
COLUMNS = (
    {"key": "index", "label": "#", "type": "number"},
    {"key": "input", "label": "input", "type": "text"},
    {"key": "expected", "label": "expected output", "type": "text"},
    {"key": "file", "label": "file", "type": "text"},
    {"key": "page", "label": "page", "type": "text"},
    {"key": "section", "label": "section", "type": "text"},
    {"key": "evolutions", "label": "evolutions", "type": "text"},
    {"key": "difficulty", "label": "difficulty", "type": "text"},
    {"key": "grounding", "label": "grounding", "type": "number"},
    {"key": "type", "label": "question type", "type": "text"},
)
#: the column a dataset of agent goldens adds: each golden's expected calls, in order
CALLS_COLUMN = {"key": "calls", "label": "expected calls", "type": "text"}


def table(goldens: Sequence[Golden]) -> dict[str, Any]:
    """The table's data: ``columns``, ``rows``, ``chunks`` (key -> text) and per row its
    ``contexts``: ``[chunk keys, marks]`` with marks ``[chunk position, start, end]``. When a
    golden expects tool calls, a column of them (:data:`CALLS_COLUMN`) and per row its ``calls``:
    ``[name, arguments as JSON, output as JSON or None]`` each (None: a golden about no tools)."""
    chunks: dict[str, str] = {}
    rows, contexts = [], []
    agent = any(golden.expected_tools is not None for golden in goldens)
    for index, golden in enumerate(goldens):
        row = _row(index, golden)
        if agent:
            row.append(calls_text(golden.expected_tools))
        rows.append(row)
        keys = _chunk_keys(index, golden, chunks)
        contexts.append([keys, _marks(golden, [chunks[key] for key in keys])])
    columns = [*COLUMNS, CALLS_COLUMN] if agent else list(COLUMNS)
    made = {"columns": columns, "rows": rows, "chunks": chunks, "contexts": contexts}
    if agent:
        made["calls"] = [_calls(golden.expected_tools) for golden in goldens]
    return made


def calls_text(calls: Sequence[ToolCall] | None) -> str | None:
    """A golden's expected calls in one cell: their tools in order (``none`` when no call is
    expected; None for a golden about no tools)."""
    if calls is None:
        return None
    return " \u2192 ".join(call.name for call in calls) or "none"


def _calls(calls: Sequence[ToolCall] | None) -> list[list[str | None]] | None:
    if calls is None:
        return None
    shown = []
    for call in calls:
        arguments = json.dumps(call.input_parameters, ensure_ascii=False, indent=1, default=str)
        output = None
        if call.output is not None:
            output = json.dumps(call.output, ensure_ascii=False, indent=1, default=str)
        shown.append([call.name, arguments, output])
    return shown


def _row(index: int, golden: Golden) -> list[Any]:
    meta = golden.metadata
    return [
        index,
        golden.input,
        golden.expected_output,
        ", ".join(golden.source_files or []),
        ", ".join(str(page) for page in _pages(meta.get("citations"))),
        _sections(golden),
        ", ".join(text(meta.get("evolutions"))),
        label if isinstance(label := mapping(meta.get("difficulty")).get("label"), str) else None,
        number(mapping(meta.get("grounding")).get("score")),
        kind if isinstance(kind := meta.get("question_type"), str) else None,
    ]


def _sections(golden: Golden) -> str | None:
    """Where the cited passages sit (every context chunk's place when none is cited): each heading
    path once, its headings joined by " > ", paths by "; "; None for files without headings."""
    paths = golden.metadata.get("heading_paths")
    if not isinstance(paths, list):
        return None
    ids = golden.context_ids or []
    cited = [
        ids.index(citation["chunk_id"])
        for citation in golden.metadata.get("citations") or []
        if isinstance(citation, Mapping) and citation.get("chunk_id") in ids
    ]
    shown = [
        " > ".join(str(heading) for heading in paths[position])
        for position in (cited or range(len(paths)))
        if position < len(paths) and isinstance(paths[position], list) and paths[position]
    ]
    return "; ".join(dict.fromkeys(shown)) or None


def _chunk_keys(index: int, golden: Golden, chunks: dict[str, str]) -> list[str]:
    texts = golden.context or []
    ids = golden.context_ids or []
    keys = []
    for position, chunk in enumerate(texts):
        key = ids[position] if len(ids) == len(texts) else f"{index}:{position}"
        if chunks.get(key, chunk) != chunk:  # one id, two texts: keep this golden's own
            key = f"{index}:{position}"
        chunks[key] = chunk
        keys.append(key)
    return keys


def _marks(golden: Golden, texts: list[str]) -> list[list[int]]:
    """Each citation's span ``[chunk position, start, end]`` in UTF-16 units, merged where they
    overlap; a citation of a chunk not in the context, or out of its text, is left out."""
    ids = golden.context_ids or []
    spans: dict[int, list[tuple[int, int]]] = {}
    for citation in golden.metadata.get("citations") or []:
        if not isinstance(citation, Mapping) or citation.get("chunk_id") not in ids:
            continue
        position = ids.index(citation["chunk_id"])
        span = _span(citation.get("start"), citation.get("end"))
        if position >= len(texts) or span is None or span[1] > len(texts[position]):
            continue
        spans.setdefault(position, []).append(span)
    marks = []
    for position, found in sorted(spans.items()):
        merged: list[list[int]] = []
        for start, end in sorted(found):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        chunk = texts[position]
        marks += [[position, _utf16(chunk, start), _utf16(chunk, end)] for start, end in merged]
    return marks


def _span(start: object, end: object) -> tuple[int, int] | None:
    if isinstance(start, bool) or isinstance(end, bool):
        return None
    if isinstance(start, int) and isinstance(end, int) and 0 <= start < end:
        return start, end
    return None


def _utf16(text: str, offset: int) -> int:
    head = text[:offset]
    return offset if head.isascii() else len(head.encode("utf-16-le")) // 2


def _pages(citations: object) -> list[int]:
    if not isinstance(citations, list):
        return []
    pages = {c.get("page") for c in citations if isinstance(c, Mapping)}
    return sorted(p for p in pages if isinstance(p, int) and not isinstance(p, bool))


def mapping(value: object) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else empty (a measurement absent or of another shape)."""
    return value if isinstance(value, Mapping) else {}


def number(value: object) -> float | None:
    """``value`` as a finite float, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def text(value: object) -> list[str]:
    """``value`` as a list of strings (one string, or the strings of a list)."""
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


__all__ = ["CALLS_COLUMN", "COLUMNS", "calls_text", "mapping", "number", "table", "text"]
