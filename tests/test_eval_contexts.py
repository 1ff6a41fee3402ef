"""Contexts in a retriever's own shapes: strings, mappings, hits wrapping a doc or a chunk,
synth's records, ``(id, score)`` pairs; their texts and ids, in order, and one clear error else."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest

from synth import ConfigError, context_ids, context_texts
from synth.data import Chunk, Context, Document

CHUNK = Chunk(id="c-1", document_id="d", source="a.md", index=0, text="chunk text", token_count=2)
DOCUMENT = Document(id="d-1", path="b.md", text="document text")
CONTEXT = Context(id="ctx-1", chunk_ids=["x", "y"], texts=["first", "second"], source_files=[])


@dataclass
class Hit:
    """A search hit the way retrieval libraries wrap one: the payload under ``doc`` or ``chunk``."""

    doc: Any = None
    chunk: Any = None
    score: float = 0.0


def test_texts_of_every_shape_in_order() -> None:
    contexts = [
        "plain",
        {"text": "mapping"},
        {"doc": {"text": "mapping in doc"}},
        {"document": {"text": "mapping in document"}},
        {"chunk": CHUNK},
        CHUNK,
        DOCUMENT,
        CONTEXT,  # several texts at once
        SimpleNamespace(texts=("tuple", "of texts")),
        Hit(doc=DOCUMENT),
        Hit(chunk=SimpleNamespace(text="hit chunk")),
        SimpleNamespace(document=SimpleNamespace(text="wrapped document")),
    ]
    assert context_texts(contexts) == [
        "plain",
        "mapping",
        "mapping in doc",
        "mapping in document",
        "chunk text",
        "chunk text",
        "document text",
        "first",
        "second",
        "tuple",
        "of texts",
        "document text",
        "hit chunk",
        "wrapped document",
    ]


def test_one_context_alone_is_a_list_of_its_texts() -> None:
    assert context_texts(None) == []
    assert context_texts("alone") == ["alone"]
    assert context_texts({"text": "one mapping"}) == ["one mapping"]
    assert context_texts(CONTEXT) == ["first", "second"]
    assert context_texts(CHUNK) == ["chunk text"]
    assert context_texts(Hit(chunk=CHUNK)) == ["chunk text"]  # not iterable: one context
    assert context_texts(iter(["a", "b"])) == ["a", "b"]  # any iterable of contexts
    assert context_texts([]) == []


def test_a_text_that_is_not_a_string_is_looked_for_deeper() -> None:
    # a mapping whose "text" is not a string but which wraps a document
    assert context_texts([{"text": None, "doc": {"text": "inner"}}]) == ["inner"]
    # an object whose .text is not a string, with the text in its chunk
    assert context_texts([SimpleNamespace(text=3, chunk=CHUNK)]) == ["chunk text"]
    # texts holding a non-string is not a list of texts
    assert context_texts([SimpleNamespace(texts=["ok", 2], doc=DOCUMENT)]) == ["document text"]


@pytest.mark.parametrize(
    ("context", "message"),
    [
        ({"title": "no text", "score": 1}, r"a context mapping needs a 'text' string, got keys \['score', 'title'\]"),
        (42, "cannot read the text of a context of type int"),
        (SimpleNamespace(texts=["ok", 2]), "cannot read the text of a context of type SimpleNamespace"),
        (Hit(), "cannot read the text of a context of type Hit"),
        ({"doc": 7}, "cannot read the text of a context of type int"),
    ],
)  # fmt: skip
def test_a_context_without_text_is_a_config_error(context: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        context_texts([context])


def test_ids_of_every_shape_in_ranked_order() -> None:
    contexts = [
        "id-as-string",
        ("pair-id", 0.93),  # what ChunkStore.search returns
        {"id": "mapping"},
        {"id": 7},  # a number is an id too, as text
        {"doc": {"id": "in doc"}},
        {"document": {"id": "in document"}},
        {"chunk": {"id": "in chunk"}},
        {"id": None, "chunk": {"id": "id None, then chunk"}},
        CHUNK,
        DOCUMENT,
        CONTEXT,
        Hit(doc=DOCUMENT, score=0.5),
        Hit(chunk=CHUNK),
        SimpleNamespace(id="own", doc=SimpleNamespace(id=None)),  # a wrapper without an id
    ]
    assert context_ids(contexts) == [
        "id-as-string",
        "pair-id",
        "mapping",
        "7",
        "in doc",
        "in document",
        "in chunk",
        "id None, then chunk",
        "c-1",
        "d-1",
        "ctx-1",
        "d-1",
        "c-1",
        "own",
    ]


def test_one_id_alone() -> None:
    assert context_ids(None) == []
    assert context_ids("alone") == ["alone"]
    assert context_ids({"id": "m"}) == ["m"]
    assert context_ids(CHUNK) == ["c-1"]
    assert context_ids(Hit(chunk=CHUNK)) == ["c-1"]
    assert context_ids([]) == []


@pytest.mark.parametrize(
    ("context", "message"),
    [
        ({"text": "no id"}, r"a context mapping needs an 'id', got keys \['text'\]"),
        ({"id": None}, r"a context mapping needs an 'id', got keys \['id'\]"),
        ((), "cannot read the id of a context of type tuple"),
        ((3, 0.5), "cannot read the id of a context of type tuple"),
        (SimpleNamespace(text="no id"), "cannot read the id of a context of type SimpleNamespace"),
        (Hit(doc=SimpleNamespace(text="t")), "cannot read the id of a context of type Hit"),
    ],
)
def test_a_context_without_id_is_a_config_error(context: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        context_ids([context])


def test_a_real_store_search_gives_ids_and_its_chunks_give_texts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from synth.store import ChunkStore, HashEmbedder

    chunks = [
        Chunk(id=f"a.md#{i}", document_id="a", source="a.md", index=i, text=t, token_count=3)
        for i, t in enumerate(["solar panels in winter", "bread dough rising", "chess openings"])
    ]
    with ChunkStore(HashEmbedder(64), path=tmp_path / "chroma", collection="ctx") as store:
        store.add(chunks)
        (hits,) = store.search(["solar panels in winter"], 2)
        ids = context_ids(hits)
        assert ids[0] == "a.md#0" and len(ids) == 2
        assert context_texts(store.get(ids))[0] == "solar panels in winter"
