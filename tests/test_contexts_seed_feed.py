"""The seed search as a run drives it (DocsFeed): the journal a resumed run replays instead of asking
the critic again, the rejects file, the draw positions and keys of its candidates, when it sends."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import random
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_contexts_critic import PASSAGE, Vectors, chunk, critic_reply

from synth._ids import joined_hash, text_hash
from synth._journal import Journal
from synth.contexts.config import ContextConstructionConfig
from synth.contexts.critic import ContextScore
from synth.contexts.feed import refused_key
from synth.contexts.index import ChunkIndex
from synth.contexts.seed_feed import DocsFeed, SeedBatch, lookahead_batches
from synth.data import Chunk
from synth.errors import AuthenticationError, ServerError
from synth.llm.base import FunctionModel
from synth.stage.stats import StageStats
from synth.stage.templates import PromptSet


class Critic:
    """Scripted critic replies (grades 0 for 'junk', 3 otherwise); ``broken`` texts make a request
    fail with a 503, ``unreadable`` ones get a reply that is not JSON."""

    def __init__(self, broken: str | None = None, unreadable: str | None = None) -> None:
        self.prompts: list[str] = []
        self.broken = broken
        self.unreadable = unreadable

    def __call__(self, prompt: str, system: str | None) -> str:
        self.prompts.append(prompt)
        if self.broken and self.broken in prompt:
            raise ServerError("scripted 503")
        if self.unreadable and self.unreadable in prompt:
            return "no scores today"
        return critic_reply(prompt)


class Axes:
    """A store whose vectors are given per chunk id (so which chunks are similar is exact)."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors
        self.reads: list[list[str]] = []

    def get_embeddings(self, ids: list[str]) -> list[list[float]]:
        self.reads.append(list(ids))
        return [self.vectors[i] for i in ids]


def texts(*values: str) -> list[Chunk]:
    return [chunk("a.txt", i, text) for i, text in enumerate(values)]


def make_feed(
    chunks: list[Chunk],
    critic: Critic | None,
    *,
    wanted: int | None = 4,
    store: object | None = None,
    **config: object,
) -> tuple[DocsFeed, asyncio.Event]:
    """A DocsFeed (one chunk a context, 3 seeds a critic request, unless ``config`` says otherwise)
    and the event it sets when verdicts come."""
    settings = {"max_context_length": 1, "contexts_per_critic_call": 3, "max_retries": 1, **config}
    changed = asyncio.Event()
    feed = DocsFeed(
        chunks,
        store or Vectors(),  # type: ignore[arg-type]
        ContextConstructionConfig(**settings),  # type: ignore[arg-type]
        random.Random(0),
        critic=FunctionModel(critic) if critic is not None else None,
        prompts=None,
        wanted=wanted,
        notify=changed.set,
    )
    return feed, changed


def feed_with(
    chunks: list[Chunk], critic: Critic | None, folder: Path, **config: object
) -> tuple[DocsFeed, asyncio.Event, list[Journal]]:
    """A DocsFeed writing its journal, rejects and bad replies into ``folder``."""
    journals = [Journal(folder / f"{name}.jsonl") for name in ("critic", "rejects", "bad_replies")]
    settings = {"max_context_length": 1, "contexts_per_critic_call": 3, "max_retries": 1, **config}
    changed = asyncio.Event()
    feed = DocsFeed(
        chunks,
        Vectors(),
        ContextConstructionConfig(**settings),  # type: ignore[arg-type]
        random.Random(0),
        critic=FunctionModel(critic) if critic is not None else None,
        prompts=None,
        wanted=4,
        journal=journals[0],
        rejects=journals[1],
        bad_replies=journals[2],
        notify=changed.set,
    )
    return feed, changed, journals


async def drive(feed: DocsFeed, changed: asyncio.Event) -> None:
    """Drive the feed as the run does until no more candidates can come."""
    while not feed.exhausted:
        changed.clear()
        feed.request(len(feed.chunks))
        feed.advance()
        if feed.error is not None:
            raise feed.error
        if feed.pending:
            await changed.wait()
    await feed.aclose()


