"""The generation steps after grouping, in order, made from one run's settings.

:data:`STEPS` is the pipeline from a context to a finished draft: inputs, filter, evolve, style,
check (the final input, :mod:`synth.generate.final_check`), expected. A conversational run has its own two steps instead (:func:`conversation_steps`).
Each entry makes its step from the run's :class:`StageSettings`, or gives None when the
settings switch the step off; a new stage is one module with its step class and one entry here.
Deduplication, which compares drafts across candidates, follows in the run's stream.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from synth.generate import (
    distracting,
    evolve,
    expected,
    final_check,
    follow_ups,
    inputs,
    out_of_scope,
    question_types,
    style,
    tool_checks,
    tool_requests,
    tool_runs,
)
from synth.generate import filter as input_filter
from synth.generate.base import CorpusSearch, Step
from synth.generate.config import (
    EvolutionConfig,
    FiltrationConfig,
    GenerationConfig,
    StylingConfig,
)
from synth.generate.conversation import ConversationConfig, ConversationStep
from synth.generate.language import LanguageChecked
from synth.generate.turn_language import TurnsChecked
from synth.llm.base import LLM
from synth.llm.limiter import RateLimiter
from synth.stage.templates import PromptSet
from synth.store.embedder import Embedder
from synth.tools.execute import Executor
from synth.tools.tool import Tool


@dataclass(frozen=True)
class ToolSettings:
    """What an agent run's steps need: the tools by name and, when they can be run, the executor
    (its results recorded; None: not run)."""

    tools: Mapping[str, Tool]
    executor: Executor | None = None

    def as_key(self) -> dict[str, Any]:
        """The tools as a run's key holds them, and whether they are run."""
        specs = [tool.model_dump(mode="json") for tool in self.tools.values()]
        return {"tools": specs, "executed": self.executor is not None}


@dataclass
class StageSettings:
    """What the generation steps need: the models, each step's config, the prompts and the seed.

    ``filtration`` None switches the filter off; ``embedder`` embeds finished inputs for
    deduplication (None: no deduplication), and ``embeds_chunks`` says whether it also embedded
    the chunks (so an input's vector can rank them); ``limiter`` is the models' limiter, which
    remote embedding requests share; ``search`` looks things up in the run's chunks (the
    distracting and out-of-scope steps need it; the run sets it when it starts).
    """

    generator: LLM
    critic: LLM
    generation: GenerationConfig
    filtration: FiltrationConfig | None
    evolution: EvolutionConfig
    styling: StylingConfig
    prompts: PromptSet
    seed: int
    embedder: Embedder | None = None
    limiter: RateLimiter | None = None
    embeds_chunks: bool = True
    search: CorpusSearch | None = None
    #: a conversational run's config (None: single-turn goldens)
    conversation: ConversationConfig | None = None
    #: an agent run's tools (None: goldens about documents)
    tools: ToolSettings | None = None

    def active_stages(self) -> list[str]:
        """The names of the steps these settings run, in order."""
        return [step.name for step in build_steps(self)]


def _inputs(s: StageSettings) -> Step:
    if s.generation.question_type == question_types.DISTRACTING and s.search is not None:
        return distracting.DistractingInputsStep(
            s.generator, s.generation, s.styling, s.prompts, s.search
        )
    return inputs.InputsStep(s.generator, s.generation, s.styling, s.prompts)


def _filter(s: StageSettings) -> Step | None:
    if s.generation.question_type == question_types.OUT_OF_SCOPE:
        # in the filter's place (which would score a question the context does not answer low)
        refusal = s.generation.refusal_text if s.generation.include_expected_output else None
        embedder = s.embedder if s.embeds_chunks else None
        return out_of_scope.ScopeStep(s.critic, s.search, s.prompts, refusal, embedder)
    if s.filtration is None:
        return None
    return input_filter.FilterStep(s.critic, s.filtration, s.prompts)


def _evolve(s: StageSettings) -> Step | None:
    if s.evolution.num_evolutions <= 0:
        return None
    return evolve.EvolveStep(s.generator, s.evolution, s.seed, s.prompts)


def _check(s: StageSettings) -> Step | None:
    # the final check is the input filter's second half: switched off with it
    if s.filtration is None:
        return None
    return final_check.FinalCheckStep(s.critic, s.prompts, s.generation.question_type)


