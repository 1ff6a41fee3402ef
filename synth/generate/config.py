"""The generation stages' configs: generation, filtration, evolution and styling (DeepEval's names)."""

from __future__ import annotations

from pydantic import Field, field_validator

from synth._language import AUTO, normalize_code
from synth.errors import ConfigError
from synth.generate.query_style import QUERY_LENGTHS, QUERY_STYLES, check_distribution
from synth.generate.question_types import SIMPLE, check_types, single_type
from synth.stage.config import ModelChoice, StageConfig
from synth.stage.templates import Evolution

#: evolutions that need a context of at least two chunks
MULTI_CHUNK_EVOLUTIONS = frozenset({Evolution.MULTICONTEXT, Evolution.COMPARATIVE})


#: the expected output of an out-of-scope question, unless the config says otherwise
DEFAULT_REFUSAL = "The documents do not cover this, so I cannot answer it from them."
#: the grounding score an expected output must reach (synth.generate.citations)
DEFAULT_GROUNDING_THRESHOLD = 0.5


class GenerationConfig(StageConfig):
    """Input generation, expected outputs and deduplication, and the gates on what they give.

    - ``max_goldens_per_context``: inputs asked for per context (one request gives all of them).
    - ``include_expected_output``: write a cited expected output for each input.
    - ``dedup_threshold``: inputs whose embeddings' cosine similarity reaches it are duplicates;
      ``None`` switches deduplication off.
    - ``grounding_threshold``: an expected output whose grounding score (how much of it the quotes
      found in the context cover) stays under it is asked again, then dropped as ``ungrounded``;
      0 keeps every answer (the citations and scores are still recorded).
    - ``max_easy_share``: at most this share of the goldens may be ``easy`` (their source chunk is
      the first that keyword search finds); the others are dropped as ``too_easy`` and replaced.
      ``None`` (the default) keeps them all; the difficulty is measured either way.
    - ``question_types``: the share of each question type (:mod:`synth.generate.question_types`);
      ``{"simple": 1.0}`` (the default) is today's questions.
    - ``refusal_text``: the expected output of an ``out_of_scope`` question (what a system should
      say when its documents do not answer).
    - ``language``: ``"auto"`` (the default) writes each golden in its context's language; an ISO
      639-1 code (``"de"``) writes every golden in that language, whatever the documents' (a
      cross-lingual set). Every generated text is checked (:mod:`synth.generate.language`).
    """

    max_goldens_per_context: int = Field(default=2, ge=1, le=20)
    include_expected_output: bool = True
    dedup_threshold: float | None = Field(default=0.9, ge=0.0, le=1.0)
    grounding_threshold: float = Field(default=DEFAULT_GROUNDING_THRESHOLD, ge=0.0, le=1.0)
    max_easy_share: float | None = Field(default=None, ge=0.0, le=1.0)
    question_types: dict[str, float] = Field(default_factory=lambda: {SIMPLE: 1.0})
    refusal_text: str = Field(default=DEFAULT_REFUSAL, min_length=1)
    language: str = AUTO

    @field_validator("language")
    @classmethod
    def _check_language(cls, value: str) -> str:
        return AUTO if value.strip().lower() == AUTO else normalize_code(value)

    @field_validator("question_types")
    @classmethod
    def _check_question_types(cls, value: dict[str, float]) -> dict[str, float]:
        check_types(value)
        return value

    @property
    def asks_types(self) -> bool:
        """Whether the run asks for anything but simple questions (types recorded, and mixed
        types made one run per type)."""
        return single_type(self.question_types) != SIMPLE

    @property
    def records_type(self) -> bool:
        """Whether goldens record their question type: the run asks for a type, or is the simple
        part of a mix (whose config names the mix's other types at 0)."""
        return set(self.question_types) != {SIMPLE}

    @property
    def question_type(self) -> str | None:
        """The one question type this config asks for (None when it mixes several)."""
        return single_type(self.question_types)

    def with_gates(
        self, grounding_threshold: float | None = None, max_easy_share: float | None = None
    ) -> GenerationConfig:
        """This config with the gates that are given set (validated); itself when none is."""
        gates = {"grounding_threshold": grounding_threshold, "max_easy_share": max_easy_share}
        given = {name: value for name, value in gates.items() if value is not None}
        if not given:
            return self
        return GenerationConfig.model_validate({**self.model_dump(), **given})

    def with_language(self, language: str | None) -> GenerationConfig:
        """This config writing its goldens in ``language`` ("auto" or a code); itself for None."""
        if language is None:
            return self
        return GenerationConfig.model_validate({**self.model_dump(), "language": language})