def run_feed(feed: DocsFeed, changed: asyncio.Event, journals: list[Journal]) -> None:
    try:
        asyncio.run(drive(feed, changed))
    finally:
        for journal in journals:
            journal.close()


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def found(feed: DocsFeed) -> list[tuple[int, str, int | None, list[str], float | None]]:
    return [
        (c.seq, c.key, c.position, c.context.chunk_ids, c.context.quality)
        for c in feed.candidates
        if c.context is not None
    ]


SIX = ("a 0", "a 1 junk", "a 2", "a 3", "a 4 junk", "a 5")


def test_a_batch_key_is_its_place_and_a_hash_of_its_seeds() -> None:
    seeds = texts("x", "y")
    batch = SeedBatch(3, seeds, 6)
    assert batch.key == "batch3:" + joined_hash(["a.txt#0", "a.txt#1"], 12)
    assert len(batch.key) == len("batch3:") + 12
    assert SeedBatch(3, seeds[:1], 6).key != batch.key != SeedBatch(4, seeds, 6).key
    assert (batch.sent, batch.scores, batch.grouped, batch.outcome, batch.failed) == (
        False,
        None,
        False,
        {},
        {},
    )


def test_the_first_wave_covers_the_contexts_wanted_and_one_batch_more() -> None:
    assert [lookahead_batches(n, 3) for n in (0, 1, 3, 4, 6, 7)] == [2, 2, 2, 3, 3, 4]
    assert [lookahead_batches(n, 1) for n in (0, 1, 2)] == [2, 2, 3]
    feed, _ = make_feed(texts(*[f"a {i}" for i in range(20)]), Critic(), wanted=7)
    assert feed.lookahead == 4 and len(feed.batches) == 4
    assert [(b.index, b.start, len(b.seeds)) for b in feed.batches] == [
        (0, 0, 3),
        (1, 3, 3),
        (2, 6, 3),
        (3, 9, 3),
    ]
    assert feed.drawn == 12 and feed.sent_seeds == 0 and feed.budget == 7 * 2 + 3
    assert feed.exhausted_reason == "the corpus has no more chunks to start a context from"
    assert feed.error is None and feed.candidates == [] and not feed.exhausted


def test_without_a_count_the_feed_wants_the_selectors_quotas() -> None:
    feed, _ = make_feed(texts(*[f"a {i}" for i in range(20)]), Critic(), wanted=None)
    assert feed.wanted == feed.selector.default_count == 3
    assert len(feed.batches) == 2 and feed.budget == 3 * 2 + 3


def test_a_short_draw_is_the_last_and_an_empty_one_makes_no_batch() -> None:
    feed, _ = make_feed(texts("a 0", "a 1", "a 2", "a 3"), Critic(), wanted=9, max_retries=0)
    # 4 chunks, then 4 reused (the selector's second pass), then nothing: 3 batches of 3, 3, 2
    assert [len(b.seeds) for b in feed.batches] == [3, 3, 2]
    assert [b.start for b in feed.batches] == [0, 3, 6] and feed.drawn == 8


def test_request_sends_until_enough_contexts_may_come_plus_one_batch() -> None:
    async def go() -> None:
        feed, _ = make_feed(
            texts(*[f"a {i}" for i in range(20)]), Critic(), wanted=6, max_retries=0
        )
        assert len(feed.batches) == 3  # ceil(6 / 3) + 1
        feed.request(1)  # 1 + 3 wanted: two batches of 3 are pending
        assert [b.sent for b in feed.batches] == [True, True, False]
        assert feed.sent_seeds == 6 and feed.pending == 6 and feed.scored_seeds == 0
        assert feed.can_send and not feed.budget_reached and not feed.exhausted
        feed.request(3)  # 6 pending already: nothing more
        assert feed.sent_seeds == 6
        feed.request(4)
        assert [b.sent for b in feed.batches] == [True, True, True]
        assert feed.sent_seeds == 9 and feed.budget == 9
        assert not feed.can_send and not feed.budget_reached and not feed.exhausted
        await feed.aclose()

    asyncio.run(go())


