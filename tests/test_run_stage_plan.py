"""Each stage's requests and
prompt tokens, to the token, and which stages a plan holds."""

from __future__ import annotations

from synth._tokens import count_tokens
from synth.contexts.config import ContextConstructionConfig
from synth.generate.config import EvolutionConfig, GenerationConfig, StylingConfig
from synth.run.stage_plan import INPUT_TOKENS, StagePlan, plan_requests
from synth.stage.templates import PromptSet, default_prompts


def _overhead(name: str) -> int:
    return count_tokens(default_prompts().text(name))


def test_every_stage_counts_its_requests_and_tokens_exactly() -> None:
    # 5 contexts of 3 inputs each: 15 goldens; critic calls of 2 seeds; filter and expected batches
    # of 10 inputs (one batch a context); two evolution rounds, one request a context each; a style
    # rewrite per input
    plans = plan_requests(
        [10, 20, 30, 40, 50],
        contexts=ContextConstructionConfig(contexts_per_critic_call=2),
        generation=GenerationConfig(max_goldens_per_context=3),
        evolution=EvolutionConfig(num_evolutions=2),
        styling=StylingConfig(personas=["a nurse"]),
        seed_tokens=[1, 2, 3, 4, 5],
    )
    assert INPUT_TOKENS == 40
    quoted = 15 * 40
    assert plans == [
        StagePlan(stage="critic", requests=3, input_tokens=3 * _overhead("context_critic") + 15),
        StagePlan(stage="inputs", requests=5, input_tokens=5 * _overhead("inputs") + 150),
        StagePlan(stage="filter", requests=5, input_tokens=5 * _overhead("filter") + 150 + quoted),
        # two rounds, a context's three inputs in one request a round: the context sent twice
        StagePlan(
            stage="evolve",
            requests=10,
            input_tokens=10 * _overhead("evolve") + 2 * 150 + 2 * quoted,
        ),
        StagePlan(
            stage="style", requests=15, input_tokens=15 * (_overhead("style") + 40) + 3 * 1 * 150
        ),
        StagePlan(
            stage="check",
            requests=10,
            input_tokens=5 * (_overhead("check_alone") + _overhead("check_context"))
            + 150
            + 2 * quoted,
        ),
        StagePlan(
            stage="expected", requests=5, input_tokens=5 * _overhead("expected") + 150 + quoted
        ),
    ]


def test_batches_round_up_per_context_and_the_critic_sees_whole_contexts_by_default() -> None:
    plans = plan_requests(
        [7, 8, 9],
        generation=GenerationConfig(max_goldens_per_context=11),
        evolution=EvolutionConfig(num_evolutions=0),
    )
    by_stage = {p.stage: p for p in plans}
    assert list(by_stage) == ["critic", "inputs", "filter", "check", "expected"]
    # two seeds a critic request: three contexts are two requests
    assert by_stage["critic"] == StagePlan(
        stage="critic", requests=2, input_tokens=2 * _overhead("context_critic") + 24
    )
    # 11 inputs a context in batches of 10: two requests each
    assert by_stage["filter"].requests == 6
    assert by_stage["filter"].input_tokens == 6 * _overhead("filter") + 24 + 33 * 40
    assert by_stage["expected"].requests == 6
    assert by_stage["check"].requests == 12  # two a batch: the inputs alone, and with the context


def test_the_defaults_plan_critic_inputs_filter_one_evolution_the_check_and_expected() -> None:
    plans = plan_requests([100] * 9)
    assert [(p.stage, p.requests) for p in plans] == [
        ("critic", 5),
        ("inputs", 9),
        ("filter", 9),
        ("evolve", 9),
        ("check", 18),
        ("expected", 9),
    ]


def test_switched_off_stages_are_left_out() -> None:
    plans = plan_requests(
        [5, 5],
        generation=GenerationConfig(include_expected_output=False),
        evolution=EvolutionConfig(num_evolutions=0),
        styling=StylingConfig(),
        use_critic=False,
        use_filter=False,
    )
    assert [p.stage for p in plans] == ["inputs"]
    assert plans[0] == StagePlan(
        stage="inputs", requests=2, input_tokens=2 * _overhead("inputs") + 10
    )


def test_a_plan_of_no_contexts_asks_nothing() -> None:
    plans = plan_requests([], styling=StylingConfig(task="t"))
    assert [(p.stage, p.requests) for p in plans] == [
        ("critic", 0),
        ("inputs", 0),
        ("filter", 0),
        ("evolve", 0),
        ("style", 0),
        ("check", 0),
        ("expected", 0),
    ]
    assert all(p.input_tokens == 0 for p in plans)


def test_a_plan_counts_the_prompts_it_is_given() -> None:
    longer = default_prompts().text("inputs") + " Answer with care." * 40
    prompts = PromptSet({"inputs": longer})
    plans = plan_requests([10], prompts=prompts, use_critic=False)
    assert plans[0].input_tokens == count_tokens(longer) + 10
    assert count_tokens(longer) > _overhead("inputs")
