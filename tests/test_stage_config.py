"""The base of the stage configs: its error messages, the model and embedder checks, and how a
config is validated, copied and recorded."""

from __future__ import annotations

from typing import Any

import pytest

from synth import ContextConstructionConfig, FiltrationConfig
from synth.errors import ConfigError
from synth.llm.base import FunctionModel
from synth.stage.config import embedder_identity


def answer(prompt: str, system: str | None = None) -> str:
    return "an answer"


class Embedder:
    """The two methods an embedder named in a config needs."""

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [[1.0] for _ in texts]

    def identity(self) -> dict[str, Any]:
        return {"provider": "test", "model": "flat"}


def error_of(cls: type, **settings: Any) -> str:
    with pytest.raises(ConfigError) as info:
        cls(**settings)
    return str(info.value)


def test_every_bad_field_named_with_its_message_in_one_error() -> None:
    message = error_of(FiltrationConfig, max_quality_retries=-1, bogus=1)
    assert message == (
        "invalid FiltrationConfig: max_quality_retries: Input should be greater than or equal to 0; "
        "bogus: unknown setting (known: synthetic_input_quality_threshold, max_quality_retries, "
        "critic_model)"
    )


def test_an_error_inside_a_field_is_named_by_its_dotted_path() -> None:
    message = error_of(ContextConstructionConfig, chunk_size="big")
    assert message.startswith("invalid ContextConstructionConfig: chunk_size: Input should be")
    from synth import EvolutionConfig

    message = error_of(EvolutionConfig, evolutions={"reasoning": "heavy"})
    assert message == (
        "invalid EvolutionConfig: evolutions.reasoning: Input should be a valid number, unable to "
        "parse string as a number"
    )


def test_a_value_error_of_a_check_loses_pydantics_prefix() -> None:
    message = error_of(FiltrationConfig, critic_model=3)
    assert message == (
        "invalid FiltrationConfig: critic_model: a model is a 'provider:model' spec, an LLM or a "
        "callable fn(prompt, system) -> str; got int"
    )


def test_an_error_of_the_whole_object_has_no_field_name() -> None:
    with pytest.raises(ConfigError) as info:
        FiltrationConfig.model_validate([1])
    assert str(info.value) == (
        "invalid FiltrationConfig: Input should be a valid dictionary or instance of "
        "FiltrationConfig"
    )
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_a_construction_error_hides_pydantics_error() -> None:
    with pytest.raises(ConfigError) as info:
        FiltrationConfig(max_quality_retries=-1)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_a_model_spec_is_kept_as_given() -> None:
    assert FiltrationConfig(critic_model="openai:gpt-4o").critic_model == "openai:gpt-4o"
    assert FiltrationConfig(critic_model="ollama:llama3:8b").critic_model == "ollama:llama3:8b"
    assert FiltrationConfig().critic_model is None


def test_a_spec_without_a_model_refused_with_an_example() -> None:
    message = error_of(FiltrationConfig, critic_model="GPT-4o")
    assert message == (
        "invalid FiltrationConfig: critic_model: 'GPT-4o' is not a model spec: use "
        "'provider:model', e.g. 'openai:gpt-4o'"
    )
    message = error_of(FiltrationConfig, critic_model="openai:")
    assert message.endswith(
        "'openai:' is not a model spec: use 'provider:model', e.g. 'openai:openai'"
    )


def test_an_llm_or_a_callable_is_kept_and_recorded_by_its_identity() -> None:
    llm = FunctionModel(answer, name="scripted")
    config = FiltrationConfig(critic_model=llm)
    assert config.critic_model is llm
    assert config.model_dump()["critic_model"] is llm
    assert config.model_dump(mode="json")["critic_model"] == {
        "provider": "function",
        "model": "scripted",
    }
    plain = FiltrationConfig(critic_model=answer)
    assert plain.critic_model is answer
    assert plain.model_dump(mode="json")["critic_model"] == {
        "provider": "function",
        "model": "answer",
    }


def test_an_embedder_spec_or_object_is_kept_and_recorded_by_its_identity() -> None:
    assert ContextConstructionConfig(embedder="hash").embedder == "hash"
    assert ContextConstructionConfig().embedder is None
    embedder = Embedder()
    config = ContextConstructionConfig(embedder=embedder)
    assert config.embedder is embedder
    assert config.model_dump(mode="json")["embedder"] == {"provider": "test", "model": "flat"}
    assert ContextConstructionConfig(embedder="hash").model_dump(mode="json")["embedder"] == "hash"


def test_embedder_identity_of_none_a_spec_and_an_object() -> None:
    assert embedder_identity(None) is None
    assert embedder_identity("local:minilm") == "local:minilm"
    assert embedder_identity(Embedder()) == {"provider": "test", "model": "flat"}


class OnlyEmbed:
    def embed(self, texts: list[str]) -> list[list[float]]:
        return []


class OnlyIdentity:
    embed = "not a method"

    def identity(self) -> dict[str, Any]:
        return {}


@pytest.mark.parametrize(
    ("value", "name"), [(3, "int"), (OnlyEmbed(), "OnlyEmbed"), (OnlyIdentity(), "OnlyIdentity")]
)
def test_an_object_without_embed_and_identity_is_no_embedder(value: object, name: str) -> None:
    assert error_of(ContextConstructionConfig, embedder=value) == (
        "invalid ContextConstructionConfig: embedder: an embedder is a spec ('hash', "
        f"'openai:<model>', 'local:<model>') or an Embedder, got {name}"
    )


def test_model_validate_returns_a_config_itself_and_checks_a_mapping() -> None:
    config = FiltrationConfig(max_quality_retries=1)
    assert FiltrationConfig.model_validate(config) is config
    assert FiltrationConfig.model_validate({"max_quality_retries": 2}).max_quality_retries == 2
    with pytest.raises(ConfigError) as info:
        FiltrationConfig.model_validate({"bogus": 1})
    assert str(info.value) == (
        "invalid FiltrationConfig: bogus: unknown setting (known: "
        "synthetic_input_quality_threshold, max_quality_retries, critic_model)"
    )


def test_model_validate_with_options_goes_through_pydantic() -> None:
    config = FiltrationConfig.model_validate({"max_quality_retries": 2}, strict=True)
    assert config.max_quality_retries == 2


def test_replace_changes_one_field_keeps_the_rest_and_validates() -> None:
    config = FiltrationConfig(max_quality_retries=1, synthetic_input_quality_threshold=0.8)
    changed = config.replace(max_quality_retries=4)
    assert changed.max_quality_retries == 4 and changed.synthetic_input_quality_threshold == 0.8
    assert config.max_quality_retries == 1
    assert "max_quality_retries: Input should be greater than or equal to 0" in error_of_replace(
        config
    )


def error_of_replace(config: FiltrationConfig) -> str:
    with pytest.raises(ConfigError) as info:
        config.replace(max_quality_retries=-2)
    return str(info.value)


def test_model_validate_passes_pydantics_options_on() -> None:
    from types import SimpleNamespace

    settings = SimpleNamespace(
        synthetic_input_quality_threshold=0.7, max_quality_retries=2, critic_model=None
    )
    config = FiltrationConfig.model_validate(settings, from_attributes=True)
    assert (config.synthetic_input_quality_threshold, config.max_quality_retries) == (0.7, 2)
    with pytest.raises(TypeError, match="takes 2 positional arguments but 3 were given"):
        FiltrationConfig.model_validate([1], "extra")
