"""``--plan``'s arithmetic (synth/run/plan.py) on given contexts: each stage's items, reply tokens,
model and cost, the goldens promised, the notes, and the JSON ``--plan --json`` prints."""

from __future__ import annotations

import dataclasses
import random
from types import SimpleNamespace

import pytest

from synth._tokens import count_tokens
from synth.contexts.config import ContextConstructionConfig
from synth.contexts.seed_feed import DocsFeed
from synth.data import Chunk, Context
from synth.generate.config import EvolutionConfig, FiltrationConfig, GenerationConfig, StylingConfig
from synth.llm.pricing import price_for
from synth.run.plan import (
    REPLY_TOKENS,
    Plan,
    PlanInputs,
    PlannedStage,
    _planned_stage,
    first_contexts,
    make_plan,
    plan_docs,
)
from synth.run.setup import RunConfigs
from synth.run.stage_plan import plan_requests
from synth.stage.templates import default_prompts

GENERATOR = "openai:gpt-4o-mini"
CRITIC = "openai:gpt-4.1-nano"
TEXTS = [
    "Solar panels turn sunlight into electricity for the house.",
    "An inverter changes direct current into alternating current.",
    "Sourdough needs a starter of flour and water, fed every day.",
]


def configs(*, per_context: int = 3, evolutions: int = 2, critic: bool = True) -> RunConfigs:
    return RunConfigs(
        generation=GenerationConfig(max_goldens_per_context=per_context),
        contexts=ContextConstructionConfig(),
        filtration=FiltrationConfig(),
        evolution=EvolutionConfig(num_evolutions=evolutions),
        styling=StylingConfig(personas=["a homeowner"]),
        seed=3,
        context_critic=critic,
    )


def inputs() -> PlanInputs:
    chunks = [
        Chunk(id=f"c{i}", document_id="d", source="a.txt", text=t, index=i, token_count=9)
        for i, t in enumerate(TEXTS)
    ]
    contexts = [
        Context(id="x0", chunk_ids=["c0", "c1"], texts=TEXTS[:2], source_files=["a.txt"]),
        Context(id="x1", chunk_ids=["c2"], texts=TEXTS[2:], source_files=["a.txt"]),
    ]
    return PlanInputs(contexts, [chunks[0], chunks[2]], files=4, chunks=9)


def cost(model: str, input_tokens: int, output_tokens: int) -> float:
    price = price_for(model)
    assert price is not None
    return round((input_tokens * price.input + output_tokens * price.output) / 1e6, 6)


def test_each_stage_is_planned_with_its_items_and_its_models_price() -> None:
    run = configs()
    plan = make_plan(inputs(), run, generator=GENERATOR, critic=CRITIC, num_goldens=None)
    expected = plan_requests(
        [sum(count_tokens(t) for t in TEXTS[:2]), count_tokens(TEXTS[2])],
        contexts=run.contexts,
        generation=run.generation,
        evolution=run.evolution,
        styling=run.styling,
        use_critic=True,
        use_filter=True,
        seed_tokens=[count_tokens(TEXTS[0]), count_tokens(TEXTS[2])],
        prompts=run.prompts,
    )
    # 2 contexts, 3 inputs each, 2 evolutions of each, the final check of each
    items = {
        "critic": 2,
        "inputs": 6,
        "filter": 6,
        "evolve": 12,
        "style": 6,
        "check": 6,
        "expected": 6,
    }
    assert [s.stage for s in plan.stages] == [s.stage for s in expected] == list(items)
    for got, want in zip(plan.stages, expected, strict=True):
        model = CRITIC if got.stage in ("critic", "filter", "check") else GENERATOR
        output = items[got.stage] * REPLY_TOKENS[got.stage]
        assert got == PlannedStage(
            stage=want.stage,
            requests=want.requests,
            input_tokens=want.input_tokens,
            output_tokens=output,
            cost_usd=cost(model, want.input_tokens, output),
        )
    assert (plan.files, plan.chunks, plan.contexts, plan.goldens) == (4, 9, 2, 6)
    assert plan.num_goldens is None
    assert plan.models == {"generator": GENERATOR, "critic": CRITIC}
    assert plan.notes == [
        "counts assume every seed passes the critic and every input passes the filter at once; "
        "replacements and rewrites add requests",
        f"priced as {GENERATOR} (critic {CRITIC}); reply tokens are estimates",
        # contexts this short are under the cache's minimum
        "0% of the prompt tokens assumed served from the provider's prompt cache: the steps "
        "after a context's inputs request that start with the same system message and context "
        "repeat that prefix (cached from 1,024 tokens, in steps of 128), and every repeat is "
        "assumed to hit; a provider that sends one to another machine misses, so the saving is "
        "at most this",
    ]
    assert plan.requests == sum(s.requests for s in expected)
    assert plan.cost_usd == round(sum(s.cost_usd or 0.0 for s in plan.stages), 6)


