"""A model that wraps another model: the shape of every cross-cutting behaviour."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from synth.llm.base import LLM, Completion

W = TypeVar("W", bound=LLM)


class WrapperModel(LLM):
    """Passes every call to ``inner``; subclasses override :meth:`arequest` to add one behaviour."""

    def __init__(self, inner: LLM) -> None:
        if not isinstance(inner, LLM):
            from synth.errors import ConfigError

            raise ConfigError(f"a wrapper needs a model, got {type(inner).__name__}")
        self.inner = inner

    @property
    def provider(self) -> str:  # type: ignore[override]
        return self.inner.provider

    @property
    def model(self) -> str:  # type: ignore[override]
        return self.inner.model

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    async def arequest(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[BaseModel] | None = None,
        label: str | None = None,
    ) -> Completion:
        return await self.inner.arequest(prompt, system=system, schema=schema, label=label)

    def layer(self, kind: type[W]) -> W | None:
        """The first model of type ``kind`` in this chain (self included), or ``None``."""
        model: LLM = self
        while True:
            if isinstance(model, kind):
                return model
            if not isinstance(model, WrapperModel):
                return None
            model = model.inner

    def unwrap(self) -> LLM:
        """The innermost model (the provider adapter or function)."""
        model = self.inner
        while isinstance(model, WrapperModel):
            model = model.inner
        return model

    def close(self) -> None:
        self.inner.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"


__all__ = ["WrapperModel"]
