"""Strict parsing of structured replies: one JSON object, exact types, nothing guessed from prose."""

from __future__ import annotations

import functools
import json
import re
from typing import Any, TypeVar, overload

from pydantic import BaseModel, ValidationError

from synth.errors import OutputParseError

M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\n(.*?)\n?```$", re.DOTALL)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"duplicate key {key!r}")
        obj[key] = value
    return obj


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


@overload
def parse_verdict(text: str, schema: None = None) -> dict[str, Any]: ...
@overload
def parse_verdict(text: str, schema: type[M]) -> M: ...
def parse_verdict(text: str, schema: type[M] | None = None) -> dict[str, Any] | M:
    """Return the single JSON object in ``text``, validated against ``schema`` when given.

    The reply must be one JSON object, optionally inside one fenced code block. Duplicate keys,
    ``NaN`` and ``Infinity`` are refused; with a schema every field must have its exact JSON type
    (pydantic strict JSON mode: ``"true"`` is not a boolean, ``4.0`` is not an integer, while an
    enum, a date or a tuple takes its usual JSON form). Raises
    :class:`~synth.errors.OutputParseError`, which keeps the raw text.
    """
    if not isinstance(text, str):
        raise OutputParseError(
            f"expected a string reply, got {type(text).__name__}", raw=repr(text)
        )
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        obj = json.loads(body, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise OutputParseError(f"reply is not one JSON object: {exc}", raw=text) from None
    if not isinstance(obj, dict):
        raise OutputParseError(f"reply is JSON {type(obj).__name__}, not an object", raw=text)
    if schema is None:
        return obj
    try:
        # validated from the JSON text, not the dict: strict JSON mode takes what JSON can say
        # (a string for an enum or a date, an array for a tuple) and nothing looser
        return schema.model_validate_json(body, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "<root>"
        raise OutputParseError(
            f"reply does not match {schema.__name__}: {where}: {first['msg']}", raw=text
        ) from None


@functools.lru_cache(maxsize=512)
def json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a pydantic model, as sent to providers and hashed into cache keys.

    Made once per model class (pydantic takes about a millisecond to build one, which every
    request would otherwise pay); the dict is shared, so callers must not change it.
    """
    return schema.model_json_schema()


#: keywords some strict modes refuse (Anthropic: numeric bounds and ``maxItems``; ``minItems`` only
#: as 0 or 1); OpenAI strict mode and Gemini accept them all
BOUND_KEYWORDS = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "maxItems"}
)


@functools.lru_cache(maxsize=512)
def strict_json_schema(schema: type[BaseModel], *, bounds: bool = True) -> dict[str, Any] | None:
    """The schema in the form strict JSON-schema modes require, or ``None`` when it has no such form.

    Strict modes (OpenAI ``strict: true``, Anthropic structured outputs) want every object closed
    (``additionalProperties: false``) with every property required and no ``default``. A model with
    free-form mappings (``dict[str, X]``) cannot be closed, so it gets ``None``. ``bounds=False``
    also drops the bounds a provider refuses (:data:`BOUND_KEYWORDS`, and ``minItems`` above 1),
    for Anthropic; the reply is checked against them after parsing anyway. Made once per model
    class and shared, like :func:`json_schema`.
    """
    converted = _strict(json_schema(schema), bounds)
    return converted if isinstance(converted, dict) else None


class _NotStrict(Exception):
    pass


def _strict(node: Any, bounds: bool) -> Any:
    try:
        return _close(node, bounds)
    except _NotStrict:
        return None


#: keywords whose value maps names (fields, definitions) to schemas: the names are not keywords
_NAMED_SCHEMAS = frozenset({"properties", "$defs", "definitions", "patternProperties"})


def _close(node: Any, bounds: bool) -> Any:
    if isinstance(node, list):
        return [_close(item, bounds) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NAMED_SCHEMAS and isinstance(value, dict):  # a field may be named "default"
            out[key] = {name: _close(schema, bounds) for name, schema in value.items()}
        elif key != "default":
            out[key] = _close(value, bounds)
    if not bounds:
        for key in BOUND_KEYWORDS & out.keys():
            if not isinstance(out[key], dict):  # a keyword, not a property of that name
                del out[key]
        if isinstance(out.get("minItems"), int) and out["minItems"] > 1:
            out["minItems"] = 1
    if "properties" in node or node.get("type") == "object":
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) or (extra is True and not node.get("properties")):
            raise _NotStrict
        out["additionalProperties"] = False
        out["required"] = list(node.get("properties") or {})
    return out


def schema_name(schema: type[BaseModel]) -> str:
    """The schema's name as providers accept it (letters, digits, ``_`` and ``-``, at most 64)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64] or "reply"


@functools.lru_cache(maxsize=512)
def schema_instructions(schema: type[BaseModel]) -> str:
    """The text appended to a prompt when the provider cannot be given the schema directly."""
    body = json.dumps(json_schema(schema), indent=2, sort_keys=True)
    return (
        "Reply with one JSON object, and nothing else, that matches this JSON schema:\n"
        f"```json\n{body}\n```"
    )


__all__ = [
    "json_schema",
    "parse_verdict",
    "schema_instructions",
    "schema_name",
    "strict_json_schema",
]
