"""Scoring an agent's tool calls (``tools_called``) against a golden's ``expected_tools``.

How calls are matched (``match``):

- ``exact``: the same calls in the same order, nothing more: 1 or 0;
- ``in_order``: the expected calls found in the called ones in their order (others may come
  between), as a share of the longer of the two lists (an extra call costs as a missing one does);
- ``any_order``: the expected calls found among the called ones in any order, the same share.

How a call's arguments are matched (``arguments``): ``exact`` (the same names and values),
``schema`` (the called arguments valid against the tool's input schema, given ``tools``; a tool
not given falls back to ``exact``) or ``judged`` (equal ones match; for others a judge model
sees the request and both sets of arguments and says whether they ask the tool for the same
thing: ``"Oslo"`` for ``"OSL"``). A golden expecting no call scores 1 when none is made.

The score is the mean over goldens, with a percentile bootstrap interval
(:func:`synth.evaluate.stats.bootstrap_interval`); the same per tool (the goldens expecting it)
and per kind (``metadata["tool_kind"]``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from jsonschema import validators
from pydantic import BaseModel, Field

from synth._untrusted import tag
from synth.data import ToolCall
from synth.dataset import Dataset
from synth.errors import ConfigError
from synth.evaluate.stats import bootstrap_interval, mean_score

MATCHES = ("exact", "in_order", "any_order")
ARGUMENTS = ("exact", "schema", "judged")
#: decides whether a call's arguments ask for what the expected call's do (judged mode)
Judged = Callable[[ToolCall, ToolCall], bool]

_JUDGE_PROMPT = """A user asked an AI agent:
{request}

The agent called the tool '{name}'. The expected arguments and the agent's, as JSON:
{expected}
{called}

Do the agent's arguments ask the tool for the same thing as the expected ones (the same values,
possibly written differently: "Oslo" for "OSL", "2025-01-05" for "5 Jan 2025")? Give your reason in
one sentence, then your verdict."""


class ArgumentVerdict(BaseModel):
    """The judge's reply: its reason, then whether the arguments ask for the same thing."""

    reason: str
    same: bool


class ToolScore(BaseModel):
    """A mean score over ``n`` goldens and its bootstrap interval."""

    score: float
    low: float
    high: float
    n: int


class ToolCallItem(BaseModel):
    """One golden's calls side by side, and its score."""

    input: str
    kind: str | None
    expected: list[ToolCall]
    called: list[ToolCall]
    score: float


class ToolCallEvaluation(BaseModel):
    """How well a system's tool calls match the expected ones: overall, per tool and per kind."""

    match: str
    arguments: str
    overall: ToolScore
    per_tool: dict[str, ToolScore] = Field(default_factory=dict)
    per_kind: dict[str, ToolScore] = Field(default_factory=dict)
    items: list[ToolCallItem] = Field(default_factory=list)


def _same(
    expected: ToolCall,
    called: ToolCall,
    arguments: str,
    schemas: Mapping[str, dict[str, Any]],
    judged: Judged | None,
) -> bool:
    if expected.name != called.name:
        return False
    if arguments == "judged" and judged is not None:
        equal = dict(expected.input_parameters) == dict(called.input_parameters)
        return equal or judged(expected, called)
    schema = schemas.get(called.name)
    if arguments == "schema" and schema is not None:
        validator = validators.validator_for(schema)(schema)
        return validator.is_valid(dict(called.input_parameters))
    return dict(expected.input_parameters) == dict(called.input_parameters)


def tool_call_score(
    expected: Sequence[ToolCall],
    called: Sequence[ToolCall],
    *,
    match: str = "in_order",
    arguments: str = "exact",
    schemas: Mapping[str, dict[str, Any]] | None = None,
    judged: Judged | None = None,
) -> float:
    """How well ``called`` matches ``expected`` (0..1) under ``match`` and ``arguments``
    (``judged``: the judge of arguments that differ, for the ``judged`` mode)."""
    _check(match, arguments)
    if arguments == "judged" and judged is None:
        raise ConfigError("the judged argument match needs a judge model")
    schemas = schemas or {}
    if not expected:
        return 1.0 if not called else 0.0
    same = lambda e, c: _same(e, c, arguments, schemas, judged)  # noqa: E731
    if match == "exact":
        ok = len(expected) == len(called) and all(map(same, expected, called))
        return 1.0 if ok else 0.0
    found = 0
    if match == "in_order":
        at = 0
        for want in expected:
            for position in range(at, len(called)):
                if same(want, called[position]):
                    found, at = found + 1, position + 1
                    break
    else:
        left = list(called)
        for want in expected:
            hit = next((c for c in left if same(want, c)), None)
            if hit is not None:
                left.remove(hit)
                found += 1
    return found / max(len(expected), len(called))


def _check(match: str, arguments: str) -> None:
    if match not in MATCHES:
        raise ConfigError(f"unknown tool call match {match!r}; known: {', '.join(MATCHES)}")
    if arguments not in ARGUMENTS:
        raise ConfigError(f"unknown argument match {arguments!r}; known: {', '.join(ARGUMENTS)}")


