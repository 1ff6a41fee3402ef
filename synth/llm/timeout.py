"""Every call has a deadline, so a hung connection cannot stall a run."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from synth.errors import ConfigError, ModelTimeoutError
from synth.llm.base import LLM, Completion
from synth.llm.wrapper import WrapperModel


class TimeoutModel(WrapperModel):
    """Raises :class:`ModelTimeoutError` when ``inner`` has not answered within ``timeout`` seconds."""

    def __init__(self, inner: LLM, timeout: float) -> None:
        super().__init__(inner)
        if not timeout or timeout <= 0:
            raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.timeout = float(timeout)

    async def arequest(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[BaseModel] | None = None,
        label: str | None = None,
    ) -> Completion:
        try:
            async with asyncio.timeout(
                self.timeout
            ):  # no extra task per request, as wait_for makes
                return await self.inner.arequest(prompt, system=system, schema=schema, label=label)
        except TimeoutError:
            raise ModelTimeoutError(
                f"{self.provider}:{self.model} did not answer within {self.timeout:g} s"
            ) from None

    def __repr__(self) -> str:
        return f"TimeoutModel({self.inner!r}, timeout={self.timeout:g})"


__all__ = ["TimeoutModel"]
