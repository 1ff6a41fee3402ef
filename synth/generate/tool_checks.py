"""Agent goldens, second step: every expected call checked before the golden is kept.

First what a program can check, against the tools themselves: as many calls as the kind expects,
each naming a tool that exists (else ``unknown_tool``) and the tool its plan named (else
``wrong_tool``), its arguments valid against the tool's JSON schema (``jsonschema``; a required
argument left out is ``missing_required_argument``, any other error ``invalid_arguments``). Then
what needs judgement: the critic sees the request, the tools and the calls and says whether the
golden is what its kind promises (every argument stated in or following from the request, the
second call of a sequence fed by the first; no tool serving a ``no_tool`` request; the left-out
argument really missing from a ``missing_argument`` one). A verdict against it drops the golden
(``implausible_calls``, ``tool_needed``, ``argument_given``), with the critic's reason.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel

from synth.errors import ModelError
from synth.generate.base import Source
from synth.generate.draft import Draft, drop_failed, live
from synth.generate.tool_requests import (
    MISSING,
    NO_TOOL,
    SEQUENCE,
    ToolPlan,
    call_count,
    plan_of,
    tools_text,
)
from synth.llm.base import LLM
from synth.llm.structured import parse_verdict
from synth.stage.call import ask_checked
from synth.stage.templates import PromptSet
from synth.stage.text import tagged
from synth.tools.tool import Tool

LABEL = "tool_check"
UNKNOWN_TOOL = "unknown_tool"
WRONG_TOOL = "wrong_tool"
WRONG_CALLS = "wrong_call_count"
MISSING_REQUIRED = "missing_required_argument"
INVALID_ARGUMENTS = "invalid_arguments"
#: the critic's drop reason per kind
_REFUSED = {NO_TOOL: "tool_needed", MISSING: "argument_given"}
IMPLAUSIBLE = "implausible_calls"

_QUESTIONS = {
    NO_TOOL: "No call is expected: the agent should answer or decline without a tool. Is that "
    "right, i.e. does no tool above serve this request? Verdict true if no tool serves it.",
    MISSING: "No call is expected: the message should leave out the value of the required "
    "argument '{missing}' of '{tool}', so the agent must ask for it. Verdict true if the message "
    "really does not give that value.",
    SEQUENCE: "Are these the calls the message needs, in this order, with every argument stated in "
    "or following plainly from the message, except the second call's argument that comes from the "
    "first call's result? Verdict true if so.",
}
_DEFAULT_QUESTION = (
    "Are these the calls the message needs, with every argument value stated in or following "
    "plainly from the message (none invented, none contradicting it)? Verdict true if so."
)


class CheckVerdict(BaseModel):
    """The critic's reply: its reason first, then its verdict."""

    reason: str
    verdict: bool


def schema_errors(tool: Tool, arguments: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(reason, detail)`` for each way ``arguments`` break ``tool``'s input schema, required
    arguments first; none when they are valid."""
    from jsonschema import validators  # 60 ms of import, which a run without tools never needs

    validator_class = validators.validator_for(tool.input_schema)
    validator = validator_class(tool.input_schema)
    found: list[tuple[str, str]] = []
    for error in sorted(validator.iter_errors(dict(arguments)), key=lambda e: list(e.path)):
        where = ".".join(str(p) for p in error.absolute_path) or "arguments"
        reason = MISSING_REQUIRED if error.validator == "required" else INVALID_ARGUMENTS
        found.append((reason, f"{tool.name}: {where}: {error.message}"))
    found.sort(key=lambda pair: pair[0] != MISSING_REQUIRED)
    return found


def check_calls(
    plan: ToolPlan, calls: list[dict[str, Any]], tools: Mapping[str, Tool]
) -> tuple[str, str] | None:
    """The first thing wrong with ``calls`` as the golden of ``plan`` (reason, detail), or None."""
    wanted = call_count(plan.kind)
    if len(calls) != wanted:
        return WRONG_CALLS, f"{len(calls)} calls, the kind {plan.kind} expects {wanted}"
    for position, call in enumerate(calls):
        name = call["name"]
        if name not in tools:
            return UNKNOWN_TOOL, f"call {position + 1} names {name!r}, which no tool is called"
        if name != plan.tools[position]:
            return (
                WRONG_TOOL,
                f"call {position + 1} is {name!r}, the plan named {plan.tools[position]!r}",
            )
        errors = schema_errors(tools[name], call["input_parameters"])
        if errors:
            return errors[0]
    return None


def build_prompt(
    request: str,
    plan: ToolPlan,
    calls: list[dict[str, Any]],
    tools: Mapping[str, Tool],
    prompts: PromptSet,
) -> str:
    """The critic's prompt for one golden."""
    question = _QUESTIONS.get(plan.kind, _DEFAULT_QUESTION).format(
        missing=plan.missing, tool=plan.tools[0] if plan.tools else ""
    )
    shown = json.dumps(calls, indent=1, ensure_ascii=False, default=str)
    return prompts.render(
        LABEL,
        request=tagged("request", request),
        tools=tools_text([tools[name] for name in plan.tools]),
        calls=tagged("calls", shown),
        question=question,
    )


def _parse(text: str) -> CheckVerdict:
    return parse_verdict(text, CheckVerdict)


@dataclass(frozen=True)
class ToolCheckStep:
    """The checks as a step: the program's first, then one critic request per golden left."""

    name: ClassVar[str] = LABEL
    critic: LLM
    tools: Mapping[str, Tool]
    prompts: PromptSet

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        for draft in live(drafts):
            plan = plan_of(draft.context)
            calls = draft.expected_tools or []
            wrong = check_calls(plan, calls, self.tools)
            if wrong is not None:
                draft.drop(LABEL, *wrong)
                continue
            prompt = build_prompt(draft.input, plan, calls, self.tools, self.prompts)
            try:
                verdict = await ask_checked(self.critic, prompt, CheckVerdict, _parse, LABEL, None)
            except ModelError as exc:
                drop_failed(draft, LABEL, exc)
                continue
            draft.metadata["tool_check"] = {"verdict": verdict.verdict, "reason": verdict.reason}
            if not verdict.verdict:
                draft.drop(LABEL, _REFUSED.get(plan.kind, IMPLAUSIBLE), verdict.reason or None)
        return drafts


__all__ = [
    "IMPLAUSIBLE",
    "INVALID_ARGUMENTS",
    "MISSING_REQUIRED",
    "UNKNOWN_TOOL",
    "WRONG_CALLS",
    "WRONG_TOOL",
    "CheckVerdict",
    "ToolCheckStep",
    "build_prompt",
    "check_calls",
    "schema_errors",
]
