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
