"""``--plan``: what a run will do before it calls a model. Contexts, requests, tokens and cost.

The contexts are the ones the run would start from if the critic accepted every seed; requests and
prompt tokens per stage come from :func:`synth.run.stage_plan.plan_requests`, reply tokens from a
rough per-stage allowance, and the cost from the model layer's price table.

The cost counts the provider's prompt cache (see :func:`cached_prefix`): a stage whose prompt
starts as the inputs step's does (the system message, what every input must be, the context)
sends that prefix again for a context the inputs step has just asked about, and OpenAI and
Anthropic serve such a prefix, from 1,024 tokens on and in steps of 128, from their cache at a
fraction of the input price. The plan assumes every such request hits (the inputs step's request
writes the prefix); a provider routes a repeat to another machine now and then, so the real
saving is at most the planned one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from synth._tokens import count_tokens
from synth.contexts.config import ContextConstructionConfig
from synth.contexts.coverage import Coverage, file_targets, measure_coverage
from synth.contexts.critic import excerpt
from synth.contexts.select import SEED_PASSES, most_goldens
from synth.data import Chunk, Context
from synth.errors import ConfigError
from synth.llm.pricing import price_for, tokens_cost
from synth.run.ingest import files_read
from synth.run.languages import chunk_languages, language_notes, planned_languages
from synth.run.setup import RunConfigs, docs_feed
from synth.run.stage_plan import plan_requests
from synth.stage.templates import INPUT_RULES, SYSTEM, PromptSet

if TYPE_CHECKING:
    from synth.contexts.seed_feed import DocsFeed

#: reply tokens assumed per item of each stage (a passage scored, an input written, an answer)
REPLY_TOKENS = {
    "critic": 45,
    "inputs": 35,
    "filter": 40,
    "evolve": 45,
    "style": 45,
    "check": 40,
    "expected": 120,
}
#: stages whose requests go to the critic model
CRITIC_STAGES = ("critic", "filter", "check")
#: the final check's stage, whose requests with the context use :data:`CONTEXT_TEMPLATES`'s
CHECK_STAGE = "check"
#: a stage's template that carries the context, where it is not named after the stage
CONTEXT_TEMPLATES = {CHECK_STAGE: "check_context"}


#: the shortest prompt prefix a provider caches, and the step its cached part grows by
#: (OpenAI's and Anthropic's, for their current models)
CACHE_MIN_TOKENS = 1024
CACHE_STEP_TOKENS = 128
#: the step whose request is the first of a context: it writes the shared prefix to the cache
FIRST_STEP = "inputs"


class PlannedStage(BaseModel):
    stage: str
    requests: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None = None
    #: of ``input_tokens``, those assumed served from the provider's prompt cache
    cached_input_tokens: int = 0


class Plan(BaseModel):
    """What ``--plan`` prints (and ``--plan --json`` emits)."""

    files: int = 0
    chunks: int = 0
    contexts: int
    goldens: int
    num_goldens: int | None = None
    stages: list[PlannedStage] = Field(default_factory=list)
    models: dict[str, str] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    #: each file's share and target of the goldens (a plan for documents)
    coverage: Coverage | None = None
    #: chunks per language found, and the planned goldens per language they will be written in
    languages: dict[str, dict[str, int]] = Field(default_factory=dict)

    @property
    def requests(self) -> int:
        return sum(s.requests for s in self.stages)

    @property
    def cost_usd(self) -> float | None:
        costs = [s.cost_usd for s in self.stages]
        return None if any(c is None for c in costs) else round(sum(c or 0.0 for c in costs), 6)

    def to_json(self) -> dict[str, Any]:
        return {
            **self.model_dump(),
            "requests": self.requests,
            "cost_usd": self.cost_usd,
            "requests_per_golden": round(self.requests / self.goldens, 3) if self.goldens else None,
            "cached_input_share": self.cached_input_share,
        }

    @property
    def cached_input_share(self) -> float:
        """The share of the prompt tokens the plan assumes the provider's cache serves."""
        sent = sum(s.input_tokens for s in self.stages)
        return round(sum(s.cached_input_tokens for s in self.stages) / sent, 3) if sent else 0.0


def _items(stage: str, contexts: int, per_context: int, evolutions: int) -> int:
    if stage == "critic":
        return contexts
    if stage == "evolve":
        return contexts * per_context * evolutions
    return contexts * per_context


@dataclass(frozen=True)
class PlanInputs:
    """What a plan is made for: the contexts a run would start from, their seed chunks, the
    files and chunks ingested to find them, and how the goldens would cover the files."""

    contexts: Sequence[Context]
    seeds: Sequence[Chunk]
    files: int = 0
    chunks: int = 0
    coverage: Coverage | None = None
    chunk_languages: dict[str, int] | None = None


