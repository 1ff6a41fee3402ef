"""ChunkStore against real Chroma: embedded in a temp folder, and a real `chroma run` server.

Every test taking ``store_factory`` runs twice, once per backend, with the same assertions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from local_servers import free_port

from synth import Chunk, ChunkStore, ConfigError, HashEmbedder, StoreError
from synth.ingest import ChunkingConfig
from synth.store.chroma import collection_name


class CountingEmbedder(HashEmbedder):
    """A hash embedder that counts the texts it is asked to embed."""

    def __init__(self, dimension: int = 64, **kwargs: object) -> None:
        super().__init__(dimension, **kwargs)  # type: ignore[arg-type]
        self.calls: list[list[str]] = []

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return super()._embed_batch(texts)

    @property
    def embedded_texts(self) -> int:
        return sum(len(call) for call in self.calls)


def make_chunk(i: int, source: str = "a.txt", text: str | None = None, **extra: object) -> Chunk:
    return Chunk(
        id=f"{source}-{i}",
        document_id=f"doc-{source}",
        source=source,
        index=i,
        text=text if text is not None else f"chunk {i} of {source}: tide lighthouse keeper {i}",
        token_count=10 + i,
        **extra,  # type: ignore[arg-type]
    )


StoreFactory = Callable[..., ChunkStore]


@pytest.fixture(params=["embedded", pytest.param("server", marks=pytest.mark.server)])
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """Open ChunkStores on one backend: a temp folder, or the session's chroma server (emptied)."""
    opened: list[ChunkStore] = []
    if request.param == "server":
        url = request.getfixturevalue("empty_chroma_server")
        where: dict[str, object] = {"url": url}
    else:
        where = {"path": tmp_path / "chroma"}

    def factory(embedder: object = None, **kwargs: object) -> ChunkStore:
        store = ChunkStore(embedder or CountingEmbedder(), **where, **kwargs)  # type: ignore[arg-type]
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


# ---- adding: nothing is embedded twice -------------------------------------------------------------
def test_second_add_of_the_same_chunks_embeds_nothing(store_factory: StoreFactory) -> None:
    embedder = CountingEmbedder(batch_size=4)
    store = store_factory(embedder)
    chunks = [make_chunk(i) for i in range(10)]
    first = store.add(chunks)
    assert (first.embedded, first.reused) == (10, 0)
    assert embedder.embedded_texts == 10 and len(embedder.calls) == 3  # batches of 4, 4, 2
    second = store.add(chunks)
    assert (second.embedded, second.reused) == (0, 10)
    assert embedder.embedded_texts == 10  # zero new embedding calls
    assert store.count() == 10


def test_only_new_chunks_are_embedded_and_repeats_are_counted(store_factory: StoreFactory) -> None:
    embedder = CountingEmbedder()
    store = store_factory(embedder)
    store.add([make_chunk(i) for i in range(3)])
    embedder.calls.clear()
    result = store.add([make_chunk(i) for i in range(5)] + [make_chunk(4)])
    assert (result.embedded, result.reused) == (2, 4)  # 3 stored before, 1 repeated in the call
    assert [t for call in embedder.calls for t in call] == [make_chunk(3).text, make_chunk(4).text]
    assert store.count() == 5


def test_a_reopened_store_remembers_its_chunks(store_factory: StoreFactory) -> None:
    store_factory().add([make_chunk(i) for i in range(4)])
    embedder = CountingEmbedder()
    again = store_factory(embedder)
    assert again.count() == 4
    assert again.add([make_chunk(i) for i in range(4)]).embedded == 0
    assert embedder.calls == []


def test_adding_more_than_chromas_batch_limit(store_factory: StoreFactory) -> None:
    store = store_factory(CountingEmbedder(batch_size=50))
    store._max_batch = 7  # as if the server allowed 7 records per call: several insert calls
    result = store.add([make_chunk(i) for i in range(30)])
    assert result.embedded == 30 and store.count() == 30
    assert sorted(store.ids()) == sorted(make_chunk(i).id for i in range(30))


