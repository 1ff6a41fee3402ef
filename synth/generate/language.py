"""Goldens in the right language: the language each draft must be written in, the line that tells
the model, and the check of every generated input.

The target (:func:`target_language`) is the generation config's ``language`` when it is a code,
else (``"auto"``) the language of the draft's context (its seed chunk's, recorded at ingest), of
the style examples when there is no context, and none at all from scratch. The inputs step records
it on each draft (``metadata["language"]``, which the golden keeps) and every later prompt says it
by name (:func:`language_line`); the prompts themselves stay in English.

Checked, not trusted: :class:`LanguageChecked` wraps a step that writes inputs (inputs, filter,
evolve, style). After the step, every live input it wrote or changed is checked
(:func:`synth._language.check_language`); one in another language is asked again once, saying
which language it was in and which it must be in, then checked again, and dropped as
:data:`WRONG_LANGUAGE` at that step when it still is not (the run's top-up replaces it). A text
too short to judge is kept (see :mod:`synth._language` for the thresholds). Expected outputs are
checked by the expected step itself, whose one re-ask carries the reason with its other problems.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from synth._language import (
    AUTO,
    LANGUAGE_KEY,
    LanguageVerdict,
    check_codes,
    check_language,
    language_name,
    main_language,
    prepare_checks,
    warm_checks,
)
from synth.data import Context
from synth.errors import ModelError
from synth.generate._rewrite import nonblank_input
from synth.generate.base import Source, Step
from synth.generate.draft import Draft
from synth.llm.base import LLM
from synth.llm.structured import parse_verdict
from synth.stage.call import ask_checked
from synth.stage.templates import PromptSet, prompts_for
from synth.stage.text import context_text, orientation_text, tagged

#: the drop reason of a text still in another language after it was asked again
WRONG_LANGUAGE = "wrong_language"
LABEL = "language"


class LanguageReply(BaseModel):
    """The reply schema of the re-ask: the input, in the right language."""

    input: str


def context_language(context: Context | None) -> str | None:
    """The language recorded on ``context`` (None when unknown)."""
    if context is None:
        return None
    found = context.metadata.get(LANGUAGE_KEY)
    return str(found) if found else None


def target_language(
    setting: str, context: Context | None, examples: Sequence[str] | None = None
) -> str | None:
    """The language a candidate's goldens must be written in (None: not checked)."""
    if setting != AUTO:
        return setting
    found = context_language(context)
    if found is None and context is not None:
        found = main_language(context.texts)
    if found is None and examples:
        found = main_language(examples)
    return found


def draft_language(draft: Draft) -> str | None:
    """The language ``draft`` must be written in, as the inputs step recorded it."""
    found = draft.metadata.get(LANGUAGE_KEY)
    return str(found) if found else None


def language_line(language: str | None, what: str = "every input") -> str:
    """The prompt line naming the language to write in ("" when there is none)."""
    if not language:
        return ""
    return f"\nLanguage: write {what} in {language_name(language)}.\n"


def check_draft(draft: Draft, text: str) -> LanguageVerdict | None:
    """The check of ``text`` against ``draft``'s target (None when it has none)."""
    target = draft_language(draft)
    if target is None:
        return None
    also = [c for c in (context_language(draft.context),) if c]
    return check_language(text, target, also)


#: seconds from the run's first request asked ahead to the load of the checks' trigram models
#: (:func:`warm_checks_soon`): time for the first wave of requests to leave
WARM_DELAY = 0.1
_warmed: set[frozenset[str]] = set()


def warm_checks_soon(target: str | None, also: Iterable[str] = ()) -> None:
    """Load, :data:`WARM_DELAY` seconds from now on the running loop, the trigram models that
    checks against ``target`` weigh (:func:`synth._language.warm_checks`; once per process and
    set of languages).

    The first check loads them otherwise: 0.09 s on an idle machine, 0.1 to 0.2 s in a run
    (measured), holding the interpreter's lock at the moment the first replies are back and the
    next requests wait to be written. Called when the run's first wave of requests goes out,
    the load falls in the round trip the loop waits through anyway."""
    if not target:
        return
    also = [c for c in also if c]
    languages = check_codes(target, also)  # what the load is for: loaded once
    if languages in _warmed:
        return
    _warmed.add(languages)
    asyncio.get_running_loop().call_later(WARM_DELAY, _warm, target, also)


def _warm(target: str, also: list[str]) -> None:
    """The trigram models now (the full models load when a text the trigrams leave in doubt
    comes: see :mod:`synth._language`)."""
    warm_checks(target, also)


async def prepare_draft(draft: Draft, *texts: str) -> None:
    """Judge off the event loop those of ``texts`` whose check against ``draft``'s target needs
    the full models (:func:`synth._language.prepare_checks`), before :func:`check_draft`."""
    await prepare_checks(texts, draft_language(draft), [context_language(draft.context) or ""])


def build_prompt(
    text: str, verdict: LanguageVerdict, context: Context | None, prompts: PromptSet | None = None
) -> str:
    """The prompt asking again for ``text`` in the language ``verdict`` says it must be in."""
    return prompts_for(prompts, verdict.target).render(
        LABEL,
        input=tagged("input", text),
        language=language_name(verdict.target),
        reason=verdict.reason("input"),
        context=context_text(context),
        orientation=orientation_text(context),
    )


def parse(text: str) -> str:
    """The input of a re-ask reply; OutputParseError (with the raw text) when blank or malformed."""
    reply = parse_verdict(text, LanguageReply)
    return nonblank_input(reply.input, "rewritten", reply, text)


@dataclass(frozen=True)
class CheckedStep:
    """A step wrapped to check the language of what it writes, asking ``llm`` again with
    ``prompts``; it keeps the step's name (so its drops and re-asks count in the step's row)."""

    step: Step
    llm: LLM
    prompts: PromptSet

    @property
    def name(self) -> str:
        return self.step.name


@dataclass(frozen=True)
class LanguageChecked(CheckedStep):
    """``step``, with every input it wrote or changed checked for its language (see the module)."""

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        before = {d.id: d.input for d in drafts if d.kept}
        drafts = await self.step.run(drafts, source)
        written = [d for d in drafts if d.kept and before.get(d.id) != d.input]
        await asyncio.gather(*(self._check(d) for d in written))
        return drafts

    async def _check(self, draft: Draft) -> None:
        await prepare_draft(draft, draft.input)
        verdict = check_draft(draft, draft.input)
        if verdict is None or not verdict.mismatch:
            return
        prompt = build_prompt(draft.input, verdict, draft.context, self.prompts)
        try:
            label = f"{self.name}_{LABEL}"  # counted in the manifest row of the stage checked
            text = await ask_checked(self.llm, prompt, LanguageReply, parse, label, None)
        except ModelError as exc:
            draft.drop(self.name, WRONG_LANGUAGE, f"{verdict.reason('input')}; asked again: {exc}")
            return
        await prepare_draft(draft, text)
        again = check_draft(draft, text)
        if again is not None and again.mismatch:
            detail = f"{again.reason('input')}, after it was asked again"
            draft.drop(self.name, WRONG_LANGUAGE, detail)
            return
        draft.revise(self.name, text, language=verdict.found, reason=verdict.reason("input"))


__all__ = [
    "WRONG_LANGUAGE",
    "CheckedStep",
    "LanguageChecked",
    "LanguageReply",
    "build_prompt",
    "check_draft",
    "context_language",
    "draft_language",
    "language_line",
    "parse",
    "prepare_draft",
    "target_language",
    "warm_checks_soon",
]
