"""Coverage targets (synth/contexts/coverage.py): each file's share and target of N goldens under
either rule, capped by its chunks with the rest going to the others, the same as the seeds the
selector then draws, and measured against the goldens made."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from test_contexts_select import make_chunks

from synth.contexts.config import ContextConstructionConfig
from synth.contexts.coverage import file_targets, measure_coverage
from synth.contexts.select import SeedSelector
from synth.data import Context

ONE_LARGE_NINE_SMALL = {"big.txt": 40} | {f"s{i}.txt": 4 for i in range(9)}


def selector(spec: dict[str, int], coverage: str = "uniform", seed: int = 0) -> SeedSelector:
    config = ContextConstructionConfig(coverage=coverage)  # type: ignore[arg-type]
    return SeedSelector(make_chunks(spec), config, random.Random(seed))


def by_file(rows) -> dict[str, tuple[int, int, int]]:
    return {r.source: (r.share, r.target, r.shortfall) for r in rows}


def test_uniform_targets_split_n_evenly_over_files_with_chunks_enough() -> None:
    rows = file_targets(selector(ONE_LARGE_NINE_SMALL), num_goldens=40, per_context=2)
    assert {r.source for r in rows} == set(ONE_LARGE_NINE_SMALL)
    assert set(by_file(rows).values()) == {(4, 4, 0)}
    assert {r.source: r.chunks for r in rows} == ONE_LARGE_NINE_SMALL


def test_a_file_short_of_chunks_is_reported_and_its_goldens_go_to_the_others() -> None:
    spec = ONE_LARGE_NINE_SMALL | {"s8.txt": 1}  # one chunk: one context of 2 goldens at most
    chosen = selector(spec)
    rows = by_file(file_targets(chosen, num_goldens=40, per_context=2))
    assert rows["s8.txt"] == (4, 2, 2)
    assert sum(target for _, target, _ in rows.values()) == 40
    # the two goldens it cannot give go to the first file of the seeded order (the tie-break)
    first = next(s for s in chosen.first_order if s != "s8.txt")
    assert rows[first] == (4, 6, 0)
    assert all(rows[s] == (4, 4, 0) for s in spec if s not in {"s8.txt", first})


def test_proportional_targets_follow_todays_rule_minimum_first_then_by_size() -> None:
    rows = by_file(
        file_targets(selector(ONE_LARGE_NINE_SMALL, "proportional"), num_goldens=40, per_context=2)
    )
    assert rows["big.txt"] == (22, 22, 0)  # every file its minimum first, then D'Hondt by size
    assert all(rows[f"s{i}.txt"] == (2, 2, 0) for i in range(9))


@pytest.mark.parametrize("coverage", ["uniform", "proportional"])
@pytest.mark.parametrize(
    ("num_goldens", "per_context"), [(7, 3), (20, 3), (63, 3), (None, 3), (40, 1), (60, 1)]
)
def test_the_targets_are_the_goldens_of_the_seeds_the_selector_draws(
    coverage: str, num_goldens: int | None, per_context: int
) -> None:
    # what makes a target "met exactly when nothing is dropped": the run's seeds, in its order,
    # per_context goldens each and the last cut to N, give every file its target
    spec = {"big.txt": 30, "mid.txt": 9, "one.txt": 1, "two.txt": 2} | {
        f"s{i}.txt": 4 for i in range(5)
    }
    # past the quotas (one golden a context) the small files fill up and drop out of the order
    for seed in range(4):
        chosen = selector(spec, coverage, seed)
        rows = file_targets(chosen, num_goldens=num_goldens, per_context=per_context)
        if num_goldens is None:
            wanted = chosen.default_count
        else:
            wanted = -(-num_goldens // per_context)
        seeds = chosen.take(wanted)
        assert not chosen.exhausted  # no chunk reused: targets count one seed per chunk
        made: Counter[str] = Counter()
        left = num_goldens if num_goldens is not None else per_context * wanted
        for seed_chunk in seeds:
            made[seed_chunk.source] += min(per_context, left)
            left -= min(per_context, left)
        assert {r.source: r.target for r in rows if r.target} == dict(made)


def test_past_the_quotas_a_full_file_gives_its_seats_to_the_others() -> None:
    spec = ONE_LARGE_NINE_SMALL | {"s8.txt": 1}
    rows = by_file(file_targets(selector(spec), num_goldens=40, per_context=1))
    assert rows["s8.txt"] == (4, 1, 3)
    assert sum(target for _, target, _ in rows.values()) == 40


def test_without_a_number_the_targets_are_the_quotas_and_nothing_is_moved() -> None:
    chosen = selector({"big.txt": 40, "one.txt": 1, "s.txt": 5})
    rows = by_file(file_targets(chosen, num_goldens=None, per_context=2))
    # uniform: every file's quota is max_contexts_per_document (3), one.txt has one chunk
    assert rows == {"big.txt": (6, 6, 0), "one.txt": (6, 2, 4), "s.txt": (6, 6, 0)}


def test_shares_are_counted_in_contexts_the_last_cut_to_n() -> None:
    spec = {f"f{i}.txt": 5 for i in range(10)}
    chosen = selector(spec)
    two = by_file(file_targets(chosen, num_goldens=15, per_context=2))
    # eight contexts of two goldens, the last giving one: within per_context of the even 1.5
    assert sorted(t for _, t, _ in two.values()) == [0, 0, 1, 2, 2, 2, 2, 2, 2, 2]
    assert sum(share for share, _, _ in two.values()) == 15  # the shares too are cut to N
    one = by_file(file_targets(chosen, num_goldens=15, per_context=1))
    assert sorted(t for _, t, _ in one.values()) == [1] * 5 + [2] * 5
    assert all(short == 0 for _, _, short in one.values())


def context(seed: str, source: str, *neighbours: str) -> Context:
    ids = [seed, *neighbours]
    return Context(id=seed, chunk_ids=ids, texts=ids, source_files=[source] * len(ids))


def test_measured_coverage_counts_files_chunks_and_each_files_delivered_goldens() -> None:
    chosen = selector({"a.txt": 4, "b.txt": 4, "c.txt": 4, "d.txt": 1})
    planned = file_targets(chosen, num_goldens=16, per_context=2)
    assert by_file(planned)["d.txt"] == (4, 2, 2)  # its share against its one chunk
    a1 = context("a#0", "a.txt", "a#1", "a#2")
    b1 = context("b#0", "b.txt")
    goldens = [a1, a1, b1, b1, context("a#3", "a.txt"), None]
    goldens += [context("d#0", "d.txt")] * 2
    cov = measure_coverage(
        "uniform", planned, goldens, files_ingested=5, chunks_stored=13, delivered=True
    )
    assert (cov.files_covered, cov.files_ingested) == (3, 5)
    assert (cov.seed_chunks, cov.neighbour_chunks, cov.chunks_stored) == (4, 2, 13)
    rows = {r.source: (r.share, r.delivered, r.shortfall) for r in cov.files}
    # the shortfall is against the share: d.txt met its target (2) and is still 2 short
    assert rows == {"a.txt": (4, 3, 1), "b.txt": (4, 2, 2), "c.txt": (4, 0, 4), "d.txt": (4, 2, 2)}
    assert sorted(r.source for r in cov.short) == ["a.txt", "b.txt", "c.txt", "d.txt"]
    # before the run ends (or in a plan) the rows stay as planned
    running = measure_coverage(
        "uniform", planned, goldens, files_ingested=5, chunks_stored=13, delivered=False
    )
    assert [(r.delivered, r.shortfall) for r in running.files] == [
        (None, r.shortfall) for r in planned
    ]


def test_a_file_with_one_golden_is_covered_and_a_met_share_is_not_short() -> None:
    chosen = selector({"a.txt": 4, "b.txt": 4})
    planned = file_targets(chosen, num_goldens=2, per_context=1)
    assert by_file(planned) == {"a.txt": (1, 1, 0), "b.txt": (1, 1, 0)}
    # a context with no source file counts for no file, without failing
    bare = Context(id="x", chunk_ids=["x#0"], texts=["x"], source_files=[])
    goldens = [context("a#0", "a.txt"), context("b#0", "b.txt"), bare]
    cov = measure_coverage(
        "uniform", planned, goldens, files_ingested=2, chunks_stored=8, delivered=True
    )
    assert cov.files_covered == 3 and cov.seed_chunks == 3  # the two files, and the unnamed one
    rows = {r.source: (r.share, r.delivered, r.shortfall) for r in cov.files}
    assert rows == {"a.txt": (1, 1, 0), "b.txt": (1, 1, 0)} and cov.short == []
