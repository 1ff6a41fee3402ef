"""Stage configs: defaults with DeepEval's names, validation as ConfigError, records to goldens."""

from __future__ import annotations

import pytest

from synth import (
    ContextConstructionConfig,
    Evolution,
    EvolutionConfig,
    FiltrationConfig,
    GenerationConfig,
    StylingConfig,
)
from synth.data import Context
from synth.errors import ConfigError
from synth.generate.draft import Draft


def test_defaults() -> None:
    c = ContextConstructionConfig()
    assert (c.max_contexts_per_document, c.min_contexts_per_document) == (3, 1)
    assert (c.max_context_length, c.min_context_length) == (3, 1)
    assert (c.chunk_size, c.chunk_overlap, c.max_retries) == (1024, 0, 3)
    assert c.context_quality_threshold == 0.5 and c.context_similarity_threshold == 0.5
    assert c.allow_cross_file_contexts is False
    f = FiltrationConfig()
    assert f.synthetic_input_quality_threshold == 0.5 and f.max_quality_retries == 3
    e = EvolutionConfig()
    assert e.num_evolutions == 1 and set(e.evolutions) == set(Evolution)
    assert len(set(e.evolutions.values())) == 1
    g = GenerationConfig()
    assert g.max_goldens_per_context == 2 and g.include_expected_output and g.dedup_threshold == 0.9


def test_evolution_values() -> None:
    assert [e.value for e in Evolution] == [
        "reasoning",
        "multicontext",
        "concretizing",
        "constrained",
        "comparative",
        "hypothetical",
        "in_breadth",
    ]


@pytest.mark.parametrize(
    ("cls", "kwargs"),
    [
        (ContextConstructionConfig, {"context_quality_threshold": 1.5}),
        (ContextConstructionConfig, {"context_similarity_threshold": -0.1}),
        (
            ContextConstructionConfig,
            {"min_contexts_per_document": 4, "max_contexts_per_document": 3},
        ),
        (ContextConstructionConfig, {"min_context_length": 4}),
        (ContextConstructionConfig, {"chunk_overlap": 1024}),
        (ContextConstructionConfig, {"max_retries": -1}),
        (ContextConstructionConfig, {"bogus": 1}),
        (FiltrationConfig, {"synthetic_input_quality_threshold": -0.1}),
        (EvolutionConfig, {"evolutions": {"reasoning": -1.0}}),
        (EvolutionConfig, {"evolutions": {"reasoning": 0.0, "comparative": 0.0}}),
        (EvolutionConfig, {"evolutions": {}}),
        (EvolutionConfig, {"evolutions": {"telepathy": 1.0}}),
        (EvolutionConfig, {"num_evolutions": -1}),
        (GenerationConfig, {"dedup_threshold": 1.2}),
        (GenerationConfig, {"max_goldens_per_context": 0}),
        (StylingConfig, {"personas": ["ok", "  "]}),
    ],
)
def test_invalid_values_raise_config_error(cls: type, kwargs: dict) -> None:
    with pytest.raises(ConfigError):
        cls(**kwargs)
    with pytest.raises(ConfigError):
        cls.model_validate(kwargs)


def test_weights_by_name_and_replace_validates() -> None:
    config = EvolutionConfig.model_validate({"evolutions": {"comparative": 2, "reasoning": 1}})
    assert config.evolutions == {Evolution.REASONING: 1.0, Evolution.COMPARATIVE: 2.0}
    assert config.replace(num_evolutions=2).num_evolutions == 2
    with pytest.raises(ConfigError):
        config.replace(num_evolutions=-3)


def test_scratch_needs_scenario_task_and_format() -> None:
    with pytest.raises(ConfigError, match="task, input_format"):
        StylingConfig(scenario="support desk").require_scratch()
    StylingConfig(scenario="s", task="t", input_format="f").require_scratch()