def test_at_the_budget_a_drawn_batch_stays_unsent() -> None:
    chunks = texts(*[f"a {i} junk" for i in range(20)])
    feed, changed = make_feed(chunks, Critic(), wanted=2, max_retries=0)
    assert feed.budget == 2 * 1 + 3 == 5
    asyncio.run(drive(feed, changed))
    # batches 0 and 1 are sent (6 seeds, past the budget of 5); each grouped one drew one more,
    # and those stay unsent
    assert [b.sent for b in feed.batches] == [True, True, False, False]
    assert feed.sent_seeds == 6 and feed.scored_seeds == 6 and feed.pending == 0
    assert feed.budget_reached and not feed.can_send and feed.exhausted
    assert feed.seed_outcomes(None) == {"below_quality_threshold": 6}
    _prose, critic, group = feed.stage_stats(None)
    assert (critic.items_in, critic.items_out, critic.dropped_total) == (6, 0, 6)
    assert (group.items_in, group.items_out) == (0, 0)


def expected(feed: DocsFeed) -> list[tuple[int, str]]:
    """Where each seed the scripted critic passes sits in the draw order (junk never passes)."""
    return [
        (batch.start + i, seed.id)
        for batch in feed.batches
        if batch.grouped
        for i, seed in enumerate(batch.seeds)
        if "junk" not in seed.text
    ]


def passages(prompt: str) -> list[str]:
    return [text for _, text in PASSAGE.findall(prompt)]


HIGH = {
    "reason": "scripted",
    "prose": True,
    "disqualifier": "none",
    "self_contained": 3,
    "informative": 3,
    "coherent": 3,
}
LOW = {**HIGH, "self_contained": 0, "informative": 0, "coherent": 0}


def test_a_resumed_feed_replays_its_journal_and_asks_the_critic_nothing(tmp_path: Path) -> None:
    chunks = texts(*SIX)
    critic = Critic()
    feed, changed, journals = feed_with(chunks, critic, tmp_path)
    run_feed(feed, changed, journals)
    first = found(feed)
    # every seed that passed made a context, at its place in the draw order; the second pass
    # reuses the chunks, and its candidates' keys still differ (the key ends in the sequence)
    assert [(c[2], c[3]) for c in first] == [(at, [seed]) for at, seed in expected(feed)]
    assert len(first) == 8 and len({c[3][0] for c in first}) == 4
    assert [c[0] for c in first] == list(range(8))
    assert [c[1] for c in first] == [f"{c.context.id}#{c.seq}" for c in feed.candidates]
    assert len({c[1] for c in first}) == 8 and all(c[4] == 1.0 for c in first)
    sent = [b for b in feed.batches if b.sent]
    assert len(critic.prompts) == len(sent) == 4
    # one line per batch scored: its key, its seeds, each score as given
    recorded = lines(tmp_path / "critic.jsonl")
    assert [r["key"] for r in recorded] == [b.key for b in sent]
    for record, batch in zip(recorded, sent, strict=True):
        assert record == {
            "key": batch.key,
            "seeds": [s.id for s in batch.seeds],
            "scores": [LOW if "junk" in s.text else HIGH for s in batch.seeds],
        }

    again = Critic()
    resumed, changed, journals = feed_with(chunks, again, tmp_path)
    run_feed(resumed, changed, journals)
    assert again.prompts == []
    assert found(resumed) == first
    assert [c.context.metadata["critic"] for c in resumed.candidates] == [HIGH] * 8
    assert resumed.seed_outcomes(None) == feed.seed_outcomes(None)
    assert resumed.sent_seeds == feed.sent_seeds == 12
    assert len(lines(tmp_path / "critic.jsonl")) == 4  # nothing journaled twice


