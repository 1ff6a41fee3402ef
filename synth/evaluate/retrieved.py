"""Contexts in whatever shape a retriever returns them: their texts and their ids.

A context may be a string, a search hit (``hit.doc.text``, ``hit.chunk.text``), a document or
chunk (``.text``), a :class:`~synth.data.Context` (``.texts``, several at once) or a mapping with
``"text"``. Ids come from ``.id``, ``hit.doc.id``/``hit.chunk.id``, a mapping's ``"id"`` or the
first element of an ``(id, score)`` pair (what :meth:`ChunkStore.search` returns); a string is its
own id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from synth.errors import ConfigError

_WRAPPERS = ("doc", "document", "chunk")


def _one(contexts: Any) -> bool:
    """Whether ``contexts`` is a single context rather than a list of them (a pydantic record,
    such as a Chunk or a Context, iterates over its fields: it is one context all the same)."""
    return isinstance(contexts, str | Mapping | BaseModel) or not isinstance(contexts, Iterable)


def _text_of(context: Any) -> list[str]:
    if isinstance(context, str):
        return [context]
    if isinstance(context, Mapping):
        if isinstance(context.get("text"), str):
            return [context["text"]]
        for key in _WRAPPERS:
            if key in context:
                return _text_of(context[key])
        raise ConfigError(f"a context mapping needs a 'text' string, got keys {sorted(context)}")
    text = getattr(context, "text", None)
    if isinstance(text, str):
        return [text]
    texts = getattr(context, "texts", None)
    if isinstance(texts, list | tuple) and all(isinstance(t, str) for t in texts):
        return list(texts)
    for attr in _WRAPPERS:
        inner = getattr(context, attr, None)
        if inner is not None:
            return _text_of(inner)
    raise ConfigError(f"cannot read the text of a context of type {type(context).__name__}")


def context_texts(contexts: Any) -> list[str]:
    """Return the texts of ``contexts`` (one context or a list of them), in order."""
    if contexts is None:
        return []
    if _one(contexts):
        return _text_of(contexts)
    texts: list[str] = []
    for context in contexts:
        texts.extend(_text_of(context))
    return texts


def _id_of(context: Any) -> str:
    if isinstance(context, str):
        return context
    if isinstance(context, tuple) and context and isinstance(context[0], str):
        return context[0]  # (id, score), as ChunkStore.search returns
    if isinstance(context, Mapping):
        if context.get("id") is not None:
            return str(context["id"])
        for key in _WRAPPERS:
            if key in context:
                return _id_of(context[key])
        raise ConfigError(f"a context mapping needs an 'id', got keys {sorted(context)}")
    for attr in _WRAPPERS:
        inner = getattr(context, attr, None)
        if inner is not None and getattr(inner, "id", None) is not None:
            return str(inner.id)
    if getattr(context, "id", None) is not None:
        return str(context.id)
    raise ConfigError(f"cannot read the id of a context of type {type(context).__name__}")


def context_ids(contexts: Any) -> list[str]:
    """Return the ids of ``contexts`` (ids, hits, chunks or mappings), in ranked order."""
    if contexts is None:
        return []
    if _one(contexts):
        return [_id_of(contexts)]
    return [_id_of(context) for context in contexts]


__all__ = ["context_ids", "context_texts"]
