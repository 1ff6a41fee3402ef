"""``--plan``: what a run will do before it calls a model. Contexts, requests, tokens and cost.

The contexts are the ones the run would start from if the critic accepted every seed; requests and
prompt tokens per stage come from :func:`synth.generate.plan.plan_requests`, reply tokens from a
rough per-stage allowance, and the cost from the model layer's price table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from synth._tokens import count_tokens
from synth.data import Chunk, Context
from synth.generate.config import EvolutionConfig, GenerationConfig, StylingConfig
from synth.generate.plan import plan_requests
from synth.generate.templates import PromptSet
from synth.llm.pricing import price_for

#: reply tokens assumed per item of each stage (a passage scored, an input written, an answer)
REPLY_TOKENS = {
    "critic": 45,
    "inputs": 35,
    "filter": 40,
    "evolve": 45,
    "style": 45,
    "expected": 120,
}
#: stages whose requests go to the critic model
CRITIC_STAGES = ("critic", "filter")


class PlannedStage(BaseModel):
    stage: str
    requests: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None = None


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
        }


def _items(stage: str, contexts: int, per_context: int, evolutions: int) -> int:
    if stage == "critic":
        return contexts
    if stage == "evolve":
        return contexts * per_context * evolutions
    return contexts * per_context


def make_plan(
    contexts: Sequence[Context],
    seeds: Sequence[Chunk],
    *,
    generation: GenerationConfig,
    evolution: EvolutionConfig,
    styling: StylingConfig,
    prompts: PromptSet,
    contexts_config: Any,
    use_critic: bool,
    use_filter: bool,
    generator: str,
    critic: str,
    num_goldens: int | None = None,
    files: int = 0,
    chunks: int = 0,
) -> Plan:
    """The plan for generating from ``contexts`` (with their ``seeds``) with these settings."""
    context_tokens = [sum(count_tokens(t) for t in c.texts) for c in contexts]
    planned = plan_requests(
        context_tokens,
        contexts=contexts_config,
        generation=generation,
        evolution=evolution,
        styling=styling,
        use_critic=use_critic,
        use_filter=use_filter,
        seed_tokens=[count_tokens(c.text) for c in seeds],
        prompts=prompts,
    )
    per_context = generation.max_goldens_per_context
    stages = []
    for step in planned:
        items = _items(step.stage, len(contexts), per_context, evolution.num_evolutions)
        output = items * REPLY_TOKENS.get(step.stage, 50)
        model = critic if step.stage in CRITIC_STAGES else generator
        price = price_for(model)
        cost = None
        if price is not None:
            cost = round((step.input_tokens * price.input + output * price.output) / 1e6, 6)
        stages.append(
            PlannedStage(
                stage=step.stage,
                requests=step.requests,
                input_tokens=step.input_tokens,
                output_tokens=output,
                cost_usd=cost,
            )
        )
    goldens = len(contexts) * per_context
    if num_goldens is not None:
        goldens = min(goldens, num_goldens)
    notes = [
        "counts assume every seed passes the critic and every input passes the filter at once; "
        "replacements and rewrites add requests",
        f"priced as {generator}"
        + (f" (critic {critic})" if critic != generator else "")
        + "; reply tokens are estimates",
    ]
    return Plan(
        files=files,
        chunks=chunks,
        contexts=len(contexts),
        goldens=goldens,
        num_goldens=num_goldens,
        stages=stages,
        models={"generator": generator, "critic": critic},
        notes=notes,
    )


__all__ = ["REPLY_TOKENS", "Plan", "PlannedStage", "make_plan"]
