"""All stages in the default order: provenance, accounting, requests per golden.

The scripted world below knows each stage's prompt (vague questions, their rewrites, exact texts);
the tests that need only a model that answers in shape also run against the generic fake server
(real openai SDK over HTTP, replies from the JSON schema alone)."""

from __future__ import annotations

import asyncio
import json
import random
import re

import fake_openai
import pytest
from synth_replies import stage_of

from synth.contexts.config import ContextConstructionConfig
from synth.contexts.critic import ContextScore, ScoredSeed, score_contexts
from synth.contexts.group import group_contexts
from synth.contexts.select import SeedSelector
from synth.data import Chunk
from synth.generate import evolve, expected, final_check, inputs
from synth.generate import filter as input_filter
from synth.generate.config import EvolutionConfig, FiltrationConfig, GenerationConfig
from synth.generate.dedup import Deduplicator
from synth.llm import make_llm
from synth.llm.base import LLM, FunctionModel
from synth.run.stage_plan import plan_requests
from synth.stage.stats import StageStats
from synth.stage.templates import default_prompts
from synth.store import ChunkStore, HashEmbedder

TOPICS = [
    "photovoltaic cells inverter rooftop sunlight panels",
    "sourdough starter yeast flour oven crust",
    "castling gambit bishop endgame rook",
    "glacier moraine crevasse ice sheet melt",
]
WORDS = (
    "amber basalt cobalt dune ember fjord garnet harbor iris jasper kelp lagoon meadow nectar onyx "
    "prairie quartz reef sierra tundra umber valley willow xenon yarrow zephyr"
).split()
PASSAGE = re.compile(r'<passage index="(\d+)">\n')
# one numbered input (filter, expected) or item (rewrite: an <input> and its <feedback>)
ITEM = re.compile(r'<(input|item) index="(\d+)">\n(.*?)\n</\1>', re.DOTALL)
ONE_INPUT = re.compile(r"<input>\n(.*?)\n</input>", re.DOTALL)
FIRST_PASSAGE = re.compile(r'<passage index="1">\n(.*?)\n</passage>', re.DOTALL)
ONE_CHUNK = re.compile(r"<context>\n(.*?)\n</context>", re.DOTALL)


def items_of(prompt: str) -> list[tuple[str, str]]:
    """``(index, text)`` of every numbered input or item of a prompt."""
    return [(index, text) for _, index, text in ITEM.findall(prompt)]


class World:
    """Answers every stage's prompt; counts requests by kind."""

    def __init__(self, vague: bool = True) -> None:
        self.counts: dict[str, int] = {}
        self.vague = vague  # the first version of every second question scores low

    def __call__(self, prompt: str, system: str | None) -> str:
        kind, reply = self.answer(prompt)
        self.counts[kind] = self.counts.get(kind, 0) + 1
        return reply

    def answer(self, prompt: str) -> tuple[str, str]:
        if prompt.startswith("You are judging passages"):
            n = len(PASSAGE.findall(prompt))
            scores = [
                {
                    "index": i,
                    "reason": "scripted",
                    "prose": True,
                    "disqualifier": "none",
                    "self_contained": 3,
                    "informative": 2,
                    "coherent": 2,
                }
                for i in range(1, n + 1)
            ]
            return "critic", json.dumps({"scores": scores})
        if "You write questions" in prompt:
            where = re.search(r"file (\d) part (\d)", prompt)
            assert where is not None
            # distinct vocabulary per context and per question, so dedup keeps them all
            rng = random.Random(where.group(0))
            return "inputs", json.dumps(
                {"inputs": [f"{' '.join(rng.sample(WORDS, 4))} #{k}?" for k in (1, 2)]}
            )
        if "You review" in prompt:
            items = items_of(prompt)
            # the first version of every "#2" question is vague, the rewrite passes
            verdicts = []
            for i, t in items:
                if self.vague and t.endswith("#2?"):
                    verdicts.append(
                        {
                            "index": int(i),
                            "score": 0.3,
                            "feedback": "be specific",
                            "rewrite": t + " (specific)",
                        }
                    )
                else:
                    verdicts.append({"index": int(i), "score": 0.9, "feedback": ""})
            return "filter", json.dumps({"scores": verdicts})
        if "You improve" in prompt:
            items = items_of(prompt)
            return "rewrite", json.dumps(
                {
                    "inputs": [
                        {
                            "index": int(i),
                            "input": ONE_INPUT.findall(b)[0] + " (specific)",
                        }
                        for i, b in items
                    ]
                }
            )
        if "You see each question alone" in prompt:
            verdicts = [
                {"index": int(i), "reason": "", "standalone": True} for i, _ in items_of(prompt)
            ]
            return "check", json.dumps({"verdicts": verdicts})
        if "You check questions written" in prompt:
            verdicts = [{"index": int(i), "answerable": "fully"} for i, _ in items_of(prompt)]
            return "check", json.dumps({"verdicts": verdicts})
        if "You rewrite inputs" in prompt:
            evolved = [
                {"index": int(i), "input": ONE_INPUT.findall(b)[-1] + " Explain why."}
                for i, b in items_of(prompt)
            ]
            return "evolve", json.dumps({"evolved": evolved})
        if "You write the ideal answers" in prompt:
            items = items_of(prompt)
            # the answer is the context's first passage, quoted: grounded
            found = FIRST_PASSAGE.search(prompt) or ONE_CHUNK.search(prompt)
            passage = found.group(1)
            return "expected", json.dumps(
                {
                    "outputs": [
                        {
                            "index": int(i),
                            "expected_output": f"Answer: {passage}",
                            "quotes": [passage],
                        }
                        for i, q in items
                    ]
                }
            )
        raise AssertionError(f"unexpected prompt: {prompt[:80]}")


