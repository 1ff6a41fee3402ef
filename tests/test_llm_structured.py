"""Strict parsing of structured replies (``parse_verdict``) and the schema forms sent to providers."""

from __future__ import annotations

import datetime
import enum
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from synth import OutputParseError, parse_verdict
from synth.llm.structured import schema_instructions, schema_name, strict_json_schema


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


# ---- What the strict parser tells the user when it refuses a reply, and the exact schema forms.
# Written against the mutants of ``synth/llm/structured.py`` that tests/test_llm_structured.py let
# live: the refusal messages (what a user reads in a rejected reply's log), replies with no
# schema, whole strict schemas compared key by key, and ``schema_name``.


def refusal(text: Any, schema: type[BaseModel] | None = None) -> OutputParseError:
    with pytest.raises(OutputParseError) as caught:
        parse_verdict(text, schema)
    return caught.value


def test_a_reply_that_is_not_a_string_is_refused_with_its_type_and_its_repr() -> None:
    error = refusal(b'{"a": 1}')
    assert str(error) == "expected a string reply, got bytes"
    assert error.raw == "b'{\"a\": 1}'"


def test_a_duplicate_key_is_named_in_the_message() -> None:
    error = refusal('{"a": 1, "b": 2, "a": 3}')
    assert str(error) == "reply is not one JSON object: duplicate key 'a'"
    assert error.raw == '{"a": 1, "b": 2, "a": 3}'


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused_even_without_a_schema(constant: str) -> None:
    text = f'{{"score": {constant}}}'
    error = refusal(text)
    assert str(error) == f"reply is not one JSON object: {constant} is not valid JSON"
    assert error.raw == text


def test_a_cut_off_reply_says_where_json_stopped() -> None:
    error = refusal('{"a": 1')
    assert str(error) == (
        "reply is not one JSON object: Expecting ',' delimiter: line 1 column 8 (char 7)"
    )


@pytest.mark.parametrize(
    ("text", "kind"),
    [("[1, 2]", "list"), ('"{}"', "str"), ("null", "NoneType"), ("4", "int")],
)
def test_json_that_is_not_an_object_is_named_by_its_type(text: str, kind: str) -> None:
    error = refusal(text)
    assert str(error) == f"reply is JSON {kind}, not an object"
    assert error.raw == text


def test_without_a_schema_the_object_comes_back_as_parsed() -> None:
    assert parse_verdict('{"a": 1, "b": [true, null], "c": {"d": 1.5}}') == {
        "a": 1,
        "b": [True, None],
        "c": {"d": 1.5},
    }


class Span(BaseModel):
    start: int
    end: int

    @model_validator(mode="after")
    def _ordered(self) -> Span:
        if self.end < self.start:
            raise ValueError("end comes before start")
        return self


def test_an_error_of_the_whole_object_is_placed_at_the_root() -> None:
    assert parse_verdict('{"start": 2, "end": 5}', Span) == Span(start=2, end=5)
    error = refusal('{"start": 5, "end": 2}', Span)
    assert str(error) == "reply does not match Span: <root>: Value error, end comes before start"


class Draft(BaseModel):
    note: str | None = None
    rank: int | None = Field(default=None, ge=1)
    picks: list[int] = Field(min_length=2, max_length=4)
    tags: list[str] = Field(min_length=1)


NOTE = {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "Note"}
TAGS = {"items": {"type": "string"}, "minItems": 1, "title": "Tags", "type": "array"}


def test_strict_schema_keeps_every_keyword_but_defaults_and_requires_every_field() -> None:
    assert strict_json_schema(Draft) == {
        "properties": {
            "note": NOTE,
            "rank": {
                "anyOf": [{"minimum": 1, "type": "integer"}, {"type": "null"}],
                "title": "Rank",
            },
            "picks": {
                "items": {"type": "integer"},
                "maxItems": 4,
                "minItems": 2,
                "title": "Picks",
                "type": "array",
            },
            "tags": TAGS,
        },
        "required": ["note", "rank", "picks", "tags"],
        "title": "Draft",
        "type": "object",
        "additionalProperties": False,
    }


def test_without_bounds_the_numeric_bounds_go_and_min_items_comes_down_to_one() -> None:
    assert strict_json_schema(Draft, bounds=False) == {
        "properties": {
            "note": NOTE,
            "rank": {"anyOf": [{"type": "integer"}, {"type": "null"}], "title": "Rank"},
            "picks": {
                "items": {"type": "integer"},
                "minItems": 1,
                "title": "Picks",
                "type": "array",
            },
            "tags": TAGS,
        },
        "required": ["note", "rank", "picks", "tags"],
        "title": "Draft",
        "type": "object",
        "additionalProperties": False,
    }


class NoFields(BaseModel):
    pass


class Forbidding(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Allowing(BaseModel):
    model_config = ConfigDict(extra="allow")
    page: int


class AllowingOnly(BaseModel):
    model_config = ConfigDict(extra="allow")


class FreeAny(BaseModel):
    extra: dict[str, Any]


def test_objects_without_fields_are_closed_empty() -> None:
    closed = {"additionalProperties": False, "properties": {}, "type": "object", "required": []}
    assert strict_json_schema(NoFields) == {**closed, "title": "NoFields"}
    assert strict_json_schema(Forbidding) == {**closed, "title": "Forbidding"}


def test_a_model_that_allows_extra_keys_is_closed_over_its_fields() -> None:
    assert strict_json_schema(Allowing) == {
        "additionalProperties": False,
        "properties": {"page": {"title": "Page", "type": "integer"}},
        "required": ["page"],
        "title": "Allowing",
        "type": "object",
    }


def test_an_object_with_only_free_keys_has_no_strict_form() -> None:
    assert strict_json_schema(AllowingOnly) is None
    assert strict_json_schema(FreeAny) is None


def test_schema_name_keeps_letters_digits_underscores_and_dashes() -> None:
    assert schema_name(create_model("Verdict_v2-final")) == "Verdict_v2-final"
    assert schema_name(create_model("My Reply.v2")) == "My_Reply_v2"


def test_schema_name_is_cut_to_64_characters() -> None:
    assert schema_name(create_model("Ab" * 40)) == "Ab" * 32


def test_a_schema_without_a_name_is_called_reply() -> None:
    assert schema_name(create_model("")) == "reply"


def test_fields_named_like_keywords_keep_their_place_in_the_strict_schema() -> None:
    class Odd(BaseModel):
        properties: str
        default: int
        minimum: float = 0.0

    strict = strict_json_schema(Odd, bounds=False)
    assert strict is not None
    assert list(strict["properties"]) == ["properties", "default", "minimum"]
    assert strict["required"] == ["properties", "default", "minimum"]
    assert strict["additionalProperties"] is False
    # the field mapping is no schema node: nothing added to it, no field dropped from it
    assert strict["properties"]["properties"] == {"title": "Properties", "type": "string"}
    assert strict["properties"]["default"] == {"title": "Default", "type": "integer"}
    assert strict["properties"]["minimum"] == {"title": "Minimum", "type": "number"}


def test_a_list_of_free_mappings_has_no_strict_form() -> None:
    # the list's item schema is a node like any other, not a mapping of names
    class Counts(BaseModel):
        rows: list[dict[str, int]]

    assert strict_json_schema(Counts) is None
