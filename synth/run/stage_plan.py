"""What a run will cost before it runs: requests and prompt tokens per stage, for ``--plan``.

The counts are the minimum the stages make when every item passes the first time (no critic
replacement, no filter rewrite, no final-check rewrite); each rewrite round adds one filter request per context that has a
failing input, and each replaced seed adds a share of a critic request.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pydantic import BaseModel

from synth._tokens import count_tokens
from synth.contexts.config import ContextConstructionConfig
from synth.generate import evolve as evolve_stage
from synth.generate import expected as expected_stage
from synth.generate import filter as filter_stage
from synth.generate import final_check as final_check_stage
from synth.generate.config import EvolutionConfig, GenerationConfig, StylingConfig
from synth.stage.templates import PromptSet, default_prompts

#: tokens assumed for one generated input when estimating prompts that quote inputs
INPUT_TOKENS = 40


class StagePlan(BaseModel):
    """Expected requests and prompt tokens of one stage."""

    stage: str
    requests: int
    input_tokens: int


@dataclass(frozen=True)
class _Shape:
    """The sizes a plan is made from: contexts, their tokens, inputs per context."""

    n: int
    total_context: int
    per_context: int
    prompts: PromptSet
    total_seed: int  # what the critic sees: each context's seed chunk

    @property
    def goldens(self) -> int:
        return self.n * self.per_context

    def overhead(self, name: str) -> int:
        return count_tokens(self.prompts.text(name))

    def critic(self, per_call: int) -> StagePlan:
        calls = math.ceil(self.n / per_call)
        tokens = calls * self.overhead("context_critic") + self.total_seed
        return StagePlan(stage="critic", requests=calls, input_tokens=tokens)

    def inputs(self) -> StagePlan:
        tokens = self.n * self.overhead("inputs") + self.total_context
        return StagePlan(stage="inputs", requests=self.n, input_tokens=tokens)

    def batched(self, stage: str, max_batch: int, rounds: int = 1) -> StagePlan:
        """A stage asking for the inputs of a context in batches of ``max_batch``, ``rounds``
        times."""
        calls = self.n * math.ceil(self.per_context / max_batch) * rounds
        quoted = self.goldens * INPUT_TOKENS * rounds
        tokens = calls * self.overhead(stage) + self.total_context * rounds + quoted
        return StagePlan(stage=stage, requests=calls, input_tokens=tokens)

    def checks(self, max_batch: int) -> StagePlan:
        """The final check: per batch, one request with the inputs alone and one with the
        context too."""
        calls = self.n * math.ceil(self.per_context / max_batch)
        quoted = self.goldens * INPUT_TOKENS
        overhead = self.overhead("check_alone") + self.overhead("check_context")
        tokens = calls * overhead + self.total_context + 2 * quoted
        return StagePlan(stage="check", requests=2 * calls, input_tokens=tokens)

    def per_input(self, stage: str, rounds: int) -> StagePlan:
        """A stage asking once per input per round, the context quoted every time."""
        calls = self.goldens * rounds
        contexts = self.per_context * rounds * self.total_context
        tokens = calls * (self.overhead(stage) + INPUT_TOKENS) + contexts
        return StagePlan(stage=stage, requests=calls, input_tokens=tokens)


def plan_requests(
    context_tokens: list[int],
    *,
    contexts: ContextConstructionConfig | None = None,
    generation: GenerationConfig | None = None,
    evolution: EvolutionConfig | None = None,
    styling: StylingConfig | None = None,
    use_critic: bool = True,
    use_filter: bool = True,
    seed_tokens: list[int] | None = None,
    prompts: PromptSet | None = None,
) -> list[StagePlan]:
    """Per-stage plan for contexts of the given sizes.

    ``context_tokens``: tokens of each context's text (all its chunks); ``seed_tokens``: tokens of
    each seed chunk, which is all the critic sees (default: ``context_tokens``). Stages switched off
    (no critic, no filter, ``num_evolutions=0``, no styling rewrite, no expected output) are left out.
    """
    contexts = contexts or ContextConstructionConfig()
    generation = generation or GenerationConfig()
    evolution = evolution or EvolutionConfig()
    shape = _Shape(
        len(context_tokens),
        sum(context_tokens),
        generation.max_goldens_per_context,
        prompts or default_prompts(),
        sum(context_tokens if seed_tokens is None else seed_tokens),
    )
    plans = [shape.critic(contexts.contexts_per_critic_call)] if use_critic else []
    plans.append(shape.inputs())
    if use_filter:
        plans.append(shape.batched("filter", filter_stage.MAX_BATCH))
    if evolution.num_evolutions:
        rounds = evolution.num_evolutions
        plans.append(shape.batched("evolve", evolve_stage.MAX_BATCH, rounds))
    if styling is not None and styling.rewrites_inputs:
        plans.append(shape.per_input("style", 1))
    if use_filter:  # the final check goes with the filter
        plans.append(shape.checks(final_check_stage.MAX_BATCH))
    if generation.include_expected_output:
        plans.append(shape.batched("expected", expected_stage.MAX_BATCH))
    return plans


__all__ = ["INPUT_TOKENS", "StagePlan", "plan_requests"]