class FiltrationConfig(StageConfig):
    """The input critic: a score below ``synthetic_input_quality_threshold`` triggers a rewrite with
    the critic's feedback, up to ``max_quality_retries`` times; the best version is kept, and an input
    that never reaches the threshold is dropped.

    ``critic_model`` (a ``"provider:model"`` spec, an LLM or a callable) scores the inputs instead
    of the Synthesizer's critic; it shares the run's cache, concurrency limit and accounting.
    """

    synthetic_input_quality_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    max_quality_retries: int = Field(default=3, ge=0)
    critic_model: ModelChoice = None


def _uniform() -> dict[Evolution, float]:
    return {evolution: 1.0 for evolution in Evolution}


class EvolutionConfig(StageConfig):
    """``num_evolutions`` rounds per input, each choosing one evolution by ``evolutions`` weights.

    Weights are relative (they need not sum to 1); keys may be given as enum members or their string
    values. An evolution that needs two chunks (multicontext, comparative) is left out for a one-chunk
    context and the remaining weights are used; ``num_evolutions=0`` switches the stage off.
    """

    num_evolutions: int = Field(default=1, ge=0, le=10)
    evolutions: dict[Evolution, float] = Field(default_factory=_uniform)

    @field_validator("evolutions")
    @classmethod
    def _check_weights(cls, value: dict[Evolution, float]) -> dict[Evolution, float]:
        if not value:
            raise ValueError("evolutions must name at least one evolution")
        for evolution, weight in value.items():
            if weight < 0:
                raise ValueError(f"the weight of {evolution.value} is negative")
        if sum(value.values()) <= 0:
            raise ValueError("evolution weights must have a positive sum")
        return {evolution: float(value[evolution]) for evolution in Evolution if evolution in value}


class StylingConfig(StageConfig):
    """How inputs and expected outputs should read.

    ``scenario`` (who asks and why), ``task`` (what the system under test does), ``input_format`` and
    ``expected_output_format`` (free text), and ``personas``: user descriptions, one chosen per input
    with the run's seed. ``query_styles`` and ``query_lengths`` weigh how inputs are written and
    how long they are (:mod:`synth.generate.query_style`), one of each drawn per input. Generation
    from scratch needs ``scenario``, ``task`` and ``input_format``.
    """

    scenario: str | None = None
    task: str | None = None
    input_format: str | None = None
    expected_output_format: str | None = None
    personas: list[str] = Field(default_factory=list)
    query_styles: dict[str, float] = Field(default_factory=dict)
    query_lengths: dict[str, float] = Field(default_factory=dict)

    @field_validator("query_styles")
    @classmethod
    def _check_styles(cls, value: dict[str, float]) -> dict[str, float]:
        check_distribution(value, QUERY_STYLES, "query style")
        return value

    @field_validator("query_lengths")
    @classmethod
    def _check_lengths(cls, value: dict[str, float]) -> dict[str, float]:
        check_distribution(value, QUERY_LENGTHS, "query length")
        return value

    @field_validator("personas")
    @classmethod
    def _check_personas(cls, value: list[str]) -> list[str]:
        cleaned = [p.strip() for p in value]
        if any(not p for p in cleaned):
            raise ValueError("a persona must not be empty")
        return cleaned

    @property
    def rewrites_inputs(self) -> bool:
        """Whether the style stage has anything to do (a rewrite per input)."""
        asked = (self.scenario, self.task, self.input_format, self.personas, self.query_styles)
        return any(asked) or any(w > 0 for w in self.query_lengths.values())

    def require_scratch(self) -> None:
        """Raise ConfigError unless scenario, task and input_format are all set."""
        missing = [n for n in ("scenario", "task", "input_format") if not getattr(self, n)]
        if missing:
            raise ConfigError("generating from scratch needs StylingConfig " + ", ".join(missing))


__all__ = [
    "DEFAULT_GROUNDING_THRESHOLD",
    "MULTI_CHUNK_EVOLUTIONS",
    "EvolutionConfig",
    "Evolution",
    "FiltrationConfig",
    "GenerationConfig",
    "StylingConfig",
]
