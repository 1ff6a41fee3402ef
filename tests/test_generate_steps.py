"""Which generation steps a run's settings make, in order, and with what (what mutation testing
found unchecked): each step compared whole, as the dataclass it is."""

from __future__ import annotations

from typing import Any

from synth.generate import (
    distracting,
    evolve,
    expected,
    final_check,
    follow_ups,
    inputs,
    out_of_scope,
    style,
)
from synth.generate import filter as input_filter
from synth.generate.config import (
    EvolutionConfig,
    FiltrationConfig,
    GenerationConfig,
    StylingConfig,
)
from synth.generate.conversation import ConversationConfig, ConversationStep
from synth.generate.language import LanguageChecked
from synth.generate.question_types import HopsStep
from synth.generate.steps import StageSettings, build_steps
from synth.generate.turn_language import TurnsChecked
from synth.llm.base import FunctionModel
from synth.stage.templates import PromptSet

GENERATOR = FunctionModel(lambda prompt, system: "{}", name="generator")
CRITIC = FunctionModel(lambda prompt, system: "{}", name="critic")
PROMPTS = PromptSet()
STYLING = StylingConfig(personas=["a nurse"])
EMBEDDER: Any = object()
SEARCH: Any = object()


def settings(**changes: Any) -> StageSettings:
    values: dict[str, Any] = {
        "generator": GENERATOR,
        "critic": CRITIC,
        "generation": GenerationConfig(grounding_threshold=0.6),
        "filtration": FiltrationConfig(max_quality_retries=1),
        "evolution": EvolutionConfig(num_evolutions=2),
        "styling": STYLING,
        "prompts": PROMPTS,
        "seed": 7,
        "embedder": EMBEDDER,
        "search": SEARCH,
    }
    return StageSettings(**{**values, **changes})


def checked(step: Any) -> LanguageChecked:
    return LanguageChecked(step, GENERATOR, PROMPTS)


def test_a_plain_run_makes_every_step_in_order_the_writers_checked() -> None:
    s = settings()
    assert build_steps(s) == [
        checked(inputs.InputsStep(GENERATOR, s.generation, STYLING, PROMPTS)),
        checked(input_filter.FilterStep(CRITIC, s.filtration, PROMPTS)),
        checked(evolve.EvolveStep(GENERATOR, s.evolution, 7, PROMPTS)),
        checked(style.StyleStep(GENERATOR, STYLING, 7, PROMPTS)),
        checked(final_check.FinalCheckStep(CRITIC, PROMPTS, "simple")),
        expected.ExpectedStep(GENERATOR, STYLING, PROMPTS, 0.6, "simple"),
    ]
    assert s.active_stages() == ["inputs", "filter", "evolve", "style", "check", "expected"]


def test_no_filter_no_evolution_and_no_expected_output_leave_their_steps_out() -> None:
    s = settings(
        filtration=None,
        evolution=EvolutionConfig(num_evolutions=0),
        generation=GenerationConfig(include_expected_output=False),
    )
    assert s.active_stages() == ["inputs", "style"]
    assert settings(evolution=EvolutionConfig(num_evolutions=1)).active_stages()[2] == "evolve"


def test_a_distracting_run_with_a_search_writes_its_inputs_beside_an_aside() -> None:
    generation = GenerationConfig(question_types={"distracting": 1.0})
    step = build_steps(settings(generation=generation))[0]
    assert step == checked(
        distracting.DistractingInputsStep(GENERATOR, generation, STYLING, PROMPTS, SEARCH)
    )
    plain = build_steps(settings(generation=generation, search=None))[0]
    assert plain == checked(inputs.InputsStep(GENERATOR, generation, STYLING, PROMPTS))


def test_an_out_of_scope_run_checks_scope_instead_of_filtering_and_writes_the_refusal() -> None:
    generation = GenerationConfig(question_types={"out_of_scope": 1.0}, refusal_text="No idea.")
    steps = build_steps(settings(generation=generation))
    assert steps[1] == out_of_scope.ScopeStep(CRITIC, SEARCH, PROMPTS, "No idea.", EMBEDDER)
    # the final check too: an out-of-scope question must still stand on its own
    assert [step.name for step in steps] == ["inputs", "scope", "evolve", "style", "check"]
    assert steps[-1] == checked(final_check.FinalCheckStep(CRITIC, PROMPTS, "out_of_scope"))


def test_an_out_of_scope_run_without_answers_or_chunk_vectors_gives_none_of_them() -> None:
    generation = GenerationConfig(
        question_types={"out_of_scope": 1.0}, include_expected_output=False
    )
    steps = build_steps(settings(generation=generation, embeds_chunks=False, filtration=None))
    assert steps[1] == out_of_scope.ScopeStep(CRITIC, SEARCH, PROMPTS, None, None)


def test_a_multi_hop_run_checks_the_hops_after_the_answers() -> None:
    generation = GenerationConfig(question_types={"multi_hop": 1.0})
    steps = build_steps(settings(generation=generation))
    assert steps[-2:] == [
        expected.ExpectedStep(GENERATOR, STYLING, PROMPTS, 0.5, "multi_hop"),
        HopsStep(),
    ]
    unanswered = GenerationConfig(question_types={"multi_hop": 1.0}, include_expected_output=False)
    assert settings(generation=unanswered).active_stages()[-1] == "check"


def test_a_conversational_run_writes_checks_and_follows_up() -> None:
    conversation = ConversationConfig(max_turns=4)
    generation = GenerationConfig(max_goldens_per_context=3, grounding_threshold=0.7, language="de")
    s = settings(generation=generation, conversation=conversation)
    write = ConversationStep(GENERATOR, conversation, 3, STYLING, PROMPTS, 7, 0.7, "de")
    assert build_steps(s) == [
        TurnsChecked(write, GENERATOR, PROMPTS),
        follow_ups.FollowUpStep(CRITIC, PROMPTS),
    ]
    assert s.active_stages() == ["conversation", "follow_ups"]
