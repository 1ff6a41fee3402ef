"""The shared shape of the rewriting stages: per draft (style), or per context (filter, evolve)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import BaseModel

from synth.errors import ModelError, OutputParseError
from synth.generate.draft import Draft, by_context, drop_failed, live
from synth.llm.base import LLM
from synth.stage.call import ask_checked
from synth.stage.stats import StageStats


def nonblank_input(text: str, what: str, reply: BaseModel, raw: str = "") -> str:
    """``text`` stripped; OutputParseError ("the <what> input is blank") when nothing is left."""
    text = text.strip()
    if not text:
        raise OutputParseError(f"the {what} input is blank", raw=raw or reply.model_dump_json())
    return text


async def rewrite(
    draft: Draft,
    llm: LLM,
    prompt: str,
    schema: type[BaseModel],
    parse: Callable[[str], str],
    label: str,
    stats: StageStats | None,
    **record: Any,
) -> bool:
    """Ask for one rewrite of ``draft`` (the reply's text read by ``parse``) and revise it
    (``record`` kept in its history); False, with the draft dropped as ``model_error:<kind>``,
    when the model fails."""
    try:
        text = await ask_checked(llm, prompt, schema, parse, label, stats)
    except ModelError as exc:
        drop_failed(draft, label, exc)
        return False
    draft.revise(label, text, **record)
    return True


async def run_live(
    drafts: Sequence[Draft],
    step: Callable[[Draft], Awaitable[None]] | None,
    stats: StageStats | None,
) -> list[Draft]:
    """Run ``step`` (when given) on every live draft at once, then tally them; all drafts back."""
    todo = live(list(drafts))
    if step is not None:
        await asyncio.gather(*(step(d) for d in todo))
    if stats is not None:
        stats.tally(todo)
    return list(drafts)


async def run_live_batches(
    drafts: Sequence[Draft],
    size: int,
    step: Callable[[list[Draft]], Awaitable[None]],
    stats: StageStats | None,
) -> list[Draft]:
    """Run ``step`` on every batch of live drafts at once (at most ``size`` a batch, one context
    each: one request per batch), then tally them; all drafts back."""
    todo = live(list(drafts))
    await asyncio.gather(*(step(batch) for batch in by_context(todo, size)))
    if stats is not None:
        stats.tally(todo)
    return list(drafts)
