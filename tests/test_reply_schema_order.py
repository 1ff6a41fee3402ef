"""Every reply schema puts its reason (or its quotes) before its verdict (or its answer).

Strict decoding writes a reply's fields in the schema's order, so a score written before its
reason is a guess the reason then defends. The schemas are found, not listed: a reply schema is a
pydantic model that synth's source hands, as a class, to a call (``parse_verdict(text, Reply)``,
``BatchRequest(label, Reply, ...)``, ``complete(prompt, schema=Reply)``, a judge's ``_one``), and
with it every model nested in its fields. So a new schema, wherever it is asked for, is checked.

A verdict is a field the model fills with a judgement: a boolean, a number or one of a fixed set
of values (``index``, a position, aside); an answer is a field named as one. A schema with a
verdict must give its reason first; a schema with an answer and a reason gives the reason first.
"""

from __future__ import annotations

import ast
import importlib
import types
import typing
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel

import synth

#: fields that hold why: written first (a list of quotes counts)
REASONS = frozenset({"reason", "reasons", "feedback", "quotes", "evidence", "explanation"})
#: fields that hold an answer, written after the reasons and quotes the schema asks for
ANSWERS = frozenset({"answer", "expected_output", "assistant"})
#: a position in the reply, not a judgement
POSITIONS = frozenset({"index"})
#: calls whose class arguments are not asked of a model
NOT_ASKED = frozenset({"isinstance", "issubclass", "cast", "Field", "field", "TypeVar"})
#: packages that never ask a model: the classes they pass are records they read
READERS = ("synth.report",)

SYNTH = Path(synth.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(SYNTH.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def passed_models(source: str, namespace: Any) -> list[type[BaseModel]]:
    """The pydantic models ``source`` hands to a call as a class (a name, or ``module.Name``),
    resolved in ``namespace`` (a module)."""
    found: list[type[BaseModel]] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = getattr(func, "id", None) or getattr(func, "attr", "")
        if called in NOT_ASKED:
            continue
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(arg, ast.Name):
                chain = [arg.id]
            elif isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name):
                chain = [arg.value.id, arg.attr]
            else:
                continue
            obj = namespace
            for part in chain:
                obj = getattr(obj, part, None)
            if isinstance(obj, type) and issubclass(obj, BaseModel) and obj not in found:
                found.append(obj)
    return found


def _nested(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _nested(arg)]


def with_nested(models: list[type[BaseModel]]) -> list[type[BaseModel]]:
    """``models`` and every model their fields hold, at any depth."""
    seen: list[type[BaseModel]] = []
    todo = list(models)
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.append(model)
        for field in model.model_fields.values():
            todo.extend(_nested(field.annotation))
    return seen


def reply_schemas() -> list[type[BaseModel]]:
    """Every reply schema synth asks a model for, and the models nested in them, sorted."""
    found: list[type[BaseModel]] = []
    for path in sorted(SYNTH.rglob("*.py")):
        name = _module_name(path)
        if name.endswith("__main__") or name.startswith(READERS):
            continue
        source = path.read_text(encoding="utf-8")
        if "BaseModel" not in source and "schema" not in source and "Verdict" not in source:
            continue
        found.extend(passed_models(source, importlib.import_module(name)))
    return sorted(with_nested(found), key=lambda m: f"{m.__module__}.{m.__qualname__}")


def _is_verdict(annotation: Any) -> bool:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(_is_verdict(a) for a in typing.get_args(annotation) if a is not type(None))
    return annotation in (bool, int, float) or typing.get_origin(annotation) is Literal


def _is_text(annotation: Any) -> bool:
    return annotation is str or (
        typing.get_origin(annotation) is list and typing.get_args(annotation) == (str,)
    )


def order_problem(model: type[BaseModel]) -> str | None:
    """What is out of order in ``model``'s fields (as its JSON schema lists them), or None."""
    fields = model.model_fields
    names = list(model.model_json_schema()["properties"])
    reasons = [n for n in names if n in REASONS and _is_text(fields[n].annotation)]
    verdicts = [n for n in names if n not in POSITIONS and _is_verdict(fields[n].annotation)]
    answers = [n for n in names if n in ANSWERS]
    if verdicts and not reasons:
        return f"{model.__qualname__} asks for {verdicts} with no reason: {names}"
    later = [n for n in verdicts + answers if reasons and names.index(n) < names.index(reasons[0])]
    if later:
        return f"{model.__qualname__} asks for {later} before its reason {reasons[0]!r}: {names}"
    return None


SCHEMAS = reply_schemas()


def test_the_schemas_are_found_wherever_synth_asks_for_them() -> None:
    names = {f"{m.__module__}.{m.__qualname__}" for m in SCHEMAS}
    for expected in (
        "synth.contexts.critic._Item",  # the critic
        "synth.generate.filter._ScoreItem",  # the filter
        "synth.generate.out_of_scope._VerdictItem",  # the scope check
        "synth.generate.follow_ups._Verdict",  # follow-ups
        "synth.generate.final_check._AloneVerdict",
        "synth.generate.final_check._ContextVerdict",
        "synth.generate.expected._Output",
        "synth.generate.conversation._Exchange",
        "synth.generate.tool_checks.CheckVerdict",
        # every judge
        "synth.evaluate._verdicts.RatingVerdict",
        "synth.evaluate._verdicts.PreferenceVerdict",
        "synth.evaluate._verdicts.SupportedClaim",
        "synth.evaluate._verdicts.UnsupportedClaim",
        "synth.evaluate._verdicts.ContextVerdict",
        "synth.evaluate._verdicts.Statement",
        "synth.evaluate._verdicts.CorrectnessVerdict",
        "synth.evaluate.tools.ArgumentVerdict",
    ):
        assert expected in names
    # records read by reports and the run's own records are no reply schemas
    assert not names & {"synth.data.Golden", "synth.evaluate.compare.Comparison"}


def test_a_new_schema_is_found_and_a_verdict_before_its_reason_or_without_one_is_named() -> None:
    class Graded(BaseModel):
        grade: int
        reason: str

    class Judged(BaseModel):
        items: list[Graded]

    class Bare(BaseModel):
        correct: bool

    namespace = types.SimpleNamespace(Judged=Judged, Bare=Bare)
    source = "parse_verdict(text, Judged)\nllm.complete(prompt, schema=Bare)\nisinstance(x, Bare)"
    found = with_nested(passed_models(source, namespace))
    assert set(found) == {Judged, Graded, Bare}
    assert "['grade'] before its reason 'reason'" in (order_problem(Graded) or "")
    assert "['correct'] with no reason" in (order_problem(Bare) or "")
    assert order_problem(Judged) is None


@pytest.mark.parametrize(
    "model",
    [pytest.param(m, id=f"{m.__module__}.{m.__qualname__}") for m in SCHEMAS],
)
def test_the_reason_comes_before_the_verdict(model: type[BaseModel]) -> None:
    assert order_problem(model) is None
