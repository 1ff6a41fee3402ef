"""The user's own documents and chunks as Documents: LangChain and LlamaIndex objects, dicts, text.

Duck-typed, so synth imports neither library: an item is read by what it has, in this order:

- a :class:`~synth.data.Document` as it is;
- a string: its text;
- a mapping: its ``page_content``, ``text`` or ``content``, and its ``metadata``;
- an object with ``page_content`` (LangChain's ``Document``) and ``metadata``;
- an object with a ``get_content()`` method (LlamaIndex's ``TextNode``, ``Document``): its
  content without metadata, its ``metadata``, and its ``node_id``/``id_`` kept as ``node_id``;
- an object with a ``text`` string.

Its source name is the first of :data:`SOURCE_KEYS` its metadata holds (LangChain's ``source``,
LlamaIndex's ``file_path`` or ``file_name``, ...), else ``document-<n>`` by its place in the list;
two documents with one source (a PDF loaded a page per Document) are named ``<source>#2``,
``#3``... in order, so each keeps its own chunks; chunks of one source keep its name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from synth._ids import document_id
from synth.data import Document
from synth.errors import ConfigError

#: metadata keys naming an item's source, in the order they are looked for
SOURCE_KEYS = ("source", "file_path", "file_name", "filename", "file", "path", "url")
_TEXT_KEYS = ("page_content", "text", "content")


def as_documents(items: Iterable[Any], *, unique: bool = True) -> list[Document]:
    """``items`` (see the module docstring) as Documents with stable ids, and unique paths unless
    ``unique`` is False (chunks of one source keep its name); ConfigError naming the first item
    that has no text to read."""
    if isinstance(items, str | bytes | Mapping):
        raise ConfigError("give a list of documents (strings, dicts or document objects), not one")
    documents: list[Document] = []
    seen: dict[str, int] = {}
    for number, item in enumerate(items, start=1):
        text, metadata = _text_and_metadata(item, number)
        if not text.strip():
            raise ConfigError(f"document {number} ({type(item).__name__}) has no text")
        base = _source(metadata) or (item.path if isinstance(item, Document) and item.path else "")
        base = base or f"document-{number}"
        seen[base] = seen.get(base, 0) + 1
        path = base if seen[base] == 1 or not unique else f"{base}#{seen[base]}"
        pages = item.pages if isinstance(item, Document) else []
        documents.append(
            Document(
                id=document_id(path, text),
                path=path,
                text=text,
                pages=pages,
                metadata=metadata,
            )
        )
    if not documents:
        raise ConfigError("no documents given")
    return documents


def _text_and_metadata(item: Any, number: int) -> tuple[str, dict[str, Any]]:
    if isinstance(item, Document):
        return item.text, dict(item.metadata)
    if isinstance(item, str):
        return item, {}
    if isinstance(item, Mapping):
        for key in _TEXT_KEYS:
            if isinstance(item.get(key), str):
                return item[key], _metadata(item.get("metadata"))
        raise ConfigError(
            f"document {number} is a mapping without a text: give it one of {', '.join(_TEXT_KEYS)}"
        )
    content = getattr(item, "page_content", None)
    if isinstance(content, str):  # LangChain
        return content, _metadata(getattr(item, "metadata", None))
    get_content = getattr(item, "get_content", None)
    if callable(get_content):  # LlamaIndex: the content alone (its default leaves metadata out)
        text = get_content()
        metadata = _metadata(getattr(item, "metadata", None))
        node_id = getattr(item, "node_id", None) or getattr(item, "id_", None)
        if isinstance(node_id, str):
            metadata.setdefault("node_id", node_id)
        if isinstance(text, str):
            return text, metadata
    text = getattr(item, "text", None)
    if isinstance(text, str):
        return text, _metadata(getattr(item, "metadata", None))
    raise ConfigError(
        f"document {number} is a {type(item).__name__}: give strings, dicts with a text, "
        "LangChain Documents or LlamaIndex nodes"
    )


def _metadata(value: Any) -> dict[str, Any]:
    """The JSON-friendly part of an item's metadata (scalars and lists of them)."""
    if not isinstance(value, Mapping):
        return {}
    kept: dict[str, Any] = {}
    for key, item in value.items():
        if isinstance(item, str | int | float | bool) or item is None:
            kept[str(key)] = item
        elif isinstance(item, list | tuple) and all(isinstance(x, str | int | float) for x in item):
            kept[str(key)] = list(item)
    return kept


def _source(metadata: Mapping[str, Any]) -> str:
    for key in SOURCE_KEYS:
        value = metadata.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


__all__ = ["SOURCE_KEYS", "as_documents"]
