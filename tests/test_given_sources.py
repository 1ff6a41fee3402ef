"""Goldens from what a team already has: a Chroma collection another program built (its documents
and vectors used as they are, nothing embedded), and documents or chunks given as objects
(LangChain ``Document``s, LlamaIndex ``TextNode``s, dicts, strings) through the Python API.
"""

from __future__ import annotations

import ast
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import chromadb
import numpy as np
import pytest
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings

from synth import GenerationConfig, Synthesizer
from synth.errors import ConfigError
from synth.ingest.objects import as_documents
from synth.store.imported import parse_chroma_spec, read_chroma_collection

TOPICS = {
    "/srv/kb/pumps.md": "pump",
    "/srv/kb/valves.md": "valve",
    "/srv/kb/filters.md": "filter",
}


def _passage(thing: str, n: int) -> str:
    return (
        f"Section {n} on the {thing}: the {thing} must be inspected every {n + 2} months by a "
        f"certified technician, who records the {thing} pressure, checks the seals for wear, "
        f"and replaces the {thing} gasket when the reading drops below {n + 40} kilopascals. "
        f"A {thing} that fails inspection is tagged and taken out of service the same day."
    )


class WordHashEmbedding(EmbeddingFunction[Documents]):
    """Another program's embedding function: 16 dimensions of hashed words."""

    def __init__(self) -> None:
        pass

    def __call__(self, input: Documents) -> Embeddings:
        rows = []
        for text in input:
            row = np.zeros(16, dtype=np.float32)
            for word in text.lower().split():
                row[int(hashlib.md5(word.encode()).hexdigest(), 16) % 16] += 1.0
            rows.append(row)
        return rows

    @staticmethod
    def name() -> str:
        return "word-hash-16"

    def get_config(self) -> dict[str, Any]:
        return {}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> WordHashEmbedding:
        return WordHashEmbedding()


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A collection built with chromadb directly: its own embedding function, its own keys."""
    folder = tmp_path_factory.mktemp("their-chroma")
    client = chromadb.PersistentClient(path=str(folder))
    kb = client.create_collection("team-kb", embedding_function=WordHashEmbedding())
    ids, texts, metas = [], [], []
    for path, thing in TOPICS.items():
        for n in range(4):
            ids.append(f"{thing}-{n}")
            texts.append(_passage(thing, n))
            metas.append({"file_path": path, "chunk_index": n, "author": "ops team"})
    kb.add(ids=ids, documents=texts, metadatas=metas)
    client.close()
    return folder


def _synthesizer(server: Any, tmp: Path, **kw: Any) -> Synthesizer:
    return Synthesizer(
        "openai:gpt-4.1-mini",
        base_url=server.url,
        embedder="openai:text-embedding-3-small",
        cache=None,
        run_dir=tmp / "run",
        store_path=tmp / "store",
        progress=False,
        **kw,
    )


def test_a_chroma_collection_gives_exactly_n_goldens_with_no_embedding_request(
    collection: Path, fake_openai_docs: Any, tmp_path: Path
) -> None:
    # no deduplication: it would embed the new questions, and this run is to embed nothing
    synth = _synthesizer(
        fake_openai_docs, tmp_path, generation_config=GenerationConfig(dedup_threshold=None)
    )
    with synth:
        goldens = synth.generate_goldens_from_chroma(collection, "team-kb", num_goldens=4)
    assert len(goldens) == 4
    assert fake_openai_docs.request_count("embeddings") == 0
    assert fake_openai_docs.request_count("chat") > 0
    stored = {f"{thing}-{n}" for thing in TOPICS.values() for n in range(4)}
    for golden in goldens:
        assert set(golden.context_ids) <= stored  # the collection's own records, as they are
        assert set(golden.source_files) <= set(TOPICS)  # named by its metadata's file_path
    assert synth.manifest is not None
    assert synth.manifest["mode"] == "chroma"


def test_with_deduplication_only_the_new_questions_are_embedded(
    collection: Path, fake_openai_docs: Any, tmp_path: Path
) -> None:
    synth = _synthesizer(fake_openai_docs, tmp_path)
    with synth:
        goldens = synth.generate_goldens_from_chroma(collection, "team-kb", num_goldens=3)
    assert len(goldens) == 3
    records = {_passage(thing, n) for thing in TOPICS.values() for n in range(4)}
    embedded = [
        text
        for request in fake_openai_docs.requests_to("embeddings")
        for text in request.body["input"]
    ]
    assert embedded and not records & set(embedded)  # questions only, never a record
    # another embedder made the records' vectors: no question vector is compared with them
    assert all(g.metadata["difficulty"].get("dense_rank") is None for g in goldens)


def test_a_collection_is_read_with_its_own_vectors_and_keys(collection: Path) -> None:
    imported = read_chroma_collection(collection, "team-kb")
    assert len(imported.chunks) == 12 and imported.vectors.shape == (12, 16)
    first = next(c for c in imported.chunks if c.id == "valve-2")
    assert (first.source, first.index) == ("/srv/kb/valves.md", 2)
    assert first.metadata["author"] == "ops team"
    row = [c.id for c in imported.chunks].index("valve-2")
    assert np.allclose(imported.vectors[row], WordHashEmbedding()([first.text])[0])
    assert {f.path for f in imported.report.files} == set(TOPICS)
    assert imported.report.embedded == 0


def test_a_collection_without_source_keys_is_named_by_the_collection(tmp_path: Path) -> None:
    client = chromadb.PersistentClient(path=str(tmp_path / "db"))
    bare = client.create_collection("bare-notes", embedding_function=None)
    bare.add(ids=["x"], documents=[_passage("boiler", 1)], embeddings=[[0.1, 0.2, 0.3]])
    bare.add(ids=["y"], documents=[""], embeddings=[[0.3, 0.2, 0.1]])
    client.close()
    imported = read_chroma_collection(tmp_path / "db", "bare-notes")
    assert [c.source for c in imported.chunks] == ["bare-notes"]
    skipped = [f for f in imported.report.files if f.status == "skipped"]
    assert [(f.path, f.reason) for f in skipped] == [
        ("1 record(s) of bare-notes", "no document text")
    ]


def test_a_bad_chroma_spec_or_place_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="PATH:COLLECTION"):
        parse_chroma_spec("just-a-folder")
    assert parse_chroma_spec("http://localhost:8000:kb") == ("http://localhost:8000", "kb")
    with pytest.raises(ConfigError, match="no Chroma store at"):
        read_chroma_collection(tmp_path / "nowhere", "kb")
    assert not (tmp_path / "nowhere").exists()  # nothing made where nothing was


def test_langchain_documents_make_goldens_named_by_their_source(tmp_path: Path) -> None:
    from langchain_core.documents import Document as LangChainDocument

    docs = [
        LangChainDocument(page_content=_passage(thing, 1) * 3, metadata={"source": path})
        for path, thing in TOPICS.items()
    ]
    synth = Synthesizer(
        "offline", embedder="hash", cache=None, run_dir=tmp_path / "r", progress=False
    )
    with synth:
        goldens = synth.generate_goldens_from_documents(docs, num_goldens=3)
    assert len(goldens) == 3
    assert {name for g in goldens for name in g.source_files} <= set(TOPICS)
    assert synth.manifest is not None and synth.manifest["mode"] == "documents"


def test_llamaindex_nodes_are_used_as_the_chunks_they_are(tmp_path: Path) -> None:
    from llama_index.core.schema import TextNode

    nodes = [
        TextNode(
            text=_passage(thing, n), metadata={"file_name": f"{thing}.md"}, id_=f"n-{thing}-{n}"
        )
        for thing in TOPICS.values()
        for n in range(3)
    ]
    synth = Synthesizer(
        "offline", embedder="hash", cache=None, run_dir=tmp_path / "r", progress=False
    )
    with synth:
        goldens = synth.generate_goldens_from_documents(nodes, num_goldens=3, chunk=False)
    assert len(goldens) == 3
    texts = {node.text for node in nodes}
    for golden in goldens:
        assert golden.context and set(golden.context) <= texts  # each node one chunk, untouched
        assert set(golden.source_files) <= {f"{thing}.md" for thing in TOPICS.values()}


def test_plain_strings_and_dicts_are_documents_too() -> None:
    documents = as_documents(
        [
            "a note on pumps",
            {"text": "a note on valves", "metadata": {"source": "valves.md", "page": 2}},
            {"page_content": "more on valves", "metadata": {"source": "valves.md"}},
        ]
    )
    assert [d.path for d in documents] == ["document-1", "valves.md", "valves.md#2"]
    assert documents[1].metadata == {"source": "valves.md", "page": 2}
    assert len({d.id for d in documents}) == 3
    with pytest.raises(ConfigError, match="document 1 is a int"):
        as_documents([42])


_DUCK_RUN = """
import sys
from synth import Synthesizer