def corpus() -> list[Chunk]:
    chunks = []
    for f in range(3):
        for i in range(8):
            text = f"{TOPICS[(i + f) % 4]} file {f} part {i}"
            chunks.append(
                Chunk(
                    id=f"f{f}#{i}",
                    document_id=f"f{f}",
                    source=f"f{f}.txt",
                    index=i,
                    text=text,
                    token_count=30,
                )
            )
    return chunks


async def pipeline(
    store: ChunkStore, model: World | LLM, seed: int, grounding_threshold: float = 0.5
) -> tuple[list, dict[str, StageStats]]:
    llm = model if isinstance(model, LLM) else FunctionModel(model)
    config = ContextConstructionConfig(max_context_length=2, context_similarity_threshold=0.3)
    stats = {
        name: StageStats(stage=name)
        for name in ["critic", "group", "inputs", "filter", "evolve", "check", "expected"]
    }
    selector = SeedSelector(corpus(), config, random.Random(seed))
    seeds = selector.take(selector.default_count)
    scores = await score_contexts(seeds, llm, config, stats=stats["critic"])
    found = []
    for chunk, score in zip(seeds, scores, strict=True):  # no replacements: this world passes all
        stats["critic"].items_in += 1
        if isinstance(score, ContextScore) and score.passes(config):
            stats["critic"].items_out += 1
            found.append(ScoredSeed(chunk, score))
        else:
            stats["critic"].drop("rejected")
            selector.release(chunk.id)
    grouped = group_contexts(found, store, config, used=selector.used, stats=stats["group"])
    dedup = Deduplicator(store.embedder, 0.9, stats=StageStats(stage="dedup"))
    stats["dedup"] = dedup.stats

    async def one(context):  # type: ignore[no-untyped-def]
        drafts = await inputs.run(context, llm, GenerationConfig(), stats=stats["inputs"])
        drafts = await input_filter.run(drafts, llm, FiltrationConfig(), stats=stats["filter"])
        drafts = await evolve.run(drafts, llm, EvolutionConfig(), seed=seed, stats=stats["evolve"])
        drafts = await final_check.run(drafts, llm, stats=stats["check"])
        return await expected.run(
            drafts, llm, stats=stats["expected"], grounding_threshold=grounding_threshold
        )

    results = await asyncio.gather(*(one(c) for c in grouped.contexts))
    finished = [d for drafts in results for d in drafts if d.kept]
    for finished_draft in finished:
        dedup.offer(finished_draft)
    goldens = [
        d.to_golden(
            models={"generator": llm.identity()},
            prompt_version=default_prompts().version,
            seed=seed,
            run_id="r",
        )
        for d in dedup.kept
    ]
    return goldens, stats


class Generic:
    """The generic fake server as a pipeline's model; counts its chat requests by stage."""

    def __init__(self, server: fake_openai.FakeOpenAI) -> None:
        self.server = server
        self.llm = make_llm("openai:fake-model", base_url=server.url, api_key="sk-test-generic")

    @property
    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for request in self.server.requests_to("chat"):
            stage = stage_of(request.prompt).replace("check_alone", "check")
            stage = stage.replace("check_context", "check")
            counts[stage] = counts.get(stage, 0) + 1
        return counts