def _expected(s: StageSettings) -> Step | None:
    if not s.generation.include_expected_output:
        return None
    if s.generation.question_type == question_types.OUT_OF_SCOPE:
        return None  # the refusal is its expected output, set by the scope check
    threshold = s.generation.grounding_threshold
    kind = s.generation.question_type
    return expected.ExpectedStep(s.generator, s.styling, s.prompts, threshold, kind)


def _hops(s: StageSettings) -> Step | None:
    if s.generation.question_type != "multi_hop" or not s.generation.include_expected_output:
        return None
    return question_types.HopsStep()


#: the steps in pipeline order; the first makes the drafts, every later one takes the live ones
STEPS: tuple[Callable[[StageSettings], Step | None], ...] = (
    _inputs,
    _filter,
    _evolve,
    lambda s: style.StyleStep(s.generator, s.styling, s.seed, s.prompts),
    _check,
    _expected,
    _hops,
)


def conversation_steps(s: StageSettings, conversation: ConversationConfig) -> list[Step]:
    """A conversational run's steps: write and check conversations, then their follow-ups."""
    per_context = s.generation.max_goldens_per_context
    threshold = s.generation.grounding_threshold
    language = s.generation.language
    write = ConversationStep(
        s.generator, conversation, per_context, s.styling, s.prompts, s.seed, threshold, language
    )
    checked = TurnsChecked(write, s.generator, s.prompts)
    return [checked, follow_ups.FollowUpStep(s.critic, s.prompts)]


#: steps that may run ahead of the step before them (``(earlier, later)`` names), with the fields
#: the earlier step may change in a draft without making the later one's run made ahead stale:
#: an input the filter kept as it is gets the evolution asked for beside its scoring
#: (:mod:`synth.run.ahead`), and the inputs of a context the final check's plain code passes
#: all get their expected outputs asked for beside the check's requests (an earlier step that
#: foresees what it keeps, :class:`synth.generate.base.ForeseesKept`, has the later one run
#: ahead only when it foresees keeping every live draft: asked for every input, the expected
#: outputs redone for those the check rewrote cost a faulty model's run 37% more requests than a
#: clean one's, past the 35% the check may cost, docs/benchmarks.md); the later step must treat
#: each draft on its own.
RUNS_AHEAD: dict[tuple[str, str], frozenset[str]] = {
    (input_filter.LABEL, evolve.LABEL): frozenset({"input_quality", "feedback"}),
    (final_check.LABEL, expected.LABEL): frozenset(),
}

#: the steps that write inputs, each wrapped so the language of what it wrote is checked
WRITES_INPUTS = frozenset(
    {inputs.LABEL, input_filter.LABEL, evolve.LABEL, style.LABEL, final_check.LABEL}
)


def tool_steps(s: StageSettings, tools: ToolSettings) -> list[Step]:
    """An agent run's steps: write a request and its calls, check them, run them (when the tools
    can be run)."""
    steps: list[Step] = [
        tool_requests.ToolRequestStep(s.generator, tools.tools, s.prompts),
        tool_checks.ToolCheckStep(s.critic, tools.tools, s.prompts),
    ]
    if tools.executor is not None:
        answer = s.generator if s.generation.include_expected_output else None
        steps.append(tool_runs.ToolRunStep(tools.executor, answer, s.prompts))
    return steps


def build_steps(settings: StageSettings) -> list[Step]:
    """The steps ``settings`` switch on, in pipeline order; those that write inputs checked for
    their language (:class:`synth.generate.language.LanguageChecked`)."""
    if settings.tools is not None:
        return tool_steps(settings, settings.tools)
    if settings.conversation is not None:
        return conversation_steps(settings, settings.conversation)
    made = (make(settings) for make in STEPS)
    return [
        LanguageChecked(step, settings.generator, settings.prompts)
        if step.name in WRITES_INPUTS
        else step
        for step in made
        if step is not None
    ]


__all__ = [
    "RUNS_AHEAD",
    "STEPS",
    "WRITES_INPUTS",
    "StageSettings",
    "ToolSettings",
    "build_steps",
    "conversation_steps",
]
