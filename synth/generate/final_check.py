"""The final check of each input: the question that is delivered, after evolution and styling.

The filter scores inputs as they are first written; evolution and styling rewrite them after,
and that is where references to "the passage", copied spans, drift and leaks appear. This step
checks the input as it will be delivered, before its expected output is written:

1. plain code first, at no request cost (:mod:`synth.generate.input_checks`): a reference to the
   passage (``meta_reference``), a span of the context copied word for word (``copied_span``),
   two questions in one outside the ``double`` type (``double_question``), the length budget
   (``too_long``);
2. then, for the inputs that pass, two critic requests per context, sent together:
   - the inputs *alone*, without the context or the orientation (``check_alone``): can a user
     who never saw the documents tell what it asks, does it name its subject? (``not_standalone``)
     A model that sees the context reads "the device" as the device it just read about, so this
     judgement gets a request of its own rather than a field of the second;
   - the inputs with the context (``check_context``): does the context answer each *fully*?
     (``unanswerable``; the critic's quotes come before its verdict). Out-of-scope inputs, meant
     to be unanswerable, skip it. An input its reply leaves out while it judges the others is not
     asked again: the expected-output step judges how fully the context answers it anyway
     (counted in the stage's notes as ``check_context_left_to_the_answer``).

An input with a problem is rewritten once, with the problem as feedback (one request for the
context's failing inputs), and checked again the same way; one that still fails is dropped with
the reason of the problem it still has and what was found (``detail``). The inputs plain code
faults are rewritten before the critic is asked, so the critic sees each input of the context
once, rewritten or not: a context whose only problems plain code finds costs one rewrite and two
checks, not two checks, a rewrite and two more. A check request that fails drops
its inputs as ``model_error:<kind>``. The answer's own checks (a leak of the answer into the
question, a hedged answer) need the answer: the expected-output step runs them.

The step foresees keeping the inputs plain code passes (:meth:`FinalCheckStep.foreseen_kept`):
when that is every input of the context, their expected outputs are asked for beside the
critic's requests (:mod:`synth.run.ahead`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from synth.data import Context
from synth.errors import ModelError, OutputParseError
from synth.generate._rewrite import run_live_batches
from synth.generate.base import Source
from synth.generate.draft import Draft, drop_failed
from synth.generate.filter import RewriteReply, build_rewrite_prompt
from synth.generate.input_checks import UNANSWERABLE, Answerable, Problem, input_problems
from synth.generate.language import draft_language
from synth.generate.question_types import OUT_OF_SCOPE
from synth.llm.base import LLM
from synth.stage.batch import BatchRequest, ask_batch
from synth.stage.stats import StageStats
from synth.stage.templates import PromptSet, prompts_for
from synth.stage.text import context_text, orientation_text, tagged_list

LABEL = "check"
ALONE_LABEL = "check_alone"
CONTEXT_LABEL = "check_context"
REWRITE_LABEL = "check_rewrite"
#: the drop reason of an input a reader without the documents cannot understand
NOT_STANDALONE = "not_standalone"
#: the note of the inputs a check-with-the-context reply left out, judged by their answers instead
LEFT_TO_THE_ANSWER = "check_context_left_to_the_answer"
#: inputs checked in one request at most
MAX_BATCH = 10
#: the question type whose inputs may ask two questions
DOUBLE = "double"


class _AloneVerdict(BaseModel):
    index: int
    reason: str = ""
    standalone: bool


class AloneReply(BaseModel):
    """The reply schema of the check without the context: one verdict per input, its reason
    first."""

    verdicts: list[_AloneVerdict]


class _ContextVerdict(BaseModel):
    index: int
    quotes: list[str] = Field(default_factory=list)
    answerable: Answerable


class ContextReply(BaseModel):
    """The reply schema of the check against the context: one verdict per input, the quotes
    that answer it before how fully they do."""

    verdicts: list[_ContextVerdict]


def build_alone_prompt(
    inputs: Sequence[str], prompts: PromptSet | None = None, language: str | None = None
) -> str:
    """The prompt asking whether each of ``inputs``, seen alone, stands on its own."""
    return prompts_for(prompts, language).render(
        "check_alone", inputs=tagged_list("inputs", "input", list(inputs)), count=len(inputs)
    )


def build_context_prompt(
    inputs: Sequence[str],
    context: Context | None,
    prompts: PromptSet | None = None,
    language: str | None = None,
) -> str:
    """The prompt asking how fully ``context`` answers each of ``inputs``."""
    return prompts_for(prompts, language).render(
        "check_context",
        orientation=orientation_text(context),
        context=context_text(context),
        inputs=tagged_list("inputs", "input", list(inputs)),
        count=len(inputs),
    )


def _plain_problems(text: str, context: Context | None, question_type: str | None) -> list[Problem]:
    """The problems plain code finds in the input ``text`` (see the module's first check)."""
    sources = list(context.texts) if context is not None else []
    return input_problems(text, sources, allow_double=question_type == DOUBLE)


@dataclass(frozen=True)
class _Verdict:
    """One check's verdict on one input: the problem it found (None: it passes)."""

    problem: Problem | None


def _alone(entry: _AloneVerdict) -> _Verdict:
    if entry.standalone:
        return _Verdict(None)
    why = entry.reason.strip() or "no reason given"
    return _Verdict(
        Problem(
            NOT_STANDALONE,
            f"seen alone, it cannot be understood: {why}",
            f"a reader without the documents cannot tell what it asks ({why}): name its subject",
        )
    )


def _answerable(entry: _ContextVerdict) -> _Verdict:
    if entry.answerable == "fully":
        return _Verdict(None)
    how = "only in part" if entry.answerable == "partly" else "not at all"
    return _Verdict(
        Problem(
            UNANSWERABLE,
            f"its context answers it {how} (answerable: {entry.answerable})",
            f"the context answers it {how}: ask only what the context states",
        )
    )


def _rewritten(entry: object) -> str:
    text = str(getattr(entry, "input", "")).strip()
    if not text:
        raise OutputParseError("the rewritten input is blank")
    return text


Found = dict[str, "list[Problem] | ModelError"]


@dataclass(frozen=True)
class _Checker:
    """The checks of the inputs of one context."""

    llm: LLM
    prompts: PromptSet | None
    stats: StageStats | None
    question_type: str | None
    context: Context | None
    language: str | None

    def plain(self, drafts: list[Draft]) -> Found:
        """Each draft's problems that plain code finds; drafts without any are left out."""
        found: Found = {}
        for draft in drafts:
            plain = _plain_problems(draft.input, self.context, self.question_type)
            if plain:
                found[draft.id] = plain
        return found

    async def judged(self, drafts: list[Draft]) -> Found:
        """Each draft's first problem by the critic (alone, then with the context), or the error
        that left it unchecked; drafts that pass are left out."""
        found: Found = {}
        if not drafts:
            return found
        texts = [d.input for d in drafts]
        with_context = self.context is not None and self.question_type != OUT_OF_SCOPE
        alone, answered = await asyncio.gather(
            self._ask(ALONE_LABEL, AloneReply, _alone, texts),
            self._ask(
                CONTEXT_LABEL,
                ContextReply,
                _answerable,
                texts if with_context else [],
                unanswered=self._left_to_the_answer,
            ),
        )
        for verdicts in (alone, answered):
            for draft, verdict in zip(drafts, verdicts, strict=False):
                if draft.id in found:
                    continue  # the first failure of a draft is the one it is rewritten for
                if isinstance(verdict, ModelError):
                    found[draft.id] = verdict
                elif verdict.problem is not None:
                    found[draft.id] = [verdict.problem]
        return found

    async def problems(self, drafts: list[Draft]) -> Found:
        """Each failing draft's problems (plain code first, then the critic's for the drafts plain
        code passes), or the error that left it unchecked; drafts that pass are left out."""
        found = self.plain(drafts)
        found.update(await self.judged([d for d in drafts if d.id not in found]))
        return found

    def _left_to_the_answer(self) -> _Verdict:
        """An input the check with the context leaves out while it judges the others: not asked
        again, as the expected-output step judges how fully the context answers it anyway (and
        drops it as ``unanswerable`` when it does not)."""
        if self.stats is not None:
            self.stats.note(LEFT_TO_THE_ANSWER)
        return _Verdict(None)

    async def _ask(
        self,
        label: str,
        schema: type[BaseModel],
        value: Callable[[Any], _Verdict],
        texts: list[str],
        unanswered: Callable[[], _Verdict] | None = None,
    ) -> list[_Verdict | ModelError]:
        if not texts:
            return []

        def prompt(positions: list[int]) -> str:
            chosen = [texts[i] for i in positions]
            if label == ALONE_LABEL:
                return build_alone_prompt(chosen, self.prompts, self.language)
            return build_context_prompt(chosen, self.context, self.prompts, self.language)

        what = f"the {label} reply covers items"
        request = BatchRequest(label, schema, what, prompt, value, unanswered)
        return await ask_batch(self.llm, request, len(texts), self.stats)

    async def rewrite(self, drafts: list[Draft], found: Found) -> list[str | ModelError]:
        pairs = []
        for draft in drafts:
            problems = found[draft.id]
            assert isinstance(problems, list)
            pairs.append((draft.input, "; ".join(p.feedback for p in problems)))

        def prompt(positions: list[int]) -> str:
            chosen = [pairs[i] for i in positions]
            return build_rewrite_prompt(chosen, self.context, self.prompts, self.language)

        what = "the rewrite reply covers items"
        request = BatchRequest(REWRITE_LABEL, RewriteReply, what, prompt, _rewritten)
        return await ask_batch(self.llm, request, len(pairs), self.stats)


async def _asked_again(
    checker: _Checker, failing: list[Draft], found: Found, stats: StageStats | None
) -> list[Draft]:
    """Rewrite each of ``failing`` once with its problems as feedback; returns those rewritten
    (a draft whose rewrite failed is dropped with its first problem)."""
    if not failing:
        return []
    if stats is not None:
        stats.note("asked_again", len(failing))
    rewritten = await checker.rewrite(failing, found)
    again = []
    for draft, text in zip(failing, rewritten, strict=True):
        first = found[draft.id]
        assert isinstance(first, list)
        if isinstance(text, ModelError):
            draft.drop(LABEL, first[0].reason, f"{first[0].detail}; asked again: {text}")
            continue
        draft.revise(LABEL, text, problem=first[0].reason, detail=first[0].detail)
        again.append(draft)
    return again


def _drop_failing(drafts: list[Draft], found: Found) -> None:
    """Drop each of ``drafts`` that ``found`` faults, after its one rewrite."""
    for draft in drafts:
        problems = found.get(draft.id)
        if isinstance(problems, ModelError):
            drop_failed(draft, LABEL, problems)
        elif problems:
            draft.drop(LABEL, problems[0].reason, f"{problems[0].detail}, after it was asked again")


async def _check_group(
    drafts: list[Draft],
    llm: LLM,
    prompts: PromptSet | None,
    stats: StageStats | None,
    question_type: str | None,
) -> None:
    checker = _Checker(
        llm, prompts, stats, question_type, drafts[0].context, draft_language(drafts[0])
    )
    # Plain code costs nothing, so the inputs it faults are rewritten before the critic is asked:
    # then the critic sees every input of the context once, rewritten or not (two requests, not
    # two before the rewrite and two after).
    plain = checker.plain(drafts)
    first = await _asked_again(checker, [d for d in drafts if d.id in plain], plain, stats)
    _drop_failing(first, checker.plain(first))
    live = [d for d in drafts if d.kept]
    judged = await checker.judged(live)
    rewritten = {d.id for d in first}
    failing = []
    for draft in live:
        problems = judged.get(draft.id)
        if isinstance(problems, ModelError) or (problems and draft.id in rewritten):
            _drop_failing([draft], judged)  # a model error, or a problem after its one rewrite
        elif problems:
            failing.append(draft)
    again = await _asked_again(checker, failing, judged, stats)
    _drop_failing(again, await checker.problems(again) if again else {})


async def run(
    drafts: Sequence[Draft],
    llm: LLM,
    *,
    prompts: PromptSet | None = None,
    stats: StageStats | None = None,
    question_type: str | None = None,
) -> list[Draft]:
    """Check every live draft's input (see the module); returns all drafts, dropped ones marked
    with the reason of the problem that remained (or ``model_error:<kind>``)."""

    async def step(batch: list[Draft]) -> None:
        await _check_group(batch, llm, prompts, stats, question_type)

    return await run_live_batches(drafts, MAX_BATCH, step, stats)


@dataclass(frozen=True)
class FinalCheckStep:
    """The final check as a step: each live draft's input checked, rewritten once, or dropped."""

    name: ClassVar[str] = LABEL
    llm: LLM
    prompts: PromptSet
    question_type: str | None = None

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        return await run(drafts, self.llm, prompts=self.prompts, question_type=self.question_type)

    def foreseen_kept(self, drafts: list[Draft]) -> list[Draft]:
        """The live ``drafts`` plain code passes: the critic's requests rarely rewrite them, while
        nearly every one plain code faults is rewritten (so its expected output, asked ahead,
        would be asked again)."""
        return [
            d
            for d in drafts
            if d.kept and not _plain_problems(d.input, d.context, self.question_type)
        ]


__all__ = [
    "ALONE_LABEL",
    "CONTEXT_LABEL",
    "LABEL",
    "NOT_STANDALONE",
    "REWRITE_LABEL",
    "UNANSWERABLE",
    "AloneReply",
    "ContextReply",
    "FinalCheckStep",
    "build_alone_prompt",
    "build_context_prompt",
    "run",
]