def test_a_failed_request_is_not_journaled_and_a_resumed_feed_asks_it_again(
    tmp_path: Path,
) -> None:
    chunks = texts(*SIX)
    feed, changed, journals = feed_with(chunks, Critic(broken="a 5"), tmp_path, max_retries=0)
    run_feed(feed, changed, journals)
    sent = [b for b in feed.batches if b.sent]
    failed = [b for b in sent if "a.txt#5" in {s.id for s in b.seeds}]
    good = [b for b in sent if b not in failed]
    assert failed and good
    for batch in failed:
        assert batch.failed.keys() == {s.id for s in batch.seeds}
        assert all(isinstance(e, ServerError) for e in batch.failed.values())
    assert all(b.failed == {} for b in good)
    assert [r["key"] for r in lines(tmp_path / "critic.jsonl")] == [b.key for b in good]
    rows = {r["key"]: r for r in lines(tmp_path / "rejects.jsonl")}
    seed = failed[0].seeds[0]
    assert rows[f"{failed[0].key}:{seed.id}"] == {
        "key": f"{failed[0].key}:{seed.id}",
        "stage": "critic",
        "reason": "model_error:server",
        "chunk_id": seed.id,
        "source": "a.txt",
        "detail": "scripted 503",
    }
    junk = next((b, s) for b in good for s in b.seeds if "junk" in s.text)
    assert rows[f"{junk[0].key}:{junk[1].id}"] == {
        "key": f"{junk[0].key}:{junk[1].id}",
        "stage": "critic",
        "reason": "below_quality_threshold",
        "chunk_id": junk[1].id,
        "source": "a.txt",
    }
    dropped = [(b.key, s.id) for b in sent for s in b.seeds if b in failed or "junk" in s.text]
    assert sorted(rows) == sorted(f"{key}:{seed}" for key, seed in dropped)
    assert lines(tmp_path / "bad_replies.jsonl") == []  # a 503 has no reply to keep

    healed = Critic()
    resumed, changed, journals = feed_with(chunks, healed, tmp_path, max_retries=0)
    run_feed(resumed, changed, journals)
    # only the batches that failed are asked again; the others come from the journal
    asked = [b for b in resumed.batches if b.sent and b.key not in {g.key for g in good}]
    assert [passages(p) for p in healed.prompts] == [[s.text for s in b.seeds] for b in asked]
    assert {b.key for b in failed} <= {b.key for b in asked}
    assert [(c[2], c[3]) for c in found(resumed)] == [
        (at, [seed]) for at, seed in expected(resumed)
    ]


def test_a_journaled_batch_holding_a_failure_is_asked_again(tmp_path: Path) -> None:
    chunks = texts(*SIX)
    feed, _ = make_feed(chunks, Critic())
    first, second = feed.batches[:2]
    ok = {**HIGH, "reason": "kept"}
    with Journal(tmp_path / "critic.jsonl") as journal:
        journal.append(first.key, {"seeds": [], "scores": [ok, "below_quality_threshold", ok]})
        journal.append(second.key, {"seeds": [], "scores": [ok, "model_error:timeout", ok]})
    critic = Critic()
    resumed, changed, journals = feed_with(chunks, critic, tmp_path)
    run_feed(resumed, changed, journals)
    # batch 0 comes from the journal as recorded (a reason stays a drop), batch 1 is asked again
    asked = [passages(p) for p in critic.prompts]
    assert [s.text for s in second.seeds] in asked and [s.text for s in first.seeds] not in asked
    batch = resumed.batches[0]
    assert batch.key == first.key
    assert batch.scores == [
        ContextScore.model_validate(ok),
        "below_quality_threshold",
        ContextScore.model_validate(ok),
    ]
    ids = [s.id for s in batch.seeds]
    assert batch.outcome == {ids[0]: "ok", ids[1]: "below_quality_threshold", ids[2]: "ok"}
    assert [c.context.metadata["critic"] for c in resumed.candidates[:2]] == [ok, ok]
    assert [c.position for c in resumed.candidates[:2]] == [0, 2]


def test_an_unreadable_reply_is_kept_once_and_its_rejects_point_at_it(tmp_path: Path) -> None:
    chunks = texts(*SIX)
    feed, changed, journals = feed_with(chunks, Critic(unreadable="a 5"), tmp_path, max_retries=0)
    run_feed(feed, changed, journals)
    key = text_hash("no scores today", 16)
    assert lines(tmp_path / "bad_replies.jsonl") == [{"key": key, "reply": "no scores today"}]
    failed = [b for b in feed.batches if b.failed]
    assert failed and all(b.failed.keys() == {s.id for s in b.seeds} for b in failed)
    rows = [
        r for r in lines(tmp_path / "rejects.jsonl") if r["reason"] != "below_quality_threshold"
    ]
    assert [r["key"] for r in rows] == [f"{b.key}:{s.id}" for b in failed for s in b.seeds]
    for row in rows:
        batch = next(b for b in failed if row["key"].startswith(b.key + ":"))
        assert row == {
            "key": row["key"],
            "stage": "critic",
            "reason": "model_error:invalid_output",
            "chunk_id": row["chunk_id"],
            "source": "a.txt",
            "detail": str(batch.failed[row["chunk_id"]]),
            "raw_reply": {"file": "bad_replies.jsonl", "key": key},
        }
    assert rows[0]["detail"].startswith("reply is not one JSON object")