def first_contexts(feed: DocsFeed, chunks: Sequence[Chunk]) -> tuple[list[Context], list[Chunk]]:
    """The contexts ``feed`` would start a run from if the critic accepted every seed, and the
    seed chunk of each (a feed without a critic, see :func:`synth.run.setup.docs_feed`)."""
    count = feed.wanted
    while len(feed.candidates) < count and not feed.exhausted:
        feed.request(count - len(feed.candidates))
        feed.advance()
    contexts = [c.context for c in feed.candidates[:count] if c.context is not None]
    by_id: dict[str, Chunk] = {}
    for chunk in chunks:
        by_id.setdefault(chunk.id, chunk)
    seeds = [by_id[c.chunk_ids[0]] for c in contexts if c.chunk_ids[0] in by_id]
    return contexts, seeds


def planned_coverage(
    feed: DocsFeed,
    configs: RunConfigs,
    num_goldens: int | None,
    *,
    files: int,
    contexts: Sequence[Context] = (),
) -> Coverage:
    """Each file's share and target of the goldens ``feed`` starts a run of ``num_goldens``
    toward, out of ``files`` files read; ``contexts`` (a plan's :func:`first_contexts`) give the
    chunks and files the planned goldens would use (none: counted once the run has goldens)."""
    assert configs.contexts is not None
    per_context = configs.generation.max_goldens_per_context
    targets = file_targets(feed.selector, num_goldens=num_goldens, per_context=per_context)
    goldens = len(contexts) * per_context
    if num_goldens is not None:
        goldens = min(goldens, num_goldens)
    # one context per golden, in the run's order: the last context gives only what is still wanted
    per_golden = [c for c in contexts for _ in range(per_context)][:goldens]
    return measure_coverage(
        configs.contexts.coverage,
        targets,
        per_golden,
        files_ingested=files,
        chunks_stored=len(feed.chunks),
        delivered=False,
    )


def plan_docs(
    paths: list[str],
    configs: RunConfigs,
    ingest: Callable[[list[str], ContextConstructionConfig], tuple[Any, Any, list[Chunk]]],
    models: tuple[str, str],
    num_goldens: int | None = None,
) -> Plan:
    """The plan for a run from the documents under ``paths``: they are ingested (``ingest`` is
    :func:`~synth.run.ingest.ingest_for_run` with the run's embedder and store) and the contexts
    chosen, with no model called; ``models`` are the generator and the critic, for prices."""
    assert configs.contexts is not None
    store, pending, chunks = ingest(paths, configs.contexts)
    try:
        pending.finish()
        feed = docs_feed(chunks, store, configs, num_goldens, None)
        chosen, seeds = first_contexts(feed, chunks)
    finally:
        pending.close()
        store.close()
    files = files_read(pending.report)
    coverage = planned_coverage(feed, configs, num_goldens, files=files, contexts=chosen)
    found = chunk_languages(chunks)
    inputs = PlanInputs(chosen, seeds, files, len(chunks), coverage, found)
    generator, critic = models
    plan = make_plan(inputs, configs, generator=generator, critic=critic, num_goldens=num_goldens)
    per_context = configs.generation.max_goldens_per_context
    most = most_goldens(chunks, per_context)
    if num_goldens is not None and num_goldens > most:
        plan.notes.insert(
            0,
            f"{num_goldens} goldens asked: these documents can give at most {most} (each of "
            f"their {len({c.id for c in chunks})} chunks the seed of at most {SEED_PASSES} "
            f"contexts of {per_context} goldens); the run would deliver at most that many",
        )
    return plan


def make_plan(
    inputs: PlanInputs,
    configs: RunConfigs,
    *,
    generator: str,
    critic: str,
    num_goldens: int | None = None,
) -> Plan:
    """The plan for generating from ``inputs`` with ``configs`` (each model named
    ``provider:model``, for its prices)."""
    planned = plan_requests(
        [sum(count_tokens(t) for t in c.texts) for c in inputs.contexts],
        contexts=configs.contexts,
        generation=configs.generation,
        evolution=configs.evolution,
        styling=configs.styling,
        use_critic=configs.context_critic,
        use_filter=configs.filtration is not None,
        # the critic is shown each seed's head only (synth.contexts.critic.excerpt)
        seed_tokens=[count_tokens(excerpt(c.text)) for c in inputs.seeds],
        prompts=configs.prompts,
    )
    per_context = configs.generation.max_goldens_per_context
    evolutions = configs.evolution.num_evolutions
    prompts = configs.prompts
    context_tokens = [sum(count_tokens(t) for t in c.texts) for c in inputs.contexts]
    stages = []
    for step in planned:
        items = _items(step.stage, len(inputs.contexts), per_context, evolutions)
        model = critic if step.stage in CRITIC_STAGES else generator
        prefix = cached_prefix(prompts, step.stage, context_tokens)
        # the check's requests are half with the context, half with the inputs alone
        with_context = step.requests // 2 if step.stage == CHECK_STAGE else step.requests
        cached = min(step.input_tokens, with_context * prefix)
        stages.append(
            _planned_stage(step.stage, step.requests, step.input_tokens, items, model, cached)
        )
    goldens = len(inputs.contexts) * per_context
    if num_goldens is not None:
        goldens = min(goldens, num_goldens)
    languages = planned_languages(inputs, configs.generation.language, per_context, goldens)
    notes = [
        "counts assume every seed passes the critic and every input passes the filter at once; "
        "replacements and rewrites add requests",
        f"priced as {generator}"
        + (f" (critic {critic})" if critic != generator else "")
        + "; reply tokens are estimates",
    ]
    share = sum(s.cached_input_tokens for s in stages) / max(1, sum(s.input_tokens for s in stages))
    notes.append(
        f"{share:.0%} of the prompt tokens assumed served from the provider's prompt cache: the "
        "steps after a context's inputs request that start with the same system message and "
        f"context repeat that prefix (cached from {CACHE_MIN_TOKENS:,} tokens, in steps of "
        f"{CACHE_STEP_TOKENS}), and every repeat is assumed to hit; a provider that sends one to "
        "another machine misses, so the saving is at most this"
    )
    return Plan(
        files=inputs.files,
        chunks=inputs.chunks,
        contexts=len(inputs.contexts),
        goldens=goldens,
        num_goldens=num_goldens,
        stages=stages,
        models={"generator": generator, "critic": critic},
        notes=notes + coverage_notes(inputs.coverage, num_goldens) + language_notes(languages),
        coverage=inputs.coverage,
        languages=languages,
    )


