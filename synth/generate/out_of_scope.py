"""Out-of-scope questions: on the corpus' subject, not answered by it, and checked to be so.

The inputs step of an ``out_of_scope`` run asks, with the context as a sample of the documents'
subject, for questions the documents do not answer (the ``inputs_out_of_scope`` prompt). A model's
word that a question is out of scope is not trusted: :class:`ScopeStep` looks up each question's
best chunks in the run's whole corpus (BM25 and, when the inputs can be embedded in the chunks'
space, cosine: :class:`synth.generate.base.CorpusSearch`) together with its own context's chunks,
and gives them to the critic, which must confirm that none of them answers it. A question the
critic finds answered is dropped as ``answerable``, with the critic's reason and the chunks it saw.

A kept question records the chunks that came closest (``metadata["near_miss_chunk_ids"]``); its
expected output is the configured refusal (``GenerationConfig.refusal_text``), so no expected-output
request is made. The golden's ``context`` is emptied when the dataset is assembled (the chunks its
subject came from stay in ``metadata["topic_chunk_ids"]``): nothing in the corpus answers it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel

from synth._untrusted import tag, wrap
from synth.data import Golden
from synth.errors import ModelError
from synth.generate.base import CorpusSearch, Source
from synth.generate.draft import Draft, drop_failed, live
from synth.llm.base import LLM
from synth.stage.batch import BatchRequest, ask_batch
from synth.stage.templates import PromptSet, default_prompts
from synth.stage.text import tagged
from synth.store.embedder import Embedder

LABEL = "scope"
#: the drop reason of a question some chunk of the corpus answers
ANSWERABLE = "answerable"
#: what a failed match of a reply is described as
WHAT = "the scope reply covers items"
#: the chunks search gives per question, by each of BM25 and cosine
NEAREST = 3
#: questions checked in one request at most
MAX_BATCH = 10
NEAR_MISS_KEY = "near_miss_chunk_ids"
TOPIC_KEY = "topic_chunk_ids"


class Verdict(BaseModel):
    """The critic's verdict on one question: do its passages answer it, and why (not)."""

    reason: str = ""
    answered: bool


class _VerdictItem(BaseModel):
    index: int
    reason: str = ""
    answered: bool


class ScopeReply(BaseModel):
    """The reply schema: one verdict per question, in order."""

    verdicts: list[_VerdictItem]


def build_prompt(
    items: Sequence[tuple[str, Sequence[str]]], prompts: PromptSet | None = None
) -> str:
    """The prompt asking whether each ``(question, passages)`` item's passages answer it."""
    blocks = []
    for i, (question, passages) in enumerate(items, start=1):
        shown = "\n".join(tag("passage", p.strip(), index=j) for j, p in enumerate(passages, 1))
        body = f"{tagged('input', question)}\n{wrap('passages', shown or '(none found)')}"
        blocks.append(wrap("item", body, index=i))
    return (prompts or default_prompts()).render(
        "scope", items=wrap("items", "\n".join(blocks)), count=len(items)
    )


def _verdict(item: _VerdictItem) -> Verdict:
    return Verdict(answered=item.answered, reason=item.reason.strip())


def near_chunks(draft: Draft, found: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The chunks a question is checked against: its own context's, then what search found."""
    own = []
    if draft.context is not None:
        own = list(zip(draft.context.chunk_ids, draft.context.texts, strict=False))
    seen = {chunk_id for chunk_id, _ in own}
    return own + [(c, t) for c, t in found if c not in seen]


@dataclass(frozen=True)
class ScopeStep:
    """The check of an ``out_of_scope`` run, in the filter's place (see the module).

    ``embedder`` embeds the questions for the cosine half of the search (None: BM25 only);
    ``refusal`` becomes each kept question's expected output (None: no expected output)."""

    name: ClassVar[str] = LABEL
    critic: LLM
    search: CorpusSearch | None
    prompts: PromptSet
    refusal: str | None
    embedder: Embedder | None = None

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        todo = live(drafts)
        for start in range(0, len(todo), MAX_BATCH):
            await self._check(todo[start : start + MAX_BATCH])
        return drafts

    async def _found(self, batch: list[Draft]) -> list[list[tuple[str, str]]]:
        if self.search is None:
            return [[] for _ in batch]
        questions = [d.input for d in batch]
        vectors = None
        if self.embedder is not None:
            vectors = await self.embedder.aembed(questions, label=LABEL)
        return await self.search.nearest(questions, NEAREST, vectors=vectors)

    async def _check(self, batch: list[Draft]) -> None:
        near = [near_chunks(d, f) for d, f in zip(batch, await self._found(batch), strict=True)]
        items = [
            (d.input, [text for _, text in chunks]) for d, chunks in zip(batch, near, strict=True)
        ]

        def prompt(positions: list[int]) -> str:
            return build_prompt([items[i] for i in positions], self.prompts)

        request = BatchRequest(LABEL, ScopeReply, WHAT, prompt, _verdict)
        verdicts = await ask_batch(self.critic, request, len(batch))
        for draft, chunks, verdict in zip(batch, near, verdicts, strict=True):
            ids = [chunk_id for chunk_id, _ in chunks]
            if isinstance(verdict, ModelError):
                drop_failed(draft, LABEL, verdict)
            elif verdict.answered:
                detail = f"the critic found it answered in {', '.join(ids)}: {verdict.reason}"
                draft.drop(LABEL, ANSWERABLE, detail)
                draft.metadata[NEAR_MISS_KEY] = ids
            else:
                draft.metadata[NEAR_MISS_KEY] = ids
                draft.metadata["scope_reason"] = verdict.reason
                if self.refusal is not None:
                    draft.expected_output = self.refusal


def unscoped(golden: Golden) -> None:
    """Empty an out-of-scope golden's context (nothing in the corpus answers it), keeping the
    chunks its subject came from in ``metadata["topic_chunk_ids"]``; idempotent."""
    if golden.context_ids or golden.context:
        golden.metadata[TOPIC_KEY] = list(golden.context_ids)
    golden.context = []
    golden.context_ids = []


__all__ = [
    "ANSWERABLE",
    "NEAR_MISS_KEY",
    "TOPIC_KEY",
    "ScopeReply",
    "ScopeStep",
    "Verdict",
    "build_prompt",
    "near_chunks",
    "unscoped",
]
