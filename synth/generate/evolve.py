"""Evolution: ``num_evolutions`` rounds per input, each rewriting it one of seven ways.

Each round picks an evolution by the configured weights with a random generator derived from the
run's seed and the draft's id, so the choice does not depend on the order in which drafts arrive,
nor on which other drafts share its request. Multicontext and comparative need a context of at
least two chunks: for a smaller context they are left out and the remaining weights used (recorded
as ``evolution_reweighted``); if no evolution is left, the round is skipped (recorded as
``evolution_skipped``).

All live inputs of one context are evolved in one request per round (as the filter scores them),
each with its own evolution: the context is sent once, not once per input. The reply has one entry
per input, matched as every batch reply is (:mod:`synth.stage.batch`). An input the reply leaves out
(or gives blank) while it evolves the others is left as it was, as if the model had declined it
(``missing``, below): an evolution is optional, and asking again for it alone would cost a request
for what the final check and the answer do not need. A reply that evolves none of its inputs is
asked again, as a malformed one is; an input still unanswered then is dropped as
``model_error:<kind>``.

The prompt shows an input as first written beside the one to rewrite (when they differ), so a
round keeps its subject. A rewrite that adds more than :data:`MAX_ADDED_WORDS` words, or a reply of
"unchanged" (the model may decline an evolution that would break the rules), or none at all,
leaves that input as it was: recorded in ``metadata["evolutions_held"]`` and in the stage's notes
(``over_budget``, ``unchanged``, ``missing``), not applied and not a drop.
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
from synth.generate._rewrite import nonblank_input, run_live_batches
from synth.generate.base import Source
from synth.generate.config import MULTI_CHUNK_EVOLUTIONS, Evolution, EvolutionConfig
from synth.generate.draft import Draft, drop_failed
from synth.generate.language import draft_language, language_line
from synth.llm.base import LLM
from synth.llm.structured import parse_verdict
from synth.stage.batch import BatchRequest, ask_batch, values_of
from synth.stage.stats import StageStats
from synth.stage.templates import PromptSet, prompts_for
from synth.stage.text import context_text, evolve_items, orientation_text

LABEL = "evolve"
#: how a failed match of an evolve reply is described
WHAT = "the evolve reply covers inputs"
#: words an evolution may add to an input at most (a longer rewrite is not taken)
MAX_ADDED_WORDS = 20
#: inputs evolved in one request at most (a context has max_goldens_per_context of them)
MAX_BATCH = 10
#: the reply of a model that cannot evolve an input within the rules
UNCHANGED = re.compile(r"[\W_]*unchanged[\W_]*", re.IGNORECASE)
#: why an input a reply left out (while it evolved the others) is held
MISSING = "missing"


class _Evolved(BaseModel):
    index: int
    input: str


class EvolveReply(BaseModel):
    """The reply schema: one evolved input per input, in order."""

    evolved: list[_Evolved]


@dataclass(frozen=True)
class EvolveItem:
    """One input to evolve: the input as first written, the one to rewrite, and how."""

    original: str
    input: str
    evolution: Evolution


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
    items: Sequence[EvolveItem],
    context: Context | None,
    prompts: PromptSet | None = None,
    language: str | None = None,
) -> str:
    """The prompt evolving each of ``items`` by its evolution, bounded by ``context``, in
    ``language``; an item's original is shown beside it when the two differ, so the rewrite keeps
    its subject."""
    prompts = prompts_for(prompts, language)
    instructions = "\n".join(
        f"{i}. {prompts.instruction(item.evolution)}" for i, item in enumerate(items, start=1)
    )
    return prompts.render(
        "evolve",
        items=evolve_items([(item.original, item.input) for item in items]),
        instructions=instructions,
        count=len(items),
        context=context_text(context),
        orientation=orientation_text(context),
        language=language_line(language, "every rewritten input"),
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


def evolved_input(entry: _Evolved) -> str:
    """One entry's evolved input; OutputParseError when blank (that input is asked again)."""
    return nonblank_input(entry.input, "evolved", entry)