def test_the_goldens_promised_are_capped_by_the_number_asked_for() -> None:
    plan = make_plan(inputs(), configs(), generator=GENERATOR, critic=GENERATOR, num_goldens=4)
    assert (plan.goldens, plan.num_goldens) == (4, 4)
    assert plan.notes[1] == f"priced as {GENERATOR}; reply tokens are estimates"
    more = make_plan(inputs(), configs(), generator=GENERATOR, critic=GENERATOR, num_goldens=50)
    assert more.goldens == 6


def test_a_plan_without_the_critic_or_evolutions_leaves_their_stages_out() -> None:
    plan = make_plan(
        inputs(),
        configs(per_context=1, evolutions=0, critic=False),
        generator=GENERATOR,
        critic=GENERATOR,
    )
    assert [s.stage for s in plan.stages] == ["inputs", "filter", "style", "check", "expected"]
    assert [s.output_tokens for s in plan.stages] == [2 * 35, 2 * 40, 2 * 45, 2 * 40, 2 * 120]
    unfiltered = dataclasses.replace(configs(critic=False), filtration=None)
    plan = make_plan(inputs(), unfiltered, generator=GENERATOR, critic=GENERATOR)
    assert [s.stage for s in plan.stages] == ["inputs", "evolve", "style", "expected"]


def test_a_model_without_a_price_leaves_the_cost_unknown() -> None:
    plan = make_plan(inputs(), configs(), generator="function:mine", critic=CRITIC)
    costs = {s.stage: s.cost_usd for s in plan.stages}
    assert costs["inputs"] is None and costs["critic"] is not None
    assert plan.cost_usd is None
    assert plan.to_json()["cost_usd"] is None


def test_the_json_of_a_plan_adds_its_totals() -> None:
    plan = Plan(
        contexts=2,
        goldens=4,
        stages=[
            PlannedStage(
                stage="inputs", requests=2, input_tokens=10, output_tokens=5, cost_usd=0.1
            ),
            PlannedStage(stage="style", requests=4, input_tokens=1, output_tokens=2, cost_usd=0.2),
        ],
    )
    data = plan.to_json()
    assert data == {
        **plan.model_dump(),
        "requests": 6,
        "cost_usd": pytest.approx(0.3),
        "requests_per_golden": 1.5,
        "cached_input_share": 0.0,
    }
    assert Plan(contexts=0, goldens=0).to_json()["requests_per_golden"] is None
    assert Plan(contexts=1, goldens=3, stages=plan.stages).to_json()["requests_per_golden"] == 2.0
    assert Plan(contexts=1, goldens=7, stages=plan.stages).to_json()["requests_per_golden"] == 0.857
    assert REPLY_TOKENS == {
        "critic": 45,
        "inputs": 35,
        "filter": 40,
        "evolve": 45,
        "style": 45,
        "check": 40,
        "expected": 120,
    }


class Vectors:
    """A store with a vector for every chunk (one chunk a context reads no more)."""

    def get_embeddings(self, ids: list[str]) -> list[list[float]]:
        return [[1.0, float(i)] for i in range(len(ids))]


def test_the_first_contexts_are_what_the_run_would_start_from_with_their_seeds() -> None:
    chunks = [
        Chunk(
            id=f"a#{i}", document_id="a", source="a.txt", text=f"text {i}", index=i, token_count=50
        )
        for i in range(6)
    ]
    config = ContextConstructionConfig(max_context_length=1)
    feed = DocsFeed(
        chunks, Vectors(), config, random.Random(1), critic=None, prompts=None, wanted=3
    )
    # a chunk listed twice is looked up as its first copy
    copy = chunks[0].model_copy(update={"text": "a later copy"})
    contexts, seeds = first_contexts(feed, [*chunks, copy])
    assert len(contexts) == 3 and len({c.id for c in contexts}) == 3
    assert [s.id for s in seeds] == [c.chunk_ids[0] for c in contexts]
    by_id = {c.id: c for c in chunks}
    assert seeds == [by_id[c.chunk_ids[0]] for c in contexts]
    assert contexts == [c.context for c in feed.candidates[:3]]


