"""The context critic: pure prompt/parse, batched scoring, replacement of rejected seeds."""

from __future__ import annotations

import json
import random
import re

import pytest

from synth.contexts.config import ContextConstructionConfig
from synth.contexts.critic import ContextScore, build_prompt, find_seeds, parse, score_contexts
from synth.contexts.select import SeedSelector
from synth.data import Chunk
from synth.errors import OutputParseError, ServerError
from synth.generate.stats import StageStats
from synth.llm.base import FunctionModel, run_sync

PASSAGE = re.compile(r'<passage index="(\d+)">\n(.*?)\n</passage>', re.DOTALL)


def chunk(source: str, i: int, text: str) -> Chunk:
    return Chunk(
        id=f"{source}#{i}", document_id=source, source=source, index=i, text=text, token_count=50
    )


def critic_reply(prompt: str) -> str:
    """Scores 0.1 for passages containing 'junk', 0.9 otherwise."""
    scores = []
    for index, text in PASSAGE.findall(prompt):
        value = 0.1 if "junk" in text else 0.9
        scores.append(
            {
                "index": int(index),
                "clarity": value,
                "depth": value,
                "structure": value,
                "relevance": value,
                "reason": "scripted",
            }
        )
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
    assert "clarity" in prompt and "relevance" in prompt
    assert PASSAGE.findall(prompt) == [("1", "alpha text"), ("2", "beta text")]


def test_parse_good_reply_out_of_order() -> None:
    text = json.dumps(
        {
            "scores": [
                {"index": 2, "clarity": 1, "depth": 0.5, "structure": 0.5, "relevance": 0.0},
                {
                    "index": 1,
                    "clarity": 0.2,
                    "depth": 0.4,
                    "structure": 0.6,
                    "relevance": 0.8,
                    "reason": "ok",
                },
            ]
        }
    )
    scores = parse(text, 2)
    assert scores[0].quality == pytest.approx(0.5) and scores[0].reason == "ok"
    assert scores[1].quality == pytest.approx(0.5)


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        json.dumps({"scores": [{"index": 1, "clarity": 0.5, "depth": 0.5, "structure": 0.5}]}),
        json.dumps(
            {
                "scores": [
                    {"index": 1, "clarity": 1.5, "depth": 0.5, "structure": 0.5, "relevance": 0.5}
                ]
            }
        ),
        json.dumps(
            {
                "scores": [
                    {"index": 1, "clarity": "0.5", "depth": 0.5, "structure": 0.5, "relevance": 0.5}
                ]
            }
        ),
        json.dumps(
            {
                "scores": [
                    {"index": 1, "clarity": 0.5, "depth": 0.5, "structure": 0.5, "relevance": 0.5}
                ]
            }
        ),
        json.dumps(
            {
                "scores": [
                    {"index": 1, "clarity": 0.5, "depth": 0.5, "structure": 0.5, "relevance": 0.5},
                    {"index": 1, "clarity": 0.5, "depth": 0.5, "structure": 0.5, "relevance": 0.5},
                ]
            }
        ),
    ],
    ids=[
        "prose",
        "missing-field",
        "out-of-range",
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
    config = ContextConstructionConfig(context_quality_threshold=0.5)
    at = ContextScore(clarity=0.5, depth=0.5, structure=0.5, relevance=0.5)
    above = ContextScore(clarity=0.6, depth=0.5, structure=0.5, relevance=0.5)
    assert not at.passes(config) and above.passes(config)


def test_score_contexts_batches_candidates_per_call() -> None:
    critic = Critic()
    chunks = [chunk("a.txt", i, f"text {i}" + (" junk" if i == 3 else "")) for i in range(10)]
    config = ContextConstructionConfig(contexts_per_critic_call=4)
    stats = StageStats(stage="critic")
    scores = run_sync(score_contexts(chunks, FunctionModel(critic), config, stats=stats))
    assert len(critic.prompts) == 3 and stats.requests == 3
    assert [round(s.quality, 2) for s in scores] == [0.9, 0.9, 0.9, 0.1] + [0.9] * 6


def test_find_seeds_replaces_rejected_candidates() -> None:
    chunks = [chunk("a.txt", i, f"a {i}" + (" junk" if i % 2 else "")) for i in range(10)]
    chunks += [chunk("b.txt", i, f"b {i} junk") for i in range(4)]
    selector = SeedSelector(chunks, ContextConstructionConfig(), random.Random(2), max_passes=1)
    critic = Critic()
    stats = StageStats(stage="critic")
    config = ContextConstructionConfig(max_retries=3, contexts_per_critic_call=8)
    found = run_sync(find_seeds(selector, FunctionModel(critic), config, 4, stats=stats))
    assert len(found.seeds) == 4
    assert all("junk" not in s.chunk.text and s.score.quality > 0.5 for s in found.seeds)
    assert found.unfilled == {}
    assert stats.items_in == stats.items_out + stats.dropped_total
    assert stats.dropped["below_quality_threshold"] == stats.notes["replaced"]
    # rejected seeds are released: they are not claimed, the accepted ones are
    assert selector.used == {s.chunk.id for s in found.seeds}


def test_find_seeds_gives_up_after_max_retries() -> None:
    chunks = [chunk("a.txt", i, f"junk {i}") for i in range(20)]
    selector = SeedSelector(chunks, ContextConstructionConfig(), random.Random(0), max_passes=1)
    config = ContextConstructionConfig(max_retries=2)
    stats = StageStats(stage="critic")
    found = run_sync(find_seeds(selector, FunctionModel(Critic()), config, 3, stats=stats))
    assert found.seeds == []
    assert found.unfilled == {"below_quality_threshold": 3}
    assert stats.items_in == 9 and stats.dropped["below_quality_threshold"] == 9


def test_find_seeds_model_failure_is_a_recorded_drop() -> None:
    chunks = [chunk("a.txt", i, f"text {i}") for i in range(3)]
    selector = SeedSelector(chunks, ContextConstructionConfig(), random.Random(0), max_passes=1)
    config = ContextConstructionConfig(max_retries=0)
    stats = StageStats(stage="critic")
    found = run_sync(
        find_seeds(selector, FunctionModel(Critic(fail_on="Passage")), config, 2, stats=stats)
    )
    assert found.seeds == []
    assert found.unfilled == {"model_error:server": 2}
    assert stats.dropped == {"model_error:server": 2}


def test_find_seeds_reports_an_exhausted_corpus() -> None:
    chunks = [chunk("a.txt", i, f"text {i}") for i in range(2)]
    selector = SeedSelector(chunks, ContextConstructionConfig(), random.Random(0), max_passes=1)
    found = run_sync(find_seeds(selector, None, ContextConstructionConfig(), 5))
    assert len(found.seeds) == 2 and all(s.score is None for s in found.seeds)
    assert found.unfilled == {"corpus_exhausted": 3}
