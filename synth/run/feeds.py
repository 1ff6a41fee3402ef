"""Candidates from what a user gives instead of documents: contexts as plain texts.

The feeds themselves are stages 2 to 4 and live in :mod:`synth.contexts.feed` (the protocol,
:class:`ListFeed`, :class:`ScratchFeed`) and :mod:`synth.contexts.seed_feed` (:class:`DocsFeed`);
they are re-exported here for the callers that still import them from the run package.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from synth._ids import text_hash
from synth.contexts.feed import Candidate, Feed, ListFeed, ScratchFeed
from synth.contexts.group import context_id
from synth.contexts.seed_feed import DocsFeed
from synth.data import Context


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


__all__ = [
    "Candidate",
    "DocsFeed",
    "Feed",
    "ListFeed",
    "ScratchFeed",
    "context_from_texts",
    "text_id",
]