def test_a_seed_too_far_from_every_chunk_is_a_grouping_reject(tmp_path: Path) -> None:
    chunks = texts(*[f"a {i}" for i in range(6)])
    # a.txt#0 and a.txt#1 point the same way; every other chunk points its own way
    vectors = {c.id: [1.0 if j == i else 0.0 for j in range(6)] for i, c in enumerate(chunks)}
    vectors["a.txt#1"] = vectors["a.txt#0"]
    config = ContextConstructionConfig(
        max_context_length=2, min_context_length=2, contexts_per_critic_call=3, max_retries=0
    )
    with Journal(tmp_path / "rejects.jsonl") as rejects:
        feed = DocsFeed(
            chunks,
            Axes(vectors),  # type: ignore[arg-type]
            config,
            random.Random(0),
            critic=None,
            prompts=None,
            wanted=1,
            rejects=rejects,
        )
        asyncio.run(drive(feed, asyncio.Event()))
    # a.txt#1, drawn first and dropped, is free again when a.txt#0 looks for a neighbour
    assert [c.context.chunk_ids for c in feed.candidates] == [["a.txt#0", "a.txt#1"]]
    grouped = [b for b in feed.batches if b.grouped]
    assert len(grouped) == 2
    drops = [(b, s) for b in grouped for s in b.seeds if s.id != "a.txt#0"]
    assert lines(tmp_path / "rejects.jsonl") == [
        {
            "key": f"{b.key}:{s.id}",
            "stage": "group",
            "reason": "too_few_similar_chunks",
            "chunk_id": s.id,
            "source": "a.txt",
        }
        for b, s in drops
    ]
    _prose, group = feed.stage_stats(None)
    assert (group.items_in, group.items_out, group.dropped) == (6, 1, {"too_few_similar_chunks": 5})
    assert (
        feed.candidates[0].position
        == [b.start + i for b in grouped for i, s in enumerate(b.seeds) if s.id == "a.txt#0"][0]
    )


def test_without_a_critic_every_seed_is_accepted_unscored_and_nothing_is_journaled(
    tmp_path: Path,
) -> None:
    chunks = texts(*SIX)
    feed, changed, journals = feed_with(chunks, None, tmp_path)
    run_feed(feed, changed, journals)
    assert [b.scores for b in feed.batches if b.sent][0] == ["", "", ""]
    assert [c.context.quality for c in feed.candidates] == [None] * len(feed.candidates)
    drawn = [
        (b.start + i, [s.id]) for b in feed.batches if b.grouped for i, s in enumerate(b.seeds)
    ]
    assert [(c.position, c.context.chunk_ids) for c in feed.candidates] == drawn
    assert lines(tmp_path / "critic.jsonl") == [] and lines(tmp_path / "rejects.jsonl") == []
    assert feed.seed_outcomes(None) == {"ok": feed.sent_seeds}


def test_stage_records_count_each_grouped_seed_once_up_to_a_draw_position() -> None:
    feed, changed = make_feed(texts(*SIX), Critic())
    asyncio.run(drive(feed, changed))
    assert all(b.ahead is None for b in feed.batches)  # one chunk a context: nothing to read ahead
    verdicts = [
        (b.start + i, "below_quality_threshold" if "junk" in s.text else "ok")
        for b in feed.batches
        if b.grouped
        for i, s in enumerate(b.seeds)
    ]
    assert len(verdicts) == 12

    def upto(last: int) -> Counter[str]:
        return Counter(verdict for at, verdict in verdicts if at <= last)

    assert feed.seed_outcomes(None) == upto(11) == Counter({"ok": 8, "below_quality_threshold": 4})
    for last in (0, 1, 4, 7):
        assert feed.seed_outcomes(last) == upto(last)
    _prose, critic, group = feed.stage_stats(None)
    expected_critic = StageStats(stage="critic", items_in=12, items_out=8)
    expected_critic.drop("below_quality_threshold", 4)
    assert critic == expected_critic
    assert group == StageStats(stage="group", items_in=8, items_out=8)
    cut = upto(4)
    _prose, critic, group = feed.stage_stats(4)
    assert (critic.items_in, critic.items_out, group.items_in, group.items_out) == (
        5,
        cut["ok"],
        cut["ok"],
        cut["ok"],
    )


