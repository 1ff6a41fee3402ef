"""The base of every stage config: a frozen pydantic model whose validation errors are ConfigErrors.

Also the two kinds of object a stage config may name besides plain values (DeepEval's
``critic_model`` and ``embedder``): :data:`ModelChoice` and :data:`EmbedderChoice`, with their
checks and the identities they are recorded by (never a key).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainSerializer,
    ValidationError,
)

from synth.errors import ConfigError
from synth.llm.base import LLM
from synth.llm.spec import model_identity


def _describe(exc: ValidationError, config: type[BaseModel]) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = f"unknown setting (known: {', '.join(config.model_fields)})"
        parts.append(f"{where}: {message}" if where else message)
    return f"invalid {config.__name__}: " + "; ".join(parts)


# ---- models and embedders named by a stage config ---------------------------------------------------


def embedder_identity(embedder: Any) -> Any:
    """How an embedder named in a config is recorded: a spec as given, else its identity."""
    if embedder is None or isinstance(embedder, str):
        return embedder
    return embedder.identity()


def _check_model(value: Any) -> Any:
    if value is None or isinstance(value, LLM):
        return value
    if isinstance(value, str):
        from synth.llm.spec import parse_model_spec

        provider, name = parse_model_spec(value)
        if not name:
            raise ValueError(
                f"{value!r} is not a model spec: use 'provider:model', e.g. 'openai:{provider}'"
            )
        return value
    if not callable(value):
        raise ValueError(
            "a model is a 'provider:model' spec, an LLM or a callable fn(prompt, system) -> str; "
            f"got {type(value).__name__}"
        )
    return value


def _check_embedder(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    if not (callable(getattr(value, "embed", None)) and callable(getattr(value, "identity", None))):
        raise ValueError(
            "an embedder is a spec ('hash', 'openai:<model>', 'local:<model>') or an Embedder, "
            f"got {type(value).__name__}"
        )
    return value


#: a model a stage may use instead of the Synthesizer's: a ``"provider:model"`` spec, an
#: :class:`~synth.LLM`, or a callable ``fn(prompt, system) -> str``; recorded by its identity
ModelChoice = Annotated[
    str | LLM | Callable[..., Any] | None,
    BeforeValidator(_check_model),
    PlainSerializer(model_identity, when_used="json"),
]
#: an embedder spec (``"hash"``, ``"openai:<model>"``...) or an Embedder; recorded by its identity
EmbedderChoice = Annotated[
    Any,
    AfterValidator(_check_embedder),
    PlainSerializer(embedder_identity, when_used="json"),
]


class StageConfig(BaseModel):
    """A validated, immutable stage config; any invalid value raises :class:`ConfigError`.

    Change one with ``config.replace(field=value)``, which validates again (``model_copy`` would not).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise ConfigError(_describe(exc, type(self))) from None

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:  # type: ignore[override]
        """Validate a mapping (e.g. a pipeline file's table); errors are ConfigErrors."""
        if isinstance(obj, cls):
            return obj
        if isinstance(obj, Mapping) and not args and not kwargs:
            return cls(**obj)
        try:
            return super().model_validate(obj, *args, **kwargs)
        except ValidationError as exc:
            raise ConfigError(_describe(exc, cls)) from None

    def replace(self, **changes: Any) -> Self:
        """Return a copy with ``changes`` applied and validated."""
        return type(self)(**{**self.model_dump(), **changes})
