"""Naming a model: the one ``provider:model`` parser, the providers it knows, and model identities.

Every part of synth that reads a model spec (``make_llm``, stage configs, judges on the command line,
prices) reads it with :func:`parse_model_spec`, and every part that records which model it used
records :func:`model_identity` (never an API key) or, for usage and prices, :func:`model_key`.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from typing import Any

from synth.errors import ConfigError
from synth.llm.base import LLM, FunctionModel

#: provider name -> "module:class" of its adapter (imported only when that provider is used)
PROVIDERS: dict[str, str] = {
    "openai": "synth.llm.openai:OpenAIModel",
    "anthropic": "synth.llm.anthropic:AnthropicModel",
    "gemini": "synth.llm.gemini:GeminiModel",
    "offline": "synth.llm.offline:OfflineModel",
}
#: providers with a model to use when a spec names none: ``"offline"`` is ``"offline:extractive"``
DEFAULT_MODELS: dict[str, str] = {"offline": "extractive"}


def parse_model_spec(spec: str) -> tuple[str, str | None]:
    """Split ``"provider:model"`` into its parts (the model may itself contain colons: ``llama3:8b``)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"a model spec is 'provider:model', got {spec!r}")
    provider, sep, model = spec.strip().partition(":")
    return provider.strip().lower(), (model.strip() or None) if sep else None


def known_provider(spec: str) -> str | None:
    """The provider ``spec`` names when it is one synth has an adapter for, else ``None``."""
    if not spec.strip():
        return None
    provider = parse_model_spec(spec)[0]
    return provider if provider in PROVIDERS else None


def provider_class(provider: str) -> type[LLM]:
    """The adapter class of ``provider``; an unknown name raises with a "did you mean"."""
    target = PROVIDERS.get(provider)
    if target is None:
        close = difflib.get_close_matches(provider, list(PROVIDERS), n=1, cutoff=0.75)
        hint = (
            f"; did you mean {close[0]!r}?"
            if close
            else "; a model spec is provider:model, e.g. 'openai:gpt-4.1-mini'"
        )
        raise ConfigError(
            f"unknown model provider {provider!r}{hint} (known: {', '.join(PROVIDERS)}, "
            f"or pass any callable fn(prompt, system) -> str)"
        )
    module, _, name = target.partition(":")
    cls: type[LLM] = getattr(importlib.import_module(module), name)
    return cls


def model_identity(model: LLM | Callable[..., Any] | str | None) -> Any:
    """How a model is recorded: a spec as given, else its identity (provider, model, redacted
    options; never a key), a plain callable as the function model it would become."""
    if model is None or isinstance(model, str):
        return model
    if isinstance(model, LLM):
        return model.identity()
    return FunctionModel(model).identity()


def model_key(llm: LLM) -> str:
    """``provider:model``, the name usage and prices are kept under."""
    return f"{llm.provider}:{llm.model}" if llm.provider else llm.model


__all__ = [
    "DEFAULT_MODELS",
    "PROVIDERS",
    "known_provider",
    "model_identity",
    "model_key",
    "parse_model_spec",
    "provider_class",
]