def test_a_refused_key_ends_the_feed_with_the_servers_message() -> None:
    def refuse(prompt: str, system: str | None) -> str:
        raise AuthenticationError("401")

    feed, changed = make_feed(texts(*SIX), None)
    feed.critic = llm = FunctionModel(refuse)
    with pytest.raises(AuthenticationError) as info:
        asyncio.run(drive(feed, changed))
    assert str(info.value) == refused_key(llm)
    assert feed.candidates == [] and all(b.scores is None for b in feed.batches)


def test_the_store_is_read_once_after_its_writes_are_checked_and_grouping_uses_the_reads_ahead() -> (
    None
):
    chunks = texts("a 0", "a 1", "a 2", "a 3")
    store = Axes({c.id: [1.0, 0.1 * i] for i, c in enumerate(chunks)})
    order: list[str] = []
    feed = DocsFeed(
        chunks,
        store,  # type: ignore[arg-type]
        ContextConstructionConfig(max_context_length=2, contexts_per_critic_call=2, max_retries=0),
        random.Random(0),
        critic=FunctionModel(Critic()),
        prompts=None,
        wanted=2,
        notify=lambda: order.append("verdicts"),
        store_check=lambda: order.append(f"checked after {len(store.reads)} reads"),
    )
    changed = asyncio.Event()
    feed.notify = lambda: (order.append("verdicts"), changed.set())
    read_ahead = feed._read_ahead
    reads: dict[tuple[str, ...], Any] = {}

    def recorded(seeds: list[Chunk], guess: Any) -> Any:
        reads[tuple(s.id for s in seeds)] = found = read_ahead(seeds, guess)
        return found

    feed._read_ahead = recorded  # type: ignore[method-assign]
    asyncio.run(drive(feed, changed))
    # the store's writes are checked before every search, the first one before the one read
    assert order[0] == "checked after 0 reads"
    assert order.count("checked after 0 reads") == 1 and "checked after 1 reads" in order
    assert store.reads == [[c.id for c in chunks]]
    sent = [b for b in feed.batches if b.sent]
    # each batch's neighbours were read ahead, a first query for each of its seeds
    for batch in sent:
        assert set(reads[tuple(s.id for s in batch.seeds)].candidates) == {
            s.id for s in batch.seeds
        }
        assert batch.grouped and batch.ahead is None  # read once: not kept once grouped
    assert [c.context.chunk_ids for c in feed.candidates][2:] == [
        ["a.txt#1", "a.txt#2"],
        ["a.txt#3", "a.txt#2"],
    ]
    assert feed._reader is None and feed._tasks == set() and feed._reads == set()


