"""Batch requests: one reply entry per numbered item, kept even when the model misnumbers some.

The critic, the filter (scores and rewrites) and the expected-output step ask for one entry per
numbered item (``{"scores": [{"index": 1, ...}, ...]}``). The schema sent for n items says how many
entries and which numbers (:func:`batch_schema`: ``minItems``/``maxItems`` n, ``index`` 1..n), which
a model with structured outputs follows; parsing does not enforce them, so a reply that misses some
still parses and what it holds is kept. :func:`match_entries` decides which entry answers which
item, and only where that is unambiguous:

1. an index in 1..n given once matches that item;
2. exactly n entries numbered consecutively in reply order from another start (0-based, shifted by
   one) match by order;
3. an index given more than once matches only if every copy is identical, else none of them does;
4. entries numbered outside 1..n are ignored.

:func:`read_batch` reads one reply from the text the model sent (the stages' ``parse`` is its
all-or-nothing form, :func:`values_of`). :func:`ask_batch` asks, reads the reply with it, keeps
every entry it can match, and asks for the rest in one smaller request (the prompt rebuilt with
only the missing items, numbered 1..k); a reply that matches nothing is asked again whole, like a
malformed one. A step for which an item left unanswered can stand as it is (the evolution: the
input is not evolved) gives it a value instead (``BatchRequest.unanswered``), and is not asked
again for it once a reply has answered the others. Each re-ask is counted as a retry (kind ``partial`` or ``unmatched``) and in the
stage's notes; together they are bounded by the model's ``max_reasks``.
A reply that matched nothing, and the last reply of a batch given up on, are removed from the
response cache, so a rerun asks again instead of replaying them; items still unanswered at the end
fail with an OutputParseError that says what was wrong ("critic scored passages [2, 3], expected
1..2") and keeps the raw reply.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Field, create_model

from synth.errors import ModelError, OutputParseError
from synth.llm.base import LLM
from synth.llm.retry import count_reask, reask_budget
from synth.llm.structured import parse_verdict
from synth.stage.call import ask_raw, forget
from synth.stage.stats import StageStats

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

#: retry kinds of the two re-asks
PARTIAL = "partial"
UNMATCHED = "unmatched"


def list_field(schema: type[BaseModel]) -> str:
    """The name of the reply model's one list field (the entries)."""
    names = [
        name
        for name, info in schema.model_fields.items()
        if typing.get_origin(info.annotation) is list
    ]
    if len(names) != 1:
        raise TypeError(f"{schema.__name__} must have exactly one list field, has {names}")
    return names[0]


@functools.lru_cache(maxsize=256)
def batch_schema(schema: type[M], n: int) -> type[M]:
    """``schema`` whose JSON schema asks for exactly ``n`` entries, each ``index`` in 1..n.

    The bounds are in the JSON schema only: parsing accepts any number of entries and any index, so
    a partial reply can be salvaged. Made once per ``(schema, n)``; the class keeps its name (the
    name providers are sent).
    """
    name = list_field(schema)
    item: Any = typing.get_args(schema.model_fields[name].annotation)[0]
    if isinstance(item, type) and issubclass(item, BaseModel) and "index" in item.model_fields:
        bounds: Any = {"minimum": 1, "maximum": n}
        item = create_model(
            item.__name__,
            __base__=item,
            __module__=item.__module__,
            __doc__=item.__doc__,
            index=(int, Field(json_schema_extra=bounds)),
        )
    size: Any = {"minItems": n, "maxItems": n}
    fields: Any = {name: (list[item], Field(json_schema_extra=size))}
    return create_model(
        schema.__name__,
        __base__=schema,
        __module__=schema.__module__,
        __doc__=schema.__doc__,
        **fields,
    )


@dataclass(frozen=True)
class Match:
    """Which reply entry answers which item: ``found`` maps item number (1..n) to the entry's
    position in the reply; ``missing`` lists the item numbers left unanswered."""

    found: dict[int, int]
    missing: tuple[int, ...]
    by_order: bool = False


def match_entries(indices: Sequence[int], n: int, entries: Sequence[object] = ()) -> Match:
    """Match reply entries (their ``indices``, in reply order) to items 1..n by the module's rules.

    ``entries`` (the entries themselves, compared with ``==``) lets identical duplicates match;
    without them a duplicated index matches nothing.
    """
    if n > 0 and len(indices) == n and indices[0] != 1:
        if all(indices[p] == indices[0] + p for p in range(n)):
            return Match({p + 1: p for p in range(n)}, (), by_order=True)
    positions: dict[int, list[int]] = {}
    for position, index in enumerate(indices):
        if 1 <= index <= n:
            positions.setdefault(index, []).append(position)
    found: dict[int, int] = {}
    for index, where in positions.items():
        first = where[0]
        if len(where) == 1 or (
            len(entries) == len(indices) and all(entries[p] == entries[first] for p in where[1:])
        ):
            found[index] = first
    missing = tuple(i for i in range(1, n + 1) if i not in found)
    return Match(dict(sorted(found.items())), missing)


