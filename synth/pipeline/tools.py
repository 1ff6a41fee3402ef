"""Agent goldens: the plans, kinds and executors of the Synthesizer's ``generate_goldens_from_tools``.

An agent run is a run like any other (:mod:`synth.run.session`: the stream, top-up to exactly N,
journal and resume, deduplication, manifest, stage table), whose candidates are *plans* instead of
contexts and whose steps are the tool steps (:func:`synth.generate.steps.tool_steps`: write a
request and its calls, check them, run them). Each kind (:data:`~synth.generate.tool_requests.
TOOL_KINDS`) is made by a run of its own, so every kind is exact in count, as question types are
(:mod:`synth.pipeline.question_types`).

A plan's context carries the tools it uses (their specs as its texts) and its first tool as its
"file", so the per-file quotas of a run from documents are per-tool quotas here: each tool gets
its share of a kind's goldens, and a golden dropped on the way is replaced by another of the same
tool. The plans a kind's run starts from put first those whose tools no earlier kind covered, so
the whole dataset covers every tool once N allows it. Plans repeat in rounds (each written with
another variation of the prompt) until the run has its goldens or its top-up budget is spent.

Given documents too (the agent answers from a knowledge base and calls tools), the ``knowledge``
kind's goldens are made by a run from those documents like any other (:meth:`Synthesizer.
_docs_run`: contexts selected and criticised, questions, expected outputs grounded in the
context), each then marked as expecting no call. The call's manifest holds every kind's run's,
with both sources (``sources``) and the documents' coverage.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from synth._callables import load_callable
from synth.contexts.feed import Candidate
from synth.data import Context
from synth.dataset import Dataset
from synth.errors import ConfigError
from synth.generate.tool_requests import (
    KNOWLEDGE,
    MISSING,
    NO_TOOL,
    PARALLEL,
    SEQUENCE,
    SINGLE,
    TOOL_KINDS,
    ToolPlan,
)
from synth.run.manifest import merged as merged_manifest
from synth.tools.execute import Executor, FunctionExecutor
from synth.tools.load import is_server
from synth.tools.mcp import MCPSession
from synth.tools.tool import Tool

MODE = "tools"
#: the kinds a run makes when none are asked for, and their shares
DEFAULT_KINDS = {SINGLE: 0.4, SEQUENCE: 0.2, PARALLEL: 0.2, NO_TOOL: 0.1, MISSING: 0.1}
#: the kinds and shares of a run given documents too, when none are asked for
DOCUMENT_KINDS = {
    SINGLE: 0.3,
    SEQUENCE: 0.15,
    PARALLEL: 0.15,
    NO_TOOL: 0.1,
    MISSING: 0.1,
    KNOWLEDGE: 0.2,
}
#: the dataset-level metadata key of what each kind's run asked for and delivered
TOOL_KINDS_KEY = "tool_kinds"
#: what a run given tools is told to run them with: a ``module:function``, a function, or
#: True/False (the MCP server the tools came from, or none); None runs an MCP server's tools
ExecuteArg = str | Callable[..., Any] | bool | None


def depends(first: Tool, then: Tool) -> bool:
    """Whether ``then`` needs ``first``'s result: a required argument of ``then`` is named by
    ``first``'s result schema or its description."""
    if first.name == then.name:
        return False
    given = result_fields(first.output_schema)
    return any(
        name in given or re.search(rf"\b{re.escape(name)}\b", first.description)
        for name in then.required
    )


def result_fields(schema: Any) -> set[str]:
    """The property names anywhere in a result schema (not its keywords: a ``title`` is not a
    field unless a ``properties`` names it)."""
    found: set[str] = set()
    if isinstance(schema, dict):
        properties = schema.get("properties")
        if isinstance(properties, dict):
            found.update(str(name) for name in properties)
        for value in schema.values():
            found |= result_fields(value)
    elif isinstance(schema, list):
        for value in schema:
            found |= result_fields(value)
    return found


def kind_plans(tools: Sequence[Tool], kind: str) -> list[ToolPlan]:
    """Every plan of ``kind`` the tools allow, in the tools' order; ConfigError when none does."""
    plans: list[ToolPlan] = []
    if kind == SINGLE:
        plans = [ToolPlan(kind=kind, tools=(t.name,)) for t in tools]
    elif kind == SEQUENCE:
        plans = [
            ToolPlan(kind=kind, tools=(a.name, b.name))
            for a in tools
            for b in tools
            if depends(a, b)
        ]
    elif kind == PARALLEL:
        seen: set[frozenset[str]] = set()
        for i, a in enumerate(tools):
            for b in [*tools[i + 1 :], *tools[:i]]:
                pair = frozenset({a.name, b.name})
                if a is b or pair in seen or depends(a, b) or depends(b, a):
                    continue
                seen.add(pair)
                plans.append(ToolPlan(kind=kind, tools=(a.name, b.name)))
                break
    elif kind == NO_TOOL:
        names = [t.name for t in tools]
        plans = [
            ToolPlan(kind=kind, tools=(name, *[n for n in names if n != name])) for name in names
        ]
    elif kind == MISSING:
        plans = [ToolPlan(kind=kind, tools=(t.name,), missing=p) for t in tools for p in t.required]
    else:
        known = ", ".join(TOOL_KINDS)
        raise ConfigError(f"unknown tool golden kind {kind!r}; known: {known}")
    if not plans:
        why = {
            SEQUENCE: "no tool's result names a required argument of another",
            PARALLEL: "it needs two tools that do not depend on each other",
            MISSING: "no tool has a required argument",
        }
        raise ConfigError(f"the tools allow no {kind} golden: {why.get(kind, 'no tools')}")
    return plans


