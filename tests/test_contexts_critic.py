"""The context critic: pure prompt/parse, batched scoring, replacement of rejected seeds."""

from __future__ import annotations

import asyncio
import json
import random
import re

import pytest

from synth._journal import Journal
from synth.contexts.config import ContextConstructionConfig
from synth.contexts.critic import (
    CRITERIA,
    CRITIC_WORDS,
    DISQUALIFIERS,
    NOT_PROSE,
    ContextScore,
    CriticReply,
    build_prompt,
    check_reply,
    excerpt,
    parse,
    score_contexts,
)
from synth.contexts.seed_feed import DocsFeed
from synth.data import Chunk
from synth.errors import OutputParseError, ServerError
from synth.llm import Usage, make_llm
from synth.llm.base import FunctionModel, run_sync
from synth.stage.stats import StageStats
from synth.stage.templates import PromptSet

PASSAGE = re.compile(r'<passage index="(\d+)">\n(.*?)\n</passage>', re.DOTALL)


def chunk(source: str, i: int, text: str) -> Chunk:
    return Chunk(
        id=f"{source}#{i}", document_id=source, source=source, index=i, text=text, token_count=50
    )


def labels(grade: int, **extra) -> dict:
    """One passage's labels: prose, every criterion at ``grade``."""
    entry = {
        "reason": "scripted",
        "prose": True,
        "disqualifier": "none",
        "self_contained": grade,
        "informative": grade,
        "coherent": grade,
    }
    return {**entry, **extra}


def critic_reply(prompt: str) -> str:
    """Grades 0 for passages containing 'junk', 3 otherwise."""
    scores = []
    for index, text in PASSAGE.findall(prompt):
        scores.append({"index": int(index), **labels(0 if "junk" in text else 3)})
    return json.dumps({"scores": scores})