def check_reply(reply: EvolveReply, n: int, raw: str = "") -> list[str]:
    """The ``n`` evolved inputs in input order, matched as a batch reply is
    (:mod:`synth.stage.batch`); OutputParseError if one is left unmatched or blank."""
    return values_of(reply, n, WHAT, evolved_input, raw)


def parse(text: str, n: int) -> list[str]:
    """Parse a reply for ``n`` inputs; OutputParseError (with the raw text) otherwise."""
    return check_reply(parse_verdict(text, EvolveReply), n, raw=text)


def _original(draft: Draft) -> str:
    return draft.history[0]["input"] if draft.history else draft.input


async def _evolve_group(
    drafts: list[Draft],
    llm: LLM,
    config: EvolutionConfig,
    seed: int | None,
    prompts: PromptSet | None,
    stats: StageStats | None,
) -> None:
    """``num_evolutions`` rounds over the drafts of one context, one request a round."""
    context = drafts[0].context
    language = draft_language(drafts[0])
    n_chunks = len(context.texts) if context is not None else 0
    rngs = {d.id: draft_rng(seed, d.id, LABEL) for d in drafts}
    if len(applicable_evolutions(config, n_chunks)) < sum(
        1 for w in config.evolutions.values() if w > 0
    ):
        for draft in drafts:
            draft.metadata["evolution_reweighted"] = True
            if stats is not None:
                stats.note("reweighted")
    todo = list(drafts)
    for _round in range(config.num_evolutions):
        chosen: list[tuple[Draft, Evolution]] = []
        for draft in todo:
            evolution = choose_evolution(rngs[draft.id], config, n_chunks)
            if evolution is None:
                draft.metadata["evolution_skipped"] = (
                    "no applicable evolution for a one-chunk context"
                )
                if stats is not None:
                    stats.note("skipped")
            else:
                chosen.append((draft, evolution))
        if not chosen:
            return
        items = [EvolveItem(_original(d), d.input, e) for d, e in chosen]

        def prompt(positions: list[int], items: list[EvolveItem] = items) -> str:
            return build_prompt([items[i] for i in positions], context, prompts, language)

        request: BatchRequest[str | None] = BatchRequest(
            LABEL, EvolveReply, WHAT, prompt, evolved_input, unanswered=lambda: None
        )
        results = await ask_batch(llm, request, len(items), stats)
        todo = []
        for (draft, evolution), result in zip(chosen, results, strict=True):
            if isinstance(result, ModelError):
                drop_failed(draft, LABEL, result)
                continue
            todo.append(draft)
            held = MISSING if result is None else held_back(draft.input, result)
            if result is None or held is not None:
                # the model declined, left it out, or added more than the budget: the input
                # stays as it was
                why = held or MISSING
                draft.metadata.setdefault("evolutions_held", []).append(
                    {"evolution": evolution.value, "why": why}
                )
                if stats is not None:
                    stats.note(why)
                continue
            draft.revise(LABEL, result, evolution=evolution.value)
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

    Drafts are batched by context (one request per context per round). An evolved input replaces
    the old one (kept in ``history``) and its name is appended to ``evolutions``; a model failure
    drops the draft with ``model_error:<kind>``.
    """

    async def step(batch: list[Draft]) -> None:
        if config.num_evolutions > 0:
            await _evolve_group(batch, llm, config, seed, prompts, stats)

    return await run_live_batches(drafts, MAX_BATCH, step, stats)


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
    "MAX_BATCH",
    "EvolveItem",
    "EvolveReply",
    "EvolveStep",
    "applicable_evolutions",
    "build_prompt",
    "check_reply",
    "choose_evolution",
    "draft_rng",
    "evolved_input",
    "parse",
    "run",
]