def test_draft_to_golden_carries_provenance() -> None:
    context = Context(
        id="ctx_1",
        chunk_ids=["a#0", "a#1"],
        texts=["alpha", "beta"],
        source_files=["a.txt", "a.txt"],
        quality=0.8,
    )
    draft = Draft(
        id="d_1",
        input="What is alpha?",
        context=context,
        input_quality=0.7,
        evolutions=["reasoning"],
        styling={"scenario": "s"},
        persona="a nurse",
        expected_output="Alpha is first.",
    )
    golden = draft.to_golden(
        models={"generator": {"provider": "function", "model": "m"}},
        prompt_version="abc",
        seed=3,
        run_id="r1",
    )
    assert golden.input == "What is alpha?" and golden.expected_output == "Alpha is first."
    assert golden.context == ["alpha", "beta"] and golden.context_ids == ["a#0", "a#1"]
    assert golden.source_files == ["a.txt"]
    meta = golden.metadata
    assert meta["context_quality"] == 0.8 and meta["input_quality"] == 0.7
    assert meta["evolutions"] == ["reasoning"] and meta["persona"] == "a nurse"
    assert meta["styling"] == {"scenario": "s"} and meta["prompt_version"] == "abc"
    assert (
        meta["seed"] == 3 and meta["run_id"] == "r1" and meta["models"]["generator"]["model"] == "m"
    )


# ---- The stage configs' validators and helpers, each checked exactly.


def test_language_auto_in_any_case_and_a_code_normalized() -> None:
    assert GenerationConfig().language == "auto"
    assert GenerationConfig(language=" AUTO ").language == "auto"
    assert GenerationConfig(language=" DE ").language == "de"


def test_unknown_language_refused_word_for_word() -> None:
    with pytest.raises(ConfigError) as info:
        GenerationConfig(language="xx")
    assert str(info.value) == (
        "invalid GenerationConfig: language: unknown language 'xx': use 'auto' or an ISO 639-1 "
        "code such as 'en', 'de', 'ja'"
    )


def test_question_types_kept_as_given_and_unknown_refused() -> None:
    config = GenerationConfig(question_types={"simple": 0.5, "multi_hop": 0.5})
    assert config.question_types == {"simple": 0.5, "multi_hop": 0.5}
    with pytest.raises(ConfigError) as info:
        GenerationConfig(question_types={"bogus": 1.0})
    assert str(info.value) == (
        "invalid GenerationConfig: question_types: unknown question type 'bogus'; use one of "
        "simple, multi_hop, situational, double, distracting, out_of_scope"
    )


def test_which_configs_ask_for_and_record_question_types() -> None:
    plain = GenerationConfig()
    assert (plain.asks_types, plain.records_type, plain.question_type) == (False, False, "simple")
    part = GenerationConfig(question_types={"simple": 1.0, "multi_hop": 0.0})
    assert (part.asks_types, part.records_type, part.question_type) == (False, True, "simple")
    hops = GenerationConfig(question_types={"multi_hop": 1.0})
    assert (hops.asks_types, hops.records_type, hops.question_type) == (True, True, "multi_hop")
    mix = GenerationConfig(question_types={"simple": 0.5, "out_of_scope": 0.5})
    assert (mix.asks_types, mix.records_type, mix.question_type) == (True, True, None)


def test_with_gates_none_given_is_the_same_config() -> None:
    config = GenerationConfig(max_goldens_per_context=4)
    assert config.with_gates() is config
    assert config.with_gates(None, None) is config


def test_with_gates_sets_only_what_is_given_zero_included() -> None:
    config = GenerationConfig(max_goldens_per_context=4, language="de", max_easy_share=0.3)
    grounded = config.with_gates(grounding_threshold=0.0)
    assert grounded.grounding_threshold == 0.0 and grounded.max_easy_share == 0.3
    assert grounded.max_goldens_per_context == 4 and grounded.language == "de"
    easy = config.with_gates(max_easy_share=0.0)
    assert easy.max_easy_share == 0.0 and easy.grounding_threshold == 0.5
    both = config.with_gates(0.8, 0.1)
    assert (both.grounding_threshold, both.max_easy_share) == (0.8, 0.1)
    assert config.grounding_threshold == 0.5 and config.max_easy_share == 0.3


def test_with_gates_validates_the_values() -> None:
    with pytest.raises(ConfigError) as info:
        GenerationConfig().with_gates(grounding_threshold=2.0)
    assert str(info.value) == (
        "invalid GenerationConfig: grounding_threshold: Input should be less than or equal to 1"
    )


