"""Expected outputs: grounded answers from the context, for all inputs of one context in one request."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel

from synth.data import Context
from synth.errors import ModelError, OutputParseError
from synth.generate._batch import BatchRequest, ask_batch, values_of
from synth.generate._rewrite import run_live_batches
from synth.generate._text import context_text, tagged_list
from synth.generate.base import Source
from synth.generate.config import StylingConfig
from synth.generate.draft import Draft, drop_failed
from synth.generate.stats import StageStats
from synth.generate.templates import PromptSet, default_prompts
from synth.llm.base import LLM
from synth.llm.structured import parse_verdict

LABEL = "expected"
#: how a failed match of a reply is described
WHAT = "the reply answers items"
#: inputs answered in one request at most
MAX_BATCH = 10


class _Output(BaseModel):
    index: int
    expected_output: str


class ExpectedReply(BaseModel):
    """The reply schema: one answer per input, in order."""

    outputs: list[_Output]


def build_prompt(
    inputs: Sequence[str],
    context: Context | None,
    output_format: str | None = None,
    prompts: PromptSet | None = None,
) -> str:
    """The prompt answering ``inputs`` from ``context`` (in ``output_format`` when given)."""
    fmt = f"\nWrite each answer in this format: {output_format}\n" if output_format else ""
    return (prompts or default_prompts()).render(
        "expected",
        inputs=tagged_list("inputs", "input", list(inputs)),
        context=context_text(context),
        count=len(inputs),
        output_format=fmt,
    )


def check_reply(reply: ExpectedReply, n: int, raw: str = "") -> list[str]:
    """The ``n`` answers in input order, matched as a batch reply is
    (:mod:`synth.generate._batch`); OutputParseError if one is left unmatched or blank."""
    return values_of(reply, n, WHAT, _answer, raw)


def parse(text: str, n: int) -> list[str]:
    """Parse a reply for ``n`` inputs; OutputParseError (with the raw text) otherwise."""
    return check_reply(parse_verdict(text, ExpectedReply), n, raw=text)


def _answer(entry: _Output) -> str:
    text = entry.expected_output.strip()
    if not text:
        raise OutputParseError("the answer is blank")
    return text


async def _answer_group(
    drafts: list[Draft],
    llm: LLM,
    output_format: str | None,
    prompts: PromptSet | None,
    stats: StageStats | None,
) -> None:
    context = drafts[0].context

    def prompt(positions: list[int]) -> str:
        return build_prompt([drafts[i].input for i in positions], context, output_format, prompts)

    request = BatchRequest(LABEL, ExpectedReply, WHAT, prompt, _answer)
    answers = await ask_batch(llm, request, len(drafts), stats)
    for draft, answer in zip(drafts, answers, strict=True):
        if isinstance(answer, ModelError):
            drop_failed(draft, LABEL, answer)
        else:
            draft.expected_output = answer


async def run(
    drafts: Sequence[Draft],
    llm: LLM,
    *,
    styling: StylingConfig | None = None,
    prompts: PromptSet | None = None,
    stats: StageStats | None = None,
) -> list[Draft]:
    """Answer every live draft, one request per context; returns all drafts, dropped ones marked.

    A reply that misnumbers its answers keeps those it can match and asks again for the rest
    (``synth.generate._batch``); a draft left unanswered is dropped with ``model_error:<kind>``.
    """
    output_format = styling.expected_output_format if styling is not None else None

    async def step(batch: list[Draft]) -> None:
        await _answer_group(batch, llm, output_format, prompts, stats)

    return await run_live_batches(drafts, MAX_BATCH, step, stats)


@dataclass(frozen=True)
class ExpectedStep:
    """Expected outputs as a step: a grounded answer for each live draft."""

    name: ClassVar[str] = LABEL
    llm: LLM
    styling: StylingConfig
    prompts: PromptSet

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        return await run(drafts, self.llm, styling=self.styling, prompts=self.prompts)


__all__ = ["ExpectedReply", "ExpectedStep", "build_prompt", "check_reply", "parse", "run"]