def as_calls(value: Any) -> list[ToolCall]:
    """A system's tool calls: a list of ToolCall or dicts (``name`` with ``input_parameters``,
    ``arguments`` or ``args``), or an object holding one under ``tool_calls``/``tools_called``;
    a ``(answer, calls)`` pair gives its calls."""
    if isinstance(value, tuple) and len(value) == 2:
        value = value[1]
    if isinstance(value, Mapping):
        value = value.get("tools_called", value.get("tool_calls"))
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConfigError(f"a system's tool calls must be a list, got {type(value).__name__}")
    calls = []
    for call in value:
        if isinstance(call, ToolCall):
            calls.append(call)
        elif isinstance(call, Mapping):
            params = call.get("input_parameters", call.get("arguments", call.get("args"))) or {}
            calls.append(ToolCall(name=str(call.get("name")), input_parameters=dict(params)))
        else:
            raise ConfigError(f"a tool call must be an object with a name, got {call!r}")
    return calls


def argument_judge(judge: Any, request: str) -> Judged:
    """A judge of arguments for one request, from a model (an LLM, a ``provider:model`` spec or
    a callable ``fn(prompt, system) -> str``); each pair is asked once."""
    from synth.evaluate._specs import judge_models
    from synth.llm.factory import make_llm

    llm = next(iter(judge_models([judge]).values())) if isinstance(judge, str) else make_llm(judge)
    verdicts: dict[str, bool] = {}

    def judged(expected: ToolCall, called: ToolCall) -> bool:
        prompt = _JUDGE_PROMPT.format(
            request=tag("request", request),
            name=called.name,
            expected=tag("expected", json.dumps(expected.input_parameters, default=str)),
            called=tag("called", json.dumps(called.input_parameters, default=str)),
        )
        if prompt not in verdicts:
            verdict = llm.complete(prompt, schema=ArgumentVerdict, label="tool_arguments")
            verdicts[prompt] = bool(verdict.same)
        return verdicts[prompt]

    return judged


def _scored(values: list[float], confidence: float, seed: int) -> ToolScore:
    low, high = bootstrap_interval(values, confidence=confidence, seed=seed)
    return ToolScore(score=mean_score(values), low=low, high=high, n=len(values))


def evaluate_tool_calls(
    goldens: Any,
    system: Callable[[str], Any] | None = None,
    *,
    match: str = "in_order",
    arguments: str = "exact",
    tools: Iterable[Any] = (),
    judge: Any = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> ToolCallEvaluation:
    """Score each golden (of a Dataset, a list of goldens, or a dataset's path) with
    ``expected_tools``: the calls ``system(input)`` returns (see
    :func:`as_calls`), or without a system the golden's own ``tools_called``. ``tools`` (records
    with ``name`` and ``input_schema``, e.g. :func:`synth.tools.load_tools`'s) give the schemas
    the ``schema`` argument match checks against; ``judge`` (a model) is the judged mode's."""
    _check(match, arguments)
    if arguments == "judged" and judge is None:
        raise ConfigError("the judged argument match needs a judge model (judge=, --judge)")
    schemas = {tool.name: tool.input_schema for tool in tools}
    items: list[ToolCallItem] = []
    for golden in Dataset.coerce(goldens):
        if golden.expected_tools is None:
            continue
        called = as_calls(system(golden.input)) if system is not None else golden.tools_called
        called = list(called or [])
        judged = argument_judge(judge, golden.input) if arguments == "judged" else None
        score = tool_call_score(
            golden.expected_tools,
            called,
            match=match,
            arguments=arguments,
            schemas=schemas,
            judged=judged,
        )
        kind = golden.metadata.get("tool_kind")
        items.append(
            ToolCallItem(
                input=golden.input,
                kind=kind if isinstance(kind, str) else None,
                expected=list(golden.expected_tools),
                called=called,
                score=score,
            )
        )
    if not items:
        raise ConfigError("no golden has expected_tools: nothing to score tool calls against")
    by_tool: dict[str, list[float]] = {}
    by_kind: dict[str, list[float]] = {}
    for item in items:
        for name in dict.fromkeys(call.name for call in item.expected):
            by_tool.setdefault(name, []).append(item.score)
        if item.kind is not None:
            by_kind.setdefault(item.kind, []).append(item.score)
    return ToolCallEvaluation(
        match=match,
        arguments=arguments,
        overall=_scored([i.score for i in items], confidence, seed),
        per_tool={k: _scored(v, confidence, seed) for k, v in sorted(by_tool.items())},
        per_kind={k: _scored(v, confidence, seed) for k, v in sorted(by_kind.items())},
        items=items,
    )


__all__ = [
    "ARGUMENTS",
    "ArgumentVerdict",
    "MATCHES",
    "ToolCallEvaluation",
    "ToolCallItem",
    "ToolScore",
    "argument_judge",
    "as_calls",
    "evaluate_tool_calls",
    "tool_call_score",
]
