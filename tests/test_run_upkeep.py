"""A dataset's upkeep by the Synthesizer: ``refill`` handing its seed and its own generate to the
refill, ``plan_update`` ingesting (or only reading) the documents and sorting the goldens with
its seed and paths, and ``update`` asking for one new golden per retired one, writing back only a
file. A Synthesizer with a recorded generate and ingest; the plan, merge and write are the real
ones (synth/dataset/update.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from synth import pipeline
from synth.contexts.config import ContextConstructionConfig
from synth.data import Chunk, Golden
from synth.dataset import Dataset
from synth.dataset import update as run_update
from synth.dataset.update import RETIRED_SUFFIX, side_path, sort_goldens
from synth.ingest import chunk_documents, load_documents
from synth.pipeline import Synthesizer
from synth.pipeline.sources import source_locations
from synth.run.ingest import chunking_of


class Closing:
    """The store or the ingest under way: records finish and close."""

    def __init__(self, events: list[str], name: str, fail: bool = False) -> None:
        self.events, self.name, self.fail = events, name, fail

    def finish(self) -> None:
        self.events.append(f"{self.name} finish")
        if self.fail:
            raise RuntimeError("ingest failed")

    def close(self) -> None:
        self.events.append(f"{self.name} close")


class Maker(Synthesizer):
    """A Synthesizer whose generate and ingest are recorded."""

    def __init__(self, chunks: list[Chunk], seed: int = 7, absolute: bool = False) -> None:
        config = ContextConstructionConfig(chunk_size=64)
        super().__init__(seed=seed, absolute_paths=absolute, context_construction_config=config)
        self.chunks = chunks
        self.events: list[str] = []
        self.fail = False
        self.ingested: list[tuple[list[str], object]] = []
        self.asked: list[tuple[Any, dict[str, Any]]] = []

    async def a_generate_goldens_from_docs(self, document_paths: Any, **kw: Any) -> Dataset:
        self.asked.append((document_paths, kw))
        return Dataset([Golden(input=f"new {i}?") for i in range(kw["num_goldens"])])

    def _ingest(self, paths: list[str], config: Any) -> tuple[Any, Any, Any]:
        self.ingested.append((paths, config))
        store = Closing(self.events, "store")
        return store, Closing(self.events, "pending", self.fail), iter(self.chunks)


def corpus(folder: Path) -> tuple[str, str, list[Chunk]]:
    """Files a.md and b.md under ``folder``, one chunk each (named as when given as files)."""
    a, b = folder / "a.md", folder / "b.md"
    a.write_text("Alpha text.", encoding="utf-8")
    b.write_text("Beta text.", encoding="utf-8")
    chunks = [
        Chunk(id="a#0", document_id="a", text="Alpha text.", source="a.md", index=0, token_count=2),
        Chunk(id="b#0", document_id="b", text="Beta text.", source="b.md", index=0, token_count=2),
    ]
    return str(a), str(b), chunks


def goldens(a: str, b: str) -> Dataset:
    return Dataset(
        [
            Golden(input="kept?", context_ids=["a#0"], source_files=[a]),
            Golden(input="stale?", context_ids=["b#old"], source_files=[b]),
        ]
    )


def test_refill_gives_the_refill_the_dataset_docs_seed_and_the_own_generate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[Any, ...]] = []
    refilled = Dataset([Golden(input="q?")])

    async def refill(dataset: Any, docs: Any, *, seed: int, generate: Any) -> SimpleNamespace:
        calls.append((dataset, docs, seed, generate))
        return SimpleNamespace(dataset=refilled)

    monkeypatch.setattr(pipeline, "refill", refill)
    maker = Maker([], seed=11)
    assert asyncio.run(maker.a_refill("data.jsonl", docs="docs")) is refilled
    # the sync twin runs the method as the class body saw it (outside mutmut's reach: the
    # async method is called itself everywhere else in this file)
    assert maker.refill("other.jsonl") is refilled
    assert calls == [
        ("data.jsonl", "docs", 11, maker.a_generate_goldens_from_docs),
        ("other.jsonl", None, 11, maker.a_generate_goldens_from_docs),
    ]


def test_a_plan_ingests_the_docs_with_the_owners_config_and_closes_the_ingest(
    tmp_path: Path,
) -> None:
    a, b, chunks = corpus(tmp_path)
    maker = Maker(chunks)
    plan = maker.plan_update(goldens(a, b), [a, b])
    assert maker.ingested == [([a, b], maker.context_construction_config)]
    assert maker.events == ["pending finish", "pending close", "store close"]
    assert plan.states == ["kept", "stale"]
    assert plan.avoid == frozenset({"a#0"})
    expected = sort_goldens(goldens(a, b), chunks, source_locations([a, b]), seed=7)
    assert plan.seed == expected.seed
    assert plan.files == expected.files


def test_an_ingest_that_fails_to_finish_still_closes_the_ingest_and_the_store(
    tmp_path: Path,
) -> None:
    a, b, chunks = corpus(tmp_path)
    maker = Maker(chunks)
    maker.fail = True
    with pytest.raises(RuntimeError, match="ingest failed"):
        maker.plan_update(goldens(a, b), [a, b])
    assert maker.events == ["pending finish", "pending close", "store close"]


def test_a_plan_without_embedding_reads_and_cuts_the_files_as_the_ingest_would(
    tmp_path: Path,
) -> None:
    a, b, _ = corpus(tmp_path)
    maker = Maker([])
    plan = maker.plan_update(goldens(a, b), [a, b], embed=False)
    assert maker.ingested == []
    config = maker.context_construction_config
    read = chunk_documents(load_documents([a, b]).documents, chunking_of(config))
    assert [c.source for c in read] == ["a.md", "b.md"]
    # the goldens name chunk ids the files no longer have: both retired, nothing to avoid
    assert plan.states == ["stale", "stale"]
    assert plan.avoid == frozenset()
    renamed = Dataset([Golden(input="q?", context_ids=[read[0].id], source_files=[a])])
    assert maker.plan_update(renamed, [a, b], embed=False).states == ["kept"]


def test_a_plan_takes_the_owners_seed_paths_and_a_files_run_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, chunks = corpus(tmp_path)
    c = str(tmp_path / "c.md")  # no golden came from it, but the run ingested it: not new
    seen: dict[str, Any] = {}

    def source_locations(paths: list[str], *, absolute: bool) -> dict[str, str]:
        seen["locations"] = (paths, absolute)
        return {"a.md": a, "b.md": b, "c.md": c}

    def known_files(dataset: Dataset, source: Any) -> set[str]:
        seen["known"] = (len(dataset), source)
        return {"a.md", "c.md"}

    monkeypatch.setattr(pipeline, "source_locations", source_locations)
    monkeypatch.setattr(run_update, "known_files", known_files)
    path = tmp_path / "data.jsonl"
    goldens(a, b).save(path)
    maker = Maker(chunks, seed=3, absolute=True)
    plan = maker.plan_update(path, [a, b])
    assert seen == {"locations": ([a, b], True), "known": (2, path)}
    assert plan.files[b].status == "changed"
    assert c not in plan.files
    expected = sort_goldens(goldens(a, b), chunks, {"a.md": a, "b.md": b}, seed=3)
    assert plan.seed == expected.seed
    maker.plan_update(goldens(a, b), [a, b])
    assert seen["known"] == (2, None)


def test_an_update_with_nothing_retired_keeps_the_goldens_asks_nothing_and_records_the_files(
    tmp_path: Path,
) -> None:
    a, b, chunks = corpus(tmp_path)
    dataset = Dataset([Golden(input="kept?", context_ids=["a#0"], source_files=[a])])
    maker = Maker(chunks)
    updated = asyncio.run(maker.a_update(dataset, [a, b]))
    assert updated.goldens == dataset.goldens
    assert maker.asked == []
    # the new file b, which gave no golden, is recorded as seen: `update --check` is then clean
    assert "b.md" in updated.metadata["updates"][-1]["seen_files"]


def test_an_update_asks_one_new_golden_per_retired_one_with_the_plans_seed(
    tmp_path: Path,
) -> None:
    a, b, chunks = corpus(tmp_path)
    maker = Maker(chunks)
    dataset = goldens(a, b)
    plan = maker.plan_update(dataset, [a, b])
    maker.ingested.clear()
    updated = asyncio.run(maker.a_update(dataset, [a, b], plan=plan))
    assert maker.ingested == []  # the plan given is used, not made again
    assert maker.asked == [
        ([a, b], dict(num_goldens=1, avoid_chunks=frozenset({"a#0"}), seed=plan.seed))
    ]
    assert [g.input for g in updated] == ["kept?", "new 0?"]
    assert sorted(tmp_path.iterdir()) == [Path(a), Path(b)]  # a dataset given is not written


def test_an_update_of_a_file_writes_it_back_with_the_retired_beside_it(tmp_path: Path) -> None:
    a, b, chunks = corpus(tmp_path)
    path = tmp_path / "data.jsonl"
    goldens(a, b).save(path)
    maker = Maker(chunks)
    updated = asyncio.run(maker.a_update(path, [a, b]))
    assert maker.ingested == [([a, b], maker.context_construction_config)]
    assert [g.input for g in updated] == ["kept?", "new 0?"]
    assert [g.input for g in Dataset.load(path)] == ["kept?", "new 0?"]
    retired = side_path(path, RETIRED_SUFFIX).read_text(encoding="utf-8")
    assert "stale?" in retired
    assert "kept?" not in retired
