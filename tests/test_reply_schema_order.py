"""Every reply schema puts its reason (or its quotes) before its verdict (or its answer).

Strict decoding writes a reply's fields in the schema's order, so a score written before its
reason is a guess the reason then defends. This walks every pydantic model defined in the modules
of synth/generate, synth/contexts and synth/evaluate (reply schemas and the item models inside
them) and checks the order of the fields of each that has both kinds.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from pydantic import BaseModel

import synth.contexts
import synth.evaluate
import synth.generate

#: fields that hold why: written first
REASONS = frozenset({"reason", "reasons", "feedback", "quotes", "explanation", "rationale"})
#: fields that hold the verdict, the score or the answer: written after the reason
VERDICTS = frozenset(
    {
        "score",
        "scores",
        "answered",
        "standalone",
        "answerable",
        "expected_output",
        "answer",
        "verdict",
        "winner",
        "rating",
        "preferred",
        "clarity",
        "depth",
        "structure",
        "relevance",
        "passes",
        "label",
        "labels",
        # the context critic's labels and grades, and a judge's verdict on one claim
        "prose",
        "disqualifier",
        "self_contained",
        "informative",
        "coherent",
        "supported",
    }
)


def _reasons(model: type[BaseModel]) -> set[str]:
    """The reason fields of ``model`` that hold text (a count named ``quotes`` is no reason)."""
    return {
        name
        for name in REASONS & set(model.model_fields)
        if model.model_fields[name].annotation not in (int, float, bool)
    }


def _models() -> list[type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    for package in (synth.generate, synth.contexts, synth.evaluate):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            module = importlib.import_module(info.name)
            for _, obj in inspect.getmembers(module, inspect.isclass):
                if (
                    issubclass(obj, BaseModel)
                    and obj.__module__ == module.__name__
                    and _reasons(obj)
                    and VERDICTS & set(obj.model_fields)
                ):
                    found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [found[name] for name in sorted(found)]


MODELS = _models()


def test_the_walk_finds_the_reply_schemas_of_every_package() -> None:
    names = {f"{m.__module__}.{m.__qualname__}" for m in MODELS}
    for expected in (
        "synth.generate.expected._Output",
        "synth.generate.filter._ScoreItem",
        "synth.generate.out_of_scope._VerdictItem",
        "synth.generate.follow_ups._Verdict",
        "synth.generate.final_check._AloneVerdict",
        "synth.generate.final_check._ContextVerdict",
        "synth.contexts.critic.ContextScore",
        "synth.evaluate._verdicts.RatingVerdict",
    ):
        assert expected in names
    assert any(name.startswith("synth.contexts.") for name in names)
    assert any(name.startswith("synth.evaluate.") for name in names)


@pytest.mark.parametrize(
    "model",
    [pytest.param(m, id=f"{m.__module__}.{m.__qualname__}") for m in MODELS],
)
def test_the_reason_comes_before_the_verdict(model: type[BaseModel]) -> None:
    fields = list(model.model_fields)
    first_reason = min(fields.index(f) for f in _reasons(model))
    first_verdict = min(fields.index(f) for f in VERDICTS & set(fields))
    assert first_reason < first_verdict, f"{model.__qualname__}: {fields}"