class FlakyAxes(Axes):
    """A store whose first read fails (as a store still being written can), then answers."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        super().__init__(vectors)
        self.threads: list[str] = []

    def get_embeddings(self, ids: list[str]) -> list[list[float]]:
        self.threads.append(threading.current_thread().name)
        if len(self.threads) == 1:
            raise OSError("the store is busy")
        return super().get_embeddings(ids)


def test_a_failed_read_ahead_is_not_an_error_grouping_reads_the_store_itself() -> None:
    chunks = texts("a 0", "a 1", "a 2", "a 3")
    store = FlakyAxes({c.id: [1.0, 0.1 * i] for i, c in enumerate(chunks)})
    feed, changed = make_feed(
        chunks,
        Critic(),
        wanted=1,
        store=store,
        max_context_length=2,
        contexts_per_critic_call=4,
        max_retries=0,
    )
    read_ahead = feed._read_ahead
    failures: list[BaseException] = []

    def recorded(seeds: list[Chunk], guess: Any) -> Any:
        try:
            return read_ahead(seeds, guess)
        except OSError as error:
            failures.append(error)
            raise

    feed._read_ahead = recorded  # type: ignore[method-assign]
    asyncio.run(drive(feed, changed))
    assert len(failures) == 1 and feed.batches[0].ahead is None
    # the read ahead ran in the feed's reader thread; the next read (ahead, or grouping's,
    # whichever came first) made the index
    assert store.threads[0].startswith("synth-read-ahead") and len(store.threads) == 2
    assert feed.error is None and len(feed.candidates) == 8  # both passes, each chunk


def test_a_draw_that_comes_back_empty_makes_no_batch() -> None:
    # 3 chunks, then the same 3 reused, then nothing: two full batches and no empty third
    feed, changed = make_feed(texts("a 0", "a 1", "a 2"), None, wanted=9)
    asyncio.run(drive(feed, changed))
    assert [len(b.seeds) for b in feed.batches] == [3, 3]
    assert feed.drawn == 6 and feed.exhausted


class CountingIndex(ChunkIndex):
    """The run's chunk index, counting the queries made from each thread."""

    def __init__(self, chunks: list[Chunk], vectors: object) -> None:
        super().__init__(chunks, vectors)
        self.asked: Counter[str] = Counter()

    def query_chunks(self, embeddings: object, n_results: int, **kwargs: object) -> list:
        self.asked[threading.current_thread().name.split("_")[0]] += 1
        return super().query_chunks(embeddings, n_results, **kwargs)  # type: ignore[arg-type]

    def query(self, embeddings: object, n_results: int, **kwargs: object) -> list:
        self.asked[threading.current_thread().name.split("_")[0]] += 1
        return super().query(embeddings, n_results, **kwargs)  # type: ignore[arg-type]


def test_grouping_takes_the_neighbours_read_ahead_instead_of_asking_again() -> None:
    chunks = texts(*[f"a {i}" for i in range(12)])
    store = Axes({c.id: [1.0, 0.01 * i] for i, c in enumerate(chunks)})
    feed, changed = make_feed(
        chunks,
        Critic(),
        wanted=2,
        store=store,
        max_context_length=2,
        contexts_per_critic_call=2,
        max_retries=0,
    )
    index = CountingIndex.from_store(chunks, store)
    feed._index = index  # the index the feed would make, counting its queries
    asyncio.run(drive(feed, changed))
    assert all(len(c.context.chunk_ids) == 2 for c in feed.candidates) and feed.candidates
    # one read ahead per batch, in the reader thread; grouping asked once more (a seed whose
    # neighbours read ahead the seed before it had claimed), not again for every seed
    assert index.asked == {"synth-read-ahead": 2, "MainThread": 1}


def test_the_run_s_prompts_go_to_the_critic() -> None:
    critic = Critic()
    feed, changed = make_feed(texts(*SIX), critic)
    feed.prompts = PromptSet({"context_critic": "Rate these $count, carefully:\n$chunks"})
    asyncio.run(drive(feed, changed))
    assert critic.prompts and all(p.startswith("Rate these 3, carefully:") for p in critic.prompts)
    assert len(feed.candidates) == 8


def test_advance_hands_out_each_new_candidate_once_in_order() -> None:
    async def go() -> tuple[DocsFeed, list[object]]:
        feed, changed = make_feed(texts(*SIX), Critic())
        handed: list[object] = []
        while not feed.exhausted:
            changed.clear()
            feed.request(6)
            handed.extend(feed.advance())
            if feed.pending:
                await changed.wait()
        await feed.aclose()
        return feed, handed

    feed, handed = asyncio.run(go())
    assert handed == feed.candidates and len(handed) == 8