class Node:  # what synth reads of a LlamaIndex TextNode, and nothing else of it
    def __init__(self, text, n):
        self.metadata, self.node_id, self._text = {"file_name": "pumps.md"}, f"n{n}", text
    def get_content(self):
        return self._text

passages = sys.argv[1:]
synth = Synthesizer("offline", embedder="hash", cache=None, progress=False, run_dir="r", store_path="s")
with synth:
    goldens = synth.generate_goldens_from_documents(
        [Node(p, n) for n, p in enumerate(passages)], num_goldens=2, chunk=False
    )
assert len(goldens) == 2 and set(goldens[0].context) <= set(passages), goldens
loaded = sorted({m.split(".")[0] for m in sys.modules} & {"langchain_core", "llama_index"})
assert not loaded, loaded
"""


def test_a_run_from_node_like_objects_loads_neither_langchain_nor_llamaindex(
    tmp_path: Path,
) -> None:
    passages = [_passage(thing, n) for thing in TOPICS.values() for n in range(2)]
    done = subprocess.run(
        [sys.executable, "-c", _DUCK_RUN, *passages], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_no_synth_module_imports_langchain_core_or_llamaindex() -> None:
    # chunking's splitter (langchain-text-splitters) brings langchain-core along; synth's own
    # code reads LangChain and LlamaIndex objects by duck typing and imports neither
    root = Path(__file__).resolve().parent.parent / "synth"
    found = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            found += [
                f"{path.relative_to(root)}: {name}"
                for name in names
                if name.split(".")[0] in ("langchain_core", "llama_index", "langchain")
            ]
    assert found == []


def test_the_command_line_generates_from_a_collection(
    collection: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from synth.cli import main

    spec = f"{collection}:team-kb"
    assert main(["ingest", "--from-chroma", spec, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["chunks"], shown["embedded"]) == (12, 0)
    args = ["generate", "--from-chroma", spec, "--model", "offline", "--goldens", "3", "--quiet"]
    assert main([*args, "-o", "out.jsonl"]) == 0
    written = [json.loads(line) for line in Path("out.jsonl").read_text().splitlines()]
    assert len(written) == 3
    assert {name for g in written for name in g["source_files"]} <= set(TOPICS)


def test_paths_and_a_collection_together_are_refused(
    collection: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from synth.cli import main

    assert main(["generate", "docs", "--from-chroma", f"{collection}:team-kb"]) == 2
    assert "give PATHs or --from-chroma, not both" in capsys.readouterr().err
    assert main(["ingest"]) == 2
    assert "give at least one PATH" in capsys.readouterr().err


def test_documents_asking_for_question_types_report_every_types_run_as_one_manifest(
    tmp_path: Path,
) -> None:
    docs = [
        {"text": _passage(thing, 1) * 3, "metadata": {"source": path}}
        for path, thing in TOPICS.items()
    ]
    typed = GenerationConfig(question_types={"simple": 0.5, "situational": 0.5})
    synth = Synthesizer(
        "offline", embedder="hash", cache=None, run_dir=tmp_path / "r", progress=False
    )
    with synth:
        synth.generation_config = typed
        goldens = synth.generate_goldens_from_documents(docs, num_goldens=2)
        manifest = synth.manifest
        synth.generation_config = GenerationConfig()
        synth.generate_goldens_from_documents(docs, num_goldens=1)
        later = synth.manifest
    assert len(goldens) == 2
    assert manifest is not None and sorted(manifest["parts"]) == ["simple", "situational"]
    # the next call's manifest is its own, not the typed call's left behind
    assert later is not None and "parts" not in later and later["num_goldens"] == 1
