"""Input generation: all inputs of one context in one request (or from scratch, or from examples).

Every input must be answerable from its context alone; from scratch there is no context and the
styling's scenario, task and input format describe what to write; from goldens the given inputs are
style examples (and the context, when given, still bounds the content).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel

from synth._language import LANGUAGE_KEY
from synth.data import Context
from synth.errors import ModelError, OutputParseError
from synth.generate.base import Source
from synth.generate.config import GenerationConfig, StylingConfig
from synth.generate.draft import Draft, draft_id, drop_failed
from synth.generate.language import (
    context_language,
    language_line,
    target_language,
    warm_checks_soon,
)
from synth.generate.question_types import OUT_OF_SCOPE, inputs_instruction
from synth.llm.base import LLM
from synth.llm.structured import parse_verdict
from synth.stage.batch import batch_schema
from synth.stage.call import ask_checked
from synth.stage.stats import StageStats, model_error_reason
from synth.stage.templates import SYSTEM, PromptSet, prompts_for
from synth.stage.text import context_text, orientation_text, styling_block, tagged, tagged_list

LABEL = "inputs"


class InputsReply(BaseModel):
    """The reply schema: the new inputs."""

    inputs: list[str]


class _NearMiss(BaseModel):
    fact: str  # what the documents state, written before the question it starts from
    input: str


class NearMissReply(BaseModel):
    """The reply schema of out-of-scope inputs: each with the fact of the context it starts from
    (a near miss: the question asks for a detail of that fact the documents do not give)."""

    inputs: list[_NearMiss]


#: the metadata key of the fact an out-of-scope input started from
NEAR_MISS_FACT_KEY = "near_miss_fact"


def reply_schema(question_type: str | None) -> type[BaseModel]:
    """The reply schema the inputs of ``question_type`` are asked in."""
    return NearMissReply if question_type == OUT_OF_SCOPE else InputsReply


def _styling(styling: StylingConfig | None, instruction: str = "") -> str:
    block = (
        ""
        if styling is None
        else styling_block(styling.scenario, styling.task, styling.input_format)
    )
    if not instruction:
        return block
    return f"{block.rstrip()}\n{instruction}\n" if block else f"\n{instruction}\n"


def build_prompt(
    context: Context,
    n: int,
    *,
    styling: StylingConfig | None = None,
    prompts: PromptSet | None = None,
    question_type: str | None = None,
    aside: str | None = None,
    language: str | None = None,
) -> str:
    """The prompt asking for ``n`` inputs answerable from ``context`` (of ``question_type``, in
    ``language``; ``out_of_scope`` asks for inputs it does not answer); ``aside`` is the
    distracting passage."""
    instruction = inputs_instruction(question_type)
    if aside is not None:
        instruction = f"{instruction}\n{tagged('aside', aside)}"
    block = _styling(styling, instruction)
    name = "inputs_out_of_scope" if question_type == OUT_OF_SCOPE else "inputs"
    return prompts_for(prompts, language).render(
        name,
        context=context_text(context),
        orientation=orientation_text(context),
        count=n,
        styling=block,
        language=language_line(language),
    )


def build_scratch_prompt(
    n: int, styling: StylingConfig, prompts: PromptSet | None = None, language: str | None = None
) -> str:
    """The prompt asking for ``n`` inputs from scenario, task and input format alone."""
    styling.require_scratch()
    return prompts_for(prompts, language).render(
        "inputs_from_scratch",
        scenario=styling.scenario,
        task=styling.task,
        input_format=styling.input_format,
        count=n,
        language=language_line(language),
    )


def build_examples_prompt(
    examples: Sequence[str],
    n: int,
    *,
    context: Context | None = None,
    styling: StylingConfig | None = None,
    prompts: PromptSet | None = None,
    language: str | None = None,
) -> str:
    """The prompt asking for ``n`` new inputs in the style of ``examples``."""
    return prompts_for(prompts, language).render(
        "inputs_from_goldens",
        examples=tagged_list("examples", "example", list(examples)),
        context=context_text(context),
        orientation=orientation_text(context),
        count=n,
        styling=_styling(styling),
        language=language_line(language),
    )


def check_reply(reply: InputsReply, n: int, raw: str = "") -> list[str]:
    """At most ``n`` distinct non-blank inputs; OutputParseError when there is none."""
    out: list[str] = []
    for text in reply.inputs:
        text = text.strip()
        if text and text not in out:
            out.append(text)
    if not out:
        raise OutputParseError("the reply holds no input", raw=raw or reply.model_dump_json())
    return out[:n]


def parse(text: str, n: int) -> list[str]:
    """Parse a reply into at most ``n`` inputs; OutputParseError (with the raw text) otherwise."""
    return check_reply(parse_verdict(text, InputsReply), n, raw=text)


def parse_near_misses(text: str, n: int) -> list[tuple[str, str]]:
    """Parse an out-of-scope reply into at most ``n`` ``(input, fact)`` pairs, distinct inputs;
    OutputParseError (with the raw text) when none has an input."""
    reply = parse_verdict(text, NearMissReply)
    out: dict[str, str] = {}
    for entry in reply.inputs:
        question = entry.input.strip()
        if question and question not in out:
            out[question] = entry.fact.strip()
    if not out:
        raise OutputParseError("the reply holds no input", raw=text)
    return list(out.items())[:n]


def _parse_any(text: str, n: int, question_type: str | None) -> list[tuple[str, str | None]]:
    if question_type == OUT_OF_SCOPE:
        return [(q, f or None) for q, f in parse_near_misses(text, n)]
    return [(q, None) for q in parse(text, n)]


async def _generate(
    prompt: str,
    n: int,
    llm: LLM,
    key: str,
    context: Context | None,
    stats: StageStats | None,
    language: str | None = None,
    question_type: str | None = None,
) -> list[Draft]:
    if stats is not None:
        stats.items_in += 1
    try:
        schema = batch_schema(reply_schema(question_type), n)
        found = await ask_checked(
            llm, prompt, schema, lambda text: _parse_any(text, n, question_type), LABEL, stats
        )
    except ModelError as exc:
        failed = Draft(id=draft_id(key, "failed"), input="", context=context)
        drop_failed(failed, LABEL, exc)
        if stats is not None:
            stats.drop(failed.drop_reason or model_error_reason(exc))
        return [failed]
    if stats is not None:
        stats.items_out += len(found)
        if len(found) < n:
            stats.note("fewer_than_asked", n - len(found))
    metadata = {LANGUAGE_KEY: language} if language else {}
    drafts = []
    for i, (text, fact) in enumerate(found):
        extra = {NEAR_MISS_FACT_KEY: fact} if fact else {}
        drafts.append(
            Draft(id=draft_id(key, i), input=text, context=context, metadata={**metadata, **extra})
        )
    return drafts


async def run(
    context: Context,
    llm: LLM,
    config: GenerationConfig,
    *,
    styling: StylingConfig | None = None,
    key: str | None = None,
    prompts: PromptSet | None = None,
    stats: StageStats | None = None,
    aside: str | None = None,
) -> list[Draft]:
    """Up to ``max_goldens_per_context`` drafts for one context, from one request (``aside``: the
    passage a distracting question takes its detail from).

    Draft ids derive from ``key`` (default: the context id; pass something unique when the same
    context may be used twice in a run).

    On a model failure it returns a single dropped draft (empty input, the context, the reason), so
    the failure lands in the rejects like any other drop. ``stats``: items in = contexts, items out =
    inputs made, dropped = contexts that gave none, by reason.
    """
    n = config.max_goldens_per_context
    language = target_language(config.language, context)
    prompt = context_prompt(context, config, styling, prompts, aside)
    kind = config.question_type
    return await _generate(prompt, n, llm, key or context.id, context, stats, language, kind)


def context_prompt(
    context: Context,
    config: GenerationConfig,
    styling: StylingConfig | None,
    prompts: PromptSet | None,
    aside: str | None = None,
) -> str:
    """The prompt :func:`run` sends for ``context`` (what :meth:`InputsStep.warm` asks ahead)."""
    return build_prompt(
        context,
        config.max_goldens_per_context,
        styling=styling,
        prompts=prompts,
        question_type=config.question_type,
        aside=aside,
        language=target_language(config.language, context),
    )


async def run_from_scratch(
    n: int,
    llm: LLM,
    styling: StylingConfig,
    *,
    key: str = "scratch",
    prompts: PromptSet | None = None,
    stats: StageStats | None = None,
    language: str | None = None,
) -> list[Draft]:
    """Up to ``n`` context-free drafts from one request; ``key`` makes their ids (e.g. a batch number).

    Raises ConfigError unless ``styling`` has scenario, task and input_format.
    """
    prompt = build_scratch_prompt(n, styling, prompts, language)
    return await _generate(prompt, n, llm, f"scratch:{key}", None, stats, language)


async def run_from_examples(
    examples: Sequence[str],
    n: int,
    llm: LLM,
    *,
    context: Context | None = None,
    styling: StylingConfig | None = None,
    key: str = "examples",
    prompts: PromptSet | None = None,
    stats: StageStats | None = None,
    language: str | None = None,
) -> list[Draft]:
    """Up to ``n`` drafts written like ``examples`` (and answerable from ``context`` when given),
    in ``language`` when given."""
    prompt = build_examples_prompt(
        examples, n, context=context, styling=styling, prompts=prompts, language=language
    )
    base = context.id if context is not None else "none"
    return await _generate(prompt, n, llm, f"examples:{key}:{base}", context, stats, language)


@dataclass(frozen=True)
class InputsStep:
    """The first step: the drafts of one candidate, from its context, its examples or the styling.

    With examples the inputs are written like them (bounded by the context when there is one);
    with neither context nor examples they come from the styling alone.
    """

    name: ClassVar[str] = LABEL
    llm: LLM
    config: GenerationConfig
    styling: StylingConfig
    prompts: PromptSet

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        n = self.config.max_goldens_per_context
        if source.examples is not None:
            return await run_from_examples(
                source.examples,
                n,
                self.llm,
                context=source.context,
                styling=self.styling,
                key=source.key,
                prompts=self.prompts,
                language=target_language(self.config.language, source.context, source.examples),
            )
        if source.context is None:
            language = target_language(self.config.language, None)
            return await run_from_scratch(
                n, self.llm, self.styling, key=source.key, prompts=self.prompts, language=language
            )
        return await run(
            source.context,
            self.llm,
            self.config,
            styling=self.styling,
            key=source.key,
            prompts=self.prompts,
        )

    async def warm(self, context: Context) -> None:
        """Ask, now, the request :meth:`run` will send for a candidate of ``context`` (a context
        the critic has yet to accept): through the response cache, that request, when made, joins
        this one or finds its reply (the reply is not checked here; :meth:`run` checks it).
        The language checks of the replies load their models meanwhile."""
        language = target_language(self.config.language, context)
        warm_checks_soon(language, [context_language(context) or ""])
        prompt = context_prompt(context, self.config, self.styling, self.prompts)
        schema = batch_schema(
            reply_schema(self.config.question_type), self.config.max_goldens_per_context
        )
        await self.llm.arequest(prompt, system=SYSTEM, schema=schema, label=LABEL)


__all__ = [
    "NEAR_MISS_FACT_KEY",
    "InputsReply",
    "NearMissReply",
    "parse_near_misses",
    "reply_schema",
    "InputsStep",
    "build_examples_prompt",
    "build_prompt",
    "build_scratch_prompt",
    "check_reply",
    "context_prompt",
    "parse",
    "run",
    "run_from_examples",
    "run_from_scratch",
]
