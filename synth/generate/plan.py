"""What a run will cost before it runs: requests and prompt tokens per stage, for ``--plan``.

The counts are the minimum the stages make when every item passes the first time (no critic
replacement, no filter rewrite); each rewrite round adds one filter request per context that has a
failing input, and each replaced seed adds a share of a critic request.
"""

from __future__ import annotations

import math

from pydantic import BaseModel

from synth._tokens import count_tokens
from synth.contexts.config import ContextConstructionConfig
from synth.generate import expected as expected_stage
from synth.generate import filter as filter_stage
from synth.generate.config import EvolutionConfig, GenerationConfig, StylingConfig
from synth.generate.templates import PromptSet, default_prompts

#: tokens assumed for one generated input when estimating prompts that quote inputs
INPUT_TOKENS = 40


class StagePlan(BaseModel):
    """Expected requests and prompt tokens of one stage."""

    stage: str
    requests: int
    input_tokens: int


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
    prompts = prompts or default_prompts()
    n = len(context_tokens)
    total_context = sum(context_tokens)
    per_context = generation.max_goldens_per_context
    goldens = n * per_context

    def overhead(name: str) -> int:
        return count_tokens(prompts.text(name))

    plans = []
    if use_critic:
        calls = math.ceil(n / contexts.contexts_per_critic_call)
        plans.append(
            StagePlan(
                stage="critic",
                requests=calls,
                input_tokens=calls * overhead("context_critic") + total_context,
            )
        )
    plans.append(
        StagePlan(
            stage="inputs",
            requests=n,
            input_tokens=n * overhead("inputs") + total_context,
        )
    )
    if use_filter:
        calls = n * math.ceil(per_context / filter_stage.MAX_BATCH)
        plans.append(
            StagePlan(
                stage="filter",
                requests=calls,
                input_tokens=calls * overhead("filter") + total_context + goldens * INPUT_TOKENS,
            )
        )
    if evolution.num_evolutions:
        calls = goldens * evolution.num_evolutions
        plans.append(
            StagePlan(
                stage="evolve",
                requests=calls,
                input_tokens=calls * (overhead("evolve") + INPUT_TOKENS)
                + per_context * evolution.num_evolutions * total_context,
            )
        )
    if styling is not None and styling.rewrites_inputs:
        plans.append(
            StagePlan(
                stage="style",
                requests=goldens,
                input_tokens=goldens * (overhead("style") + INPUT_TOKENS)
                + per_context * total_context,
            )
        )
    if generation.include_expected_output:
        calls = n * math.ceil(per_context / expected_stage.MAX_BATCH)
        plans.append(
            StagePlan(
                stage="expected",
                requests=calls,
                input_tokens=calls * overhead("expected") + total_context + goldens * INPUT_TOKENS,
            )
        )
    return plans


__all__ = ["INPUT_TOKENS", "StagePlan", "plan_requests"]