class Closing(Vectors):
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def close(self) -> None:
        self.log.append("store closed")


class Pending:
    """An ingest's background writer, done at once; its report lists three files, two read."""

    def __init__(self, log: list[str]) -> None:
        self.log = log
        statuses = ["ok", "skipped", "ok"]
        self.report = SimpleNamespace(files=[SimpleNamespace(status=s) for s in statuses])

    def finish(self) -> None:
        self.log.append("finished")

    def close(self) -> None:
        self.log.append("closed")


def test_a_plan_for_documents_ingests_them_and_starts_from_the_contexts_asked_for() -> None:
    log: list[str] = []
    chunks = [
        Chunk(
            id=f"a#{i}", document_id="a", source="a.txt", text=TEXTS[i % 3], index=i, token_count=9
        )
        for i in range(8)
    ]
    run = dataclasses.replace(
        configs(per_context=3), contexts=ContextConstructionConfig(max_context_length=1)
    )

    def ingest(paths: list[str], contexts: ContextConstructionConfig) -> tuple:
        log.append(f"ingest {paths} {contexts is run.contexts}")
        return Closing(log), Pending(log), chunks

    plan = plan_docs(["docs"], run, ingest, (GENERATOR, CRITIC), num_goldens=5)
    assert log == ["ingest ['docs'] True", "finished", "closed", "store closed"]
    # 5 goldens at 3 a context: 2 contexts, 6 inputs, 5 goldens promised
    assert (plan.files, plan.chunks, plan.contexts, plan.goldens) == (2, 8, 2, 5)
    assert plan.num_goldens == 5 and plan.models == {"generator": GENERATOR, "critic": CRITIC}
    assert [s.stage for s in plan.stages][:2] == ["critic", "inputs"]
    assert plan.stages[1].output_tokens == 6 * REPLY_TOKENS["inputs"]


def test_a_plan_follows_the_runs_own_critic_batches_and_prompts() -> None:
    longer = default_prompts().text("inputs") + " Answer with care." * 40
    run = dataclasses.replace(
        configs(),
        contexts=ContextConstructionConfig(contexts_per_critic_call=1),
        prompt_overrides={"inputs": longer},
    )
    plan = make_plan(inputs(), run, generator=GENERATOR, critic=CRITIC)
    default = make_plan(inputs(), configs(), generator=GENERATOR, critic=CRITIC)
    stages = {s.stage: s for s in plan.stages}
    before = {s.stage: s for s in default.stages}
    assert (stages["critic"].requests, before["critic"].requests) == (2, 1)
    # two inputs requests, each with the longer prompt
    grown = 2 * (count_tokens(longer) - count_tokens(default_prompts().text("inputs")))
    assert stages["inputs"].input_tokens == before["inputs"].input_tokens + grown


def test_a_stage_without_a_reply_allowance_is_given_50_tokens_an_item() -> None:
    line = _planned_stage("rerank", 2, 100, 3, GENERATOR)
    assert line == PlannedStage(
        stage="rerank",
        requests=2,
        input_tokens=100,
        output_tokens=150,
        cost_usd=cost(GENERATOR, 100, 150),
    )
    # prices are per million tokens
    price = price_for(GENERATOR)
    assert price is not None
    big = _planned_stage("inputs", 1, 10**9, 0, GENERATOR)
    assert big.cost_usd == round(1000 * price.input, 6) and big.output_tokens == 0


def test_the_critics_line_counts_the_seed_chunks_it_sees_not_the_whole_contexts() -> None:
    """The critic is shown each context's seed chunk alone: its planned prompt tokens are the
    seeds' (the other stages quote the whole context)."""
    whole = plan_requests([100, 100])
    seeded = plan_requests([100, 100], seed_tokens=[30, 40])
    by_stage = {s.stage: s for s in seeded}
    assert by_stage["critic"].input_tokens == whole[0].input_tokens - 200 + 70
    assert by_stage["critic"].requests == whole[0].requests
    assert [s for s in seeded if s.stage != "critic"] == whole[1:]
