"""Strict parsing of structured replies (``parse_verdict``) and the schema forms sent to providers."""

from __future__ import annotations

import datetime
import enum

import pytest
from pydantic import BaseModel, Field

from synth import OutputParseError, parse_verdict
from synth.llm.structured import schema_instructions, strict_json_schema


class Verdict(BaseModel):
    supported: bool
    rating: int = Field(ge=1, le=5)


class Label(enum.Enum):
    fact = "fact"
    opinion = "opinion"


class Source(BaseModel):
    page: int


class Rich(BaseModel):
    label: Label
    source: Source
    span: tuple[int, int]
    seen: datetime.date


def test_one_object_plain_or_in_one_fenced_block() -> None:
    assert parse_verdict('{"supported": true, "rating": 4}', Verdict) == Verdict(
        supported=True, rating=4
    )
    fenced = '```json\n{"supported": false, "rating": 2}\n```'
    assert parse_verdict(fenced, Verdict) == Verdict(supported=False, rating=2)
    assert parse_verdict('  ```\n{"a": [1, 2]}\n```  ') == {"a": [1, 2]}


@pytest.mark.parametrize(
    "text",
    [
        'Sure! {"supported": true, "rating": 4}',  # prose around the object
        '{"supported": true, "rating": 4} Hope this helps.',
        '```json\n{"supported": true, "rating": 4}\n```\n```json\n{"supported": true, "rating": 4}\n```',
        '[{"supported": true, "rating": 4}]',  # an array is not an object
        '"{\\"supported\\": true}"',  # a string holding JSON is not an object
        '{"supported": true, "rating": 4, "rating": 5}',  # duplicate key
        '{"supported": true, "rating": NaN}',
        '{"supported": true, "rating": Infinity}',
        '{"supported": true, "rating": 4',  # cut off
        "",
    ],
)
def test_anything_else_is_refused_and_keeps_the_raw_text(text: str) -> None:
    with pytest.raises(OutputParseError) as caught:
        parse_verdict(text, Verdict)
    assert caught.value.raw == text


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"supported": "true", "rating": 4}', "supported"),  # a string is not a boolean
        ('{"supported": 1, "rating": 4}', "supported"),  # nor is a number
        ('{"supported": true, "rating": 4.0}', "rating"),  # a float is not an integer
        ('{"supported": true, "rating": "4"}', "rating"),
        ('{"supported": true, "rating": 9}', "rating"),  # out of range
        ('{"supported": true}', "rating"),  # missing
    ],
)
def test_every_field_has_its_exact_json_type(text: str, where: str) -> None:
    with pytest.raises(OutputParseError, match=f"Verdict: {where}"):
        parse_verdict(text, Verdict)


def test_enums_dates_tuples_and_nested_objects_take_their_json_form() -> None:
    text = '{"label": "fact", "source": {"page": 3}, "span": [4, 9], "seen": "2025-01-31"}'
    rich = parse_verdict(text, Rich)
    assert rich.label is Label.fact and rich.source == Source(page=3)
    assert rich.span == (4, 9) and rich.seen == datetime.date(2025, 1, 31)
    with pytest.raises(OutputParseError, match="label"):
        parse_verdict(text.replace('"fact"', '"rumour"'), Rich)
    with pytest.raises(OutputParseError, match="source.page"):
        parse_verdict(text.replace('{"page": 3}', '{"page": "3"}'), Rich)


def test_strict_schema_closes_every_object_and_requires_every_field() -> None:
    strict = strict_json_schema(Rich)
    assert strict is not None
    assert strict["additionalProperties"] is False
    assert strict["required"] == ["label", "source", "span", "seen"]
    assert strict["$defs"]["Source"]["additionalProperties"] is False

    class Optional_(BaseModel):
        note: str | None = None

    assert "default" not in strict_json_schema(Optional_)["properties"]["note"]

    class FreeForm(BaseModel):
        scores: dict[str, int]

    assert strict_json_schema(FreeForm) is None  # cannot be closed: sent non-strict instead
    assert "```json" in schema_instructions(Verdict) and '"rating"' in schema_instructions(Verdict)
