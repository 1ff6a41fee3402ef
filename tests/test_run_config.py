"""Pipeline files read into a PipelineConfig (synth/run/config.py): where each key lands, each
mistake as the one line that names the file, the table and the key, flags over the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from synth.contexts.config import ContextConstructionConfig
from synth.errors import ConfigError
from synth.generate.config import StylingConfig
from synth.run.config import PipelineConfig, load_pipeline, pipeline_from_dict


def test_every_table_lands_in_its_field() -> None:
    config = pipeline_from_dict(
        {
            "name": "mine",
            "description": "for the tests",
            "models": {
                "model": "openai:m",
                "critic_model": "openai:c",
                "embedder": "hash",
                "base_url": "http://127.0.0.1:9/v1",
            },
            "run": {
                "goldens": 7,
                "seed": 3,
                "max_concurrent": 2,
                "rpm": 60.0,
                "tpm": 1000.0,
                "output": "out.jsonl",
            },
            "stages": {"context_critic": False, "filter": False},
            "contexts": {"max_context_length": 2},
            "styling": {"scenario": "a help desk"},
            "prompts": {"expected": "Answer $inputs from $context."},
        }
    )
    assert config == PipelineConfig(
        name="mine",
        description="for the tests",
        model="openai:m",
        critic_model="openai:c",
        embedder="hash",
        base_url="http://127.0.0.1:9/v1",
        num_goldens=7,
        seed=3,
        max_concurrent=2,
        rpm=60.0,
        tpm=1000.0,
        output="out.jsonl",
        context_critic=False,
        filter=False,
        contexts=ContextConstructionConfig(max_context_length=2),
        styling=StylingConfig(scenario="a help desk"),
        prompts={"expected": "Answer $inputs from $context."},
    )
    assert config.prompt_set().text("expected") == "Answer $inputs from $context."
    assert pipeline_from_dict({}) == PipelineConfig()


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"bogus": {}},
            "p.toml: unknown table or key 'bogus'; known: batch, contexts, description, "
            "evolution, filtration, generation, models, name, prompts, run, stages, styling",
        ),
        ({"styling": 5}, "p.toml: [styling] must be a table"),
        ({"prompts": 3}, "p.toml: [prompts] must be a table"),
        (
            {"run": {"gold": 1}},
            "p.toml: unknown key 'gold' in [run]; known: goldens, seed, max_concurrent, rpm, "
            "tpm, timeout, output, ray",
        ),
        (
            {"stages": {"critic": True}},
            "p.toml: unknown key 'critic' in [stages]; known: context_critic, filter",
        ),
        (
            {"run": {"goldens": 0}},
            "p.toml: [run] goldens: Input should be greater than or equal to 1",
        ),
        ({"models": {"model": 3}}, "p.toml: [models] model: Input should be a valid string"),
        ({"name": 3}, "p.toml: name: Input should be a valid string"),
        ({"prompts": {"expected": 3}}, "p.toml: prompts.expected: Input should be a valid string"),
        (
            {"contexts": {"max_context_length": 0}},
            "p.toml: [contexts] max_context_length: Input should be greater than or equal to 1",
        ),
        (
            {"generation": {"max_goldens_per_context": 0}},
            "p.toml: [generation] max_goldens_per_context: Input should be greater than or equal "
            "to 1",
        ),
        (
            {"prompts": {"nope": "x"}},
            "p.toml: [prompts]: unknown prompt 'nope'; known: check_alone, check_context, "
            "context_critic, conversation, "
            "evolution.comparative, evolution.concretizing, evolution.constrained, "
            "evolution.hypothetical, evolution.in_breadth, evolution.multicontext, "
            "evolution.reasoning, evolve, expected, filter, follow_ups, input_rules, inputs, "
            "inputs_from_goldens, inputs_from_scratch, inputs_out_of_scope, language, rewrite, "
            "scope, style, tool_answer, tool_check, tool_requests",
        ),
    ],
    ids=[
        "unknown-table",
        "stage-not-a-table",
        "prompts-not-a-table",
        "unknown-run-key",
        "unknown-stages-key",
        "run-key-as-the-file-spells-it",
        "models-key",
        "top-key",
        "a-prompt-that-is-not-text",
        "contexts-setting",
        "generation-setting",
        "unknown-prompt",
    ],
)
def test_a_mistake_is_one_line_naming_the_file_the_table_and_the_key(
    raw: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        pipeline_from_dict(raw, where="p.toml")
    assert str(info.value) == message


def test_without_a_file_name_a_mistake_is_named_by_pipeline() -> None:
    with pytest.raises(ConfigError) as info:
        pipeline_from_dict({"run": {"seed": "x"}})
    assert str(info.value).startswith("pipeline: [run] seed: Input should be a valid integer")


def test_a_file_that_cannot_be_read_says_why(tmp_path: Path) -> None:
    (tmp_path / "folder.toml").mkdir()
    (tmp_path / "latin.toml").write_bytes(b"\xff\xfe")
    (tmp_path / "broken.toml").write_text("[run\n")
    expected = {
        "missing.toml": f"pipeline file {tmp_path / 'missing.toml'} does not exist",
        "folder.toml": f"pipeline file {tmp_path / 'folder.toml'} cannot be read: [Errno 21] "
        f"Is a directory: '{tmp_path / 'folder.toml'}'",
        "latin.toml": f"pipeline file {tmp_path / 'latin.toml'} cannot be read: 'utf-8' codec "
        "can't decode byte 0xff in position 0: invalid start byte",
        "broken.toml": f"pipeline file {tmp_path / 'broken.toml'} is not valid TOML: Expected "
        "']' at the end of a table declaration (at line 1, column 5)",
    }
    for name, message in expected.items():
        with pytest.raises(ConfigError) as info:
            load_pipeline(tmp_path / name)
        assert str(info.value) == message


def test_a_file_is_read_as_utf8_and_its_mistakes_name_it(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text('name = "café"\n[run]\ngoldens = 3\n', encoding="utf-8")
    assert load_pipeline(good) == PipelineConfig(name="café", num_goldens=3)
    bad = tmp_path / "bad.toml"
    bad.write_text("[run]\ngoldens = 0\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_pipeline(str(bad))
    assert str(info.value) == f"{bad}: [run] goldens: Input should be greater than or equal to 1"


def test_flags_replace_the_file_s_values_and_are_checked_alike() -> None:
    config = PipelineConfig(seed=3, num_goldens=4, model="openai:m")
    changed = config.override(seed=5, model=None, filter=False)
    assert changed == PipelineConfig(seed=5, num_goldens=4, model="openai:m", filter=False)
    with pytest.raises(ConfigError) as info:
        config.override(temperature=0.1, colour="red", seed=None)
    assert str(info.value) == "unknown pipeline setting(s): colour, temperature"
    with pytest.raises(ConfigError) as info:
        config.override(max_concurrent=0)
    assert str(info.value) == "pipeline: max_concurrent: Input should be greater than or equal to 1"
    with pytest.raises(ConfigError) as info:
        config.override(contexts={"max_context_length": 0})
    assert str(info.value) == (
        "pipeline: [contexts] max_context_length: Input should be greater than or equal to 1"
    )


def test_the_synthesizer_options_are_every_setting_but_the_file_s_own() -> None:
    config = PipelineConfig(name="n", description="d", num_goldens=3, output="o.jsonl", seed=4)
    options = config.synthesizer_options()
    assert options == {
        "model": None,
        "critic_model": None,
        "embedder": None,
        "base_url": None,
        "seed": 4,
        "max_concurrent": None,
        "rpm": None,
        "tpm": None,
        "timeout": None,
        "ray": None,
        "use_context_critic": True,
        "use_filter": True,
        "context_construction_config": config.contexts,
        "generation_config": config.generation,
        "filtration_config": config.filtration,
        "evolution_config": config.evolution,
        "styling_config": config.styling,
        "prompts": {},
        "batch": None,
    }
    assert list(options) == [
        "model",
        "critic_model",
        "embedder",
        "base_url",
        "seed",
        "max_concurrent",
        "rpm",
        "tpm",
        "timeout",
        "ray",
        "use_context_critic",
        "use_filter",
        "context_construction_config",
        "generation_config",
        "filtration_config",
        "evolution_config",
        "styling_config",
        "prompts",
        "batch",
    ]
