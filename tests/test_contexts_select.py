"""Seed selection: proportional to file size, fair at every prefix, seeded, no reuse until asked."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from synth.contexts.config import ContextConstructionConfig
from synth.contexts.select import SeedSelector, seed_quotas
from synth.data import Chunk
from synth.errors import ConfigError


def make_chunks(spec: dict[str, int], tokens: int = 100) -> list[Chunk]:
    """``{"a.txt": 10}`` -> ten chunks of a.txt of ``tokens`` tokens each."""
    return [
        Chunk(
            id=f"{source}#{i}",
            document_id=source,
            source=source,
            index=i,
            text=f"{source} chunk {i}",
            token_count=tokens,
        )
        for source, count in spec.items()
        for i in range(count)
    ]


def test_quotas_follow_size_within_bounds() -> None:
    config = ContextConstructionConfig(max_contexts_per_document=4, min_contexts_per_document=1)
    quotas = seed_quotas(
        {"big": 1000, "half": 500, "tiny": 10, "empty": 0},
        {"big": 50, "half": 50, "tiny": 50, "empty": 50},
        config,
    )
    assert quotas == {"big": 4, "half": 2, "tiny": 1, "empty": 1}


def test_quota_never_exceeds_available_chunks() -> None:
    config = ContextConstructionConfig(max_contexts_per_document=5)
    assert seed_quotas({"a": 100, "b": 100}, {"a": 2, "b": 9}, config) == {"a": 2, "b": 5}


def test_default_run_takes_each_file_quota() -> None:
    chunks = make_chunks({"big.txt": 30, "mid.txt": 15, "small.txt": 2})
    config = ContextConstructionConfig(max_contexts_per_document=4, min_contexts_per_document=1)
    selector = SeedSelector(chunks, config, random.Random(0))
    assert selector.quotas == {"big.txt": 4, "mid.txt": 2, "small.txt": 1}
    seeds = selector.take(selector.default_count)
    assert Counter(c.source for c in seeds) == Counter(selector.quotas)


def test_every_file_gets_its_turn_before_any_file_gets_a_second() -> None:
    chunks = make_chunks({f"f{i}.txt": 5 for i in range(6)} | {"huge.txt": 200})
    selector = SeedSelector(chunks, ContextConstructionConfig(), random.Random(3))
    first = selector.take(7)
    assert {c.source for c in first} == {f"f{i}.txt" for i in range(6)} | {"huge.txt"}


def test_prefixes_are_proportional_past_the_quotas() -> None:
    # a top-up goes past max_contexts_per_document; the split must stay proportional to size
    chunks = make_chunks({"a.txt": 100, "b.txt": 50, "c.txt": 25})
    selector = SeedSelector(chunks, ContextConstructionConfig(), random.Random(1))
    counts = Counter(c.source for c in selector.take(70))
    assert counts == {"a.txt": 40, "b.txt": 20, "c.txt": 10}


def test_no_bias_to_the_first_files() -> None:
    # equal files: across seeds, which file comes first is spread out, not always the first name
    chunks = make_chunks({f"doc{i}.txt": 4 for i in range(5)})
    firsts = Counter(
        SeedSelector(chunks, ContextConstructionConfig(), random.Random(seed)).next().source
        for seed in range(200)
    )
    assert set(firsts) == {f"doc{i}.txt" for i in range(5)}
    assert max(firsts.values()) < 80


def test_same_seed_same_order_and_different_seed_differs() -> None:
    chunks = make_chunks({"a.txt": 20, "b.txt": 10})
    config = ContextConstructionConfig()
    one = [c.id for c in SeedSelector(chunks, config, random.Random(7), max_passes=1)]
    two = [
        c.id for c in SeedSelector(list(reversed(chunks)), config, random.Random(7), max_passes=1)
    ]
    other = [c.id for c in SeedSelector(chunks, config, random.Random(8), max_passes=1)]
    assert one == two
    assert one != other
    assert sorted(one) == sorted(c.id for c in chunks)


def test_used_chunks_are_skipped_and_released_ones_not_offered_again() -> None:
    chunks = make_chunks({"a.txt": 6})
    selector = SeedSelector(chunks, ContextConstructionConfig(), random.Random(0), max_passes=1)
    first = selector.next()
    assert first is not None and first.id in selector.used
    selector.used.update({"a.txt#0", "a.txt#1", "a.txt#2"} - {first.id})
    selector.release(first.id)
    rest = list(selector)
    offered = {first.id} | {c.id for c in rest}
    assert not ({c.id for c in rest} & {"a.txt#0", "a.txt#1", "a.txt#2"})
    assert first.id not in {c.id for c in rest}
    assert offered | {"a.txt#0", "a.txt#1", "a.txt#2"} == {c.id for c in chunks}
    assert selector.next() is None and selector.reused == 0


def test_reuse_pass_when_the_corpus_is_too_small() -> None:
    chunks = make_chunks({"a.txt": 2, "b.txt": 1})
    selector = SeedSelector(chunks, ContextConstructionConfig(), random.Random(0), max_passes=2)
    seeds = selector.take(10)
    assert len(seeds) == 6
    assert selector.reused == 3 and selector.exhausted
    assert Counter(c.id for c in seeds) == Counter({c.id: 2 for c in chunks})


def test_invalid_passes() -> None:
    with pytest.raises(ConfigError):
        SeedSelector([], ContextConstructionConfig(), random.Random(0), max_passes=0)


def test_quotas_of_tiny_empty_and_unlisted_files() -> None:
    config = ContextConstructionConfig(max_contexts_per_document=4, min_contexts_per_document=1)
    # a largest file of one token still gets the full quota; an empty one only the minimum
    assert seed_quotas({"a": 1, "empty": 0}, {"a": 9, "empty": 9}, config) == {"a": 4, "empty": 1}
    # a file with no chunks listed has nothing to give
    assert seed_quotas({"a": 100, "b": 100}, {"a": 9}, config) == {"a": 4, "b": 0}


def test_a_chunk_given_twice_is_one_seed_and_the_rest_still_come() -> None:
    chunks = make_chunks({"a.txt": 5})
    given = chunks[:3] + chunks[1:2] + chunks[3:]
    selector = SeedSelector(given, ContextConstructionConfig(), random.Random(0), max_passes=1)
    assert selector.chunks == chunks
    seeds = list(selector)
    assert sorted(c.id for c in seeds) == sorted(c.id for c in chunks)
    assert selector.yielded == 5


def test_sizes_count_every_chunk_as_at_least_one_token() -> None:
    chunks = make_chunks({"big.txt": 5}, tokens=4) + make_chunks({"small.txt": 10}, tokens=1)
    chunks += make_chunks({"empty.txt": 3}, tokens=0)
    config = ContextConstructionConfig(max_contexts_per_document=4, min_contexts_per_document=1)
    selector = SeedSelector(chunks, config, random.Random(0))
    assert selector.sizes == {"big.txt": 20, "empty.txt": 3, "small.txt": 10}
    assert selector.quotas == {"big.txt": 4, "empty.txt": 1, "small.txt": 2}


def test_quotas_cap_the_first_pass_and_reuse_passes_follow_size_alone() -> None:
    # rounding gives mid.txt 2 of 4 seats (38 / 100 * 4 = 1.52); size alone would give big.txt
    # the fifth seat (100 / 5 = 20 > 38 / 2 = 19), which is what a reuse pass does
    chunks = make_chunks({"big.txt": 10}, tokens=10) + make_chunks({"mid.txt": 2}, tokens=19)
    config = ContextConstructionConfig(max_contexts_per_document=4, min_contexts_per_document=1)
    selector = SeedSelector(chunks, config, random.Random(0), max_passes=2)
    assert selector.quotas == {"big.txt": 4, "mid.txt": 2}
    assert Counter(c.source for c in selector.take(6)) == selector.quotas
    assert len(selector.take(6)) == 6 and not selector.exhausted
    assert Counter(c.source for c in selector.take(6)) == {"big.txt": 5, "mid.txt": 1}
    assert selector.exhausted and selector.reused == 6


def test_equal_files_are_served_in_the_same_order_every_round() -> None:
    chunks = make_chunks({"a.txt": 4, "b.txt": 4, "c.txt": 4})
    seeds = SeedSelector(chunks, ContextConstructionConfig(), random.Random(4)).take(9)
    rounds = [[c.source for c in seeds[i : i + 3]] for i in range(0, 9, 3)]
    assert sorted(rounds[0]) == ["a.txt", "b.txt", "c.txt"]
    assert rounds[1] == rounds[0] and rounds[2] == rounds[0]


def test_a_claimed_chunk_does_not_cost_its_file_its_first_seat() -> None:
    chunks = make_chunks({"big.txt": 20}) + make_chunks({"small.txt": 5}, tokens=40)
    for seed in range(10):
        selector = SeedSelector(chunks, ContextConstructionConfig(), random.Random(seed))
        selector.used.update(f"small.txt#{i}" for i in range(4))  # one chunk of small.txt is free
        first = selector.take(2)
        assert {c.source for c in first} == {"big.txt", "small.txt"}
        assert "small.txt#4" in {c.id for c in first}


def test_a_released_seed_is_no_longer_claimed() -> None:
    selector = SeedSelector(
        make_chunks({"a.txt": 3}), ContextConstructionConfig(), random.Random(0)
    )
    seed = selector.next()
    assert seed is not None and selector.used == {seed.id}
    selector.release(seed.id)
    assert selector.used == set()


def test_too_few_passes_are_refused_with_the_reason() -> None:
    with pytest.raises(ConfigError, match="^max_passes must be at least 1$"):
        SeedSelector([], ContextConstructionConfig(), random.Random(0), max_passes=0)


def test_seats_past_the_quotas_go_by_size_over_seats_taken_plus_one() -> None:
    # D'Hondt: with quotas of 3 and 1 taken, mid.txt (3x the size) wins seats 5 and 6 over
    # big.txt (60 / 4 = 15, then 60 / 5 = 12, against 20 / 2 = 10)
    chunks = make_chunks({"big.txt": 2, "mid.txt": 6})
    config = ContextConstructionConfig(max_contexts_per_document=3, min_contexts_per_document=1)
    for seed in range(5):
        selector = SeedSelector(chunks, config, random.Random(seed))
        assert selector.quotas == {"big.txt": 1, "mid.txt": 3}
        assert Counter(c.source for c in selector.take(6)) == {"mid.txt": 5, "big.txt": 1}


# ---- uniform coverage: every file weighs the same ---------------------------------------------------


def test_uniform_coverage_serves_every_file_alike_whatever_its_size() -> None:
    chunks = make_chunks({"big.txt": 40}) + make_chunks({f"s{i}.txt": 4 for i in range(9)})
    config = ContextConstructionConfig(coverage="uniform")
    for seed in range(5):
        selector = SeedSelector(chunks, config, random.Random(seed))
        assert selector.weights == dict.fromkeys(selector.sources, 1)
        assert set(selector.quotas.values()) == {3}  # every file the maximum, capped by chunks
        seeds = selector.take(30)
        rounds = [[c.source for c in seeds[i : i + 10]] for i in range(0, 30, 10)]
        assert rounds[0] == selector.first_order  # round robin in the seeded order
        assert rounds[1] == rounds[0] and rounds[2] == rounds[0]


def test_uniform_coverage_gives_a_short_files_seats_to_the_others() -> None:
    chunks = make_chunks({"big.txt": 40, "one.txt": 1, "two.txt": 2})
    selector = SeedSelector(chunks, ContextConstructionConfig(coverage="uniform"), random.Random(0))
    assert Counter(c.source for c in selector.take(9)) == {"big.txt": 6, "two.txt": 2, "one.txt": 1}
    assert not selector.exhausted


def test_proportional_coverage_is_the_default_and_weighs_by_size() -> None:
    chunks = make_chunks({"a.txt": 100, "b.txt": 50, "c.txt": 25})
    selector = SeedSelector(chunks, ContextConstructionConfig(), random.Random(1))
    assert selector.config.coverage == "proportional" and selector.weights == selector.sizes


def test_an_unknown_coverage_is_refused_with_the_choices() -> None:
    with pytest.raises(ConfigError, match="coverage") as caught:
        ContextConstructionConfig(coverage="even")  # type: ignore[arg-type]
    assert "proportional" in str(caught.value) and "uniform" in str(caught.value)


def test_the_first_order_is_the_first_passes_file_order() -> None:
    # the plan reads first_order before any seed is drawn: it must be the order the seeds follow
    chunks = make_chunks({f"f{i}.txt": 3 for i in range(6)})
    for seed in range(10):
        selector = SeedSelector(chunks, ContextConstructionConfig(), random.Random(seed))
        order = list(selector.first_order)
        assert [c.source for c in selector.take(6)] == order
