"""Tool sources for tests: an OpenAPI 3 spec of ten operations and OpenAI / Anthropic tool files,
written with the formats' own shapes, and the command that starts tests/tool_server.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

SERVER = Path(__file__).with_name("tool_server.py")


def server_command() -> str:
    """The command line that starts the test MCP server over stdio."""
    return f"{sys.executable} {SERVER}"


def _param(name: str, where: str, schema: dict[str, Any], required: bool = True) -> dict[str, Any]:
    return {"name": name, "in": where, "required": required, "schema": schema}


def openapi_spec() -> dict[str, Any]:
    """A library API: ten operations; ``getBook`` gives the ``author_id`` ``getAuthor`` needs."""
    text = {"type": "string"}
    number = {"type": "integer", "minimum": 1}
    ok = {"description": "ok"}
    book = {
        "type": "object",
        "properties": {"book_id": number, "title": text, "author_id": number},
    }
    return {
        "openapi": "3.0.3",
        "info": {"title": "Library", "version": "1.0"},
        "components": {
            "schemas": {"NewBook": {"type": "object", "required": ["title"], "properties": {
                "title": text, "year": {"type": "integer"}}}}
        },
        "paths": {
            "/books": {
                "get": {"operationId": "searchBooks", "summary": "Search books by words",
                        "parameters": [_param("q", "query", text), _param("limit", "query",
                                       number, False)], "responses": {"200": ok}},
                "post": {"operationId": "addBook", "summary": "Add a book to the catalogue",
                         "requestBody": {"required": True, "content": {"application/json": {
                             "schema": {"$ref": "#/components/schemas/NewBook"}}}},
                         "responses": {"201": ok}},
            },
            "/books/{book_id}": {
                "parameters": [_param("book_id", "path", number)],
                "get": {"operationId": "getBook", "summary": "A book and its author_id",
                        "responses": {"200": {"description": "ok", "content": {
                            "application/json": {"schema": book}}}}},
                "delete": {"operationId": "deleteBook", "summary": "Remove a book",
                           "responses": {"204": ok}},
            },
            "/authors/{author_id}": {
                "get": {"operationId": "getAuthor", "summary": "An author by author_id",
                        "parameters": [_param("author_id", "path", number)],
                        "responses": {"200": ok}},
            },
            "/loans": {
                "post": {"operationId": "borrowBook", "summary": "Borrow a book for a member",
                         "parameters": [_param("book_id", "query", number),
                                        _param("member", "query", text)],
                         "responses": {"201": ok}},
                "get": {"operationId": "listLoans", "summary": "Loans of a member",
                        "parameters": [_param("member", "query", text)], "responses": {"200": ok}},
            },
            "/loans/{loan_id}/renew": {
                "post": {"operationId": "renewLoan", "summary": "Renew a loan",
                         "parameters": [_param("loan_id", "path", number),
                                        _param("weeks", "query", {"type": "integer",
                                               "enum": [1, 2, 3]})],
                         "responses": {"200": ok}},
            },
            "/branches": {
                "get": {"operationId": "listBranches", "summary": "Library branches in a city",
                        "parameters": [_param("city", "query", text)], "responses": {"200": ok}},
            },
            "/events": {
                "get": {"operationId": "listEvents", "summary": "Events at a branch on a date",
                        "parameters": [_param("branch", "query", text),
                                       _param("date", "query", {"type": "string",
                                              "format": "date"})],
                        "responses": {"200": ok}},
            },
        },
    }  # fmt: skip


def write_openapi(path: Path) -> Path:
    """The spec as YAML at ``path``."""
    path.write_text(yaml.safe_dump(openapi_spec(), sort_keys=False), encoding="utf-8")
    return path


def openai_tools() -> list[dict[str, Any]]:
    """Five tools in OpenAI's function-calling format; ``lookup_flight`` gives the
    ``flight_id`` ``book_seat`` needs."""

    def tool(name: str, text: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
        parameters = {"type": "object", "properties": props, "required": required}
        return {"type": "function", "function": {"name": name, "description": text,
                                                 "parameters": parameters}}  # fmt: skip

    text = {"type": "string"}
    return [
        tool("lookup_flight", "Find a flight by number and date; returns its flight_id.",
             {"number": text, "date": text}, ["number", "date"]),
        tool("book_seat", "Book a seat on a flight (by flight_id) for a passenger.",
             {"flight_id": {"type": "integer"}, "passenger": text,
              "seat_class": {"type": "string", "enum": ["economy", "business"]}},
             ["flight_id", "passenger"]),
        tool("get_baggage_rules", "Baggage allowance of a fare class.",
             {"fare": {"type": "string", "enum": ["basic", "standard", "flex"]}}, ["fare"]),
        tool("convert_time", "Convert a time between two time zones.",
             {"time": text, "source_zone": text, "target_zone": text},
             ["time", "source_zone", "target_zone"]),
        tool("airport_info", "Terminals and services of an airport (IATA code).",
             {"code": {"type": "string", "minLength": 3, "maxLength": 3}}, ["code"]),
    ]  # fmt: skip


def write_openai_tools(path: Path) -> Path:
    """The OpenAI tools as a JSON list at ``path``."""
    path.write_text(json.dumps(openai_tools(), indent=1), encoding="utf-8")
    return path


def anthropic_tools() -> dict[str, Any]:
    """The same tools in Anthropic's format, as a request body's ``tools``."""
    tools = []
    for entry in openai_tools():
        fn = entry["function"]
        tools.append(
            {"name": fn["name"], "description": fn["description"], "input_schema": fn["parameters"]}
        )
    return {"tools": tools}