def checked_kinds(kinds: Mapping[str, float] | None, documents: bool) -> dict[str, float]:
    """The kinds a run makes and their weights (the defaults when none are asked for); ConfigError
    for an unknown kind, for ``knowledge`` without documents and for documents without it."""
    weights = dict(kinds or (DOCUMENT_KINDS if documents else DEFAULT_KINDS))
    for kind in weights:
        if kind not in TOOL_KINDS:
            raise ConfigError(f"unknown tool golden kind {kind!r}; known: {', '.join(TOOL_KINDS)}")
    asks = weights.get(KNOWLEDGE, 0) > 0
    if asks and not documents:
        raise ConfigError(
            f"the {KNOWLEDGE} kind answers from documents: name them (documents=..., or PATH ... "
            "beside --tools)"
        )
    if documents and not asks:
        raise ConfigError(
            f"documents are answered from by the {KNOWLEDGE} kind: give it a share "
            f"({KNOWLEDGE}=0.2 in the kinds), or leave the documents out"
        )
    return weights


def by_coverage(plans: list[ToolPlan], covered: Counter[str]) -> list[ToolPlan]:
    """The plans, those calling the tools covered least so far first (ties in their order)."""
    return sorted(plans, key=lambda p: sum(covered[name] for name in p.tools[:2]))


def candidates(
    plans: list[ToolPlan], tools: Mapping[str, Tool], num_goldens: int, tries: int
) -> tuple[list[Candidate], dict[str, int]]:
    """The run's candidates (the plans, round after round) and each tool's quota of the goldens
    (the first tool of a plan is its "file": the goldens spread evenly over them, in order)."""
    rounds = -(-num_goldens // len(plans)) * tries
    made: list[Candidate] = []
    for round_ in range(rounds):
        for plan in plans:
            plan = plan.model_copy(update={"round": round_})
            key = f"{plan.kind}:{round_}:{'+'.join(plan.tools)}" + (
                f":{plan.missing}" if plan.missing else ""
            )
            context = Context(
                id=key,
                chunk_ids=list(plan.tools),
                texts=[json.dumps(tools[name].spec(), ensure_ascii=False) for name in plan.tools],
                source_files=[f"tools/{name}" for name in plan.tools],
                metadata={"tool_plan": plan.model_dump(mode="json")},
            )
            made.append(Candidate(len(made), key, context, position=len(made)))
    focus = list(dict.fromkeys(f"tools/{plan.tools[0]}" for plan in plans))
    quotas = dict.fromkeys(focus, num_goldens // len(focus))
    for name in focus[: num_goldens % len(focus)]:
        quotas[name] += 1
    return made, quotas


@contextlib.asynccontextmanager
async def executor_for(source: Any, execute: ExecuteArg) -> AsyncIterator[Executor | None]:
    """What runs the calls of a run: the function ``execute`` names, the MCP server ``source``
    names (``execute`` None or True), or nothing."""
    if isinstance(execute, str):
        try:
            function = load_callable(execute)
        except ConfigError as exc:
            raise ConfigError(f"--tools-exec {execute!r}: {exc}") from None
        yield FunctionExecutor(function)
    elif callable(execute) and not isinstance(execute, bool):
        yield FunctionExecutor(execute)
    elif execute is False or not (isinstance(source, str) and is_server(source)):
        if execute is True:
            raise ConfigError("execute=True needs an MCP server as the tools' source")
        yield None
    else:
        async with MCPSession(source) as session:
            yield session


def with_sources(
    manifests: list[tuple[str, dict[str, Any]]],
    knowledge: Mapping[str, Any] | None,
    source: str | Sequence[Tool],
    tools: Sequence[Tool],
) -> dict[str, Any]:
    """The manifest of a call from tools and documents: every kind's run's, summed, with both
    sources (the tools' and the documents' ingest) and the documents' coverage and contexts."""
    manifest = merged_manifest(manifests)
    documents = dict((knowledge or {}).get("inputs") or {})
    named = source if isinstance(source, str) else "records"
    manifest["sources"] = {
        "tools": {"source": named, "tools": [tool.name for tool in tools]},
        "documents": documents,
    }
    for key in ("coverage", "contexts", "inputs"):
        if knowledge is not None and key in knowledge:
            manifest[key] = knowledge[key]
        else:
            manifest.pop(key, None)
    return manifest


def tag_kind(goldens: Dataset, kind: str) -> None:
    """Mark each of ``goldens`` as of tool ``kind`` (and what it tests); none expects no call."""
    for golden in goldens:
        golden.metadata["tool_kind"] = kind
        golden.metadata["tests"] = TOOL_KINDS[kind]
        if golden.expected_tools is None:
            golden.expected_tools = []


__all__ = [
    "DEFAULT_KINDS",
    "DOCUMENT_KINDS",
    "MODE",
    "TOOL_KINDS_KEY",
    "by_coverage",
    "candidates",
    "checked_kinds",
    "depends",
    "executor_for",
    "kind_plans",
    "tag_kind",
    "with_sources",
]
