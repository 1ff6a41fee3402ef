"""One structured model request for a stage, counted in the stage's stats.

:func:`ask` returns the parsed reply; :func:`ask_checked` also runs the stage's check on it and,
when the check refuses a reply that parsed (a blank input, no input at all), removes that reply from
the response cache and asks again, up to the model's ``max_reasks``: a rerun never replays it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel

from synth.errors import OutputParseError
from synth.generate.stats import StageStats
from synth.generate.templates import SYSTEM
from synth.llm.base import LLM, check_complete
from synth.llm.cache import forget_reply
from synth.llm.retry import count_reask, reask_budget
from synth.llm.structured import parse_verdict

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

#: retry kind counted when a parsed reply is refused by its stage's check and asked again
REFUSED = "refused"


async def ask(llm: LLM, prompt: str, schema: type[M], label: str, stats: StageStats | None) -> M:
    """Send ``prompt`` with the generation system message and return the reply parsed into
    ``schema`` (ModelError on failure)."""
    return (await ask_text(llm, prompt, schema, label, stats))[1]


async def ask_text(
    llm: LLM, prompt: str, schema: type[M], label: str, stats: StageStats | None
) -> tuple[str, M]:
    """Like :func:`ask`, with the reply's raw text first (for the record of a refused reply)."""
    if stats is not None:
        stats.requests += 1
    completion = check_complete(
        await llm.arequest(prompt, system=SYSTEM, schema=schema, label=label)
    )
    return completion.text, parse_verdict(completion.text, schema)


async def ask_checked(
    llm: LLM,
    prompt: str,
    schema: type[M],
    check: Callable[[M], T],
    label: str,
    stats: StageStats | None,
) -> T:
    """``check(reply)``; a reply it refuses (OutputParseError) is forgotten by the cache and asked
    again, up to ``max_reasks`` times; the last refusal is raised with the raw reply."""
    budget = reask_budget(llm)
    while True:
        text, reply = await ask_text(llm, prompt, schema, label, stats)
        try:
            return check(reply)
        except OutputParseError as exc:
            forget(llm, prompt, schema)
            if budget <= 0:
                raise OutputParseError(str(exc), raw=text) from None
            budget -= 1
            count_reask(llm, label, REFUSED)
            if stats is not None:
                stats.note("reasked")


def forget(llm: LLM, prompt: str, schema: type[BaseModel]) -> None:
    """Remove a refused reply to ``prompt`` (sent by :func:`ask_text`) from the response cache."""
    forget_reply(llm, prompt, system=SYSTEM, schema=schema)
