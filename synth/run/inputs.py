"""What the ``generate_goldens_from_*`` methods accept, checked and made uniform."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from synth._ids import text_hash
from synth.contexts.context import context_id
from synth.contexts.feed import Candidate
from synth.data import Context, Golden
from synth.errors import ConfigError
from synth.ingest.web import is_url

#: inputs asked for per request when generating from scratch
SCRATCH_BATCH = 5


def text_id(text: str) -> str:
    """A stable id for a user-given context text."""
    return "txt_" + text_hash(text, 24)


def context_from_texts(
    texts: Sequence[str], source_files: Sequence[str] | None = None, **metadata: Any
) -> Context:
    """A Context from plain texts (ids derived from the texts)."""
    ids = [text_id(t) for t in texts]
    return Context(
        id=context_id(ids),
        chunk_ids=ids,
        texts=list(texts),
        source_files=list(source_files or []),
        metadata=dict(metadata),
    )


def as_paths(value: Any) -> list[str]:
    """One path or several, as a non-empty list of strings naming files or folders that exist, or
    http(s) URLs (pages or sitemaps, fetched by the ingest)."""
    if isinstance(value, str | os.PathLike):
        value = [value]
    paths = [os.fspath(p) for p in value]
    if not paths:
        raise ConfigError("no documents given: name at least one file, folder or URL")
    missing = [p for p in paths if not os.path.exists(p) and not is_url(p)]
    if missing:
        raise ConfigError(
            f"no document could be read: no such file or folder: {', '.join(missing)}"
        )
    return paths


def as_contexts(contexts: Sequence[Any], source_files: Any) -> list[Context]:
    """Contexts given as Context objects or lists of texts (with optional source files each)."""
    if isinstance(contexts, str) or not contexts:
        raise ConfigError("contexts must be a non-empty list of contexts (each a list of texts)")
    out = []
    for i, item in enumerate(contexts):
        if isinstance(item, Context):
            out.append(item)
            continue
        if isinstance(item, str) or not all(isinstance(t, str) for t in item):
            raise ConfigError(f"context {i} must be a Context or a list of strings")
        files = source_files[i] if source_files is not None else None
        if isinstance(files, str):
            files = [files]
        out.append(context_from_texts(list(item), files))
    return out


def candidates_from_goldens(given: Sequence[Golden]) -> list[Candidate]:
    """One candidate per given golden: its input, with up to four others, is the style example,
    and its context (when it has one) bounds what the new inputs may ask."""
    candidates = []
    for i, golden in enumerate(given):
        context = None
        if golden.context:
            context = context_from_texts(golden.context, golden.source_files)
        others = [given[(i + j) % len(given)].input for j in range(1, min(len(given), 5))]
        key = f"golden{i}:{short_hash(golden.input)}"
        candidates.append(Candidate(i, key, context, examples=[golden.input, *others]))
    return candidates


def short_hash(text: str) -> str:
    """Ten hex digits identifying ``text`` (for candidate keys)."""
    return text_hash(text, 10)


__all__ = [
    "SCRATCH_BATCH",
    "as_contexts",
    "as_paths",
    "candidates_from_goldens",
    "context_from_texts",
    "short_hash",
    "text_id",
]