def run(store: ChunkStore, mode: str, seed: int, port: int = 0) -> tuple[list, dict[str, int]]:
    """The pipeline against the scripted world (no vague questions) or a fresh generic server;
    its goldens and the requests it made by stage."""
    if mode == "scripted":
        world = World(vague=False)
        goldens, _ = asyncio.run(pipeline(store, world, seed=seed))
        return goldens, world.counts
    with fake_openai.FakeOpenAI(mode="generic", port=port) as server:
        generic = Generic(server)
        with generic.llm:
            # the generic server never reads the prompt, so it cannot quote the context: its
            # answers are kept ungrounded (their grounding still recorded)
            goldens, _ = asyncio.run(pipeline(store, generic.llm, seed=seed, grounding_threshold=0))
        return goldens, generic.counts


@pytest.fixture()
def store(tmp_path) -> ChunkStore:  # type: ignore[no-untyped-def]
    chunk_store = ChunkStore(HashEmbedder(256), path=tmp_path / "chroma", collection="flow_test")
    chunk_store.add(corpus())
    return chunk_store


def test_default_flow_accounting_and_request_budget(store: ChunkStore) -> None:
    # scripted only: the counts and texts follow the world's vague questions and their rewrites
    world = World()
    goldens, stats = asyncio.run(pipeline(store, world, seed=3))
    assert len(goldens) == 18  # 3 files x 3 contexts x 2 inputs, nothing lost
    requests = sum(world.counts.values())
    assert requests == sum(s.requests for s in stats.values())
    # critic 5 (2 seeds a call) + inputs 9 + filter 9 + rescoring 9 (the rewrite comes with the
    # score) + evolve 9 (a context's inputs together) + the final check 18 (alone, with the
    # context) + expected 9
    assert world.counts == {
        "critic": 5,
        "inputs": 9,
        "filter": 18,
        "evolve": 9,
        "check": 18,
        "expected": 9,
    }
    assert stats["filter"].notes["rewritten"] == 9
    assert requests / len(goldens) < 3.8  # 68 / 18
    for name in ("critic", "group", "filter", "evolve", "check", "expected", "dedup"):
        s = stats[name]
        assert s.items_in == s.items_out + s.dropped_total, name
    for golden in goldens:
        meta = golden.metadata
        assert (
            golden.expected_output.startswith("Answer: ") and golden.context and golden.context_ids
        )
        assert meta["context_quality"] == pytest.approx(7 / 9) and meta["input_quality"] == 0.9
        assert len(meta["evolutions"]) == 1 and meta["seed"] == 3 and meta["prompt_version"]
    ids = [cid for g in goldens for cid in g.context_ids]
    assert len(set(ids)) * 2 == len(ids)  # each context's chunks appear in its two goldens only


@pytest.mark.parametrize("mode", ["scripted", "generic"])
def test_requests_per_golden_without_rewrites_match_the_plan(store: ChunkStore, mode: str) -> None:
    goldens, counts = run(store, mode, seed=3)
    assert len(goldens) == 18
    assert sum(counts.values()) / len(goldens) <= 4.0
    plan = plan_requests([20] * 9)
    assert {p.stage: p.requests for p in plan} == counts
    assert all(p.input_tokens > 0 for p in plan)


@pytest.mark.parametrize("mode", ["scripted", "generic"])
def test_same_seed_same_goldens(store: ChunkStore, mode: str) -> None:
    if mode == "scripted":
        first, _ = asyncio.run(pipeline(store, World(), seed=5))
        second, _ = asyncio.run(pipeline(store, World(), seed=5))
    else:
        # a fresh server each time (the generic server answers a request it has seen before
        # afresh, as a real model does), on the same port: the base URL is in the provenance
        with fake_openai.FakeOpenAI() as probe:
            port = probe.port
        first, _ = run(store, mode, seed=5, port=port)
        second, _ = run(store, mode, seed=5, port=port)
    assert first and [g.model_dump() for g in first] == [g.model_dump() for g in second]


def test_plan_leaves_out_switched_off_stages_and_adds_styling() -> None:
    from synth.generate.config import StylingConfig

    quick = plan_requests(
        [100] * 4, evolution=EvolutionConfig(num_evolutions=0), use_critic=False, use_filter=False
    )
    assert [(p.stage, p.requests) for p in quick] == [("inputs", 4), ("expected", 4)]
    styled = plan_requests(
        [100] * 4,
        generation=GenerationConfig(max_goldens_per_context=3),
        evolution=EvolutionConfig(num_evolutions=2),
        styling=StylingConfig(personas=["a nurse"]),
    )
    assert {p.stage: p.requests for p in styled} == {
        "critic": 2,
        "inputs": 4,
        "filter": 4,
        "evolve": 8,  # two rounds, a context's three inputs in each request
        "style": 12,
        "check": 8,  # two a context: the inputs alone, and with the context
        "expected": 4,
    }
