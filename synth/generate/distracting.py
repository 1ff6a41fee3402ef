"""Distracting questions: an input that carries a plausible detail its answer does not need.

A retriever that matches on every word of a question is pulled toward the chunk an aside comes
from. The inputs step of a ``distracting`` run looks up the aside (:func:`aside_for`): the chunk of
the run's corpus that keyword search finds closest to the context, outside it, so the detail is on
a related subject and plausible. The inputs prompt shows it inside ``<aside>`` and asks each input
to mention one detail of it while the context alone answers the question; the expected-output step
is told to ignore that detail.

Checked, not trusted: an input that takes no word from the aside that its context lacks carries no
distraction and is dropped as ``no_distraction``. The aside's chunk is recorded on every draft
(``metadata["distractor_chunk_id"]``). A context with no chunk outside it in the corpus gives no
draft (dropped as ``no_distractor``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from synth._words import content_words
from synth.data import Context
from synth.generate import inputs
from synth.generate.base import CorpusSearch, Source
from synth.generate.config import GenerationConfig, StylingConfig
from synth.generate.draft import Draft, draft_id
from synth.llm.base import LLM
from synth.stage.templates import PromptSet

#: the drop reasons: no chunk to take a detail from; an input that took none
NO_DISTRACTOR = "no_distractor"
NO_DISTRACTION = "no_distraction"
#: where each draft records the chunk its detail comes from
DISTRACTOR_KEY = "distractor_chunk_id"


async def aside_for(context: Context, search: CorpusSearch) -> tuple[str, str] | None:
    """The chunk ``(id, text)`` closest to ``context`` by keyword search, outside it; None when
    the corpus has no other chunk sharing a word with it."""
    query = " ".join(context.texts)
    found = await search.nearest([query], 1, exclude=[context.chunk_ids])
    return found[0][0] if found and found[0] else None


def distraction_words(draft_input: str, aside: str, context: Context) -> list[str]:
    """The words of ``draft_input`` that come from ``aside`` and not from the context."""
    own = set(content_words(" ".join(context.texts)))
    taken = set(content_words(aside)) - own
    return [word for word in dict.fromkeys(content_words(draft_input)) if word in taken]


@dataclass(frozen=True)
class DistractingInputsStep:
    """The inputs step of a ``distracting`` run (see the module)."""

    name: ClassVar[str] = inputs.LABEL
    llm: LLM
    config: GenerationConfig
    styling: StylingConfig
    prompts: PromptSet
    search: CorpusSearch

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        context = source.context
        if context is None:  # typed runs are made from documents: every candidate has one
            return await inputs.InputsStep(self.llm, self.config, self.styling, self.prompts).run(
                drafts, source
            )
        aside = await aside_for(context, self.search)
        if aside is None:
            empty = Draft(id=draft_id(source.key, "no-aside"), input="", context=context)
            detail = "the corpus has no other chunk on a related subject to take a detail from"
            empty.drop(inputs.LABEL, NO_DISTRACTOR, detail)
            return [empty]
        chunk_id, text = aside
        made = await inputs.run(
            context,
            self.llm,
            self.config,
            styling=self.styling,
            key=source.key,
            prompts=self.prompts,
            aside=text,
        )
        for draft in made:
            if not draft.kept:
                continue
            draft.metadata[DISTRACTOR_KEY] = chunk_id
            if not distraction_words(draft.input, text, context):
                detail = f"the input takes no word from the aside chunk {chunk_id}"
                draft.drop(inputs.LABEL, NO_DISTRACTION, detail)
        return made


__all__ = [
    "DISTRACTOR_KEY",
    "NO_DISTRACTION",
    "NO_DISTRACTOR",
    "DistractingInputsStep",
    "aside_for",
    "distraction_words",
]
