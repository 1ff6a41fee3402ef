"""Agent goldens, last step (when the tools can be run): each expected call run, its result kept.

The calls run in order through the run's executor (a ``module:function``, or the MCP server the
tools came from). A call of a sequence takes, for each of its arguments the earlier results name
(a key of a result object, or of the first object of a result list), that value: the user could
not know it, the agent gets it from the first call. Each result is recorded as the call's
``output``; a call that fails drops the golden as ``tool_error`` with the tool's message, so every
kept sequence is known to be feasible. The generator then writes the agent's final reply from the
results: the golden's ``expected_output``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel

from synth.errors import ModelError, OutputParseError
from synth.generate.base import Source
from synth.generate.draft import Draft, drop_failed, live
from synth.llm.base import LLM
from synth.llm.structured import parse_verdict
from synth.stage.call import ask_checked
from synth.stage.templates import PromptSet
from synth.stage.text import tagged
from synth.tools.execute import Executor, ToolCallError

LABEL = "tool_run"
#: the prompt of the agent's final reply
ANSWER = "tool_answer"
TOOL_ERROR = "tool_error"


class AgentAnswer(BaseModel):
    """The generator's reply: the agent's final answer."""

    answer: str


def earlier_values(outputs: list[Any]) -> dict[str, Any]:
    """The named values earlier results give a later call: the keys of each result object (or of
    a result list's first object); a later result's value wins."""
    values: dict[str, Any] = {}
    for output in outputs:
        first = output[0] if isinstance(output, list) and output else output
        if isinstance(first, Mapping):
            values.update({str(k): v for k, v in first.items()})
    return values


def chained(arguments: Mapping[str, Any], outputs: list[Any]) -> dict[str, Any]:
    """``arguments`` with each one an earlier result names replaced by that result's value."""
    values = earlier_values(outputs)
    return {key: values.get(key, value) for key, value in arguments.items()}


def build_answer_prompt(request: str, calls: list[dict[str, Any]], prompts: PromptSet) -> str:
    """The prompt for the agent's final reply from its calls' results."""
    results = json.dumps(calls, indent=1, ensure_ascii=False, default=str)
    return prompts.render(
        ANSWER, request=tagged("request", request), results=tagged("results", results)
    )


def json_safe(value: Any) -> Any:
    """A tool's result as JSON can hold it (a value JSON has no word for becomes its text), so
    the golden can be journaled and saved."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def _parse(text: str) -> str:
    answer = parse_verdict(text, AgentAnswer).answer.strip()
    if not answer:
        raise OutputParseError("the reply's answer is blank", text)
    return answer


@dataclass(frozen=True)
class ToolRunStep:
    """The execution as a step: the calls run in order, then the final reply written."""

    name: ClassVar[str] = LABEL
    executor: Executor
    generator: LLM | None
    prompts: PromptSet

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        for draft in live(drafts):
            calls = draft.expected_tools or []
            if not calls:
                continue
            outputs: list[Any] = []
            ran: list[dict[str, Any]] = []
            try:
                for call in calls:
                    arguments = chained(call["input_parameters"], outputs)
                    output = json_safe(await self.executor.call(call["name"], arguments))
                    outputs.append(output)
                    ran.append(
                        {"name": call["name"], "input_parameters": arguments, "output": output}
                    )
            except ToolCallError as exc:
                draft.drop(LABEL, TOOL_ERROR, f"{calls[len(ran)]['name']}: {exc}")
                continue
            draft.expected_tools = ran
            if self.generator is None:
                continue
            prompt = build_answer_prompt(draft.input, ran, self.prompts)
            try:
                draft.expected_output = await ask_checked(
                    self.generator, prompt, AgentAnswer, _parse, LABEL, None
                )
            except ModelError as exc:
                drop_failed(draft, LABEL, exc)
        return drafts


__all__ = [
    "TOOL_ERROR",
    "AgentAnswer",
    "ToolRunStep",
    "build_answer_prompt",
    "chained",
    "earlier_values",
]
