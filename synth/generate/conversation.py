"""Conversations: multi-turn goldens written from a context, their shape and grounding checked.

The first step of a conversational run (:class:`ConversationStep`) asks for
``max_goldens_per_context`` conversations per context in one request. Each conversation has a
``scenario``, an ``expected_outcome``, a ``user_description`` (the persona: one of the styling
config's ``personas`` when it has some) and ``turns``: 2 to ``max_turns`` user turns, each with
the assistant's reply, whose quotes of the context are located like an expected output's
(:mod:`synth.generate.citations`). A conversation is dropped, with its reason, when

- ``missing_turns``: fewer than two user turns, turns that do not alternate user / assistant (user
  first, assistant last), or a blank turn;
- ``no_scenario``: no scenario;
- ``ungrounded``: an assistant turn whose quotes support less than ``grounding_threshold`` of it.

Turns past ``max_turns`` are cut (``metadata["turns_cut"]``). Whether each follow-up depends on
the turns before it is the next step's check (:mod:`synth.generate.follow_ups`). A draft's
``input`` is the whole conversation as text, so deduplication compares whole conversations.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from synth._language import AUTO, LANGUAGE_KEY
from synth.data import Context
from synth.errors import ModelError, OutputParseError
from synth.generate.base import Source
from synth.generate.citations import SourceChunk
from synth.generate.config import DEFAULT_GROUNDING_THRESHOLD, StylingConfig
from synth.generate.draft import Draft, draft_id, drop_failed
from synth.generate.expected import Answer, check_answer, source_chunks
from synth.generate.language import language_line, target_language
from synth.llm.base import LLM
from synth.llm.structured import parse_verdict
from synth.stage.batch import batch_schema
from synth.stage.call import ask_checked
from synth.stage.config import StageConfig
from synth.stage.templates import PromptSet, prompts_for
from synth.stage.text import context_text, orientation_text, tagged_list

LABEL = "conversation"
MISSING_TURNS = "missing_turns"
NO_SCENARIO = "no_scenario"
UNGROUNDED = "ungrounded"


class ConversationConfig(StageConfig):
    """Conversational goldens: ``max_turns`` user turns at most (each with the assistant's
    reply), at least 2; conversations per context are ``max_goldens_per_context``."""

    max_turns: int = Field(default=3, ge=2, le=10)


class _Exchange(BaseModel):
    user: str
    # the assistant's quotes of the context, written before the reply they support
    quotes: list[str] = Field(default_factory=list)
    assistant: str


class _Conversation(BaseModel):
    index: int
    scenario: str = ""
    expected_outcome: str = ""
    user_description: str = ""
    # exchanges rather than turns: a reply cannot break the user / assistant alternation
    exchanges: list[_Exchange] = Field(default_factory=list, json_schema_extra={"minItems": 2})


class ConversationReply(BaseModel):
    """The reply schema: one conversation per entry, in order."""

    conversations: list[_Conversation]


def build_prompt(
    context: Context,
    count: int,
    max_turns: int,
    personas: Sequence[str] = (),
    prompts: PromptSet | None = None,
    language: str | None = None,
) -> str:
    """The prompt asking for ``count`` conversations from ``context`` (one user per persona), in
    ``language``."""
    shown = ""
    if personas:
        listed = tagged_list("personas", "persona", list(personas))
        shown = f"\nThe user of each conversation, in order (its user_description):\n{listed}\n"
    return prompts_for(prompts, language).render(
        LABEL,
        context=context_text(context),
        orientation=orientation_text(context),
        count=count,
        max_turns=max_turns,
        personas=shown,
        language=language_line(language, "every turn (the user's and the assistant's)"),
    )


def parse(text: str, n: int) -> list[_Conversation]:
    """The reply's conversations, at most ``n``, in reply order; OutputParseError (with the raw
    text) when it holds none."""
    reply = parse_verdict(text, ConversationReply)
    if not reply.conversations:
        raise OutputParseError("the reply holds no conversation", raw=text)
    return reply.conversations[:n]


def shape_problem(exchanges: Sequence[_Exchange]) -> str:
    """What is wrong with the exchanges ('' when they make a conversation)."""
    if len(exchanges) < 2:
        return f"{len(exchanges)} user turn(s); a conversation needs two or more"
    for number, exchange in enumerate(exchanges, start=1):
        if not exchange.user.strip() or not exchange.assistant.strip():
            return f"exchange {number} has a blank turn"
    return ""


def as_text(turns: Sequence[dict[str, Any]]) -> str:
    """The conversation as one text (what deduplication compares): ``role: content`` lines."""
    return "\n".join(f"{t['role']}: {t['content']}" for t in turns)


def _ground(
    draft: Draft, exchanges: list[_Exchange], chunks: list[SourceChunk], threshold: float
) -> None:
    """Locate each assistant turn's quotes; the final turn's citations are the golden's."""
    rows: list[dict[str, Any]] = []
    worst: tuple[float, int, str] | None = None
    for number, exchange in enumerate(exchanges, start=1):
        rows.append({"role": "user", "content": exchange.user.strip(), "metadata": {}})
        answer = exchange.assistant.strip()
        row: dict[str, Any] = {"role": "assistant", "content": answer, "metadata": {}}
        if chunks:
            quotes = tuple(q.replace("<\\", "<").strip() for q in exchange.quotes if q.strip())
            checked = check_answer(Answer(answer, quotes), chunks, threshold)
            row["metadata"] = {
                "citations": [c.model_dump(mode="json") for c in checked.citations],
                "grounding": checked.grounding.model_dump(mode="json"),
            }
            score = checked.grounding.score
            if score < threshold and (worst is None or score < worst[0]):
                worst = (score, 2 * number, checked.problem)
        rows.append(row)
    assert draft.conversation is not None
    draft.conversation["turns"] = rows
    draft.input = as_text(rows)
    draft.metadata.update(rows[-1]["metadata"])
    if worst is not None:
        score, number, problem = worst
        detail = f"turn {number}: grounding {score:.2f} under {threshold}: {problem}"
        draft.drop(LABEL, UNGROUNDED, detail)