def describe(what: str, indices: Sequence[int], n: int) -> str:
    """The check that failed, e.g. ``critic scored passages [2, 3], expected 1..2``."""
    return f"{what} {list(indices)}, expected 1..{n}"


@dataclass(frozen=True)
class BatchReply(Generic[T]):
    """What one reply for ``n`` items holds: ``values`` maps each matched, usable item's number
    (1..n) to its value; ``problems`` says why a matched entry was unusable (``item k: ...``)."""

    n: int
    indices: list[int]
    values: dict[int, T]
    missing: tuple[int, ...]
    problems: list[str]


def read_entries(entries: Sequence[Any], n: int, value: Callable[[Any], T]) -> BatchReply[T]:
    """The ``n`` items' values from a parsed reply's entries, matched by the module's rules."""
    indices = [entry.index for entry in entries]
    match = match_entries(indices, n, entries)
    values: dict[int, T] = {}
    problems = []
    for number, position in match.found.items():
        try:
            values[number] = value(entries[position])
        except OutputParseError as exc:
            problems.append(f"item {number}: {exc}")
    return BatchReply(n, indices, values, match.missing, problems)


def read_batch(
    text: str, schema: type[BaseModel], n: int, value: Callable[[Any], T]
) -> BatchReply[T]:
    """What the reply ``text`` (as the model sent it) holds for ``n`` items, each matched and
    turned into its value where it can be; OutputParseError (with ``text``) when the reply is not
    one JSON object of ``schema``."""
    reply = parse_verdict(text, schema)
    return read_entries(getattr(reply, list_field(schema)), n, value)


def values_of(
    reply: BaseModel, n: int, what: str, value: Callable[[Any], T], raw: str = ""
) -> list[T]:
    """The ``n`` items' values from one parsed batch reply, matched by the module's rules.

    The all-or-nothing form of what :func:`ask_batch` does with a reply: OutputParseError (keeping
    ``raw``, else the reply's JSON) when an item is left unmatched or its entry is unusable.
    """
    got = read_entries(getattr(reply, list_field(type(reply))), n, value)
    raw = raw or reply.model_dump_json()
    if got.missing:
        raise OutputParseError(describe(what, got.indices, n), raw=raw)
    if got.problems:
        raise OutputParseError(got.problems[0], raw=raw)
    return [got.values[number] for number in range(1, n + 1)]


@dataclass(frozen=True)
class BatchRequest(Generic[T]):
    """What one batch step asks: ``prompt(positions)`` builds the prompt for those items (0-based
    positions, shown numbered 1..k), ``value(entry)`` turns a matched entry into the result
    (OutputParseError when the entry is unusable, e.g. blank: that item is asked again);
    ``unanswered()``, when given, is the result of an item a reply leaves out (or answers
    unusably) while it answers others: that item is not asked again."""

    label: str
    schema: type[BaseModel]
    what: str
    prompt: Callable[[list[int]], str]
    value: Callable[[Any], T]
    unanswered: Callable[[], T] | None = None


async def ask_batch(
    llm: LLM, request: BatchRequest[T], n: int, stats: StageStats | None = None
) -> list[T | ModelError]:
    """One result per item, in order: its value, or the ModelError that left it unanswered."""
    out: list[T | ModelError | None] = [None] * n
    todo = list(range(n))
    budget = reask_budget(llm)
    while todo:
        prompt = request.prompt(todo)
        schema = batch_schema(request.schema, len(todo))
        try:
            text = await ask_raw(llm, prompt, schema, request.label, stats)
            got = read_batch(text, schema, len(todo), request.value)
        except ModelError as exc:
            for i in todo:
                out[i] = exc
            break
        for number, value in got.values.items():
            out[todo[number - 1]] = value
        left = [i for i in todo if out[i] is None]
        if not left:
            break
        if request.unanswered is not None and len(left) < len(todo):
            for i in left:
                out[i] = request.unanswered()
            break
        if len(left) == len(todo) or budget <= 0:
            # nothing usable, or the last reply of a batch given up on: a rerun asks again rather
            # than replaying it (a partial reply stays cached: a rerun replays it, then the smaller
            # request that completed it)
            forget(llm, prompt, schema)
        if budget <= 0:
            detail = "; ".join([describe(request.what, got.indices, len(todo)), *got.problems])
            error = OutputParseError(detail, raw=text)
            for i in left:
                out[i] = error
            break
        budget -= 1
        kind = UNMATCHED if len(left) == len(todo) else PARTIAL
        count_reask(llm, request.label, kind)
        if stats is not None:
            stats.note(f"reask_{kind}")
        todo = left
    return typing.cast("list[T | ModelError]", out)


__all__ = [
    "PARTIAL",
    "UNMATCHED",
    "BatchReply",
    "BatchRequest",
    "Match",
    "ask_batch",
    "batch_schema",
    "describe",
    "list_field",
    "match_entries",
    "read_batch",
    "read_entries",
    "values_of",
]