# ---- reading chunks back ---------------------------------------------------------------------------
def test_chunks_round_trip_exactly(store_factory: StoreFactory) -> None:
    store = store_factory()
    originals = [
        make_chunk(
            0,
            "docs/ünïcode name.pdf",
            text="Zeile 1\n«quoted», 'tick' — 表",
            page_start=1,
            page_end=2,
            metadata={"start": 0, "end": 30, "note": "x"},
        ),
        make_chunk(1, "docs/ünïcode name.pdf", page_start=2, page_end=2),
        make_chunk(0, "plain.txt"),  # no pages, no metadata: Chroma cannot hold None
    ]
    store.add(originals)
    wanted = [originals[2].id, originals[0].id, originals[1].id]
    assert store.get(wanted) == [originals[2], originals[0], originals[1]]


def test_get_names_missing_ids(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.add([make_chunk(0)])
    with pytest.raises(StoreError, match="'nope'"):
        store.get([make_chunk(0).id, "nope"])
    with pytest.raises(StoreError, match="not in collection"):
        store.get_embeddings(["nope"])


def test_chunks_sources_and_ids(store_factory: StoreFactory) -> None:
    store = store_factory()
    chunks = [make_chunk(i, "b.md") for i in (2, 0, 1)] + [make_chunk(i, "a.txt") for i in (1, 0)]
    store.add(chunks)
    assert [(c.source, c.index) for c in store.chunks()] == [
        ("a.txt", 0),
        ("a.txt", 1),
        ("b.md", 0),
        ("b.md", 1),
        ("b.md", 2),
    ]
    assert [c.index for c in store.chunks("b.md")] == [0, 1, 2]
    assert store.chunks("missing.txt") == []
    stats = store.sources()
    assert list(stats) == ["a.txt", "b.md"]
    assert (stats["a.txt"].chunks, stats["a.txt"].tokens) == (2, 10 + 11)
    assert (stats["b.md"].chunks, stats["b.md"].tokens) == (3, 10 + 11 + 12)
    assert sorted(store.ids("a.txt")) == sorted(c.id for c in chunks[3:])


def test_reading_many_pages(store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    import synth.store.chroma as chroma_module

    monkeypatch.setattr(chroma_module, "READ_PAGE", 4)
    store = store_factory()
    store.add([make_chunk(i) for i in range(10)])
    assert [c.index for c in store.chunks()] == list(range(10))
    assert store.sources()["a.txt"].chunks == 10


def test_stored_embeddings_are_the_embedders_unit_vectors(store_factory: StoreFactory) -> None:
    embedder = CountingEmbedder()
    store = store_factory(embedder)
    chunks = [make_chunk(i) for i in range(5)]
    store.add(chunks)
    ids = [chunks[3].id, chunks[0].id]
    stored = store.get_embeddings(ids)
    expected = HashEmbedder(64).embed_array([chunks[3].text, chunks[0].text])
    assert stored.shape == (2, 64)
    assert np.allclose(stored, expected, atol=1e-6)
    assert np.allclose(np.linalg.norm(stored, axis=1), 1.0, atol=1e-5)
    assert store.get_embeddings([]).shape == (0, 64)


# ---- querying ----------------------------------------------------------------------------------------
TOPICS = [
    "tide tables for the northern harbour",
    "lighthouse lamp maintenance schedule",
    "harbour pilot boarding procedure",
    "quarterly budget for the lamp oil",
    "storm warning flags and their meaning",
    "keeper's daily log of ships passing",
]


def test_query_returns_true_cosine_similarity(store_factory: StoreFactory) -> None:
    embedder = HashEmbedder(64)
    store = store_factory(embedder)
    chunks = [make_chunk(i, f"s{i % 2}.txt", text=t) for i, t in enumerate(TOPICS)]
    store.add(chunks)
    stored = {
        c.id: v for c, v in zip(chunks, embedder.embed_array([c.text for c in chunks]), strict=True)
    }
    queries = embedder.embed_array(["harbour tide", "lamp oil budget", "flags"])
    # an unnormalised query vector gets the same cosine
    queries[1] *= 3.0
    results = store.query(queries, n_results=3)
    assert len(results) == 3
    for query, hits in zip(queries, results, strict=True):
        assert len(hits) == 3
        expected = {
            cid: float(vec @ query) / float(np.linalg.norm(query)) for cid, vec in stored.items()
        }
        best = sorted(expected, key=expected.get, reverse=True)[:3]  # type: ignore[arg-type]
        assert [cid for cid, _ in hits] == best
        for cid, similarity in hits:
            assert similarity == pytest.approx(expected[cid], abs=1e-5)
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)


def test_query_filters_by_source_and_excludes_ids(store_factory: StoreFactory) -> None:
    embedder = HashEmbedder(64)
    store = store_factory(embedder)
    chunks = [make_chunk(i, f"s{i % 3}.txt", text=t) for i, t in enumerate(TOPICS)]
    store.add(chunks)
    query = embedder.embed_array(["lighthouse lamp"])
    only_s1 = store.query(query, 10, source="s1.txt")[0]
    assert {cid for cid, _ in only_s1} == {c.id for c in chunks if c.source == "s1.txt"}
    two = store.query(query, 10, source=["s0.txt", "s2.txt"])[0]
    assert {cid for cid, _ in two} == {c.id for c in chunks if c.source != "s1.txt"}
    top = store.query(query, 1)[0][0][0]
    without = store.query(query, 3, exclude_ids=[top])[0]
    assert top not in {cid for cid, _ in without} and len(without) == 3
    everything_but_one = store.query(query, 10, exclude_ids=[c.id for c in chunks[1:]])[0]
    assert [cid for cid, _ in everything_but_one] == [chunks[0].id]


def test_query_edge_cases(store_factory: StoreFactory) -> None:
    embedder = HashEmbedder(64)
    store = store_factory(embedder)
    one = embedder.embed_array(["anything"])
    assert store.query(one, 5) == [[]]  # empty store
    store.add([make_chunk(i) for i in range(3)])
    assert len(store.query(one, 50)[0]) == 3  # more asked than stored
    assert len(store.query(one[0], 2)[0]) == 2  # a single vector
    assert store.query(np.zeros((0, 64)), 2) == []
    with pytest.raises(ConfigError):
        store.query(one, 0)
    with pytest.raises(StoreError):
        store.query(np.ones((1, 7)), 2)  # wrong dimension: Chroma's error, translated


def test_many_queries_go_in_one_chroma_call(store_factory: StoreFactory) -> None:
    embedder = HashEmbedder(64)
    store = store_factory(embedder)
    store.add([make_chunk(i, text=t) for i, t in enumerate(TOPICS)])
    calls = []
    real_query = store._collection.query

    def counting_query(**kwargs: object) -> object:
        calls.append(kwargs)
        return real_query(**kwargs)

    store._collection.query = counting_query  # type: ignore[method-assign]
    results = store.search(TOPICS * 3, n_results=1)
    assert len(calls) == 1 and len(results) == 18
    assert [hits[0][0] for hits in results[:6]] == [make_chunk(i).id for i in range(6)]
    assert all(hits[0][1] == pytest.approx(1.0, abs=1e-5) for hits in results)


# ---- collections -------------------------------------------------------------------------------------
def test_collection_is_cosine_and_named_from_embedder_and_chunking(
    store_factory: StoreFactory,
) -> None:
    store = store_factory(HashEmbedder(64), chunking={"chunk_size": 256, "chunk_overlap": 32})
    assert store.collection_name.startswith("synth-hash-64-c256o32-")
    assert store.count() == 0  # opened at its first call
    assert store._collection.configuration["hnsw"]["space"] == "cosine"
    other = store_factory(HashEmbedder(64), chunking=ChunkingConfig(chunk_size=512))
    assert other.collection_name != store.collection_name
    store.add([make_chunk(0)])
    assert other.count() == 0


def test_collection_names_differ_by_every_setting_and_follow_chromas_rules() -> None:
    from chromadb.api.segment import check_index_name

    class LongNamed(HashEmbedder):
        def __init__(self) -> None:
            super().__init__(64)
            self.name = "openai:" + "a-very-long-model-name/with:odd.chars" * 4

    setups = [
        (HashEmbedder(64), ChunkingConfig()),
        (HashEmbedder(128), ChunkingConfig()),
        (HashEmbedder(64), ChunkingConfig(chunk_size=512)),
        (HashEmbedder(64), ChunkingConfig(chunk_overlap=10)),
        (HashEmbedder(64), ChunkingConfig(encoding="o200k_base")),
        (LongNamed(), ChunkingConfig()),
    ]
    names = [collection_name(embedder, chunking) for embedder, chunking in setups]
    assert len(set(names)) == len(names)
    for name in names:
        check_index_name(name)  # raises ValueError when Chroma would refuse it
    assert names == [collection_name(e, c) for e, c in setups]  # stable


def test_a_collection_name_never_comes_from_a_file(tmp_path: Path) -> None:
    from synth import ingest_documents

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "quarterly-secret-plan.txt").write_text("The plan is tides.\n")
    report = ingest_documents(
        [tmp_path / "docs"], embedder=HashEmbedder(32), store_path=tmp_path / "db"
    )
    assert "secret" not in report.collection and "docs" not in report.collection
    assert report.collection == collection_name(HashEmbedder(32), ChunkingConfig())


