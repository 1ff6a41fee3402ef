"""Agent goldens, first step: a user's request and the tool calls an agent should make for it.

A candidate of a tools run is a *plan* (:class:`ToolPlan`, in its context's metadata): the kind
of golden and the tools it uses, in order. The generator sees those tools and writes one request
and the arguments of each call; the reply schema holds one property per call (``call_1``,
``call_2``...), each that tool's name and its own input schema, so a model with structured outputs
fills in arguments of the right shape (a model may still get them wrong: the check step,
:mod:`synth.generate.tool_checks`, drops those with their reasons).

The kinds (:data:`TOOL_KINDS`), each exact in count in a run of its own:

- ``single_call``: one call of one tool;
- ``sequence``: two calls where the second needs the first's result (its tools depend on each
  other: the first's result names an argument of the second);
- ``parallel``: two independent calls, in any order;
- ``no_tool``: a request no tool serves (the agent should answer or refuse): no call expected;
- ``missing_argument``: a request for a tool that leaves out one required argument (the agent
  should ask for it): no call expected, the argument recorded;
- ``knowledge`` (a run given documents too): a question the agent answers from its knowledge
  base, no call expected. Its goldens are made by a run from documents (context, grounded
  expected output), not by these steps.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, create_model

from synth.data import Context
from synth.errors import ModelError, OutputParseError
from synth.generate.base import Source
from synth.generate.draft import Draft, draft_id, drop_failed
from synth.llm.base import LLM
from synth.llm.structured import parse_verdict
from synth.stage.call import ask_checked
from synth.stage.templates import PromptSet
from synth.stage.text import tagged
from synth.tools.tool import Tool

LABEL = "tool_requests"
SINGLE = "single_call"
SEQUENCE = "sequence"
PARALLEL = "parallel"
NO_TOOL = "no_tool"
MISSING = "missing_argument"
KNOWLEDGE = "knowledge"
#: each kind and what it tests in an agent
TOOL_KINDS = {
    SINGLE: "tool choice and arguments",
    SEQUENCE: "chaining a result into the next call",
    PARALLEL: "independent calls",
    NO_TOOL: "not calling a tool",
    MISSING: "asking for a missing argument",
    KNOWLEDGE: "answering from the documents",
}
#: the kinds whose goldens expect calls
CALLING = (SINGLE, SEQUENCE, PARALLEL)

_INSTRUCTIONS = {
    SINGLE: "Write a request that needs exactly one call: the tool {0}.",
    SEQUENCE: "Write a request that needs two calls in this order: first {0}, then {1} with an "
    "argument taken from what {0} returns (the user does not know that value).",
    PARALLEL: "Write a request that needs two independent calls, {0} and {1}, in either order "
    "(neither needs the other's result).",
    NO_TOOL: "Write a request on the same subject as these tools that none of them can serve (a "
    "general question, or something they cannot do): the agent should answer or decline without "
    "calling a tool. Give no calls.",
    MISSING: "Write a request for the tool {0} that leaves out the value of its required "
    "argument '{1}' (nothing in the message says it), so the agent must ask for it before "
    "calling. Give no calls.",
}
#: the variations a plan's later rounds are written with, so they do not repeat the first
_VARIATIONS = (
    "",
    "Write it as a busy person typing on a phone: short, informal.",
    "Write it as a polite, detailed email-style message with some background first.",
    "Write it as a follow-up a frustrated customer sends after an earlier failed attempt.",
    "Write it as a non-native speaker would, simple words, slightly unusual phrasing.",
    "Write it as someone planning ahead for a colleague, naming who it is for.",
)


class ToolPlan(BaseModel):
    """What one candidate of a tools run makes: the kind, the tools in call order, the argument
    left out (``missing_argument``) and the round (later rounds vary the wording)."""

    model_config = ConfigDict(frozen=True)

    kind: str
    tools: tuple[str, ...]
    missing: str | None = None
    round: int = 0


@dataclass(frozen=True)
class WrittenRequest:
    """A parsed reply: the request and its calls (``{"name", "input_parameters"}``), in order."""

    request: str
    calls: list[dict[str, Any]]


def plan_of(context: Context | None) -> ToolPlan:
    """The plan a candidate's context (and so each of its drafts') carries."""
    assert context is not None, "a tools run's candidates carry their plan"
    return ToolPlan.model_validate(context.metadata["tool_plan"])


def call_count(kind: str) -> int:
    """How many calls a golden of ``kind`` expects."""
    return {SINGLE: 1, SEQUENCE: 2, PARALLEL: 2}.get(kind, 0)


def tools_text(tools: Sequence[Tool]) -> str:
    """The tools as the prompts show them: their specs as JSON, delimited."""
    return tagged("tools", json.dumps([t.spec() for t in tools], indent=1, ensure_ascii=False))


def build_prompt(plan: ToolPlan, tools: Sequence[Tool], prompts: PromptSet) -> str:
    """The prompt asking for one request (and its calls) following ``plan``."""
    names = [f"'{name}'" for name in plan.tools]
    instruction = _INSTRUCTIONS[plan.kind].format(*names, plan.missing)
    variation = _VARIATIONS[plan.round % len(_VARIATIONS)]
    if plan.round >= len(_VARIATIONS):
        variation += f" (Variant {plan.round + 1}: pick other concrete values than usual.)"
    return prompts.render(
        LABEL, tools=tools_text(tools), instruction=instruction, variation=variation
    )


@functools.lru_cache(maxsize=256)
def _reply_schema(key: str) -> type[BaseModel]:
    calls = json.loads(key)
    properties: dict[str, Any] = {"request": {"type": "string", "minLength": 1}}
    for position, (name, schema) in enumerate(calls, start=1):
        properties[f"call_{position}"] = {
            "type": "object",
            "properties": {"name": {"type": "string", "enum": [name]}, "arguments": schema},
            "required": ["name", "arguments"],
        }
    shape = {"type": "object", "properties": properties, "required": list(properties)}

    def replace(schema: dict[str, Any]) -> None:
        schema.clear()
        schema.update({"title": "ToolRequest", **shape})

    # the schema is the plan's: a model class per plan shape, its schema replaced wholesale
    return create_model(  # type: ignore[no-any-return]
        "ToolRequest", __config__=ConfigDict(json_schema_extra=replace), request=(str, ...)
    )


def reply_schema(plan: ToolPlan, tools: Mapping[str, Tool]) -> type[BaseModel]:
    """The reply schema of ``plan``: the request, and one property per call."""
    calls = [(name, tools[name].input_schema) for name in plan.tools[: call_count(plan.kind)]]
    return _reply_schema(json.dumps(calls, sort_keys=True))


def parse(text: str, plan: ToolPlan) -> WrittenRequest:
    """The request and calls of a reply; OutputParseError when it has no request or a call is not
    an object (its names and arguments are checked later, so a bad one is dropped with its
    reason rather than asked again)."""
    value = parse_verdict(text)
    request = value.get("request")
    if not isinstance(request, str) or not request.strip():
        raise OutputParseError("the reply has no request", text)
    calls: list[dict[str, Any]] = []
    for position in range(1, call_count(plan.kind) + 1):
        call = value.get(f"call_{position}")
        if not isinstance(call, dict):
            raise OutputParseError(f"the reply has no call_{position} object", text)
        arguments = call.get("arguments")
        calls.append(
            {
                "name": str(call.get("name") or ""),
                "input_parameters": arguments if isinstance(arguments, dict) else {},
            }
        )
    return WrittenRequest(request.strip(), calls)


@dataclass(frozen=True)
class ToolRequestStep:
    """The first step of a tools run: one request (and its calls) per candidate."""

    name: ClassVar[str] = LABEL
    generator: LLM
    tools: Mapping[str, Tool]
    prompts: PromptSet

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        plan = plan_of(source.context)
        used = [self.tools[name] for name in plan.tools]
        prompt = build_prompt(plan, used, self.prompts)
        schema = reply_schema(plan, self.tools)
        draft = Draft(id=draft_id(source.key, 0), input="(not written)", context=source.context)
        draft.metadata.update(tool_kind=plan.kind, tools=list(plan.tools))
        if plan.missing is not None:
            draft.metadata["missing_argument"] = plan.missing
        try:
            written = await ask_checked(
                self.generator, prompt, schema, lambda text: parse(text, plan), LABEL, None
            )
        except ModelError as exc:
            drop_failed(draft, LABEL, exc)
            return [draft]
        draft.input = written.request
        draft.expected_tools = written.calls
        return [draft]


__all__ = [
    "CALLING",
    "KNOWLEDGE",
    "MISSING",
    "NO_TOOL",
    "PARALLEL",
    "SEQUENCE",
    "SINGLE",
    "TOOL_KINDS",
    "ToolPlan",
    "ToolRequestStep",
    "WrittenRequest",
    "build_prompt",
    "call_count",
    "parse",
    "plan_of",
    "reply_schema",
    "tools_text",
]