class Critic:
    """A scripted critic that records the prompts it saw."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.prompts: list[str] = []
        self.fail_on = fail_on

    def __call__(self, prompt: str, system: str | None) -> str:
        self.prompts.append(prompt)
        if self.fail_on and self.fail_on in prompt:
            raise ServerError("scripted 503")
        return critic_reply(prompt)


def test_build_prompt_numbers_every_passage() -> None:
    prompt = build_prompt(["alpha text", "beta text"])
    assert '<passage index="1">\nalpha text\n</passage>' in prompt
    assert '<passage index="2">\nbeta text\n</passage>' in prompt
    assert PASSAGE.findall(prompt) == [("1", "alpha text"), ("2", "beta text")]


def test_the_prompt_names_every_disqualifier_and_criterion_and_never_the_threshold() -> None:
    prompt = build_prompt(["alpha"])
    assert all(name in prompt for name in (*DISQUALIFIERS, *CRITERIA))
    assert "0.5" not in prompt and "threshold" not in prompt.lower()
    # three to five calibration examples, each with its labels as the reply gives them
    examples = re.findall(r'^\s+\{"reason": .*\}$', prompt, re.MULTILINE)
    assert 3 <= len(examples) <= 5
    for example in examples:
        ContextScore.model_validate_json(example)


def test_the_critic_sees_the_head_of_a_long_passage_marked_as_cut() -> None:
    long = " ".join(f"w{i}" for i in range(CRITIC_WORDS + 50))
    (seen,) = [text for _, text in PASSAGE.findall(build_prompt([long]))]
    assert seen.split()[-2:] == [f"w{CRITIC_WORDS - 1}", "[...]"]
    assert excerpt("short passage\nkept whole") == "short passage\nkept whole"


def test_the_reply_schema_puts_the_reason_before_the_labels() -> None:
    item = CriticReply.model_json_schema()["$defs"]["_Item"]["properties"]
    assert list(item)[:3] == ["index", "reason", "prose"]
    assert list(ContextScore.model_fields)[0] == "reason"


def test_parse_good_reply_out_of_order() -> None:
    text = json.dumps(
        {
            "scores": [
                {"index": 2, **labels(3, informative=0, coherent=0)},
                {"index": 1, **labels(2, reason="ok")},
            ]
        }
    )
    scores = parse(text, 2)
    assert scores[0].quality == pytest.approx(2 / 3) and scores[0].reason == "ok"
    assert scores[1].quality == pytest.approx(1 / 3)


def test_the_score_is_computed_from_the_labels_and_a_disqualifier_is_zero() -> None:
    config = ContextConstructionConfig(context_quality_threshold=0.5)
    toc = ContextScore(**labels(3, prose=False, disqualifier="table_of_contents"))
    assert toc.quality == 0.0 and toc.outcome(config) == "table_of_contents"
    unnamed = ContextScore(**labels(3, prose=False))
    assert unnamed.outcome(config) == NOT_PROSE
    # a disqualifier named beside prose=true is not one: prose decides
    assert ContextScore(**labels(3, disqualifier="index")).outcome(config) is None
    assert ContextScore(**labels(1)).outcome(config) == "below_quality_threshold"


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        json.dumps({"scores": [{"index": 1, **labels(2, prose=None)}]}),
        json.dumps({"scores": [{"index": 1, **labels(4)}]}),
        json.dumps({"scores": [{"index": 1, **labels(2, disqualifier="footer")}]}),
        json.dumps({"scores": [{"index": 1, **labels(2, coherent="2")}]}),
        json.dumps({"scores": [{"index": 1, **labels(2)}]}),
        json.dumps({"scores": [{"index": 1, **labels(2)}, {"index": 1, **labels(1)}]}),
    ],
    ids=[
        "prose",
        "missing-label",
        "out-of-range",
        "unknown-disqualifier",
        "string-number",
        "one-missing",
        "duplicate-index",
    ],
)
def test_parse_malformed_reply_keeps_raw(text: str) -> None:
    with pytest.raises(OutputParseError) as info:
        parse(text, 2)
    assert info.value.raw == text


def test_threshold_is_exclusive() -> None:
    # grades 3, 1, 1: 5 of 9
    mixed = ContextScore(**labels(1, self_contained=3))
    assert mixed.quality == pytest.approx(5 / 9)
    assert not mixed.passes(ContextConstructionConfig(context_quality_threshold=5 / 9))
    assert mixed.passes(ContextConstructionConfig(context_quality_threshold=0.5))


def test_score_contexts_batches_candidates_per_call() -> None:
    critic = Critic()
    chunks = [chunk("a.txt", i, f"text {i}" + (" junk" if i == 3 else "")) for i in range(10)]
    config = ContextConstructionConfig(contexts_per_critic_call=4)
    stats = StageStats(stage="critic")
    scores = run_sync(score_contexts(chunks, FunctionModel(critic), config, stats=stats))
    assert len(critic.prompts) == 3 and stats.requests == 3
    assert [s.quality for s in scores] == [1.0, 1.0, 1.0, 0.0] + [1.0] * 6


class Vectors:
    """A store with a vector for every chunk (grouping with one chunk a context reads no more)."""

    def get_embeddings(self, ids: list[str]) -> list[list[float]]:
        return [[1.0, float(i)] for i in range(len(ids))]


def docs_feed(
    chunks: list[Chunk],
    critic: Critic | None,
    config,
    wanted: int,
    seed: int = 0,
    rejects: Journal | None = None,
):
    """The seed search of a run (DocsFeed), one chunk a context, and the event it notifies."""
    config = config.model_copy(update={"max_context_length": 1})
    changed = asyncio.Event()
    feed = DocsFeed(
        chunks,
        Vectors(),
        config,
        random.Random(seed),
        critic=FunctionModel(critic) if critic is not None else None,
        prompts=None,
        wanted=wanted,
        rejects=rejects,
        notify=changed.set,
    )
    return feed, changed


async def seeds_found(feed: DocsFeed, changed: asyncio.Event, count: int) -> list[Chunk]:
    """Drive the feed until ``count`` contexts came or none more can; their seeds, in order."""
    while len(feed.candidates) < count and not feed.exhausted:
        changed.clear()
        feed.request(count - len(feed.candidates))
        feed.advance()
        if feed.pending:  # the first batch not grouped is still being scored: it will notify
            await changed.wait()
        if feed.error is not None:  # as the run does: a failed batch ends it, not a wait forever
            raise feed.error
    await feed.aclose()
    by_id = {c.id: c for c in feed.chunks}
    return [by_id[c.context.chunk_ids[0]] for c in feed.candidates if c.context is not None]


def test_seed_search_replaces_rejected_candidates(tmp_path) -> None:
    chunks = [chunk("a.txt", i, f"a {i}" + (" junk" if i % 2 else "")) for i in range(40)]
    chunks += [chunk("b.txt", i, f"b {i} junk") for i in range(8)]
    config = ContextConstructionConfig(max_retries=3, contexts_per_critic_call=8)
    with Journal(tmp_path / "rejects.jsonl") as rejects:
        feed, changed = docs_feed(chunks, Critic(), config, 4, seed=2, rejects=rejects)
        seeds = asyncio.run(seeds_found(feed, changed, 4))
    assert len(seeds) >= 4
    assert all("junk" not in s.text for s in seeds)
    assert all(c.context.quality > 0.5 for c in feed.candidates)
    outcomes = feed.seed_outcomes(None)
    assert set(outcomes) == {"ok", "below_quality_threshold"}
    # a batch still being scored when enough had come has no outcomes (it was cancelled)
    assert outcomes["ok"] == len(seeds) and sum(outcomes.values()) <= feed.sent_seeds
    # rejected seeds are released: they are not claimed, the accepted ones are
    rejected = {row["chunk_id"] for row in rejects.records.values()}
    assert len(rejected) == outcomes["below_quality_threshold"] > 0
    assert {s.id for s in seeds} <= feed.selector.used and not rejected & feed.selector.used


def test_seed_search_gives_up_at_the_top_up_limit() -> None:
    chunks = [chunk("a.txt", i, f"junk {i}") for i in range(20)]
    config = ContextConstructionConfig(max_retries=2, contexts_per_critic_call=3)
    feed, changed = docs_feed(chunks, Critic(), config, 3)
    assert asyncio.run(seeds_found(feed, changed, 3)) == []
    # each of the 3 wanted contexts tried 1 + max_retries times, and one batch more
    assert feed.sent_seeds == 3 * 3 + 3 and feed.budget_reached and feed.exhausted
    assert feed.seed_outcomes(None) == {"below_quality_threshold": 12}


def test_seed_search_model_failure_is_a_recorded_drop() -> None:
    chunks = [chunk("a.txt", i, f"text {i}") for i in range(3)]
    config = ContextConstructionConfig(max_retries=0, contexts_per_critic_call=4)
    feed, changed = docs_feed(chunks, Critic(fail_on="Passage"), config, 2)
    assert asyncio.run(seeds_found(feed, changed, 2)) == []
    # every seed sent (each chunk, then each again: the corpus is too small) is a recorded drop
    assert feed.sent_seeds == 6 and feed.seed_outcomes(None) == {"model_error:server": 6}


def test_seed_search_reports_an_exhausted_corpus() -> None:
    chunks = [chunk("a.txt", i, f"text {i}") for i in range(2)]
    feed, changed = docs_feed(chunks, None, ContextConstructionConfig(), 5)
    seeds = asyncio.run(seeds_found(feed, changed, 5))
    assert all(c.context.quality is None for c in feed.candidates)
    # each chunk once, then once more (reused: the corpus is too small), then no more
    assert len(seeds) == 4 and len({s.id for s in seeds}) == 2 and feed.selector.reused == 2
    assert feed.exhausted and feed.exhausted_reason.startswith("the corpus has no more chunks")


def test_the_prompt_wraps_the_passages_and_says_how_many() -> None:
    prompt = build_prompt(["alpha", "beta", "gamma"])
    assert 'Passages (3 in all):\n<passages>\n<passage index="1">\nalpha\n' in prompt
    assert '<passage index="3">\ngamma\n</passage>\n</passages>\n' in prompt


def test_an_unmatched_reply_says_what_it_was_and_keeps_the_reply_when_given_no_raw_text() -> None:
    reply = CriticReply.model_validate({"scores": [{"index": 1, **labels(3)}]})
    with pytest.raises(OutputParseError, match="critic scored passages") as info:
        check_reply(reply, 2)
    assert info.value.raw == reply.model_dump_json()


def test_scoring_uses_the_run_s_prompts_and_labels_its_requests_critic() -> None:
    critic = Critic()
    usage = Usage()
    llm = make_llm(critic, usage=usage)
    prompts = PromptSet({"context_critic": "Rate these $count, carefully:\n$chunks"})
    chunks = [chunk("a.txt", i, f"text {i}") for i in range(3)]
    config = ContextConstructionConfig(contexts_per_critic_call=2)
    scores = run_sync(score_contexts(chunks, llm, config, prompts=prompts))
    assert [s.quality for s in scores] == [1.0, 1.0, 1.0]
    assert sorted(p.split(",")[0] for p in critic.prompts) == ["Rate these 1", "Rate these 2"]
    assert list(usage.by_label()) == ["critic"] and usage.total.calls == 2


def test_a_critic_that_never_answers_for_a_passage_leaves_it_unscored_with_the_reason() -> None:
    llm = FunctionModel(lambda prompt, system: json.dumps({"scores": []}))
    chunks = [chunk("a.txt", i, f"text {i}") for i in range(2)]
    scores = run_sync(score_contexts(chunks, llm, ContextConstructionConfig()))
    assert len(scores) == 2
    for score in scores:
        assert isinstance(score, OutputParseError) and "critic scored passages" in str(score)


def test_a_seed_labelled_not_prose_is_dropped_at_the_critic_under_its_disqualifier(
    tmp_path,
) -> None:
    def critic(prompt: str, system: str | None) -> str:
        scores = []
        for index, text in PASSAGE.findall(prompt):
            entry = labels(3, prose=False, disqualifier="index") if "junk" in text else labels(3)
            scores.append({"index": int(index), **entry})
        return json.dumps({"scores": scores})

    chunks = [chunk("a.txt", i, f"a {i}" + (" junk" if i % 2 else "")) for i in range(12)]
    config = ContextConstructionConfig(max_retries=3, contexts_per_critic_call=4)
    with Journal(tmp_path / "rejects.jsonl") as rejects:
        feed, changed = docs_feed(chunks, critic, config, 3, rejects=rejects)
        seeds = asyncio.run(seeds_found(feed, changed, 3))
        rows = list(rejects.records.values())
    assert seeds and all("junk" not in s.text for s in seeds)
    assert {r["reason"] for r in rows} == {"index"} and {r["stage"] for r in rows} == {"critic"}
    _prose, critic_row, _group = feed.stage_stats(None)
    assert critic_row.dropped == {"index": len(rows)}