def test_explicit_collection_names(store_factory: StoreFactory) -> None:
    store = store_factory(collection="my-chunks")
    assert store.collection_name == "my-chunks"
    assert store.count() == 0  # a new store's Chroma opens, and makes its collection, when used
    with pytest.raises(ConfigError, match="invalid collection name"):
        store_factory(collection="x")
    with pytest.raises(ConfigError, match="invalid collection name"):
        store_factory(collection="-bad name-")
    with pytest.raises(StoreError, match="holds vectors from hash:64"):
        store_factory(HashEmbedder(128), collection="my-chunks")


def test_a_collection_in_another_space_is_refused(tmp_path: Path) -> None:
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=str(tmp_path / "chroma"), settings=Settings(anonymized_telemetry=False)
    )
    client.create_collection(
        "euclid", configuration={"hnsw": {"space": "l2"}}, embedding_function=None
    )
    with pytest.raises(StoreError, match="'l2' distance"):
        ChunkStore(HashEmbedder(64), path=tmp_path / "chroma", collection="euclid")


def test_store_location_errors() -> None:
    with pytest.raises(ConfigError, match="http://host:port"):
        ChunkStore(HashEmbedder(8), url="ftp://example")
    with pytest.raises(ConfigError, match="without a path"):
        ChunkStore(HashEmbedder(8), url="http://127.0.0.1:8000/some/path")
    with pytest.raises(StoreError, match="cannot connect to the Chroma server"):
        ChunkStore(HashEmbedder(8), url=f"http://127.0.0.1:{free_port()}")


