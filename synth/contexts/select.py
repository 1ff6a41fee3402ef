"""Seed selection: which chunks start a context, spread over files by the ``coverage`` rule.

Each file has a weight: its size in tokens (``coverage = "proportional"``, the default) or the same
for every file (``"uniform"``). The selector yields seed chunks in a fixed, seeded order that is
fair at every prefix:

1. every file first gets ``min_contexts_per_document`` seeds, files taken in a seeded order;
2. then each file up to its quota, the heaviest file's quota being ``max_contexts_per_document``
   and the others' in proportion to their weight, never under the minimum; seats go to the file
   with the highest ``weight / (taken + 1)`` (D'Hondt), so any prefix is proportional too (with
   equal weights: round robin in the seeded order);
3. past the quotas (a top-up to N goldens needs more), the same rule without caps until every chunk
   has been used;
4. then, if allowed, further passes that reuse chunks (the corpus is too small), counted in
   ``reused``.

Chunks already claimed (``used``: seeds and neighbours grouped into contexts) are skipped, so no
chunk is in two contexts of a run until the reuse passes. A file with nothing left to give drops
out of the order, and its seats go to the others. :func:`seat_order` is the order itself, apart
from the chunks, so a plan can count each file's seats (:mod:`synth.contexts.coverage`).
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from synth.contexts.config import ContextConstructionConfig
from synth.data import Chunk
from synth.errors import ConfigError

#: how many times a chunk may be a seed at most: once, then once more in the reuse pass
SEED_PASSES = 2


def most_goldens(chunks: Iterable[Chunk], per_context: int) -> int:
    """The goldens a run over ``chunks`` can give at most: each distinct chunk the seed of at
    most SEED_PASSES contexts, each context giving at most ``per_context`` goldens."""
    return len({c.id for c in chunks}) * SEED_PASSES * per_context


def seed_quotas(
    sizes: Mapping[str, int], available: Mapping[str, int], config: ContextConstructionConfig
) -> dict[str, int]:
    """Contexts per file for a run without a target count.

    ``sizes``: each file's weight (its size in tokens, or 1 each for uniform coverage);
    ``available``: its number of chunks. The heaviest file gets ``max_contexts_per_document``, the
    others ``round(max * size / largest)`` clamped to
    ``[min_contexts_per_document, max_contexts_per_document]``, and none more than it has chunks.
    """
    if not sizes:
        return {}
    largest = max(max(sizes.values()), 1)
    quotas = {}
    for source, size in sizes.items():
        share = math.floor(config.max_contexts_per_document * max(size, 0) / largest + 0.5)
        share = min(max(share, config.min_contexts_per_document), config.max_contexts_per_document)
        quotas[source] = min(share, available.get(source, 0))
    return quotas


@dataclass
class Seats:
    """One file's standing in :func:`seat_order`: its weight and quota, the seats it has taken, and
    whether it is ``full`` (has nothing more to give)."""

    source: str
    weight: float
    quota: int
    taken: int = 0
    full: bool = False


_S = TypeVar("_S", bound=Seats)


def seat_order(files: Sequence[_S], minimum: int) -> Iterator[_S]:
    """The file that takes each next seat: the minimum round by round, then D'Hondt up to the
    quotas, then D'Hondt without them; ``files`` in the seeded order, the first winning a tie.

    The caller counts a seat in ``taken`` when the file gave one and sets ``full`` when it could
    not; both are read before each choice, and the order ends when every file is full.

    The files wait in a heap by their claim (highest first, then their place in ``files``), so a
    seat costs a logarithm of the files, not a pass over them: a run of thousands of seeds over
    thousands of files would otherwise spend seconds here. A claim only falls (``taken`` only
    grows), so an entry whose file has changed since it was pushed is pushed again with its claim
    as it now is, and the order is the one a pass over every file would give.
    """
    for _ in range(minimum):
        for file in files:
            if not file.full and file.taken < min(minimum, file.quota):
                yield file
    for capped in (True, False):

        def open_(file: _S, capped: bool = capped) -> bool:
            return not file.full and not (capped and file.taken >= file.quota)

        heap = [(-f.weight / (f.taken + 1), place, f.taken) for place, f in enumerate(files)]
        heap = [entry for entry in heap if open_(files[entry[1]])]
        heapq.heapify(heap)
        while heap:
            _, place, taken = heap[0]
            file = files[place]
            if not open_(file):
                heapq.heappop(heap)
                continue
            if file.taken != taken:  # its claim fell since it was pushed: push it as it is now
                heapq.heapreplace(heap, (-file.weight / (file.taken + 1), place, file.taken))
                continue
            yield file
            if open_(file):
                heapq.heapreplace(heap, (-file.weight / (file.taken + 1), place, file.taken))
            else:
                heapq.heappop(heap)


def file_weights(sizes: Mapping[str, int], config: ContextConstructionConfig) -> dict[str, int]:
    """Each file's weight in the seat order: its size, or 1 each for uniform coverage."""
    if config.coverage == "uniform":
        return dict.fromkeys(sizes, 1)
    return dict(sizes)