#: files named at most in a note on shortfalls (the JSON lists them all)
SHOWN_SHORT = 5


def coverage_notes(coverage: Coverage | None, num_goldens: int | None) -> list[str]:
    """The plan's note on coverage: the files whose chunks cannot give their share, and what
    becomes of the goldens they cannot give."""
    if coverage is None or not coverage.short:
        return []
    short = coverage.short
    named = ", ".join(
        f"{f.source} {f.target} of {f.share} ({f.chunks} chunk{'s' if f.chunks != 1 else ''})"
        for f in short[:SHOWN_SHORT]
    )
    more = f" and {len(short) - SHOWN_SHORT} more" if len(short) > SHOWN_SHORT else ""
    lacking = sum(f.shortfall for f in short)
    goes = (
        "the run makes that many fewer"
        if num_goldens is None
        else "other files give them where they can"
    )
    files = f"{len(short)} file{'s' if len(short) != 1 else ''}"
    return [
        f"{files} cannot give the {coverage.rule} share of goldens: {named}{more}; "
        f"{lacking} golden{'s' if lacking != 1 else ''} short: {goes} "
        "(--plan --json lists every file's target)"
    ]


def cached_prefix(prompts: PromptSet, stage: str, context_tokens: Sequence[int]) -> int:
    """The prompt tokens a request of ``stage`` is assumed to read from the provider's cache, on
    average over the contexts: its system message and what its template opens with up to and with
    ``$context`` (the packaged ones: what every input must be, the orientation, the context), when
    that opening is the :data:`FIRST_STEP`'s (a step that starts otherwise, or the first step
    itself, reads nothing), rounded down to the cache's step, and nothing under its minimum. The
    final check's prefix is its request with the context's (``check_context``)."""
    if stage == FIRST_STEP or not context_tokens:
        return 0
    try:
        mine, first = prompts.text(CONTEXT_TEMPLATES.get(stage, stage)), prompts.text(FIRST_STEP)
    except ConfigError:  # a stage with no template of its own name (the critic's)
        return 0
    head = first.partition("$context")[0]
    if "$context" not in mine or mine.partition("$context")[0] != head:
        return 0
    head = head.replace(f"${INPUT_RULES}", prompts.text(INPUT_RULES).strip())
    fixed = count_tokens(SYSTEM) + count_tokens(head) + 8  # message framing and the tags
    cached = [
        (fixed + n) // CACHE_STEP_TOKENS * CACHE_STEP_TOKENS
        for n in context_tokens
        if fixed + n >= CACHE_MIN_TOKENS
    ]
    return sum(cached) // len(context_tokens)


def _planned_stage(
    stage: str, requests: int, input_tokens: int, items: int, model: str, cached: int = 0
) -> PlannedStage:
    """A stage's line of the plan: its replies estimated per item, its cost at ``model``'s price
    (None when the price is not known), ``cached`` of its prompt tokens at the cached price."""
    output = items * REPLY_TOKENS.get(stage, 50)
    price = price_for(model)
    cost = None
    if price is not None:
        cost = round(tokens_cost(price, input_tokens, output, cached), 6)
    return PlannedStage(
        stage=stage,
        requests=requests,
        input_tokens=input_tokens,
        output_tokens=output,
        cost_usd=cost,
        cached_input_tokens=cached,
    )


__all__ = [
    "CACHE_MIN_TOKENS",
    "CACHE_STEP_TOKENS",
    "REPLY_TOKENS",
    "cached_prefix",
    "chunk_languages",
    "language_notes",
    "planned_languages",
    "Plan",
    "PlanInputs",
    "PlannedStage",
    "SHOWN_SHORT",
    "coverage_notes",
    "first_contexts",
    "make_plan",
    "plan_docs",
    "planned_coverage",
]