def to_draft(
    entry: _Conversation,
    draft: Draft,
    chunks: list[SourceChunk],
    max_turns: int,
    threshold: float,
    persona: str | None,
) -> Draft:
    """The draft of one conversation of the reply, checked (dropped ones marked)."""
    exchanges = list(entry.exchanges)
    cut = max(0, len(exchanges) - max_turns)
    if cut:
        exchanges = exchanges[:max_turns]
        draft.metadata["turns_cut"] = 2 * cut
    user = persona or entry.user_description.strip() or None
    draft.persona = user
    draft.conversation = {
        "scenario": entry.scenario.strip() or None,
        "expected_outcome": entry.expected_outcome.strip() or None,
        "user_description": user,
        "turns": [],
    }
    shown = [
        {"role": role, "content": text}
        for e in exchanges
        for role, text in (("user", e.user), ("assistant", e.assistant))
    ]
    draft.input = as_text(shown) or "(none)"
    problem = shape_problem(exchanges)
    if problem:
        draft.drop(LABEL, MISSING_TURNS, problem)
    elif draft.conversation["scenario"] is None:
        draft.drop(LABEL, NO_SCENARIO, "the conversation came without a scenario")
    else:
        _ground(draft, exchanges, chunks, threshold)
    return draft


@dataclass(frozen=True)
class ConversationStep:
    """The first step of a conversational run: a candidate's conversations, checked."""

    name: ClassVar[str] = LABEL
    llm: LLM
    config: ConversationConfig
    per_context: int
    styling: StylingConfig
    prompts: PromptSet
    seed: int
    grounding_threshold: float = DEFAULT_GROUNDING_THRESHOLD
    language: str = AUTO  # the generation config's: "auto" or the code every turn is written in

    def personas(self, key: str) -> list[str]:
        """The persona of each conversation of candidate ``key`` (none without personas)."""
        if not self.styling.personas:
            return []
        rng = random.Random(f"{self.seed}:{LABEL}:{key}")
        return [rng.choice(self.styling.personas) for _ in range(self.per_context)]

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        context = source.context
        if context is None:
            raise ValueError("conversations are written from a context")
        n = self.per_context
        personas = self.personas(source.key)
        language = target_language(self.language, context)
        prompt = build_prompt(context, n, self.config.max_turns, personas, self.prompts, language)
        schema = batch_schema(ConversationReply, n)
        try:
            entries = await ask_checked(
                self.llm, prompt, schema, lambda text: parse(text, n), LABEL, None
            )
        except ModelError as exc:
            failed = Draft(id=draft_id(source.key, "failed"), input="(none)", context=context)
            drop_failed(failed, LABEL, exc)
            return [failed]
        chunks = source_chunks(context)
        made = {LANGUAGE_KEY: language} if language else {}
        return [
            to_draft(
                entry,
                Draft(
                    id=draft_id(source.key, i), input="(none)", context=context, metadata=dict(made)
                ),
                chunks,
                self.config.max_turns,
                self.grounding_threshold,
                personas[i] if i < len(personas) else None,
            )
            for i, entry in enumerate(entries)
        ]


__all__ = [
    "MISSING_TURNS",
    "NO_SCENARIO",
    "UNGROUNDED",
    "ConversationConfig",
    "ConversationReply",
    "ConversationStep",
    "as_text",
    "build_prompt",
    "parse",
    "shape_problem",
    "to_draft",
]
