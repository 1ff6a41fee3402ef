"""One structured model request for a stage, counted in the stage's stats.

:func:`ask_raw` returns the reply's text as the model sent it; :func:`ask_checked` hands that text
to the stage's pure ``parse`` and, when ``parse`` refuses a reply that is valid JSON of the schema
(a blank input, no input at all), removes that reply from the response cache and asks again, up to
the model's ``max_reasks``: a rerun never replays it. Every error keeps the model's own text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel

from synth.errors import OutputParseError
from synth.llm.base import LLM, check_complete
from synth.llm.cache import forget_reply
from synth.llm.retry import count_reask, reask_budget
from synth.llm.structured import parse_verdict
from synth.stage.stats import StageStats
from synth.stage.templates import SYSTEM

T = TypeVar("T")

#: retry kind counted when a parsed reply is refused by its stage's check and asked again
REFUSED = "refused"


async def ask_raw(
    llm: LLM, prompt: str, schema: type[BaseModel], label: str, stats: StageStats | None
) -> str:
    """The text of the reply to ``prompt`` (sent with the generation system message and
    ``schema``), as the model sent it; ModelError when the request fails or the reply was cut off."""
    if stats is not None:
        stats.requests += 1
    completion = check_complete(
        await llm.arequest(prompt, system=SYSTEM, schema=schema, label=label)
    )
    return completion.text


async def ask_checked(
    llm: LLM,
    prompt: str,
    schema: type[BaseModel],
    parse: Callable[[str], T],
    label: str,
    stats: StageStats | None,
) -> T:
    """``parse(text)`` of the reply's own text. A reply that is not JSON of ``schema`` is raised
    as it is (the retry layer re-asks those); one that is but that ``parse`` refuses
    (OutputParseError) is forgotten by the cache and asked again, up to ``max_reasks`` times, and
    the last refusal is raised."""
    budget = reask_budget(llm)
    while True:
        text = await ask_raw(llm, prompt, schema, label, stats)
        try:
            return parse(text)
        except OutputParseError:
            parse_verdict(text, schema)  # malformed: raised from here, not counted as refused
            forget(llm, prompt, schema)
            if budget <= 0:
                raise
            budget -= 1
            count_reask(llm, label, REFUSED)
            if stats is not None:
                stats.note("reasked")


def forget(llm: LLM, prompt: str, schema: type[BaseModel]) -> None:
    """Remove a refused reply to ``prompt`` (sent by :func:`ask_raw`) from the response cache."""
    forget_reply(llm, prompt, system=SYSTEM, schema=schema)