def test_a_seed_dropped_for_a_reason_is_released_at_once(tmp_path: Path) -> None:
    chunks = texts(*[f"a {i}" for i in range(12)])  # none drawn twice in the first batches
    feed, _ = make_feed(chunks, Critic())
    first = feed.batches[0]
    ok = {**HIGH, "reason": "kept"}
    with Journal(tmp_path / "critic.jsonl") as journal:
        journal.append(first.key, {"seeds": [], "scores": [ok, "too_few_similar_chunks", ok]})

    async def go() -> DocsFeed:
        with Journal(tmp_path / "critic.jsonl") as journal:
            resumed = DocsFeed(
                chunks,
                Vectors(),
                feed.config,
                random.Random(0),
                critic=FunctionModel(Critic()),
                prompts=None,
                wanted=4,
                journal=journal,
            )
            resumed.request(1)  # batch 0 comes from the journal, batch 1 goes to the critic
            assert [c.context.chunk_ids[0] for c in resumed.advance()] == [
                first.seeds[0].id,
                first.seeds[2].id,
            ]
            used = set(resumed.selector.used)
            tasks = set(resumed._tasks)
            assert tasks and not any(t.done() for t in tasks)
            await resumed.aclose()
            # closing cancelled the request under way and waited for it to end
            assert all(t.cancelled() for t in tasks) and resumed._tasks == set()
        assert first.seeds[1].id not in used and first.seeds[0].id in used
        return resumed

    resumed = asyncio.run(go())
    assert resumed.batches[0].outcome[first.seeds[1].id] == "too_few_similar_chunks"


def test_a_failed_read_ahead_of_a_batch_never_grouped_is_not_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    chunks = texts(*[f"a {i}" for i in range(8)])
    store = FlakyAxes({c.id: [1.0, 0.1 * i] for i, c in enumerate(chunks)})
    config = ContextConstructionConfig(max_context_length=2, contexts_per_critic_call=4)

    async def go() -> None:
        feed = DocsFeed(
            chunks,
            store,  # type: ignore[arg-type]
            config,
            random.Random(0),
            critic=FunctionModel(Critic()),
            prompts=None,
            wanted=1,
        )
        feed.request(1)  # two batches sent, their reads ahead started; the first read fails
        await asyncio.wait({b.ahead for b in feed.batches if b.ahead is not None})
        await feed.aclose()  # the run ends before anything is grouped

    gc.collect()  # what earlier tests left is collected outside the capture
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        asyncio.run(go())
        gc.collect()
    assert len(store.threads) == 2  # the failed read, and the one that made the index
    assert [r.getMessage() for r in caplog.records] == []


def test_a_first_wave_for_the_expected_drops_draws_their_batches_too() -> None:
    # 9 contexts wanted, a tenth of them expected dropped: ceil(9 / 0.9) = 10 -> 4 + 1 batches
    chunks = texts(*[f"a {i}" for i in range(30)])
    config = ContextConstructionConfig(max_context_length=1, contexts_per_critic_call=3)
    rng, critic = random.Random(0), FunctionModel(Critic())
    feed = DocsFeed(chunks, Vectors(), config, rng, critic=critic, prompts=None, wanted=9)  # type: ignore[arg-type]
    assert feed.lookahead == 4 and len(feed.batches) == 4
    feed = DocsFeed(
        chunks,
        Vectors(),  # type: ignore[arg-type]
        config,
        random.Random(0),
        critic=critic,
        prompts=None,
        wanted=9,
        expected_keep=0.9,
    )
    assert feed.lookahead == 5 and len(feed.batches) == 5
    assert feed.budget == 9 * 4 + 3  # the top-up limit is the wanted contexts', as before


def test_requests_follow_the_share_of_seeds_that_made_a_context() -> None:
    async def go() -> None:
        # every seed is junk: none of the first two batches' six makes a context
        chunks = texts(*[f"a {i} junk" for i in range(30)])
        feed, changed = make_feed(chunks, Critic(), wanted=6, max_retries=3)
        assert feed.acceptance() == 1.0
        feed.request(1)  # 1 + 3 seeds wanted: two batches of 3
        assert feed.sent_seeds == 6
        while not (feed.batches[0].grouped and feed.batches[1].grouped):
            changed.clear()
            feed.advance()
            if not feed.batches[1].grouped:
                await changed.wait()
        assert feed.seed_outcomes(None) == {"below_quality_threshold": 6}
        assert feed.acceptance() == pytest.approx(3 / 9)  # pulled towards 1 by a batch's worth
        # 3 more contexts at 1 in 3 seeds: 9 + 3 wanted; the three batches drawn are all sent
        # (replacing each drop once seen would send two: 3 + 3)
        feed.request(3)
        assert feed.pending == 9
        await feed.aclose()

    asyncio.run(go())
