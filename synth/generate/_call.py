"""One structured model request for a stage, counted in the stage's stats."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel

from synth.generate.stats import StageStats
from synth.generate.templates import SYSTEM
from synth.llm.base import LLM

M = TypeVar("M", bound=BaseModel)


async def ask(llm: LLM, prompt: str, schema: type[M], label: str, stats: StageStats | None) -> M:
    """Send ``prompt`` with the generation system message and return the reply parsed into
    ``schema`` (ModelError on failure)."""
    if stats is not None:
        stats.requests += 1
    return await llm.acomplete(prompt, system=SYSTEM, schema=schema, label=label)
