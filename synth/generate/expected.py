"""Expected outputs: cited answers from the context, for all inputs of one context in one request.

Each answer comes with quotes of the context that support it. Every quote is located in the
context's chunks (:mod:`synth.generate.citations`: exact, then fuzzy); the located ones are the
golden's ``citations`` and its ``grounding`` says how much of the answer they cover. An answer
whose grounding score is under ``grounding_threshold`` is asked again once, with what failed; if
it still falls short the draft is dropped as ``ungrounded`` (the run's top-up replaces it). A
quote that is not in the context is never a citation. An answer confidently in another language
than the draft's (:mod:`synth.generate.language`) is asked again the same way, with that reason,
and dropped as ``wrong_language`` when it still is. Without a context (generation from scratch)
there is nothing to cite: answers are kept as they are, with no citations recorded.

The reply gives, for each input, its quotes, then ``answerable`` (``fully``, ``partly``, ``no``),
then the answer, in that order (the answer is written after its evidence and its verdict). An
answer that is not ``fully`` answerable, or that hedges ("the context does not say exactly; it only
mentions ..."), which counts as ``partly`` whatever the reply says, is asked again the same way and
dropped as ``unanswerable`` when it still is. Last, a kept answer whose words the question gained
after it was first written (by evolution or styling) is dropped as ``answer_leaked``: the question
gives its answer away (:func:`synth.generate.input_checks.answer_leak`). That check needs the
answer, so it runs here, and it drops rather than rewrites: a new question would need a new answer.
Out-of-scope goldens never reach this step (their expected output is the refusal).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from synth._language import check_language, prepare_checks
from synth.data import Context
from synth.errors import ModelError, OutputParseError
from synth.generate._rewrite import run_live_batches
from synth.generate.base import Source
from synth.generate.citations import (
    Citation,
    Grounding,
    SourceChunk,
    copied,
    describe_failures,
    grounding,
    locate_all,
)
from synth.generate.config import DEFAULT_GROUNDING_THRESHOLD, StylingConfig
from synth.generate.draft import Draft, drop_failed
from synth.generate.input_checks import (
    ANSWER_LEAKED,
    UNANSWERABLE,
    Answerable,
    answer_leak,
    hedged,
)
from synth.generate.language import (
    WRONG_LANGUAGE,
    context_language,
    draft_language,
    language_line,
)
from synth.generate.question_types import expected_note
from synth.llm.base import LLM
from synth.llm.structured import parse_verdict
from synth.stage.batch import BatchRequest, ask_batch, values_of
from synth.stage.stats import StageStats
from synth.stage.templates import PromptSet, prompts_for
from synth.stage.text import context_text, orientation_text, tagged_list

LABEL = "expected"
#: how a failed match of a reply is described
WHAT = "the reply answers items"
#: inputs answered in one request at most
MAX_BATCH = 10
#: the drop reason of an answer its quotes do not support
UNGROUNDED = "ungrounded"


class _Output(BaseModel):
    # the quotes and the verdict before the answer: strict decoding writes fields in order, so
    # the answer is written from the quotes, after the model said how fully they answer
    index: int
    quotes: list[str] = Field(default_factory=list)  # passages of the context, word for word
    # required in the schema sent (strict schemas require every field); a reply parsed without
    # it, from a model without structured outputs, is judged by its hedges alone
    answerable: Answerable = "fully"
    expected_output: str


@dataclass(frozen=True)
class Answer:
    """One expected output, the quotes the model gave for it and how fully it says the context
    answers its input."""

    text: str
    quotes: tuple[str, ...] = ()
    answerable: str = "fully"


class ExpectedReply(BaseModel):
    """The reply schema: one answer per input, in order."""

    outputs: list[_Output]


def build_prompt(
    inputs: Sequence[str],
    context: Context | None,
    output_format: str | None = None,
    prompts: PromptSet | None = None,
    feedback: Sequence[str] | None = None,
    language: str | None = None,
) -> str:
    """The prompt answering ``inputs`` from ``context`` (in ``output_format`` when given, in
    ``language``); ``feedback`` (one per input) says what was wrong with the earlier answer to
    each."""
    fmt = f"\nWrite each answer in this format: {output_format}\n" if output_format else ""
    return prompts_for(prompts, language).render(
        "expected",
        inputs=tagged_list("inputs", "input", list(inputs)),
        context=context_text(context),
        orientation=orientation_text(context),
        count=len(inputs),
        output_format=fmt,
        feedback=_feedback_block(feedback),
        language=language_line(language, "every answer (the quotes stay as the context has them)"),
    )


def _feedback_block(feedback: Sequence[str] | None) -> str:
    if not feedback:
        return ""
    problems = tagged_list("problems", "problem", list(feedback))
    return (
        "\nYour earlier answers to these inputs were not supported by the context or not in the"
        " language asked for (one problem per input, in order):"
        f"\n{problems}\nAnswer again, quoting the context exactly.\n"
    )


def check_reply(reply: ExpectedReply, n: int, raw: str = "") -> list[Answer]:
    """The ``n`` answers in input order, matched as a batch reply is
    (:mod:`synth.stage.batch`); OutputParseError if one is left unmatched or blank."""
    return values_of(reply, n, WHAT, _answer, raw)


def parse(text: str, n: int) -> list[Answer]:
    """Parse a reply for ``n`` inputs; OutputParseError (with the raw text) otherwise."""
    return check_reply(parse_verdict(text, ExpectedReply), n, raw=text)


def _answer(entry: _Output) -> Answer:
    text = entry.expected_output.strip()
    if not text:
        raise OutputParseError("the answer is blank")
    # the context was shown escaped (synth._untrusted): a quote copied from it carries the escapes
    quotes = (q.replace("<\\", "<").strip() for q in entry.quotes)
    return Answer(text, tuple(q for q in quotes if q), entry.answerable)


def source_chunks(context: Context | None) -> list[SourceChunk]:
    """The chunks of ``context`` as citations are located in, with their pages where known."""
    if context is None:
        return []
    pages: list[Any] = list(context.metadata.get("pages") or [])
    pages += [None] * (len(context.texts) - len(pages))
    return [
        SourceChunk(chunk_id=cid, text=text, pages=tuple((int(n), int(o)) for n, o in breaks or ()))
        for cid, text, breaks in zip(context.chunk_ids, context.texts, pages, strict=False)
    ]


@dataclass(frozen=True)
class Checked:
    """An answer with its located citations, its grounding and, when short, what failed;
    ``wrong_language`` when the answer is confidently not in the language asked for."""

    answer: Answer
    citations: list[Citation]
    grounding: Grounding
    problem: str
    wrong_language: bool = False
    cross_lingual: bool = False
    #: why the answer does not answer its input fully ("" when it does)
    partial: str = ""

    def rank(self) -> tuple[bool, bool, float]:
        """What makes one attempt better than another: the right language, a full answer, then
        grounding."""
        return (not self.wrong_language, not self.partial, self.grounding.score)

    @property
    def short(self) -> bool:
        """Whether the answer needs asking again (then dropping): language, answerability."""
        return self.wrong_language or bool(self.partial)


def check_answer(
    answer: Answer,
    chunks: Sequence[SourceChunk],
    threshold: float,
    language: str | None = None,
    context_language: str | None = None,
) -> Checked:
    """Locate ``answer``'s quotes in ``chunks`` and score its grounding against ``threshold``;
    check that it is written in ``language`` (when given). An answer in another language than its
    context (a cross-lingual set) cannot share words with its quotes: its grounding score is the
    share of its quotes found in the context."""
    found = locate_all(answer.quotes, chunks)
    score = grounding(answer.text, answer.quotes, found, chunks)
    cross = bool(language and context_language and language != context_language)
    if cross and score.quotes:
        score = score.model_copy(update={"score": round(score.found / score.quotes, 4)})
    verdict = None
    if needs_language_check(answer.text, chunks, language, context_language):
        assert language is not None
        verdict = check_language(answer.text, language, [c for c in (context_language,) if c])
    problem = ""
    if verdict is not None and verdict.mismatch:
        problem = verdict.reason("answer")
    elif not answer.quotes:
        problem = "the answer came with no quotes from the context"
    elif not score.all_found:
        problem = describe_failures(answer.quotes, found)
    elif score.score < threshold:
        problem = (
            f"the quotes support only {score.score:.0%} of the answer's words: quote the passages "
            "behind every statement, or leave out what the context does not say"
        )
    wrong = verdict is not None and verdict.mismatch
    partial = partial_answer(answer) if chunks else ""
    if partial and not problem:
        problem = (
            f"{partial}: answer every part of the input from the quotes, stating it plainly, or "
            'say "partly" or "no" in "answerable" when the context does not answer it all'
        )
    citations = [c for c in found if c is not None]
    return Checked(answer, citations, score, problem, wrong, cross, partial)


def needs_language_check(
    text: str,
    chunks: Sequence[SourceChunk],
    language: str | None,
    context_language: str | None,
) -> bool:
    """Whether an answer's ``text`` must be checked to be in ``language``: not when none is asked,
    nor when the text is copied word for word from its context (``chunks``) written in that same
    language. Such a copy is the document's own words, and the answers most often copied, a
    phrase ("of the local grid operator."), are those whose few words leave lingua's trigrams in
    doubt, so that checking them would load the full models of nine languages (seconds of a core
    holding the interpreter) to learn what the context already says."""
    if not language:
        return False
    return not (language == context_language and copied(text, chunks))


def partial_answer(answer: Answer) -> str:
    """Why ``answer`` does not answer its input fully ("" when it does): the model said so
    (``answerable`` partly or no), or the answer hedges (:func:`synth.generate.input_checks.hedged`),
    which counts as partly whatever ``answerable`` says."""
    if answer.answerable != "fully":
        return f"the reply says the context answers it {answer.answerable!r}"
    hedge = hedged(answer.text)
    if hedge:
        return f"the answer hedges ({hedge!r})"
    return ""


def _record(draft: Draft, checked: Checked) -> None:
    draft.expected_output = checked.answer.text
    draft.metadata["citations"] = [c.model_dump(mode="json") for c in checked.citations]
    draft.metadata["grounding"] = checked.grounding.model_dump(mode="json")
    if checked.cross_lingual:
        draft.metadata["grounding"]["measure"] = "quotes_found"


async def _ask(
    drafts: list[Draft],
    llm: LLM,
    output_format: str | None,
    prompts: PromptSet | None,
    stats: StageStats | None,
    feedback: list[str] | None = None,
) -> list[Answer | ModelError]:
    context = drafts[0].context
    language = draft_language(drafts[0])

    def prompt(positions: list[int]) -> str:
        asked = [drafts[i].input for i in positions]
        told = [feedback[i] for i in positions] if feedback is not None else None
        return build_prompt(asked, context, output_format, prompts, told, language)

    request = BatchRequest(LABEL, ExpectedReply, WHAT, prompt, _answer)
    return await ask_batch(llm, request, len(drafts), stats)


async def _prepare(
    answers: Sequence[Answer | ModelError],
    chunks: Sequence[SourceChunk],
    languages: tuple[str | None, str | None],
) -> None:
    """The language checks of ``answers`` that need the full models, judged off the event loop
    before :func:`check_answer` (:func:`synth._language.prepare_checks`)."""
    texts = [
        a.text
        for a in answers
        if not isinstance(a, ModelError) and needs_language_check(a.text, chunks, *languages)
    ]
    await prepare_checks(texts, languages[0], [languages[1] or ""])


async def _answer_group(
    drafts: list[Draft],
    llm: LLM,
    output_format: str | None,
    prompts: PromptSet | None,
    stats: StageStats | None,
    threshold: float,
) -> None:
    chunks = source_chunks(drafts[0].context)
    languages = (draft_language(drafts[0]), context_language(drafts[0].context))
    short: dict[int, Checked] = {}
    answers = await _ask(drafts, llm, output_format, prompts, stats)
    await _prepare(answers, chunks, languages)
    for i, (draft, answer) in enumerate(zip(drafts, answers, strict=True)):
        if isinstance(answer, ModelError):
            drop_failed(draft, LABEL, answer)
        elif not chunks:
            draft.expected_output = answer.text  # nothing to cite
            checked = check_answer(answer, chunks, 0.0, *languages)
            if checked.wrong_language:
                short[i] = checked
        else:
            checked = check_answer(answer, chunks, threshold, *languages)
            _record(draft, checked)
            if checked.grounding.score < threshold or checked.short:
                short[i] = checked
    if short:
        await _ask_again(drafts, short, llm, output_format, prompts, stats, threshold)
    if chunks:
        _check_leaks(drafts)


def _note_again(stats: StageStats | None, short: dict[int, Checked], threshold: float) -> None:
    if stats is None:
        return
    wrong = sum(1 for c in short.values() if c.wrong_language)
    partial = sum(
        1
        for c in short.values()
        if not c.wrong_language and c.partial and c.grounding.score >= threshold
    )
    stats.note("asked_again_ungrounded", len(short) - wrong - partial)
    if wrong:
        stats.note("asked_again_wrong_language", wrong)
    if partial:
        stats.note("asked_again_unanswerable", partial)


#: the steps that rewrite an input without being asked to fix it: where leaks appear
_REWRITERS = frozenset({"evolve", "style"})


def _before_rewrites(draft: Draft) -> str | None:
    """The input before evolution and styling rewrote it, when nothing else has since (a rewrite
    asked with feedback writes a new question, whose words are its own); None otherwise."""
    stages = [str(h.get("stage")) for h in draft.history]
    first = next((i for i, s in enumerate(stages) if s in _REWRITERS), None)
    if first is None or any(s not in _REWRITERS for s in stages[first:]):
        return None
    return str(draft.history[first]["input"])


def _check_leaks(drafts: list[Draft]) -> None:
    """Drop each live draft whose question gives away its answer (``answer_leaked``): the words of
    the answer the question gained after it was first written (:func:`answer_leak`)."""
    for draft in drafts:
        if not draft.kept or draft.expected_output is None or draft.context is None:
            continue
        leak = answer_leak(
            draft.input, draft.expected_output, _before_rewrites(draft), draft.context.texts
        )
        if leak is not None:
            draft.drop(LABEL, ANSWER_LEAKED, leak.detail)


async def _ask_again(
    drafts: list[Draft],
    short: dict[int, Checked],
    llm: LLM,
    output_format: str | None,
    prompts: PromptSet | None,
    stats: StageStats | None,
    threshold: float,
) -> None:
    """Ask once more for the ``short`` answers, with what failed; keep the better of the two
    attempts, and drop the drafts whose best attempt still fails."""
    chunks = source_chunks(drafts[0].context)
    languages = (draft_language(drafts[0]), context_language(drafts[0].context))
    _note_again(stats, short, threshold)
    again = [drafts[i] for i in short]
    feedback = [c.problem for c in short.values()]
    replies = await _ask(again, llm, output_format, prompts, stats, feedback)
    await _prepare(replies, chunks, languages)
    for (i, first), reply in zip(short.items(), replies, strict=True):
        best = first
        if not isinstance(reply, ModelError):
            second = check_answer(reply, chunks, threshold if chunks else 0.0, *languages)
            if second.rank() > first.rank():
                best = second
                if chunks:
                    _record(drafts[i], best)
                else:
                    drafts[i].expected_output = best.answer.text
        if best.wrong_language:
            drafts[i].drop(LABEL, WRONG_LANGUAGE, f"{best.problem}, after it was asked again")
        elif chunks and best.grounding.score < threshold:
            detail = f"grounding {best.grounding.score:.2f} under {threshold}: {best.problem}"
            drafts[i].drop(LABEL, UNGROUNDED, detail)
        elif best.partial:
            drafts[i].drop(LABEL, UNANSWERABLE, f"{best.partial}, after it was asked again")


async def run(
    drafts: Sequence[Draft],
    llm: LLM,
    *,
    styling: StylingConfig | None = None,
    prompts: PromptSet | None = None,
    stats: StageStats | None = None,
    grounding_threshold: float = DEFAULT_GROUNDING_THRESHOLD,
    question_type: str | None = None,
) -> list[Draft]:
    """Answer every live draft, one request per context; returns all drafts, dropped ones marked.
    ``question_type`` adds what its answers must do to the format line.

    A reply that misnumbers its answers keeps those it can match and asks again for the rest
    (``synth.stage.batch``); a draft left unanswered is dropped with ``model_error:<kind>``,
    one whose quotes do not support it (after one more try) with ``ungrounded``.
    """
    output_format = styling.expected_output_format if styling is not None else None
    note = expected_note(question_type)
    if note is not None:
        output_format = f"{output_format}; {note}" if output_format else note

    async def step(batch: list[Draft]) -> None:
        await _answer_group(batch, llm, output_format, prompts, stats, grounding_threshold)

    return await run_live_batches(drafts, MAX_BATCH, step, stats)


@dataclass(frozen=True)
class ExpectedStep:
    """Expected outputs as a step: a cited, checked answer for each live draft."""

    name: ClassVar[str] = LABEL
    llm: LLM
    styling: StylingConfig
    prompts: PromptSet
    grounding_threshold: float = DEFAULT_GROUNDING_THRESHOLD
    question_type: str | None = None

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        return await run(
            drafts,
            self.llm,
            styling=self.styling,
            prompts=self.prompts,
            grounding_threshold=self.grounding_threshold,
            question_type=self.question_type,
        )


__all__ = [
    "UNANSWERABLE",
    "UNGROUNDED",
    "partial_answer",
    "Answer",
    "Checked",
    "ExpectedReply",
    "ExpectedStep",
    "build_prompt",
    "check_answer",
    "check_reply",
    "needs_language_check",
    "parse",
    "run",
    "source_chunks",
]
