"""Conversations in the right language: every turn of every conversation checked.

:class:`TurnsChecked` wraps the conversation step (:mod:`synth.generate.conversation`), which
records on each conversation the language it must be written in (``metadata["language"]``, as
the inputs step does for a single-turn golden) and names it in its prompt. After the step, each
turn of each live conversation, the user's and the assistant's, is checked
(:func:`synth._language.check_language`); a turn in another language is asked again once (the
language re-ask of :mod:`synth.generate.language`, with the reason), and when the new text is
still not in the language, the whole conversation is dropped as :data:`WRONG_LANGUAGE` (the run's
top-up replaces it). A turn too short to judge is kept.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from synth.errors import ModelError
from synth.generate.base import Source
from synth.generate.conversation import as_text
from synth.generate.draft import Draft
from synth.generate.language import (
    LABEL,
    WRONG_LANGUAGE,
    CheckedStep,
    LanguageReply,
    build_prompt,
    check_draft,
    parse,
    prepare_draft,
)
from synth.stage.call import ask_checked


@dataclass(frozen=True)
class TurnsChecked(CheckedStep):
    """``step`` (the conversation step), with every turn it wrote checked for its language."""

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        drafts = await self.step.run(drafts, source)
        live = [d for d in drafts if d.kept and d.conversation is not None]
        await asyncio.gather(*(self._check(d) for d in live))
        return drafts

    async def _check(self, draft: Draft) -> None:
        assert draft.conversation is not None
        turns: list[dict[str, Any]] = draft.conversation["turns"]
        problems = await asyncio.gather(*(self._turn(draft, turn) for turn in turns))
        failed = [(n, p) for n, p in enumerate(problems, start=1) if p]
        if failed:
            number, problem = failed[0]
            draft.drop(self.name, WRONG_LANGUAGE, f"turn {number}: {problem}")
            return
        draft.input = as_text(turns)

    async def _turn(self, draft: Draft, turn: dict[str, Any]) -> str:
        """'' when ``turn`` is (now) in the draft's language, else what is still wrong; a turn
        asked again and then right has its new text, the old one kept in its metadata."""
        await prepare_draft(draft, turn["content"])
        verdict = check_draft(draft, turn["content"])
        if verdict is None or not verdict.mismatch:
            return ""
        prompt = build_prompt(turn["content"], verdict, draft.context, self.prompts)
        try:
            label = f"{self.name}_{LABEL}"  # counted in the conversation step's manifest row
            text = await ask_checked(self.llm, prompt, LanguageReply, parse, label, None)
        except ModelError as exc:
            return f"{verdict.reason('turn')}; asked again: {exc}"
        await prepare_draft(draft, text)
        again = check_draft(draft, text)
        if again is not None and again.mismatch:
            return f"{again.reason('turn')}, after it was asked again"
        turn.setdefault("metadata", {})["language_rewritten"] = {
            "content": turn["content"],
            "reason": verdict.reason("turn"),
        }
        turn["content"] = text
        return ""


__all__ = ["TurnsChecked"]
