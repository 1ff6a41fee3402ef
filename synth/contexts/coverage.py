"""Coverage: how many goldens each file should give, how many it gave, and how far short it fell.

A file's *share* is what the ``coverage`` rule gives it (the seat order of
:mod:`synth.contexts.select`, its weight being its size or, for uniform coverage, the same for
every file) if it had chunks enough; its *target* is what the corpus allows: the same order, but a
file gives at most one seed per chunk, and the seats a file cannot take go to the others. Both are
counted in contexts of ``max_goldens_per_context`` goldens, the last context of the run cut to the
goldens still wanted, so a share is met to within ``max_goldens_per_context`` goldens of the even
(or proportional) split; with one golden per context, to within one.

The target is an upper bound, kept simple: it counts neither neighbours claimed by other contexts
(a small file can run out of seeds sooner) nor the reuse passes of a corpus too small for the run.
In a ``uniform`` run whose targets add up to its goldens, they are the run's per-file quotas
(:func:`file_quotas`, :mod:`synth.run.quotas`): a golden dropped on the way is replaced from its
own file, so every target is met exactly while the file has seeds left that make goldens; only
when none can come do other files make up for it. A ``proportional`` run replaces a drop from the
next seed in the seat order, whichever file it belongs to (cheaper: no seeds drawn to reach the
file again), so its shares are exact only when nothing is dropped. A file's
*shortfall* is its share minus what it gets: the target in a plan, the delivered goldens after a
run. It is never silent: the plan, the manifest and ``--json`` carry every file's row. A run asking
more goldens than the chunks can ever give (:func:`~synth.contexts.select.most_goldens`) is
planned as one asking that most: its targets are the same, its shares those of the most.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, Field

from synth.contexts.select import Seats, SeedSelector, most_goldens, seat_order, seed_quotas
from synth.data import Context


class FileCoverage(BaseModel):
    """One file's row: its chunks, its share and target (goldens), what it delivered (None before
    the run ends), and its shortfall (share minus the delivered goldens, or minus the target)."""

    source: str
    chunks: int
    share: int
    target: int
    delivered: int | None = None
    shortfall: int = 0


class Coverage(BaseModel):
    """How a run (or a plan) covers the corpus: files with goldens of the files ingested, distinct
    chunks used as seeds and as neighbours of the chunks stored, and every file's row."""

    rule: Literal["proportional", "uniform"]
    files_covered: int
    files_ingested: int
    seed_chunks: int
    neighbour_chunks: int
    chunks_stored: int
    files: list[FileCoverage] = Field(default_factory=list)

    @property
    def short(self) -> list[FileCoverage]:
        """The files that get fewer goldens than their share."""
        return [f for f in self.files if f.shortfall > 0]


def file_targets(
    selector: SeedSelector, *, num_goldens: int | None, per_context: int
) -> list[FileCoverage]:
    """Every file's share and target (goldens) for a run of ``num_goldens`` (None: a run of the
    quotas' worth of contexts), in the selector's seeded file order; no seed is drawn."""
    config = selector.config
    if num_goldens is not None:
        # more than the chunks can ever give is planned as the most they can: the seats are
        # counted one by one, and a billion of them would take minutes (the targets are the
        # same either way: every file gives all it has)
        num_goldens = min(num_goldens, most_goldens(selector.chunks, per_context))
    # with chunks enough, a quota is never cut below max_contexts_per_document by the chunks
    roomy = dict.fromkeys(selector.available, config.max_contexts_per_document)
    share_quotas = seed_quotas(selector.weights, roomy, config)
    if num_goldens is None:
        share_seats = _seats(selector, share_quotas, None, sum(share_quotas.values()))
        target_seats = _seats(selector, selector.quotas, selector.available, selector.default_count)
    else:
        count = math.ceil(num_goldens / per_context)
        share_seats = _seats(selector, share_quotas, None, count)
        target_seats = _seats(selector, selector.quotas, selector.available, count)
    shares = _goldens(share_seats, per_context, num_goldens)
    targets = _goldens(target_seats, per_context, num_goldens)
    rows = []
    for source in selector.first_order:
        share, target = shares[source], targets[source]
        rows.append(
            FileCoverage(
                source=source,
                chunks=selector.available[source],
                share=share,
                target=target,
                shortfall=max(share - target, 0),
            )
        )
    return rows


def _seats(
    selector: SeedSelector,
    quotas: Mapping[str, int],
    room: Mapping[str, int] | None,
    count: int,
) -> list[str]:
    """The files that take the first ``count`` seats of the seat order, each giving at most
    ``room`` seats (None: as many as asked)."""
    files = [Seats(s, selector.weights[s], quotas[s]) for s in selector.first_order]
    taken: list[str] = []
    for file in seat_order(files, selector.config.min_contexts_per_document):
        if len(taken) >= count:
            break
        if room is not None and file.taken >= room[file.source]:
            file.full = True
            continue
        file.taken += 1
        taken.append(file.source)
    return taken


def _goldens(seats: Iterable[str], per_context: int, total: int | None) -> Counter[str]:
    """Goldens per file from seats in order, ``per_context`` each, cut at ``total`` goldens."""
    out: Counter[str] = Counter()
    left = math.inf if total is None else total
    for source in seats:
        give = int(min(per_context, left))
        if give <= 0:
            break
        out[source] += give
        left -= give
    return out


def file_quotas(coverage: Coverage, num_goldens: int | None) -> dict[str, int] | None:
    """Each file's target as the goldens a ``uniform`` run keeps from it, when the targets add up
    to the run's ``num_goldens`` (else None: the run takes its goldens in the seat order, as a
    ``proportional`` run always does: replacing a drop from the same file costs critic requests
    for the seeds drawn to reach that file again, and a proportional share is the seat order's)."""
    quotas = {row.source: row.target for row in coverage.files}
    if coverage.rule != "uniform" or num_goldens is None or sum(quotas.values()) != num_goldens:
        return None
    return quotas


def measure_coverage(
    rule: Literal["proportional", "uniform"],
    planned: Iterable[FileCoverage],
    golden_contexts: Iterable[Context | None],
    *,
    files_ingested: int,
    chunks_stored: int,
    delivered: bool,
) -> Coverage:
    """The coverage of goldens made from ``golden_contexts`` (one context per golden, its seed's
    file first). With ``delivered``, each file's row gets its delivered goldens and its shortfall
    against them; otherwise (a plan, a run still going) the rows stay as planned."""
    per_file: Counter[str] = Counter()
    seeds: set[str] = set()
    neighbours: set[str] = set()
    for context in golden_contexts:
        if context is None or not context.chunk_ids:
            continue
        per_file[context.source_files[0] if context.source_files else ""] += 1
        seeds.add(context.chunk_ids[0])
        neighbours.update(context.chunk_ids[1:])
    rows = []
    for row in planned:
        if delivered:
            got = per_file[row.source]
            row = row.model_copy(update={"delivered": got, "shortfall": max(row.share - got, 0)})
        rows.append(row)
    return Coverage(
        rule=rule,
        files_covered=sum(1 for n in per_file.values() if n > 0),
        files_ingested=files_ingested,
        seed_chunks=len(seeds),
        neighbour_chunks=len(neighbours - seeds),
        chunks_stored=chunks_stored,
        files=rows,
    )


__all__ = ["Coverage", "FileCoverage", "file_quotas", "file_targets", "measure_coverage"]
