"""Evolution: ``num_evolutions`` rounds per input, each rewriting it one of seven ways.

Each round picks an evolution by the configured weights with a random generator derived from the
run's seed and the draft's id, so the choice does not depend on the order in which drafts arrive.
Multicontext and comparative need a context of at least two chunks: for a smaller context they are
left out and the remaining weights used (recorded as ``evolution_reweighted``); if no evolution is
left, the round is skipped (recorded as ``evolution_skipped``). One request per input per round.

The prompt shows the input as first written beside the one to rewrite, so a round keeps its
subject. A rewrite that adds more than :data:`MAX_ADDED_WORDS` words, or a reply of "unchanged"
(the model may decline an evolution that would break the rules), leaves the input as it was:
recorded in ``metadata["evolutions_held"]`` and in the stage's notes (``over_budget``,
``unchanged``), not applied and not a drop.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel

from synth._words import words
from synth.data import Context
from synth.errors import ModelError
from synth.generate._rewrite import nonblank_input, run_live
from synth.generate.base import Source
from synth.generate.config import MULTI_CHUNK_EVOLUTIONS, Evolution, EvolutionConfig
from synth.generate.draft import Draft, drop_failed
from synth.generate.language import draft_language, language_line
from synth.llm.base import LLM
from synth.llm.structured import parse_verdict
from synth.stage.call import ask_checked
from synth.stage.stats import StageStats
from synth.stage.templates import PromptSet, prompts_for
from synth.stage.text import context_text, orientation_text, tagged

LABEL = "evolve"
#: words an evolution may add to an input at most (a longer rewrite is not taken)
MAX_ADDED_WORDS = 20
#: the reply of a model that cannot evolve an input within the rules
UNCHANGED = re.compile(r"[\W_]*unchanged[\W_]*", re.IGNORECASE)


class EvolveReply(BaseModel):
    """The reply schema: the evolved input."""

    input: str


def draft_rng(seed: int | None, draft_id: str, stage: str) -> random.Random:
    """The random generator for one draft in one stage, derived from the run's seed."""
    return random.Random(f"{seed}:{stage}:{draft_id}")


def applicable_evolutions(config: EvolutionConfig, n_chunks: int) -> dict[Evolution, float]:
    """The evolutions with positive weight that a context of ``n_chunks`` chunks supports."""
    return {
        evolution: weight
        for evolution, weight in config.evolutions.items()
        if weight > 0 and (n_chunks >= 2 or evolution not in MULTI_CHUNK_EVOLUTIONS)
    }


def choose_evolution(
    rng: random.Random, config: EvolutionConfig, n_chunks: int
) -> Evolution | None:
    """One evolution drawn by weight among the applicable ones; None when none applies."""
    options = applicable_evolutions(config, n_chunks)
    if not options:
        return None
    names = list(options)
    return rng.choices(names, weights=[options[n] for n in names], k=1)[0]


def build_prompt(
    text: str,
    evolution: Evolution,
    context: Context | None,
    prompts: PromptSet | None = None,
    language: str | None = None,
    original: str | None = None,
) -> str:
    """The prompt evolving ``text`` by ``evolution``, bounded by ``context``, in ``language``;
    ``original`` is the input as first written (``text`` when None), shown so the rewrite keeps
    its subject."""
    prompts = prompts_for(prompts, language)
    return prompts.render(
        "evolve",
        original=tagged("original", original if original is not None else text),
        input=tagged("input", text),
        instruction=prompts.instruction(evolution),
        context=context_text(context),
        orientation=orientation_text(context),
        language=language_line(language, "the rewritten input"),
    )


def held_back(before: str, after: str) -> str | None:
    """Why an evolved input ``after`` is not taken in place of ``before``: ``unchanged`` when the
    model declined (its reply is the word "unchanged"), ``over_budget`` when it adds more than
    :data:`MAX_ADDED_WORDS` words; None when it is taken."""
    if UNCHANGED.fullmatch(after.strip()):
        return "unchanged"
    if len(words(after)) - len(words(before)) > MAX_ADDED_WORDS:
        return "over_budget"
    return None


def check_reply(reply: EvolveReply, raw: str = "") -> str:
    """The evolved input; OutputParseError when blank."""
    return nonblank_input(reply.input, "evolved", reply, raw)


def parse(text: str) -> str:
    """Parse a reply into the evolved input; OutputParseError (with the raw text) otherwise."""
    return check_reply(parse_verdict(text, EvolveReply), raw=text)


async def _evolve_one(
    draft: Draft,
    llm: LLM,
    config: EvolutionConfig,
    seed: int | None,
    prompts: PromptSet | None,
    stats: StageStats | None,
) -> None:
    rng = draft_rng(seed, draft.id, LABEL)
    n_chunks = len(draft.context.texts) if draft.context is not None else 0
    if len(applicable_evolutions(config, n_chunks)) < sum(
        1 for w in config.evolutions.values() if w > 0
    ):
        draft.metadata["evolution_reweighted"] = True
        if stats is not None:
            stats.note("reweighted")
    for _round in range(config.num_evolutions):
        evolution = choose_evolution(rng, config, n_chunks)
        if evolution is None:
            draft.metadata["evolution_skipped"] = "no applicable evolution for a one-chunk context"
            if stats is not None:
                stats.note("skipped")
            return
        original = draft.history[0]["input"] if draft.history else draft.input
        language = draft_language(draft)
        prompt = build_prompt(draft.input, evolution, draft.context, prompts, language, original)
        try:
            text = await ask_checked(llm, prompt, EvolveReply, parse, LABEL, stats)
        except ModelError as exc:
            drop_failed(draft, LABEL, exc)
            return
        held = held_back(draft.input, text)
        if held is not None:
            # the model declined, or added more than the budget: the input stays as it was
            draft.metadata.setdefault("evolutions_held", []).append(
                {"evolution": evolution.value, "why": held}
            )
            if stats is not None:
                stats.note(held)
            continue
        draft.revise(LABEL, text, evolution=evolution.value)
        draft.evolutions.append(evolution.value)


async def run(
    drafts: Sequence[Draft],
    llm: LLM,
    config: EvolutionConfig,
    *,
    seed: int | None,
    prompts: PromptSet | None = None,
    stats: StageStats | None = None,
) -> list[Draft]:
    """Evolve every live draft ``num_evolutions`` times; returns all drafts, dropped ones marked.

    An evolved input replaces the old one (kept in ``history``) and its name is appended to
    ``evolutions``; a model failure drops the draft with ``model_error:<kind>``.
    """

    async def step(draft: Draft) -> None:
        await _evolve_one(draft, llm, config, seed, prompts, stats)

    return await run_live(drafts, step if config.num_evolutions > 0 else None, stats)


@dataclass(frozen=True)
class EvolveStep:
    """Evolution as a step: ``num_evolutions`` rewrites of each live draft."""

    name: ClassVar[str] = LABEL
    llm: LLM
    config: EvolutionConfig
    seed: int | None
    prompts: PromptSet

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        return await run(drafts, self.llm, self.config, seed=self.seed, prompts=self.prompts)


__all__ = [
    "EvolveReply",
    "EvolveStep",
    "applicable_evolutions",
    "build_prompt",
    "check_reply",
    "choose_evolution",
    "draft_rng",
    "parse",
    "run",
]
