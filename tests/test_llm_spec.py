"""The one ``provider:model`` parser and the one way a model is recorded."""

from __future__ import annotations

import pytest

from synth import ConfigError, FunctionModel
from synth.evaluate._calls import resolve_model
from synth.llm.pricing import price_for
from synth.llm.spec import known_provider, model_identity, model_key


def test_known_provider_reads_the_spec_as_the_parser_does() -> None:
    assert known_provider(" OpenAI:gpt-4o") == "openai"
    assert known_provider("gemini") == "gemini"
    assert known_provider("mymodule:judge") is None
    assert known_provider("  ") is None


def test_a_model_is_recorded_by_spec_or_by_identity_never_by_object() -> None:
    def shout(prompt: str, system: str | None = None) -> str:
        return prompt.upper()

    assert model_identity(None) is None
    assert model_identity("openai:gpt-4o") == "openai:gpt-4o"
    assert model_identity(FunctionModel(shout, name="s")) == {"provider": "function", "model": "s"}
    assert model_identity(shout)["provider"] == "function"
    assert model_key(FunctionModel(shout, name="s")) == "function:s"


@pytest.mark.parametrize("spec", ["openai", "openai:", ":gpt-4o", "", "  "])
def test_a_judge_spec_without_provider_and_model_is_refused(spec: str) -> None:
    with pytest.raises(ConfigError, match="provider:model"):
        resolve_model(spec)


def test_prices_read_the_spec_with_the_same_parser() -> None:
    assert price_for("openai:gpt-4o") == price_for("gpt-4o") is not None
    assert price_for("") is None
    assert price_for("somebody:gpt-4o") is None
