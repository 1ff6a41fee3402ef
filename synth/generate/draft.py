"""Draft: one input on its way to becoming a Golden, with everything done to it so far."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from synth._ids import joined_hash
from synth.data import Context, ConversationalGolden, Golden
from synth.errors import ModelError, raw_reply
from synth.stage.stats import model_error_reason


def draft_id(*parts: object) -> str:
    """A stable id from the parts that identify a draft (e.g. context id and position)."""
    return "d_" + joined_hash((str(p) for p in parts), 16)


class Draft(BaseModel):
    """An input in flight. Stages update it in place; a dropped draft keeps its reason and stage.

    A conversation's draft holds it in ``conversation`` (``scenario``, ``expected_outcome``,
    ``user_description``, ``turns``), and its ``input`` is the whole conversation as text (what
    deduplication compares). ``input_quality`` is the filter's score of the current ``input`` (None when unfiltered);
    ``evolutions`` lists the evolutions applied, in order; ``history`` keeps each earlier version of
    the input as ``{"stage": ..., "input": ..., ...}``.
    """

    id: str
    input: str
    context: Context | None = None
    input_quality: float | None = None
    feedback: str | None = None
    evolutions: list[str] = Field(default_factory=list)
    styling: dict[str, Any] | None = None
    persona: str | None = None
    expected_output: str | None = None
    conversation: dict[str, Any] | None = None
    #: the calls an agent should make for the input (``ToolCall`` fields), for an agent's golden
    expected_tools: list[dict[str, Any]] | None = None
    drop_reason: str | None = None
    dropped_at: str | None = None
    drop_detail: str | None = None  # what failed, e.g. "critic scored passages [2], expected 1..2"
    #: the raw reply a failed request got, for the run's record of bad replies (never journaled)
    drop_raw: str | None = Field(default=None, exclude=True)
    history: list[dict[str, Any]] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def kept(self) -> bool:
        return self.drop_reason is None

    def drop(
        self, stage: str, reason: str, detail: str | None = None, raw: str | None = None
    ) -> None:
        """Mark the draft dropped by ``stage`` for ``reason`` (with what failed, when known)."""
        self.drop_reason = reason
        self.dropped_at = stage
        self.drop_detail = detail
        self.drop_raw = raw

    def revise(self, stage: str, new_input: str, **extra: Any) -> None:
        """Replace the input, keeping the old one in ``history``."""
        self.history.append({"stage": stage, "input": self.input, **extra})
        self.input = new_input

    def to_golden(
        self,
        *,
        models: dict[str, Any] | None = None,
        prompt_version: str | None = None,
        seed: int | None = None,
        run_id: str | None = None,
    ) -> Golden:
        """The Golden for this draft; the run-level provenance is passed in by the pipeline."""
        context = self.context
        metadata: dict[str, Any] = {
            "context_quality": context.quality if context is not None else None,
            "input_quality": self.input_quality,
            "evolutions": list(self.evolutions),
            "styling": self.styling,
            "persona": self.persona,
            "models": models or {},
            "prompt_version": prompt_version,
            "seed": seed,
            "run_id": run_id,
            "draft_id": self.id,
        }
        if context is not None:
            metadata["context_id"] = context.id
            if context.metadata.get("heading_paths"):  # per context chunk, as context_ids
                metadata["heading_paths"] = context.metadata["heading_paths"]
        metadata.update(self.metadata)
        fields: dict[str, Any] = {
            "context": list(context.texts) if context is not None else None,
            "context_ids": list(context.chunk_ids) if context is not None else [],
            "source_files": list(dict.fromkeys(context.source_files)) if context else [],
            "metadata": metadata,
        }
        if self.conversation is not None:  # input and expected output come from its turns
            return ConversationalGolden.model_validate({**self.conversation, **fields})
        if self.expected_tools is not None:
            fields["expected_tools"] = self.expected_tools
        return Golden(input=self.input, expected_output=self.expected_output, **fields)


def drop_failed(draft: Draft, stage: str, exc: ModelError) -> None:
    """Drop ``draft`` as ``model_error:<kind>``, keeping the error's message and raw reply."""
    draft.drop(stage, model_error_reason(exc), str(exc) or None, raw_reply(exc))


def live(drafts: list[Draft]) -> list[Draft]:
    """The drafts not dropped yet."""
    return [d for d in drafts if d.kept]


def by_context(drafts: list[Draft], size: int) -> list[list[Draft]]:
    """The drafts in batches of at most ``size``, each batch from one context (in first-seen order)."""
    groups: dict[str | None, list[Draft]] = {}
    for draft in drafts:
        groups.setdefault(draft.context.id if draft.context else None, []).append(draft)
    return [g[i : i + size] for g in groups.values() for i in range(0, len(g), size)]


__all__ = ["by_context", "Draft", "draft_id", "drop_failed", "live"]
