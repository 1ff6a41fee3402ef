"""ContextConstructionConfig: how contexts are chosen, scored and grouped (DeepEval's knob names)."""

from __future__ import annotations

from typing import Any, Literal, Self

import tiktoken
from pydantic import Field, field_validator, model_validator

from synth.stage.config import EmbedderChoice, ModelChoice, StageConfig

#: DeepEval settings we cannot honour, and what to use instead
_REFUSED = {
    "target_files_per_context": (
        "is not supported: a context is a seed chunk and its neighbours from the seed's own file; "
        "set allow_cross_file_contexts = true to let neighbours come from other files"
    ),
    "max_files_per_context": (
        "is not supported: a context is a seed chunk and its neighbours from the seed's own file; "
        "set allow_cross_file_contexts = true to let neighbours come from other files"
    ),
}


class ContextConstructionConfig(StageConfig):
    """Select seed chunks, critic-score them, group each with its nearest neighbours.

    - ``max_contexts_per_document`` / ``min_contexts_per_document``: contexts per file in a run
      without a target count; the largest file gets the maximum, others in proportion to their size,
      none under the minimum (a top-up to N goldens may go past the maximum, fairly across files).
    - ``coverage``: how seeds spread over files: ``"proportional"`` to each file's size in tokens,
      or ``"uniform"``, every file alike (each file's share is capped by its chunks, and what a
      file cannot give goes to the others; see :mod:`synth.contexts.coverage`).
    - ``max_context_length`` / ``min_context_length``: chunks per context (the seed included).
    - ``chunk_size`` / ``chunk_overlap``: tokens of ``encoding``, passed to ingestion.
    - ``encoding``: the tiktoken encoding chunks are measured in (None: ``cl100k_base``).
    - ``context_quality_threshold``: a seed whose mean critic score is at or under it is rejected.
    - ``context_similarity_threshold``: a neighbour's cosine similarity to the seed must reach it.
    - ``max_retries``: replacement candidates tried for one rejected seed before the slot is dropped.
    - ``allow_cross_file_contexts``: neighbours may come from other files.
    - ``prose_filter``: drop seeds that are not prose (tables of contents, indexes, reference lists,
      table art) by plain-code rules before the critic sees them (:mod:`synth.contexts.prose`).
    - ``contexts_per_critic_call``: seeds scored in one critic request.
    - ``critic_model``: scores the seeds instead of the Synthesizer's critic (a ``"provider:model"``
      spec, an LLM or a callable).
    - ``embedder``: embeds the chunks for the store instead of the Synthesizer's embedder (a spec
      or an Embedder).
    """

    max_contexts_per_document: int = Field(default=3, ge=1)
    min_contexts_per_document: int = Field(default=1, ge=0)
    coverage: Literal["proportional", "uniform"] = "proportional"
    max_context_length: int = Field(default=3, ge=1)
    min_context_length: int = Field(default=1, ge=1)
    chunk_size: int = Field(default=1024, ge=1)
    chunk_overlap: int = Field(default=0, ge=0)
    context_quality_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    context_similarity_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    max_retries: int = Field(default=3, ge=0)
    allow_cross_file_contexts: bool = False
    prose_filter: bool = True
    contexts_per_critic_call: int = Field(default=2, ge=1, le=50)
    critic_model: ModelChoice = None
    embedder: EmbedderChoice = None
    encoding: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _refuse_what_we_cannot_honour(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name, why in _REFUSED.items():
                if name in data:
                    raise ValueError(f"{name} {why}")
        return data

    @field_validator("encoding")
    @classmethod
    def _known_encoding(cls, value: str | None) -> str | None:
        if value is not None and value not in tiktoken.list_encoding_names():
            known = ", ".join(sorted(tiktoken.list_encoding_names()))
            raise ValueError(f"unknown tiktoken encoding {value!r}; known: {known}")
        return value

    @model_validator(mode="after")
    def _check_ranges(self) -> Self:
        if self.min_contexts_per_document > self.max_contexts_per_document:
            raise ValueError("min_contexts_per_document must not exceed max_contexts_per_document")
        if self.min_context_length > self.max_context_length:
            raise ValueError("min_context_length must not exceed max_context_length")
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError("chunk_overlap must be smaller than chunk_size")
        return self


__all__ = ["ContextConstructionConfig"]
