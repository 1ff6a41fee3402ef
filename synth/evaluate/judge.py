"""LLM judges: the model labels, a fixed formula scores.

The judge reads the material in tagged, escaped prompts and replies with strict JSON (claims
supported or not, contexts relevant or not, a rating, a winner); :mod:`synth.evaluate._verdicts`
turns the labels into the score, so a judge can never return a number the formula did not produce.
Every method returns a :class:`JudgeResult` holding the score, the parsed verdict and every
completion with its token counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel

from synth.errors import AuthenticationError, ConfigError, ModelError
from synth.evaluate import _prompts as prompts
from synth.evaluate import _verdicts as v
from synth.evaluate._calls import JudgeUsage, judge_identity, request, resolve_model, with_cache
from synth.evaluate.retrieved import context_texts
from synth.llm.base import Completion, sync_twin
from synth.llm.structured import parse_verdict

OnError = Literal["raise", "record"]

#: the judge metrics, in the order reports list them
JUDGE_METRICS = (
    "faithfulness",
    "answer_relevance",
    "context_precision",
    "context_recall",
    "answer_correctness",
)


@dataclass
class JudgeResult:
    """A judge's score with everything it was computed from.

    ``score`` is NaN when there is none: ``error`` says why when the call or the verdict failed
    (with ``on_error="record"``), and ``undefined`` is True when a valid verdict has no score (an
    answer that makes no claim has no faithfulness).
    """

    metric: str
    score: float = math.nan
    verdict: dict[str, Any] | None = None
    details: dict[str, Any] = field(default_factory=dict)
    completions: list[Completion] = field(default_factory=list)
    error: str | None = None
    error_kind: str | None = None
    undefined: bool = False

    @property
    def input_tokens(self) -> int:
        """Input tokens of the completions that were not answered from a cache."""
        return sum(c.input_tokens or 0 for c in self.completions if not c.cached)

    @property
    def output_tokens(self) -> int:
        """Output tokens of the completions that were not answered from a cache."""
        return sum(c.output_tokens or 0 for c in self.completions if not c.cached)


class LLMJudge:
    """A model that judges answers: ``LLMJudge(model)`` with a callable, an LLM or a spec string.

    ``on_error="raise"`` (the default) raises a failed call or a malformed verdict as a
    :class:`~synth.errors.ModelError`; ``"record"`` returns it as a result with ``score=NaN`` and
    ``error`` set; a refused API key (:class:`~synth.errors.AuthenticationError`) is raised either
    way, since it would fail every item alike. ``cache`` (any mutable mapping) reuses the reply to an identical request.
    ``usage`` counts responses, cached responses and the tokens of the others.
    """

    def __init__(
        self,
        model: Any,
        *,
        name: str | None = None,
        on_error: OnError = "raise",
        cache: MutableMapping[str, Any] | None = None,
    ) -> None:
        if on_error not in ("raise", "record"):
            raise ConfigError(f"on_error must be 'raise' or 'record', got {on_error!r}")
        self.model = resolve_model(model)
        self._owns_model = isinstance(model, str)  # made here from a spec: closed by close()
        self.name = name or self.model.model or self.model.provider or "judge"
        self.on_error: OnError = on_error
        self.cache = cache
        self.usage = JudgeUsage()
        self._requester = with_cache(self.model, cache)

    def __repr__(self) -> str:
        return f"LLMJudge({self.name!r}, model={self.model!r})"

    def close(self) -> None:
        """Release the model's clients when this judge made it from a spec string (copies made by
        :meth:`with_options` share the model and leave it open)."""
        if self._owns_model:
            self.model.close()

    def identity(self) -> dict[str, Any]:
        """Return what identifies this judge: provider, model, options, prompt version and hash."""
        return {
            **judge_identity(self.model),
            "prompt_version": prompts.PROMPT_VERSION,
            "prompt_hash": prompts.prompt_hash(),
        }

    def with_options(self, *, on_error: OnError | None = None, cache: Any = ...) -> LLMJudge:
        """Return a copy of this judge with fresh usage counts and, optionally, other settings."""
        return LLMJudge(
            self.model,
            name=self.name,
            on_error=on_error or self.on_error,
            cache=self.cache if cache is ... else cache,
        )

    # ---- the core: one verdict, parsed and scored --------------------------------------------
    async def _verdict(
        self,
        metric: str,
        prompt_list: list[str],
        schema: type[BaseModel],
        score: Callable[[list[Any], list[str]], v.Scored],
    ) -> JudgeResult:
        result = JudgeResult(metric=metric)
        try:
            parsed = []
            for prompt in prompt_list:
                completion = await request(
                    self._requester,
                    prompt,
                    system=prompts.SYSTEM,
                    schema=schema,
                    label=f"judge:{metric}",
                )
                result.completions.append(completion)
                self.usage.add(completion)
                parsed.append(parse_verdict(completion.text, schema))
            scored = score(parsed, [c.text for c in result.completions])
        except ModelError as exc:
            self.usage.failures += 1
            # A refused key fails every item alike: it is the user's to fix, not an item's result.
            if self.on_error == "raise" or isinstance(exc, AuthenticationError):
                raise
            result.error = str(exc)
            result.error_kind = exc.kind
            return result
        dumped = [p.model_dump() for p in parsed]
        result.verdict = (
            dumped[0] if len(dumped) == 1 else {"a_first": dumped[0], "b_first": dumped[1]}
        )
        result.score = scored.score
        result.details = scored.details
        result.undefined = scored.undefined
        return result

    async def _one(
        self,
        metric: str,
        prompt: str,
        schema: type[BaseModel],
        score: Callable[[Any, str], v.Scored],
    ) -> JudgeResult:
        """One prompt, one verdict: ``score(verdict, raw_reply)``."""
        return await self._verdict(metric, [prompt], schema, lambda p, raw: score(p[0], raw[0]))

    # ---- the metrics, async ------------------------------------------------------------------
    async def afaithfulness(self, question: str, answer: str, contexts: Any) -> JudgeResult:
        """Supported claims / claims made by the answer, judged against the contexts (a claim is
        supported when its verdict says so and its evidence quote is found in the contexts)."""
        texts = _needs_contexts(contexts, "faithfulness")
        prompt = prompts.faithfulness_prompt(question, answer, texts)

        def scorer(verdict: v.FaithfulnessVerdict, raw: str) -> v.Scored:
            return v.score_faithfulness(verdict, texts, raw)

        return await self._one("faithfulness", prompt, v.FaithfulnessVerdict, scorer)

    async def aanswer_relevance(self, question: str, answer: str) -> JudgeResult:
        """``(rating - 1) / 4`` for a 1-5 rating of how well the answer addresses the question."""
        prompt = prompts.answer_relevance_prompt(question, answer)
        scorer = partial(_rating, scale=5)
        return await self._one("answer_relevance", prompt, v.RatingVerdict, scorer)

    async def acontext_precision(
        self, question: str, contexts: Any, reference: str | None = None
    ) -> JudgeResult:
        """Average precision of the per-context relevance verdicts, in retrieval order."""
        texts = _needs_contexts(contexts, "context_precision")
        prompt = prompts.context_precision_prompt(question, texts, reference)
        scorer = partial(_context_precision, n_contexts=len(texts))
        return await self._one("context_precision", prompt, v.ContextPrecisionVerdict, scorer)

    async def acontext_recall(self, question: str, contexts: Any, reference: str) -> JudgeResult:
        """Reference statements attributable to the contexts / reference statements."""
        texts = _needs_contexts(contexts, "context_recall")
        prompt = prompts.context_recall_prompt(question, texts, reference)
        scorer = _verdict_only(v.score_context_recall)
        return await self._one("context_recall", prompt, v.ContextRecallVerdict, scorer)

    async def aanswer_correctness(self, question: str, answer: str, reference: str) -> JudgeResult:
        """``TP / (TP + (FP + FN) / 2)`` over the statements of the answer and the reference."""
        prompt = prompts.answer_correctness_prompt(question, answer, reference)
        scorer = _verdict_only(v.score_answer_correctness)
        return await self._one("answer_correctness", prompt, v.CorrectnessVerdict, scorer)

    async def acriteria_score(
        self,
        question: str,
        answer: str,
        criteria: str,
        *,
        scale: int = 5,
        contexts: Any = None,
        reference: str | None = None,
        metric: str = "criteria",
    ) -> JudgeResult:
        """``(rating - 1) / (scale - 1)`` for a rating of the answer against your ``criteria``."""
        if isinstance(scale, bool) or not isinstance(scale, int) or scale < 2:
            raise ConfigError(f"scale must be an integer of at least 2, got {scale!r}")
        prompt = prompts.criteria_prompt(
            question, answer, criteria, scale, context_texts(contexts) or None, reference
        )
        return await self._one(metric, prompt, v.RatingVerdict, partial(_rating, scale=scale))

    async def apreference(
        self,
        question: str,
        answer_a: str,
        answer_b: str,
        *,
        contexts: Any = None,
        reference: str | None = None,
    ) -> JudgeResult:
        """1, 0.5 or 0 for answer a, asked in both orders; a verdict that flips with order is 0.5."""
        texts = context_texts(contexts) or None
        a_first = prompts.preference_prompt(question, answer_a, answer_b, texts, reference)
        b_first = prompts.preference_prompt(question, answer_b, answer_a, texts, reference)

        def score(parsed: list[Any], raw: list[str]) -> v.Scored:
            return v.score_preference(
                v.preference_side(parsed[0].winner, a_first=True),
                v.preference_side(parsed[1].winner, a_first=False),
            )

        return await self._verdict("preference", [a_first, b_first], v.PreferenceVerdict, score)

    # ---- the metrics, sync -------------------------------------------------------------------
    faithfulness = sync_twin(afaithfulness)
    answer_relevance = sync_twin(aanswer_relevance)
    context_precision = sync_twin(acontext_precision)
    context_recall = sync_twin(acontext_recall)
    answer_correctness = sync_twin(aanswer_correctness)
    criteria_score = sync_twin(acriteria_score)
    preference = sync_twin(apreference)


def _verdict_only(score: Callable[[Any], v.Scored]) -> Callable[[Any, str], v.Scored]:
    """A scorer of the verdict alone, taking (and ignoring) the raw reply too."""
    return lambda verdict, raw: score(verdict)


def _rating(verdict: v.RatingVerdict, raw: str, *, scale: int) -> v.Scored:
    return v.score_rating(verdict, scale, raw)


def _context_precision(
    verdict: v.ContextPrecisionVerdict, raw: str, *, n_contexts: int
) -> v.Scored:
    return v.score_context_precision(verdict, n_contexts, raw)


def _needs_contexts(contexts: Any, metric: str) -> list[str]:
    texts = context_texts(contexts)
    if not texts:
        raise ConfigError(f"{metric} needs at least one context")
    return texts


def as_judge(
    model: Any, *, name: str, on_error: OnError, cache: MutableMapping[str, Any] | None
) -> LLMJudge:
    """Return ``model`` as a judge named ``name`` with fresh usage (an LLMJudge is copied)."""
    if isinstance(model, LLMJudge):
        copy = model.with_options(on_error=on_error, cache=model.cache if cache is None else cache)
        copy.name = name
        return copy
    return LLMJudge(model, name=name, on_error=on_error, cache=cache)


__all__ = ["JUDGE_METRICS", "JudgeResult", "LLMJudge", "as_judge"]
