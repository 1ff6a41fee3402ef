"""The stage configs' validators and helpers, each checked exactly (what mutation testing found)."""

from __future__ import annotations

import pytest

from synth import Evolution, EvolutionConfig, GenerationConfig, StylingConfig
from synth.errors import ConfigError


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