@dataclass
class _File(Seats):
    order: list[Chunk] = field(default_factory=list)  # seeded order of this file's chunks
    cursor: int = 0


@dataclass
class SeedSelector:
    """Yields seed chunks fairly across files; deterministic given ``rng``.

    ``next()`` returns the next seed (or None when none is left); it marks the seed ``used``.
    ``release(chunk_id)`` frees a seed the critic rejected, so it can still be a neighbour (it is
    not offered as a seed again in the same pass). ``used`` is the run's set of claimed chunk ids:
    pass the same set to :func:`synth.contexts.group.group_contexts`.

    ``default_count`` is the number of contexts a run without a target count makes (sum of the
    quotas); ``first_order`` is the seeded order of the files in the first pass, the tie-break
    between equal claims (``rng`` is the selector's own: the order of the first pass is drawn from
    it when the selector is made); ``max_passes`` bounds reuse: pass 1 uses each chunk at most once, later passes reuse
    chunks and count them in ``reused``.
    """

    chunks: Iterable[Chunk]
    config: ContextConstructionConfig
    rng: random.Random
    max_passes: int = SEED_PASSES
    used: set[str] = field(default_factory=set)
    reused: int = field(default=0, init=False)
    passes: int = field(default=0, init=False)
    yielded: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if self.max_passes < 1:
            raise ConfigError("max_passes must be at least 1")
        by_source: dict[str, list[Chunk]] = {}
        seen: set[str] = set()
        for chunk in self.chunks:
            if chunk.id in seen:
                continue
            seen.add(chunk.id)
            by_source.setdefault(chunk.source, []).append(chunk)
        self._by_source = {
            s: sorted(cs, key=lambda c: (c.index, c.id)) for s, cs in sorted(by_source.items())
        }
        self.chunks = [c for cs in self._by_source.values() for c in cs]
        self.sizes = {
            s: sum(max(c.token_count, 1) for c in cs) for s, cs in self._by_source.items()
        }
        self.weights = file_weights(self.sizes, self.config)
        self.available = {s: len(cs) for s, cs in self._by_source.items()}
        self.quotas = seed_quotas(self.weights, self.available, self.config)
        # drawn first, as the first pass would, so a plan can read it before any seed is drawn
        self.first_order = list(self._by_source)
        self.rng.shuffle(self.first_order)
        self._stream: Iterator[Chunk] = self._passes()

    @property
    def default_count(self) -> int:
        """Contexts for a run without a target count (the sum of every file's quota)."""
        return sum(self.quotas.values())

    @property
    def sources(self) -> list[str]:
        return list(self._by_source)

    def next(self) -> Chunk | None:
        """The next seed chunk, marked used; None when every pass is exhausted."""
        chunk = next(self._stream, None)
        if chunk is not None:
            self.yielded += 1
            self.used.add(chunk.id)
        return chunk

    def take(self, n: int) -> list[Chunk]:
        """Up to ``n`` further seeds (fewer when the selector runs out)."""
        out = []
        for _ in range(n):
            chunk = self.next()
            if chunk is None:
                break
            out.append(chunk)
        return out

    def __iter__(self) -> Iterator[Chunk]:
        while (chunk := self.next()) is not None:
            yield chunk

    def release(self, chunk_id: str) -> None:
        """Un-claim a seed that will not start a context (it may still join one as a neighbour)."""
        self.used.discard(chunk_id)

    @property
    def exhausted(self) -> bool:
        """Whether the first pass has run out of unused chunks (later seeds reuse chunks)."""
        return self.passes > 1

    # ---- the order ----------------------------------------------------------------------------

    def _passes(self) -> Iterator[Chunk]:
        for number in range(1, self.max_passes + 1):
            self.passes = number
            offered: set[str] = set()
            for chunk in self._one_pass(reuse=number > 1, offered=offered):
                if number > 1:
                    self.reused += 1
                yield chunk

    def _one_pass(self, *, reuse: bool, offered: set[str]) -> Iterator[Chunk]:
        sources = self.first_order
        if reuse:
            sources = list(self._by_source)
            self.rng.shuffle(sources)  # the tie-break order between files
        files = []
        for source in sources:
            order = list(self._by_source[source])
            self.rng.shuffle(order)
            quota = self.quotas[source] if not reuse else len(order)
            files.append(_File(source, self.weights[source], quota, order=order))

        def draw(file: _File) -> Chunk | None:
            while file.cursor < len(file.order):
                chunk = file.order[file.cursor]
                file.cursor += 1
                if chunk.id in offered or (not reuse and chunk.id in self.used):
                    continue
                offered.add(chunk.id)
                file.taken += 1
                return chunk
            return None

        for file in seat_order(files, self.config.min_contexts_per_document):
            chunk = draw(file)
            if chunk is None:
                file.full = True  # every chunk it had left is claimed: its seats go to the others
            else:
                yield chunk


__all__ = [
    "SEED_PASSES",
    "SeedSelector",
    "Seats",
    "file_weights",
    "most_goldens",
    "seat_order",
    "seed_quotas",
]