def test_a_file_where_the_store_would_be_is_said_so(tmp_path: Path) -> None:
    """Not "[Errno 17] File exists": the store's path names a file (a typo for the output)."""
    taken = tmp_path / "goldens.jsonl"
    taken.write_text("{}\n")
    for path in (taken, taken / "store"):
        with pytest.raises(StoreError) as caught:
            ChunkStore(HashEmbedder(8), path=path)
        assert str(caught.value) == (
            f"cannot open the store at {path}: {taken} is a file, not a folder"
        )
    assert taken.read_text() == "{}\n"


def test_store_repr_and_describe_hold_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-show-me")
    store = ChunkStore("openai:text-embedding-3-small", path="db", chunking={"chunk_size": 128})
    shown = repr(store) + json.dumps(store.describe()) + repr(store.embedder)
    assert "sk-never-show-me" not in shown
    assert store.describe()["embedder"] == "openai:text-embedding-3-small"


@pytest.mark.server
def test_cli_ingest_into_a_chroma_server(
    empty_chroma_server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from synth.cli import main

    chroma_server = empty_chroma_server
    folder = tmp_path / "docs"
    folder.mkdir()
    for i, topic in enumerate(TOPICS):
        (folder / f"note {i}.txt").write_text(f"{topic}. " * 40)
    args = ["ingest", str(folder), "--embedder", "hash:64", "--chunk-size", "32"]
    args += ["--store-url", chroma_server, "--json"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["embedded"] == first["chunks"] > len(TOPICS)
    assert main(args) == 0
    second = json.loads(capsys.readouterr().out)
    assert (second["embedded"], second["reused"]) == (0, first["chunks"])
    assert not Path(".synth").exists()  # nothing written locally
    with ChunkStore(HashEmbedder(64), url=chroma_server, chunking={"chunk_size": 32}) as store:
        assert store.count() == first["chunks"]
        assert len(store.sources()) == len(TOPICS)
