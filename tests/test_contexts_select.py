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
