"""The base of every stage config: a frozen pydantic model whose validation errors are ConfigErrors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from synth.errors import ConfigError


def _describe(exc: ValidationError, config: type[BaseModel]) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = f"unknown setting (known: {', '.join(config.model_fields)})"
        parts.append(f"{where}: {message}" if where else message)
    return f"invalid {config.__name__}: " + "; ".join(parts)


class StageConfig(BaseModel):
    """A validated, immutable stage config; any invalid value raises :class:`ConfigError`.

    Change one with ``config.replace(field=value)``, which validates again (``model_copy`` would not).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

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
