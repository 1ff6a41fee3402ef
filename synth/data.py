"""The records that cross stages, in the order the data flows.

``Document`` (ingest) -> ``Chunk`` (ingest, store) -> ``Context`` (contexts) -> ``Golden`` (generate,
dataset, evaluate). A ``ConversationalGolden`` is a Golden whose question comes at the end of a
conversation (``turns``). All are pydantic models: validated on construction, serialisable as JSON.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class Page(BaseModel):
    """Where one page of a document starts in its text (PDFs; 1-based page numbers)."""

    model_config = ConfigDict(frozen=True)

    number: int
    start: int  # character offset of the page's first character in Document.text


class Section(BaseModel):
    """Where a part of a document starts in its text and the headings it sits under: a Markdown
    or HTML heading, a Word heading, a PDF bookmark, a slide, a sheet, a chapter."""

    model_config = ConfigDict(frozen=True)

    start: int  # character offset in Document.text where the part (its heading, if any) begins
    path: list[str]  # the headings above it, outermost first: ["Installation", "Linux"]
    #: no chunk crosses into it: it starts a unit of its own (a slide, a sheet, a chapter)
    split: bool = False


class Document(BaseModel):
    """One parsed source file."""

    id: str  # stable: derived from the path and the content
    path: str  # the path as given by the user's walk (relative to the root walked when possible)
    text: str
    pages: list[Page] = Field(default_factory=list)  # empty for formats without pages
    sections: list[Section] = Field(default_factory=list)  # by start; empty without headings
    metadata: dict[str, Any] = Field(default_factory=dict)


class Chunk(BaseModel):
    """A token-bounded piece of a document; what the store embeds and contexts are built from."""

    id: str  # stable: derived from the document content and the chunking parameters
    document_id: str
    source: str  # Document.path
    index: int  # position within its document, from 0
    text: str
    token_count: int
    page_start: int | None = None
    page_end: int | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class Context(BaseModel):
    """Related chunks that one golden is generated from."""

    id: str
    chunk_ids: list[str]
    texts: list[str]
    source_files: list[str]
    quality: float | None = None  # the critic's mean score, 0..1, when scored
    metadata: dict[str, Any] = Field(default_factory=dict)


class ToolCall(BaseModel):
    """One call of a tool: its name, the arguments it is given and, once run, what it returned
    (deepeval's ``ToolCall`` fields)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    input_parameters: dict[str, Any] = Field(default_factory=dict)
    output: Any = None

    @field_validator("name")
    @classmethod
    def _name_not_blank(cls, value: str) -> str:
        # a call without a tool's name cannot be matched against any tool
        if not value.strip():
            raise ValueError("a tool call's name must not be empty or blank")
        return value


class Golden(BaseModel):
    """One evaluation example: the example fields of judgeval's ``Example`` plus provenance.

    ``expected_tools`` are the calls an agent should make for ``input``, in order (an empty list:
    none); ``tools_called`` the calls a system made. Both are None for a golden about no tools.
    """

    model_config = ConfigDict(extra="forbid")

    input: str
    actual_output: str | None = None
    expected_output: str | None = None
    context: list[str] | None = None  # the ground-truth chunks it was made from
    retrieval_context: list[str] | None = None
    context_ids: list[str] = Field(default_factory=list)
    source_files: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    expected_tools: list[ToolCall] | None = None
    tools_called: list[ToolCall] | None = None

    @field_validator("input")
    @classmethod
    def _input_not_blank(cls, value: str) -> str:
        # a golden without a question cannot be asked of any system
        if not value.strip():
            raise ValueError("input must not be empty or blank")
        return value

    def edited(self, **changes: Any) -> Golden:
        """A copy with ``input`` and/or ``expected_output`` (those given) replaced (a review's
        edit)."""
        return self.model_copy(update=changes)


class Turn(BaseModel):
    """One message of a conversation: who says it and what; an assistant turn's ``metadata``
    holds its ``citations`` (quotes of the context, as a golden's expected output has them)."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant"]
    content: str
    metadata: dict[str, Any] = Field(default_factory=dict)


class ConversationalGolden(Golden):
    """A conversation to test a system with: deepeval's ``ConversationalGolden`` plus provenance.

    ``turns`` alternate user and assistant, user first; every user turn after the first depends
    on an earlier one. ``input`` is the last user turn and ``expected_output`` the assistant turn
    after it (None when the conversation ends on the user), so every single-turn tool (inspect,
    review, evaluate) sees the question a system must answer; both are filled from the turns
    when not given, and must agree with them when given. ``user_description`` is the persona.

    A conversation may have no turns yet (deepeval's goldens for its simulator: a ``scenario``
    and an ``expected_outcome``, the turns to be played out): then ``input`` is the scenario and
    ``expected_output`` the expected outcome, so the single-turn tools still have a question.
    """

    scenario: str | None = None
    expected_outcome: str | None = None
    user_description: str | None = None
    turns: list[Turn]

    @model_validator(mode="before")
    @classmethod
    def _from_turns(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not isinstance(data.get("turns"), list):
            return data
        turns = [t.model_dump() if isinstance(t, Turn) else t for t in data["turns"]]
        if not turns:  # a scenario still to be played out
            data = dict(data)
            if data.get("input") is None:
                data["input"] = data.get("scenario")
            if "expected_output" not in data:
                data["expected_output"] = data.get("expected_outcome")
            return data
        roles = [t.get("role") if isinstance(t, dict) else None for t in turns]
        if "user" not in roles:
            return data  # the after-validator reports it
        last = len(roles) - 1 - roles[::-1].index("user")
        data = dict(data)
        if data.get("input") is None:
            data["input"] = turns[last].get("content")
        if "expected_output" not in data and last + 1 < len(turns):
            data["expected_output"] = turns[last + 1].get("content")
        return data

    @model_validator(mode="after")
    def _turns_agree(self) -> ConversationalGolden:
        roles = [t.role for t in self.turns]
        if not roles:
            return self._no_turns_agree()
        if roles[0] != "user":
            raise ValueError("turns must start with a user turn")
        if any(a == b for a, b in zip(roles, roles[1:], strict=False)):
            raise ValueError("turns must alternate user and assistant")
        last = len(roles) - 1 - roles[::-1].index("user")
        if self.input != self.turns[last].content:
            raise ValueError("input must be the last user turn")
        answer = self.turns[last + 1].content if last + 1 < len(self.turns) else None
        if self.expected_output != answer:
            raise ValueError("expected_output must be the assistant turn after the last user turn")
        return self

    def _no_turns_agree(self) -> ConversationalGolden:
        if not self.scenario:
            raise ValueError("a conversation with no turns needs a scenario")
        if self.input != self.scenario:
            raise ValueError("input must be the scenario when there are no turns")
        if self.expected_output != self.expected_outcome:
            raise ValueError("expected_output must be the expected outcome when there are no turns")
        return self

    def edited(self, **changes: Any) -> ConversationalGolden:
        """A copy with its last user turn (``input``) and/or the reply to it (``expected_output``)
        replaced, the turns rewritten to agree; a None reply ends the conversation on the user.
        With no turns yet, the scenario and the expected outcome are what is replaced."""
        input = changes.get("input", self.input)
        expected_output = changes.get("expected_output", self.expected_output)
        if not self.turns:
            return self.model_copy(
                update={
                    "input": input,
                    "scenario": input,
                    "expected_output": expected_output,
                    "expected_outcome": expected_output,
                }
            )
        turns = list(self.history)
        turns.append(self.turns[len(turns)].model_copy(update={"content": input}))
        old = self.turns[len(turns)] if len(turns) < len(self.turns) else None
        if expected_output is not None:
            reply = old or Turn(role="assistant", content=expected_output)
            turns.append(reply.model_copy(update={"content": expected_output}))
        data = self.model_dump(exclude={"input", "expected_output", "turns"})
        return ConversationalGolden.model_validate(
            {**data, "turns": turns, "input": input, "expected_output": expected_output}
        )

    @property
    def history(self) -> list[Turn]:
        """The turns before the last user turn (what a system is given with ``input``); none
        when there are no turns yet."""
        if not self.turns:
            return []
        roles = [t.role for t in self.turns]
        last = len(roles) - 1 - roles[::-1].index("user")
        return self.turns[:last]


__all__ = [
    "Chunk",
    "Context",
    "ConversationalGolden",
    "Document",
    "Golden",
    "Page",
    "Section",
    "ToolCall",
    "Turn",
]
