"""Styling: one rewrite per input so it reads like the configured users would write it.

A persona is chosen per input from ``StylingConfig.personas`` with a generator derived from the run's
seed and the draft's id; the styling and the persona are recorded on the draft. When the styling sets
nothing that changes inputs (no scenario, task, input format or personas), the stage only records the
styling and makes no request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel

from synth.data import Context
from synth.generate._rewrite import nonblank_input, rewrite, run_live
from synth.generate.base import Source
from synth.generate.config import StylingConfig
from synth.generate.draft import Draft
from synth.generate.evolve import draft_rng
from synth.generate.language import draft_language, language_line
from synth.generate.query_style import draw, query_lines
from synth.llm.base import LLM
from synth.llm.structured import parse_verdict
from synth.stage.stats import StageStats
from synth.stage.templates import PromptSet, prompts_for
from synth.stage.text import context_text, orientation_text, styling_block, tagged

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
    """What a golden records of the styling (None when nothing is set); the persona, query style
    and length drawn for it are recorded apart."""
    exclude = {"personas", "query_styles", "query_lengths"}
    record = styling.model_dump(exclude=exclude, exclude_none=True)
    return record or None


def choose_query(
    styling: StylingConfig, seed: int | None, draft_id: str
) -> tuple[str | None, str | None]:
    """The query style and length drawn for one draft (None where the styling weighs none)."""
    rng = draft_rng(seed, draft_id, "query")
    return draw(styling.query_styles, rng), draw(styling.query_lengths, rng)


def build_prompt(
    text: str,
    styling: StylingConfig,
    persona: str | None,
    context: Context | None,
    prompts: PromptSet | None = None,
    query: tuple[str | None, str | None] = (None, None),
    language: str | None = None,
) -> str:
    """The prompt restyling ``text`` (its meaning kept, its wording changed) for ``persona`` and
    the ``query`` style and length drawn for it."""
    block = styling_block(styling.scenario, styling.task, styling.input_format, persona)
    lines = query_lines(*query)
    if lines:
        block = f"{block.rstrip()}\n{lines}\n" if block else f"\n{lines}\n"
    return prompts_for(prompts, language).render(
        "style",
        input=tagged("input", text),
        styling=block,
        context=context_text(context),
        orientation=orientation_text(context),
        language=language_line(language, "the rewritten input"),
    )


def check_reply(reply: StyleReply, raw: str = "") -> str:
    """The restyled input; OutputParseError when blank."""
    return nonblank_input(reply.input, "restyled", reply, raw)


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
    query = choose_query(styling, seed, draft.id)
    for key, drawn in zip(("query_style", "query_length"), query, strict=True):
        if drawn is not None:
            draft.metadata[key] = drawn
    if not styling.rewrites_inputs:
        return
    language = draft_language(draft)
    prompt = build_prompt(
        draft.input, styling, draft.persona, draft.context, prompts, query, language
    )
    await rewrite(draft, llm, prompt, StyleReply, parse, LABEL, stats, persona=draft.persona)


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

    async def step(draft: Draft) -> None:
        await _style_one(draft, llm, styling, seed, prompts, stats)

    return await run_live(drafts, step, stats)


@dataclass(frozen=True)
class StyleStep:
    """Styling as a step: each live draft restyled for its persona (the styling recorded)."""

    name: ClassVar[str] = LABEL
    llm: LLM
    styling: StylingConfig
    seed: int | None
    prompts: PromptSet

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        return await run(drafts, self.llm, self.styling, seed=self.seed, prompts=self.prompts)


__all__ = [
    "StyleReply",
    "StyleStep",
    "build_prompt",
    "check_reply",
    "choose_persona",
    "choose_query",
    "parse",
    "run",
    "styling_record",
]
