"""Pipeline files: the shipped ones, how flags override them, and how mistakes are reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from synth import PipelineConfig, Synthesizer, load_pipeline
from synth.errors import ConfigError
from synth.generate.config import Evolution

PIPELINES = Path(__file__).resolve().parent.parent / "pipelines"


def test_default_file_equals_the_built_in_defaults() -> None:
    loaded = load_pipeline(PIPELINES / "default.toml")
    defaults = PipelineConfig()
    skip = {"name", "description", "output"}
    assert loaded.model_dump(exclude=skip) == defaults.model_dump(exclude=skip)


def test_shipped_pipelines_say_what_they_promise() -> None:
    quick = load_pipeline(PIPELINES / "quick.toml")
    assert not quick.filter and not quick.context_critic and quick.evolution.num_evolutions == 0
    rag = load_pipeline(PIPELINES / "rag-qa.toml")
    weights = rag.evolution.evolutions
    assert weights[Evolution.MULTICONTEXT] > weights.get(Evolution.REASONING, 0)
    assert weights[Evolution.COMPARATIVE] > weights.get(Evolution.REASONING, 0)
    assert rag.contexts.max_context_length >= 3
    bot = load_pipeline(PIPELINES / "support-bot.toml")
    assert len(bot.styling.personas) >= 3 and bot.styling.scenario and bot.styling.input_format


def test_flags_override_only_what_they_set() -> None:
    config = load_pipeline(PIPELINES / "support-bot.toml")
    changed = config.override(num_goldens=7, seed=None, model="openai:gpt-4.1-mini")
    assert changed.num_goldens == 7 and changed.model == "openai:gpt-4.1-mini"
    assert changed.seed == config.seed and changed.styling == config.styling
    with pytest.raises(ConfigError, match="unknown pipeline setting"):
        config.override(temperature=0.1)


def test_a_synthesizer_from_a_pipeline_carries_every_setting() -> None:
    synth = Synthesizer.from_pipeline(PIPELINES / "quick.toml", seed=9)
    assert synth.seed == 9 and not synth.use_filter and not synth.use_context_critic
    assert synth.evolution_config.num_evolutions == 0


def test_prompt_overrides_are_checked_when_the_file_is_read(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text('[prompts]\nexpected = "Answer $inputs from $context."\n')
    assert load_pipeline(good).prompt_set().text("expected") == "Answer $inputs from $context."
    bad = tmp_path / "bad.toml"
    bad.write_text('[prompts]\nexpected = "Answer $questions."\n')
    with pytest.raises(ConfigError, match=r"bad\.toml: \[prompts\]"):
        load_pipeline(bad)


def test_missing_and_wrongly_typed_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_pipeline(tmp_path / "nope.toml")
    wrong = tmp_path / "wrong.toml"
    wrong.write_text("run = 3\n")
    with pytest.raises(ConfigError, match=r"\[run\] must be a table"):
        load_pipeline(wrong)
    typed = tmp_path / "typed.toml"
    typed.write_text('[run]\nmax_concurrent = "many"\n')
    with pytest.raises(ConfigError, match="max_concurrent"):
        load_pipeline(typed)


def test_every_pipeline_setting_reaches_the_synthesizer_or_is_the_file_s_own() -> None:
    """A setting added to PipelineConfig is either a Synthesizer argument or named as not one:
    from_pipeline can drop none silently."""
    import dataclasses

    from synth.run.config import NOT_SYNTHESIZER, SYNTHESIZER_NAMES

    arguments = {f.name for f in dataclasses.fields(Synthesizer) if f.init}
    for name in PipelineConfig.model_fields:
        if name not in NOT_SYNTHESIZER:
            assert SYNTHESIZER_NAMES.get(name, name) in arguments, name
    config = PipelineConfig(seed=7, max_concurrent=3, filter=False, prompts={})
    synth = Synthesizer.from_pipeline(config, seed=9)
    assert (synth.seed, synth.max_concurrent, synth.use_filter) == (9, 3, False)
    assert synth.filtration_config is config.filtration and synth.prompts == {}
