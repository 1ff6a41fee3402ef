"""The feeds a run streams from: what each hands out, when it is done, and its stage records."""

from __future__ import annotations

import asyncio
import random

from test_contexts_critic import Critic, Vectors, chunk

from synth.contexts.config import ContextConstructionConfig
from synth.contexts.feed import Candidate, ListFeed, ScratchFeed, refused_key, seed_drop_stage
from synth.contexts.seed_feed import DocsFeed
from synth.data import Chunk
from synth.llm.base import FunctionModel


def test_list_feed_hands_each_candidate_out_once() -> None:
    candidates = [Candidate(i, f"k{i}", None) for i in range(3)]
    feed = ListFeed(candidates)
    assert not feed.exhausted and not feed.budget_reached and feed.pending == 0
    feed.request(1)  # nothing to start: every candidate is known
    assert feed.advance() == candidates
    assert feed.advance() == [] and feed.exhausted
    assert feed.stage_stats(None) == [] and not feed.seed_outcomes(None)


def test_scratch_feed_makes_what_is_asked_up_to_its_limit() -> None:
    feed = ScratchFeed(batch_size=5, limit=3)
    assert feed.advance() == []  # nothing asked yet
    feed.request(2)
    made = feed.advance()
    assert [c.key for c in made] == ["scratch#0", "scratch#1"] and all(c.scratch for c in made)
    assert not feed.budget_reached and not feed.exhausted
    feed.request(5)
    assert [c.seq for c in feed.advance()] == [2]
    assert feed.budget_reached and feed.exhausted


def test_seed_drop_stage() -> None:
    assert seed_drop_stage("below_quality_threshold") == "critic"
    assert seed_drop_stage("model_error:timeout") == "critic"
    assert seed_drop_stage("too_few_similar_chunks") == "group"


def _run(feed: DocsFeed, changed: asyncio.Event) -> None:
    async def drive() -> None:
        while not feed.exhausted:
            changed.clear()
            feed.request(len(feed.chunks))
            feed.advance()
            if feed.error is not None:  # as the run does: a failed batch ends it, no wait
                raise feed.error
            if feed.pending:
                await changed.wait()
        await feed.aclose()

    asyncio.run(drive())


def _docs_feed(chunks: list[Chunk], critic: Critic | None, **config: object):
    changed = asyncio.Event()
    feed = DocsFeed(
        chunks,
        Vectors(),
        ContextConstructionConfig(max_context_length=1, **config),
        random.Random(0),
        critic=FunctionModel(critic) if critic is not None else None,
        prompts=None,
        wanted=4,
        notify=changed.set,
    )
    return feed, changed


def test_docs_feed_stage_records_add_up() -> None:
    chunks = [chunk("a.txt", i, f"a {i}" + (" junk" if i % 3 == 0 else "")) for i in range(12)]
    feed, changed = _docs_feed(chunks, Critic(), max_retries=1)
    _run(feed, changed)
    _prose, critic, group = feed.stage_stats(None)
    outcomes = feed.seed_outcomes(None)
    assert (critic.stage, group.stage) == ("critic", "group")
    assert critic.items_in == sum(outcomes.values()) == feed.scored_seeds
    assert critic.dropped["below_quality_threshold"] > 0
    assert critic.items_in == critic.items_out + critic.dropped_total
    assert group.items_in == critic.items_out
    assert group.items_out == outcomes["ok"] == len(feed.candidates)
    # a cut at the first seed counts that seed alone
    first = sum(r.items_in for r in feed.stage_stats(0)[:1])
    assert first == 1


def test_a_feed_gives_its_own_progress_lines_and_seed_counts() -> None:
    """The run's progress display and manifest ask the feed, whatever feed it is: the critic's
    line (seeds scored of those sent) only when a critic scores; seed counts only from seeds."""
    chunks = [chunk("a.txt", i, f"a {i}" + (" junk" if i % 3 == 0 else "")) for i in range(12)]
    feed, changed = _docs_feed(chunks, Critic(), max_retries=1)
    assert feed.progress() == [("critic (seeds)", 0, 0)]
    _run(feed, changed)
    assert feed.progress() == [("critic (seeds)", feed.scored_seeds, feed.sent_seeds)]
    assert feed.seed_counts() == {
        "seeds_drawn": feed.drawn,
        "seeds_not_prose": 0,
        "seeds_scored": feed.sent_seeds,
    }
    assert 0 < feed.sent_seeds <= feed.drawn and feed.scored_seeds == feed.sent_seeds
    unscored, changed = _docs_feed(chunks[:3], None)
    _run(unscored, changed)
    assert unscored.progress() == []
    drawn = unscored.drawn
    counts = {"seeds_drawn": drawn, "seeds_not_prose": 0, "seeds_scored": drawn}
    assert drawn >= 3 and unscored.seed_counts() == counts
    for other in (ListFeed([]), ScratchFeed(batch_size=2, limit=4)):
        assert other.progress() == [] and other.seed_counts() is None


def test_docs_feed_without_critic_records_grouping_only() -> None:
    chunks = [chunk("a.txt", i, f"a {i}") for i in range(3)]
    feed, changed = _docs_feed(chunks, None)
    _run(feed, changed)
    _prose, group = feed.stage_stats(None)
    assert group.stage == "group" and group.items_out == len(feed.candidates) > 0


def test_scratch_feed_adds_up_what_is_asked_before_it_advances() -> None:
    feed = ScratchFeed(batch_size=5, limit=10)
    feed.request(2)
    feed.request(1)
    assert [c.seq for c in feed.advance()] == [0, 1, 2]


class _Served(FunctionModel):
    provider = ""

    def identity(self) -> dict[str, object]:
        return {**super().identity(), "base_url": "http://127.0.0.1:9/v1"}


def test_a_refused_key_names_the_server_the_model_and_the_fix() -> None:
    fix = (
        " (HTTP 401/403); check the key (OPENAI_API_KEY, or the provider's key variable) and "
        "--base-url, or name another model with --model"
    )
    default = refused_key(FunctionModel(lambda prompt, system: prompt, name="m"))
    assert default == (
        "the model server at the provider's default address refused the API key for function:m"
        + fix
    )
    served = _Served(lambda prompt, system: prompt, name="m")
    assert refused_key(served) == (
        "the model server at http://127.0.0.1:9/v1 refused the API key for m" + fix
    )
