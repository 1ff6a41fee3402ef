"""Tools from an OpenAPI 3 spec: each operation a tool.

A tool is named by the operation's ``operationId`` (else ``<method>_<path>`` made a name); its
input schema is an object whose properties are the operation's parameters (path, query, header;
their own ``required``) and, when it has a JSON request body, ``body`` (required when the body
is). ``$ref`` inside the spec are resolved (a cycle stops at an open object). The spec is
validated with ``openapi-spec-validator`` first, so a broken spec is refused with its first error
(a ``$ref`` to nowhere, or to another file, included). A Swagger 2.0 spec is refused by name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from synth.errors import ConfigError
from synth.tools.tool import Tool

_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


def read_openapi(path: Path) -> list[Tool]:
    """The operations of the OpenAPI 3 spec at ``path`` (JSON or YAML), as tools."""
    import yaml  # a run that reads no spec does not load it

    try:
        text = path.read_text(encoding="utf-8-sig")
        spec = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read the OpenAPI spec ({_first_line(exc)})") from None
    return tools_from_openapi(spec, str(path))


def is_openapi(value: object) -> bool:
    """Whether a parsed document is an OpenAPI spec, or a Swagger 2.0 one (it says which version)."""
    return isinstance(value, Mapping) and ("openapi" in value or "swagger" in value)


def tools_from_openapi(spec: Any, where: str) -> list[Tool]:
    """The operations of a parsed OpenAPI 3 spec, as tools; ConfigError when it is invalid."""
    from openapi_spec_validator import validate
    from openapi_spec_validator.validation.exceptions import OpenAPIValidationError
    from referencing.exceptions import Unresolvable

    if isinstance(spec, Mapping) and "swagger" in spec and "openapi" not in spec:
        raise ConfigError(
            f"{where}: a Swagger {spec['swagger']} spec; synth reads OpenAPI 3 "
            "(convert it first, e.g. with swagger2openapi)"
        )
    if not is_openapi(spec):
        raise ConfigError(f"{where}: not an OpenAPI 3 spec (no 'openapi' version field)")
    try:
        validate(spec)
    except OpenAPIValidationError as exc:
        raise ConfigError(f"{where}: invalid OpenAPI spec: {_first_line(exc)}") from None
    except Unresolvable as exc:  # its message holds the whole spec: the $ref alone says it
        raise ConfigError(
            f"{where}: invalid OpenAPI spec: cannot resolve $ref {str(exc.ref)!r} "
            "(a spec is read on its own: its $refs point inside it)"
        ) from None
    tools: list[Tool] = []
    for route, item in (spec.get("paths") or {}).items():
        shared = item.get("parameters") or []
        for method in _METHODS:
            operation = item.get(method)
            if isinstance(operation, Mapping):
                tools.append(_operation(spec, route, method, operation, shared, where))
    if not tools:
        raise ConfigError(f"{where}: the OpenAPI spec has no operations")
    return tools


def _operation(
    spec: Mapping[str, Any],
    route: str,
    method: str,
    operation: Mapping[str, Any],
    shared: list[Any],
    where: str,
) -> Tool:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for raw in [*shared, *(operation.get("parameters") or [])]:
        parameter = _resolve(spec, raw, ())
        if parameter.get("in") == "cookie":
            continue
        name = str(parameter["name"])
        shape = dict(_resolve(spec, parameter.get("schema") or {"type": "string"}, ()))
        if parameter.get("description") and "description" not in shape:
            shape["description"] = parameter["description"]
        properties[name] = shape
        if parameter.get("required") and name not in required:
            required.append(name)
    body = operation.get("requestBody")
    if body is not None:
        body = _resolve(spec, body, ())
        content = body.get("content") or {}
        media: dict[str, Any] = content.get("application/json") or next(iter(content.values()), {})
        properties["body"] = _resolve(spec, media.get("schema") or {"type": "object"}, ())
        if body.get("required"):
            required.append("body")
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    name = operation.get("operationId") or re.sub(r"\W+", "_", f"{method}{route}").strip("_")
    text = operation.get("summary") or ""
    if operation.get("description"):
        text = f"{text}. {operation['description']}" if text else operation["description"]
    return Tool(
        name=str(name),
        description=f"{str(text).strip()} ({method.upper()} {route})".strip(),
        input_schema=schema,
        output_schema=_response_schema(spec, operation),
        source=where,
    )


def _response_schema(
    spec: Mapping[str, Any], operation: Mapping[str, Any]
) -> dict[str, Any] | None:
    for status, response in (operation.get("responses") or {}).items():
        if str(status).startswith("2"):
            content = _resolve(spec, response, ()).get("content") or {}
            media = content.get("application/json")
            if isinstance(media, Mapping) and "schema" in media:
                return _resolve(spec, media["schema"], ())
    return None


def _resolve(spec: Mapping[str, Any], node: Any, seen: tuple[str, ...]) -> Any:
    """``node`` with every local ``$ref`` replaced by what it points at."""
    if isinstance(node, list):
        return [_resolve(spec, item, seen) for item in node]
    if not isinstance(node, Mapping):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        if ref in seen or not ref.startswith("#/"):
            return {"type": "object"}  # a cycle, or a file elsewhere: an open object
        target: Any = spec
        for part in ref[2:].split("/"):
            target = target.get(part.replace("~1", "/").replace("~0", "~"), {})
        return _resolve(spec, target, (*seen, ref))
    return {key: _resolve(spec, value, seen) for key, value in node.items()}


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


__all__ = ["is_openapi", "read_openapi", "tools_from_openapi"]
