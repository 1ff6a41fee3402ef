"""Styling: one rewrite per input so it reads like the configured users would write it.

A persona is chosen per input from ``StylingConfig.personas`` with a generator derived from the run's
seed and the draft's id; the styling and the persona are recorded on the draft. When the styling sets
nothing that changes inputs (no scenario, task, input format or personas), the stage only records the
styling and makes no request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from synth.data import Context
from synth.errors import ModelError, OutputParseError
from synth.generate._call import ask
from synth.generate._text import context_text, styling_block
from synth.generate.config import StylingConfig
from synth.generate.draft import Draft, live
from synth.generate.evolve import draft_rng
from synth.generate.stats import StageStats, model_error_reason
from synth.generate.templates import PromptSet, default_prompts
from synth.llm.base import LLM
from synth.llm.structured import parse_verdict

LABEL = "style"


class StyleReply(BaseModel):
    """The reply schema: the restyled input."""

    input: str


def choose_persona(styling: StylingConfig, seed: int | None, draft_id: str) -> str | None:
    """The persona for one draft (None when the styling has none)."""
    if not styling.personas:
        return None
    return draft_rng(seed, draft_id, LABEL).choice(styling.personas)


def styling_record(styling: StylingConfig) -> dict[str, Any] | None:
    """What a golden records of the styling (None when nothing is set)."""
    record = styling.model_dump(exclude={"personas"}, exclude_none=True)
    return record or None


def build_prompt(
    text: str,
    styling: StylingConfig,
    persona: str | None,
    context: Context | None,
    prompts: PromptSet | None = None,
) -> str:
    """The prompt restyling ``text`` (its meaning kept, its wording changed)."""
    return (prompts or default_prompts()).render(
        "style",
        input=text.strip(),
        styling=styling_block(styling.scenario, styling.task, styling.input_format, persona),
        context=context_text(context),
    )


def check_reply(reply: StyleReply, raw: str = "") -> str:
    """The restyled input; OutputParseError when blank."""
    text = reply.input.strip()
    if not text:
        raise OutputParseError("the restyled input is blank", raw=raw or reply.model_dump_json())
    return text


def parse(text: str) -> str:
    """Parse a reply into the restyled input; OutputParseError (with the raw text) otherwise."""
    return check_reply(parse_verdict(text, StyleReply), raw=text)


async def _style_one(
    draft: Draft,
    llm: LLM,
    styling: StylingConfig,
    seed: int | None,
    prompts: PromptSet | None,
    stats: StageStats | None,
) -> None:
    draft.styling = styling_record(styling)
    draft.persona = choose_persona(styling, seed, draft.id)
    if not styling.rewrites_inputs:
        return
    prompt = build_prompt(draft.input, styling, draft.persona, draft.context, prompts)
    try:
        styled = check_reply(await ask(llm, prompt, StyleReply, LABEL, stats))
    except ModelError as exc:
        draft.drop(LABEL, model_error_reason(exc))
        return
    draft.revise(LABEL, styled, persona=draft.persona)


async def run(
    drafts: Sequence[Draft],
    llm: LLM,
    styling: StylingConfig,
    *,
    seed: int | None,
    prompts: PromptSet | None = None,
    stats: StageStats | None = None,
) -> list[Draft]:
    """Restyle every live draft (one request each); returns all drafts, dropped ones marked."""
    todo = live(list(drafts))
    await asyncio.gather(*(_style_one(d, llm, styling, seed, prompts, stats) for d in todo))
    if stats is not None:
        stats.tally(todo)
    return list(drafts)


__all__ = [
    "StyleReply",
    "build_prompt",
    "check_reply",
    "choose_persona",
    "parse",
    "run",
    "styling_record",
]
