"""Selection, grouping and the seed feed do work that grows with what is asked, not with the store.

Counted, never timed: how often the seat order looks at a file, how many batches the feed walks.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Iterator, Sequence

from synth.contexts.prose import ends_in_number
from synth.contexts.select import Seats, seat_order


class CountedSeats(Seats):
    """A file whose weight counts its readers (the seat order reads it to rank the file)."""

    reads = 0

    def __getattribute__(self, name: str) -> object:
        if name == "weight":
            CountedSeats.reads += 1
        return super().__getattribute__(name)


def reference_order(files: Sequence[Seats], minimum: int) -> Iterator[Seats]:
    """The seat order as its docstring states it, a pass over every file for every seat."""
    for _ in range(minimum):
        for file in files:
            if not file.full and file.taken < min(minimum, file.quota):
                yield file
    for capped in (True, False):
        while True:
            best, best_key = None, 0.0
            for file in files:
                if file.full or (capped and file.taken >= file.quota):
                    continue
                key = file.weight / (file.taken + 1)
                if best is None or key > best_key:
                    best, best_key = file, key
            if best is None:
                break
            yield best


def take_seats(order: Iterator[Seats], seats: int, rng: random.Random) -> list[str]:
    """Walk ``order`` as the selector does: a file gives a seat or (now and then) is full."""
    taken: list[str] = []
    for file in order:
        if len(taken) >= seats:
            break
        if rng.random() < 0.05:
            file.full = True
            continue
        file.taken += 1
        taken.append(file.source)
    return taken


def make_files(count: int, seed: int, cls: type[Seats] = Seats) -> list[Seats]:
    rng = random.Random(seed)
    return [
        cls(f"f{i}", float(rng.choice([1, 2, 3, 5, 8, 100, 100])), rng.randint(0, 4))
        for i in range(count)
    ]


def test_the_seat_order_is_a_pass_over_every_file_per_seat_in_effect() -> None:
    for seed in range(30):
        minimum = seed % 3
        got = take_seats(seat_order(make_files(40, seed), minimum), 300, random.Random(seed))
        expected = take_seats(
            reference_order(make_files(40, seed), minimum), 300, random.Random(seed)
        )
        assert got == expected


def test_a_seat_costs_a_few_looks_at_the_files_not_one_at_each() -> None:
    files, seats = 2000, 500
    CountedSeats.reads = 0
    order = seat_order(make_files(files, 1, CountedSeats), 0)
    assert len(take_seats(order, seats, random.Random(1))) == seats
    # ranking every file once, then a few looks per seat; a pass per seat would be a million
    assert CountedSeats.reads < 2 * files + 4 * seats


#: the prose filter's former test of a line, one pattern whose work grows as the square of the
#: line's length; ends_in_number must give its answers
SLOW_ENDS_IN_NUMBER = re.compile(
    r"[^\W\d_][^\d]*?[,;:\s]\s*(?:[ivxlc]+|\d+(?:[-\u2013]\d+)?)\s*$", re.I
)


def test_a_line_ends_in_a_number_as_the_one_pattern_said() -> None:
    rng = random.Random(5)
    pieces = [
        "chunking",
        "Index",
        "xiv",
        "civil",
        "12",
        "45-47",
        "3\u20134",
        ",",
        ";",
        ":",
        " ",
        "  ",
        "_",
        "a1",
        "\u00e9t\u00e9",
        "\u00b2",
        "٣",
        "...",
        "IV",
        "page",
        "\t",
        "x",
    ]
    lines = ["chunking, 12", "Index xiv", "See 12 14", ", 12", "word", "a 5 12", "\u00e9, 3"]
    lines += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 9))) for _ in range(4000)]
    for line in lines:
        assert ends_in_number(line) == bool(SLOW_ENDS_IN_NUMBER.search(line)), line


class WalkedList(list):  # type: ignore[type-arg]
    """A list that counts the times it is walked from the start."""

    walks = 0

    def __iter__(self) -> Iterator[object]:
        WalkedList.walks += 1
        return super().__iter__()


def test_the_feed_answers_the_controller_without_walking_its_batches() -> None:
    from test_contexts_seed_feed import Critic, make_feed, texts

    async def go() -> None:
        chunks = texts(*(f"passage {i} " * 30 for i in range(90)))
        feed, changed = make_feed(chunks, Critic(), wanted=25)
        feed.batches = WalkedList(feed.batches)
        WalkedList.walks = 0
        new: list[object] = []
        while len(new) < 20:
            feed.request(20 - len(new))
            assert feed.can_send or feed.pending or feed.exhausted or feed.budget_reached
            changed.clear()
            if feed.pending:
                await changed.wait()
            new.extend(feed.advance())
        walks = WalkedList.walks
        # the counts kept as batches were sent and grouped are what a walk over them finds
        outcomes = feed.seed_outcomes(None)
        prior = feed.config.contexts_per_critic_call
        assert feed.acceptance() == (outcomes["ok"] + prior) / (sum(outcomes.values()) + prior)
        sent = [b for b in feed.batches if b.sent]
        assert feed.pending == sum(len(b.seeds) for b in sent if not b.grouped)
        assert feed.can_send == (len(sent) < len(feed.batches) and feed.sent_seeds < feed.budget)
        assert walks == 0  # the controller's questions, asked at every round, walked nothing
        await feed.aclose()

    asyncio.run(go())


def test_the_seed_counts_the_manifest_asks_every_second_walk_no_batch() -> None:
    from collections import Counter

    from test_contexts_seed_feed import Critic, drive, make_feed, texts

    chunks = texts(*(f"passage {i} " * 30 for i in range(30)), *(["junk"] * 6))
    feed, changed = make_feed(chunks, Critic())
    asyncio.run(drive(feed, changed))
    feed.batches = WalkedList(feed.batches)
    WalkedList.walks = 0
    counted = feed.seed_outcomes(None)
    records = feed.stage_stats(None)
    assert WalkedList.walks == 0  # kept as each batch was grouped, not recounted
    batches = list.__iter__(feed.batches)
    recount = Counter(b.outcome.get(c.id, "ok") for b in batches if b.grouped for c in b.seeds)
    assert counted == recount and recount["ok"] and len(recount) > 1  # kept and dropped seeds
    assert records[-1].items_out == recount["ok"]


class ComparedId(str):
    """A chunk id that counts how often it is ordered against another (sorting, heaps)."""

    comparisons = 0

    def __lt__(self, other: str) -> bool:
        ComparedId.comparisons += 1
        return str.__lt__(self, other)

    def __gt__(self, other: str) -> bool:
        ComparedId.comparisons += 1
        return str.__gt__(self, other)


def test_an_index_is_built_without_ordering_its_ids_and_a_query_orders_only_its_top() -> None:
    import numpy as np

    from synth.contexts.index import ChunkIndex
    from synth.data import Chunk

    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(3000, 16)).astype(np.float32)
    vectors[1::2] = vectors[::2]  # every chunk has a twin: each similarity comes twice
    chunks = [
        Chunk.model_construct(
            id=ComparedId(f"{rng.integers(1 << 62):016x}"),
            document_id="d",
            source=f"f{i % 30}.txt",
            index=i,
            text="t",
            token_count=1,
        )
        for i in range(3000)
    ]
    ComparedId.comparisons = 0
    index = ChunkIndex(chunks, vectors)
    assert ComparedId.comparisons == 0  # sorting 3,000 ids takes about 30,000
    queries = rng.normal(size=(20, 16))
    hits = index.query(queries, 5) + index.query(queries, 4, source="f3.txt")
    # the twins tied in each top 5 (or at its edge) are the only ids compared
    assert 0 < ComparedId.comparisons <= 40 * 5
    assert all(len(row) in (4, 5) for row in hits)
