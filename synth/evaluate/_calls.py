"""Models as judges: resolving what the user passed, caching replies and counting usage.

A judge model may be a :class:`~synth.llm.base.LLM`, a callable ``fn(prompt, system) -> str`` or a
``"provider:model"`` spec (made with :func:`synth.llm.make_llm`, imported only then). With
``cache=`` (any mutable mapping) the model is wrapped in the model layer's cache, whose key covers
the model's identity (never an API key), the system prompt, the prompt and the schema, so a rerun
answered from the cache makes no request.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from synth.dataset._public import public_metadata
from synth.errors import ConfigError, ModelError, SynthError
from synth.evaluate._jobs import describe
from synth.llm.base import LLM, Completion, FunctionModel, check_complete
from synth.llm.spec import full_model_spec, parse_model_spec
from synth.llm.spec import model_identity as recorded_identity
from synth.llm.wrapper import WrapperModel


def callable_name(fn: Callable[..., Any]) -> str:
    """Return ``module.qualname`` of a callable (its identity as a function model)."""
    qualname = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    module = getattr(fn, "__module__", None) or type(fn).__module__
    return f"{module}.{qualname}" if module and module != "__main__" else qualname


def resolve_model(model: Any) -> LLM:
    """Return ``model`` as an :class:`LLM`: as is, a callable wrapped, or a spec string made."""
    if isinstance(model, LLM):
        return model
    if isinstance(model, str):
        if not model.strip():
            raise ConfigError(f"a model spec is 'provider:model', got {model!r}")
        provider, name = parse_model_spec(full_model_spec(model))  # a bare name gets its provider
        from synth.llm.factory import make_llm  # the wrappers, imported when a spec is used

        return make_llm(provider, name)
    if callable(model):
        return FunctionModel(model, name=callable_name(model))
    raise ConfigError(
        f"a judge model is an LLM, a callable fn(prompt, system) or a 'provider:model' spec, "
        f"got {type(model).__name__}"
    )


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_without_nulls(v) for v in value]
    return value


def judge_identity(model: LLM) -> dict[str, Any]:
    """Return the model's identity as a report records it (provider, model, redacted options).

    Unset (``None``) settings are left out, so the identity reads back the same from every report
    format, TOML included (which has no null). The server's address is left out too: a report
    and a gate's baseline are shared (committed, attached to a pull request), and the address is
    often a private gateway's; a judge is named by its provider and model, as a dataset's models
    are when it is published (``synth/dataset/_public.py``).
    """
    identity: dict[str, Any] = _without_nulls(public_metadata(recorded_identity(model)))
    identity.setdefault("options", {})
    return identity


def with_cache(model: LLM, cache: MutableMapping[str, Any] | None) -> LLM:
    """Return ``model`` answering from ``cache`` first (the model layer's cache wrapper)."""
    if cache is None:
        return model
    from synth.llm.cache import CacheModel

    return CacheModel(model, cache)


def is_function_model(model: LLM) -> bool:
    """Whether the innermost model is a Python callable (whose errors can be anything)."""
    inner = model.unwrap() if isinstance(model, WrapperModel) else model
    return isinstance(inner, FunctionModel)


@dataclass
class JudgeUsage:
    """What one judge asked for: responses (cached ones included) and the tokens not cached."""

    responses: int = 0
    cached_responses: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    failures: int = 0

    def add(self, completion: Completion) -> None:
        self.responses += 1
        if completion.cached:
            self.cached_responses += 1
            return
        self.input_tokens += completion.input_tokens or 0
        self.output_tokens += completion.output_tokens or 0

    def as_dict(self) -> dict[str, int]:
        return {
            "responses": self.responses,
            "cached_responses": self.cached_responses,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "failures": self.failures,
        }


async def request(
    model: LLM,
    prompt: str,
    *,
    system: str,
    schema: type[BaseModel] | None,
    label: str,
) -> Completion:
    """Return one complete reply; a failing callable becomes a :class:`ModelError`."""
    try:
        completion = await model.arequest(prompt, system=system, schema=schema, label=label)
    except SynthError:
        raise
    except Exception as exc:
        if not is_function_model(model):
            raise
        # a user's callable may raise anything; to the judge that is a failed model call, its
        # message recorded in the report as describe() records a system's (credentials hidden)
        raise ModelError(f"the judge function raised {describe(exc)}") from exc
    return check_complete(completion)


__all__ = [
    "JudgeUsage",
    "callable_name",
    "is_function_model",
    "judge_identity",
    "request",
    "resolve_model",
    "with_cache",
]
