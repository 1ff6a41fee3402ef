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


#: the provider a bare model name (no ``provider:``) belongs to, by how its name starts
BARE_NAME_PROVIDERS: dict[str, str] = {"claude-": "anthropic", "gemini-": "gemini"}
#: the provider of a bare model name that starts with none of those (DeepEval's default too)
DEFAULT_PROVIDER = "openai"


def full_model_spec(spec: str) -> str:
    """``"provider:model"`` for ``spec``; a bare model name gets its provider, anything unusable
    raises ConfigError naming it.

    ``"gpt-4.1-mini"`` becomes ``"openai:gpt-4.1-mini"``, ``"claude-..."`` Anthropic's and
    ``"gemini-..."`` Gemini's. A provider alone, an unknown provider, or a bare name that looks like
    a misspelt provider is refused here, when the model is named, not at its first call.
    """
    provider, model = parse_model_spec(spec)
    name = spec.strip()
    # "opneai" alone is a misspelt provider, not a model name
    misspelt = model is None and difflib.get_close_matches(provider, list(PROVIDERS), cutoff=0.75)
    if (model is not None or misspelt) and provider not in PROVIDERS:
        try:
            provider_class_name(provider)
        except ConfigError as exc:
            raise ConfigError(f"model {spec!r}: {exc}") from None
    if model is not None:
        return f"{provider}:{model}"
    if provider in DEFAULT_MODELS:
        return f"{provider}:{DEFAULT_MODELS[provider]}"
    if provider in PROVIDERS:
        raise ConfigError(
            f"model {spec!r} names a provider but no model: a model spec is 'provider:model', "
            f"e.g. '{provider}:<model>'"
        )
    if any(c.isspace() for c in name):
        raise ConfigError(f"model {spec!r} is not a model name: 'provider:model', no spaces")
    for prefix, owner in BARE_NAME_PROVIDERS.items():
        if name.lower().startswith(prefix):
            return f"{owner}:{name}"
    return f"{DEFAULT_PROVIDER}:{name}"


def known_provider(spec: str) -> str | None:
    """The provider ``spec`` names when it is one synth has an adapter for, else ``None``."""
    if not spec.strip():
        return None
    provider = parse_model_spec(spec)[0]
    return provider if provider in PROVIDERS else None


def provider_class_name(provider: str) -> str:
    """``"module:class"`` of ``provider``'s adapter; an unknown name raises with a "did you mean"."""
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
    return target


def provider_class(provider: str) -> type[LLM]:
    """The adapter class of ``provider``; an unknown name raises with a "did you mean"."""
    module, _, name = provider_class_name(provider).partition(":")
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
    "BARE_NAME_PROVIDERS",
    "DEFAULT_MODELS",
    "DEFAULT_PROVIDER",
    "PROVIDERS",
    "full_model_spec",
    "known_provider",
    "model_identity",
    "model_key",
    "parse_model_spec",
    "provider_class",
    "provider_class_name",
]