def test_with_language_none_is_the_same_config_and_a_code_is_set() -> None:
    config = GenerationConfig(max_goldens_per_context=5, grounding_threshold=0.7)
    assert config.with_language(None) is config
    german = config.with_language(" DE ")
    assert german.language == "de" and german.max_goldens_per_context == 5
    assert german.grounding_threshold == 0.7 and config.language == "auto"
    assert german.with_language("auto").language == "auto"
    with pytest.raises(ConfigError, match="unknown language 'xx'"):
        config.with_language("xx")


def test_default_evolutions_weigh_all_seven_as_one() -> None:
    weights = EvolutionConfig().evolutions
    assert list(weights) == list(Evolution)
    assert all(w == 1.0 and type(w) is float for w in weights.values())


def test_evolution_weights_in_enum_order_as_floats_zero_allowed() -> None:
    config = EvolutionConfig(evolutions={"in_breadth": 3, "comparative": 0, "reasoning": 1})
    assert list(config.evolutions.items()) == [
        (Evolution.REASONING, 1.0),
        (Evolution.COMPARATIVE, 0.0),
        (Evolution.IN_BREADTH, 3.0),
    ]
    assert all(type(w) is float for w in config.evolutions.values())


@pytest.mark.parametrize(
    ("evolutions", "message"),
    [
        ({}, "evolutions must name at least one evolution"),
        ({"reasoning": 1.0, "comparative": -0.5}, "the weight of comparative is negative"),
        ({"reasoning": 0.0}, "evolution weights must have a positive sum"),
        ({"reasoning": 0.0, "constrained": 0.0}, "evolution weights must have a positive sum"),
    ],
)
def test_bad_evolution_weights_refused_word_for_word(evolutions: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        EvolutionConfig(evolutions=evolutions)
    assert str(info.value) == f"invalid EvolutionConfig: evolutions: {message}"


def test_query_styles_and_lengths_kept_and_unknown_refused_word_for_word() -> None:
    config = StylingConfig(query_styles={"terse": 2.0}, query_lengths={"short": 1.0})
    assert config.query_styles == {"terse": 2.0} and config.query_lengths == {"short": 1.0}
    with pytest.raises(ConfigError) as info:
        StylingConfig(query_styles={"loud": 1.0})
    assert str(info.value) == (
        "invalid StylingConfig: query_styles: unknown query style 'loud'; use one of formal, "
        "casual, terse, misspelled"
    )
    with pytest.raises(ConfigError) as info:
        StylingConfig(query_lengths={"tiny": 1.0})
    assert str(info.value) == (
        "invalid StylingConfig: query_lengths: unknown query length 'tiny'; use one of short, "
        "medium, long"
    )


def test_personas_stripped_and_a_blank_one_refused() -> None:
    assert StylingConfig(personas=["  a nurse ", "a pilot"]).personas == ["a nurse", "a pilot"]
    with pytest.raises(ConfigError) as info:
        StylingConfig(personas=["a nurse", " \t"])
    assert str(info.value) == "invalid StylingConfig: personas: a persona must not be empty"


@pytest.mark.parametrize(
    "settings",
    [
        {"scenario": "support desk"},
        {"task": "answer"},
        {"input_format": "a question"},
        {"personas": ["a nurse"]},
        {"query_styles": {"terse": 1.0}},
        {"query_lengths": {"long": 1.0}},
        {"query_lengths": {"short": 0.0, "long": 1.0}},
    ],
)
def test_each_style_setting_alone_rewrites_inputs(settings: dict) -> None:
    assert StylingConfig(**settings).rewrites_inputs is True


def test_no_style_setting_or_only_the_output_format_rewrites_nothing() -> None:
    assert StylingConfig().rewrites_inputs is False
    assert StylingConfig(expected_output_format="one sentence").rewrites_inputs is False


def test_scratch_names_every_missing_setting_in_order() -> None:
    with pytest.raises(ConfigError) as info:
        StylingConfig().require_scratch()
    assert str(info.value) == (
        "generating from scratch needs StylingConfig scenario, task, input_format"
    )
    with pytest.raises(ConfigError) as info:
        StylingConfig(scenario="s", task="", input_format="f").require_scratch()
    assert str(info.value) == "generating from scratch needs StylingConfig task"
    assert StylingConfig(scenario="s", task="t", input_format="f").require_scratch() is None
