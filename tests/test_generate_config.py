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
