"""A dataset's upkeep after its run: refilled after a review, updated after its documents changed.

:class:`DatasetUpkeep` gives the :class:`~synth.Synthesizer` its ``refill`` and ``update`` (and
their ``a_`` twins); both end with the dataset at exactly N goldens, the goldens they keep
untouched, the new ones made by the Synthesizer's own ``generate_goldens_from_docs`` from chunks the
kept goldens did not use, and the ones they replace kept apart in a file beside the dataset.
The rules are in :mod:`synth.run.refill` and :mod:`synth.run.update`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from synth.contexts.config import ContextConstructionConfig
from synth.data import Chunk
from synth.dataset import Dataset
from synth.run.inputs import as_paths
from synth.run.refill import refill
from synth.run.sources import source_locations
from synth.run.sync import sync_twin
from synth.run.update import (
    UpdatePlan,
    known_files,
    merge_update,
    sort_goldens,
    write_update,
)

DocsArg = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


class _Maker(Protocol):
    """What the upkeep needs of the Synthesizer it is part of."""

    seed: int
    absolute_paths: bool
    context_construction_config: ContextConstructionConfig

    async def a_generate_goldens_from_docs(
        self,
        document_paths: DocsArg,
        *,
        num_goldens: int | None = ...,
        avoid_chunks: Iterable[str] = ...,
        seed: int | None = ...,
    ) -> Dataset: ...

    def _ingest(
        self, paths: list[str], config: ContextConstructionConfig
    ) -> tuple[Any, Any, Any]: ...


class DatasetUpkeep:
    """``refill`` and ``update`` for the Synthesizer (see the module docstring)."""

    async def a_refill(self: _Maker, dataset: Any, *, docs: DocsArg | None = None) -> Dataset:
        """A reviewed dataset, its rejected goldens replaced by new pending ones from chunks it
        did not use, from ``docs`` or its run's documents (a path is written back, the rejected
        kept in ``<file>.rejected.jsonl``; see :mod:`synth.run.refill`)."""
        generate = self.a_generate_goldens_from_docs
        return (await refill(dataset, docs, seed=self.seed, generate=generate)).dataset

    refill = sync_twin(a_refill)

    async def a_update(
        self: _Maker, dataset: Any, docs: DocsArg, *, plan: UpdatePlan | None = None
    ) -> Dataset:
        """``dataset`` brought up to date with ``docs``: goldens whose chunks are all still there
        kept as they are, the stale and orphaned replaced by new pending ones from the changed and
        new files (a path is written back, beside it ``.retired.jsonl`` and ``.changes.json``;
        see :mod:`synth.run.update`). ``plan`` is :meth:`plan_update`'s, when already made."""
        paths = as_paths(docs)
        if plan is None:
            plan = _plan(self, dataset, paths, _ingested_chunks(self, paths))
        if not plan.stale:
            return plan.dataset
        new = Dataset()  # only new files, nothing retired: the update records that it saw them
        if plan.retired:
            new = await self.a_generate_goldens_from_docs(
                paths, num_goldens=len(plan.retired), avoid_chunks=plan.avoid, seed=plan.seed
            )
        updated, retired = merge_update(plan, new)
        if isinstance(dataset, str | os.PathLike):
            write_update(dataset, updated, retired, plan)
        return updated

    update = sync_twin(a_update)

    def plan_update(self: _Maker, dataset: Any, docs: DocsArg, *, embed: bool = True) -> UpdatePlan:
        """What :meth:`update` would do. ``embed``: ingest ``docs`` as a run does (unchanged files
        are not read; changed and new ones are embedded and stored, ready for the update);
        without it, no model request and nothing stored: the files are read and cut only."""
        paths = as_paths(docs)
        if embed:
            chunks = _ingested_chunks(self, paths)
        else:
            chunks = _read_chunks(self.context_construction_config, paths)
        return _plan(self, dataset, paths, chunks)


def _plan(owner: _Maker, dataset: Any, paths: list[str], chunks: list[Chunk]) -> UpdatePlan:
    source = dataset if isinstance(dataset, str | os.PathLike) else None
    given = Dataset.coerce(dataset)
    locations = source_locations(paths, absolute=owner.absolute_paths)
    known = known_files(given, source)
    return sort_goldens(given, chunks, locations, known_files=known, seed=owner.seed)


def _ingested_chunks(owner: _Maker, paths: list[str]) -> list[Chunk]:
    """The corpus's chunks now, by the run's own ingest (unchanged files are not read again)."""
    store, pending, chunks = owner._ingest(paths, owner.context_construction_config)
    try:
        pending.finish()
    finally:
        pending.close()
        store.close()
    return list(chunks)


def _read_chunks(config: ContextConstructionConfig, paths: list[str]) -> list[Chunk]:
    """The corpus's chunks now, read and cut as the ingest cuts them, nothing embedded."""
    from synth.ingest import chunk_documents, load_documents
    from synth.run.ingest import chunking_of

    return chunk_documents(load_documents(paths).documents, chunking_of(config))


__all__ = ["DatasetUpkeep"]
