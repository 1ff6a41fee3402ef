"""Goldens to and from plain records (dicts), under synth's field names and under other tools'.

A record is read by the first rule that fits:

- it has ``messages`` and no ``input``: a chat-format conversation (the ``messages`` export), read
  as a :class:`~synth.data.ConversationalGolden` with those turns;
- it has ``user_input``: a ragas ``SingleTurnSample`` row (``response``, ``reference``,
  ``reference_contexts``, ``retrieved_contexts``, ``reference_context_ids``);
- it is a promptfoo test (``vars``), a LangSmith example (``inputs``) or a Langfuse item
  (``input``, ``expected_output`` and a ``metadata`` holding ``_synth``): see
  ``synth/dataset/_platforms.py``;
- it has a field only deepeval or judgeval use (``additional_metadata``, ``source_file``,
  ``tools_called``, ``example_id``...), or a ``scenario`` and no ``input`` (deepeval's rule for a
  conversation): a deepeval ``Golden`` or ``ConversationalGolden`` (as deepeval's own ``save_as``
  writes them too, see ``synth/dataset/_deepeval_saved.py``) or a judgeval ``Example`` (a judgeval
  1.x example may also hold synth's ``context_ids``, ``source_files`` and ``metadata`` as they are);
- otherwise it is a synth golden, read strictly: an unknown field is an error.

A record with ``turns`` (not null) is a :class:`~synth.data.ConversationalGolden`, in synth's
names or deepeval's (whose turns keep their ``metadata``); without, the conversation fields must be
null or absent (a table of single-turn goldens may have their columns).

synth's own fields that another tool has no place for travel in a ``_synth`` object: inside
``additional_metadata`` for deepeval and judgeval 0.0.x, at the top of the row for ragas (which ignores
fields it does not know). Fields of another tool that synth has no place for (a judgeval
``example_id``, a ragas ``synthesizer_name``) are kept in the golden's ``metadata`` when not null,
except the ragas fields synth's own export derives from that metadata (a row with ``_synth``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from synth.data import ConversationalGolden, Golden
from synth.dataset._deepeval_saved import (
    deepeval_turn,
    is_deepeval_conversation,
    redundant_persona,
    split_list,
)
from synth.dataset._platforms import from_platform, is_platform_record
from synth.errors import DatasetError

#: the tool calls of a golden about an agent: left out of a record (and a table) when null
TOOL_FIELDS = ("expected_tools", "tools_called")
FIELDS: tuple[str, ...] = tuple(name for name in Golden.model_fields if name not in TOOL_FIELDS)
#: the fields a conversational golden adds, after the golden's own (in tables, text then turns)
CONVERSATION_FIELDS: tuple[str, ...] = tuple(
    name for name in ConversationalGolden.model_fields if name not in Golden.model_fields
)
CONVERSATION_TEXT_FIELDS = ("scenario", "expected_outcome", "user_description")
STRING_FIELDS = ("input", "actual_output", "expected_output")
LIST_FIELDS = ("context", "retrieval_context", "context_ids", "source_files")
#: fields that are never null: a null read from a file means "not given"
DEFAULTED_FIELDS = ("context_ids", "source_files", "metadata")

#: the key that carries synth-only fields through another tool's format
SYNTH_KEY = "_synth"

_EXPECTED = {
    "input": "a non-empty string",
    "actual_output": "a string or null",
    "expected_output": "a string or null",
    "context": "a list of strings or null",
    "retrieval_context": "a list of strings or null",
    "context_ids": "a list of strings",
    "source_files": "a list of strings",
    "metadata": "an object",
    "turns": "a list of turns (role 'user' or 'assistant', content)",
    "expected_tools": "a list of tool calls (name, input_parameters, output) or null",
    "tools_called": "a list of tool calls (name, input_parameters, output) or null",
}

_RAGAS_NAMES = {
    "user_input": "input",
    "response": "actual_output",
    "reference": "expected_output",
    "reference_contexts": "context",
    "retrieved_contexts": "retrieval_context",
    "reference_context_ids": "context_ids",
}
_DEEPEVAL_NAMES = ("input", "actual_output", "expected_output", "context", "retrieval_context")
# fields that only a deepeval Golden or a judgeval Example has: their presence names the format
# (their tool calls are synth's too, so they name nothing)
_DEEPEVAL_MARKERS = frozenset(
    {
        "additional_metadata",
        "source_file",
        "comments",
        "name",
        "example_id",
        "example_index",
        "timestamp",
        "trace_id",
    }
)


# ---- reading -------------------------------------------------------------------------------------
def golden_from_record(record: object, where: str) -> Golden:
    """Return the golden a record describes, in any known tool's field names.

    ``where`` locates the record for error messages (``"goldens.jsonl: line 3"``).
    """
    if not isinstance(record, Mapping):
        raise DatasetError(
            f"{where}: expected an object with a golden's fields, got {kind(record)}"
        )
    if "messages" in record and "input" not in record:
        data, names = {"turns": record["messages"]}, {"turns": "messages"}
    elif "user_input" in record:
        data, names = _from_ragas(record, where)
    elif is_platform_record(record):  # promptfoo, LangSmith, Langfuse
        data, names = from_platform(record, where)
    elif _DEEPEVAL_MARKERS & record.keys() or is_deepeval_conversation(record):
        data, names = _from_deepeval(record, where)
    else:
        data, names = dict(record), {}
    for field in DEFAULTED_FIELDS:  # null where a list or object is due: take the default
        if field in data and data[field] is None:
            del data[field]
    return validate_golden(data, where, names)


def validate_golden(
    data: Mapping[str, Any], where: str, names: Mapping[str, str] | None = None
) -> Golden:
    """Return ``Golden(**data)``, or raise DatasetError naming ``where`` and each bad field.

    ``names`` maps a synth field to the name it had in the file, so the message says what the
    user sees (``reference_contexts`` rather than ``context``).
    """
    model: type[Golden] = Golden
    if data.get("turns") is not None:
        model = ConversationalGolden
    elif any(data.get(name) is not None for name in CONVERSATION_FIELDS):
        given = next(name for name in CONVERSATION_FIELDS if data.get(name) is not None)
        raise DatasetError(f"{where}: field '{given}' is set but the golden has no turns")
    else:
        data = {k: v for k, v in data.items() if k not in CONVERSATION_FIELDS}
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise DatasetError(f"{where}: {describe_errors(exc, data, names or {})}") from None


def describe_errors(exc: ValidationError, data: Mapping[str, Any], names: Mapping[str, str]) -> str:
    """One phrase per bad field: ``field 'context': expected a list of strings, got a string``."""
    parts: list[str] = []
    seen: set[str] = set()
    for error in exc.errors():
        field = str(error["loc"][0]) if error["loc"] else ""
        if not field:  # a check of the whole conversation (turns that do not alternate...)
            parts.append(str(error.get("ctx", {}).get("error") or error["msg"]))
            continue
        if field in seen:
            continue
        if field in TOOL_FIELDS and len(error["loc"]) > 1:  # one call of the list is bad
            seen.add(field)
            parts.append(f"field '{names.get(field, field)}': {_tool_call_error(error)}")
            continue
        seen.add(field)
        shown = names.get(field, field)
        if error["type"] == "extra_forbidden":
            known = ", ".join((*FIELDS, *CONVERSATION_FIELDS))
            parts.append(f"unknown field '{shown}' (a golden has: {known})")
        elif error["type"] == "missing":
            parts.append(f"field '{shown}': missing (every golden needs one)")
        else:
            expected = _EXPECTED.get(field, "a valid value")
            parts.append(f"field '{shown}': expected {expected}, got {kind(data.get(field))}")
    return "; ".join(parts)


def _tool_call_error(error: Any) -> str:
    position, *rest = error["loc"][1:]
    where = f"call {position}"
    if rest:
        where += f" field '{rest[0]}'"
    if error["type"] == "extra_forbidden":
        return f"{where}: unknown (a tool call has: name, input_parameters, output)"
    if error["type"] == "missing":
        return f"{where}: missing"
    return f"{where}: {error['msg']}"


def kind(value: object) -> str:
    """How a value looks, in words, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "an empty string" if not value.strip() else "a string"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, Mapping):
        for key in value:  # a dict given in Python may have keys JSON has no word for
            if not isinstance(key, str):
                return f"an object whose key {key!r} is not a string"
        return "an object"
    if isinstance(value, list | tuple):
        for position, item in enumerate(value):
            if not isinstance(item, str):
                return f"a list whose item {position} is {kind(item)}"
        return "a list of strings"
    return f"a {type(value).__name__}"


def _synth_block(value: object, where: str, shown: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise DatasetError(f"{where}: field '{shown}': expected an object, got {kind(value)}")
    return dict(value)


def _keep_extras(data: dict[str, Any], extras: Mapping[str, Any]) -> None:
    metadata = data.get("metadata")
    if metadata is None:
        metadata = {}
    if isinstance(metadata, Mapping):  # otherwise validation reports the bad metadata
        data["metadata"] = metadata = dict(metadata)  # a copy: never change the caller's dict
        for key, value in extras.items():
            if value is not None:
                metadata.setdefault(key, value)


def _from_ragas(record: Mapping[str, Any], where: str) -> tuple[dict[str, Any], dict[str, str]]:
    if "input" in record:
        raise DatasetError(f"{where}: has both 'input' and 'user_input'; keep one")
    if isinstance(record["user_input"], list):
        return _from_ragas_multi_turn(record, where)
    data: dict[str, Any] = {}
    names: dict[str, str] = {}
    extras: dict[str, Any] = {}
    # a row synth wrote (it has _synth) derived its persona, style and synthesizer name from
    # the golden's metadata, which _synth holds as it was
    derived = RAGAS_DERIVED if record.get(SYNTH_KEY) is not None else ()
    for key, value in record.items():
        if key in _RAGAS_NAMES:
            data[_RAGAS_NAMES[key]] = value
            names[_RAGAS_NAMES[key]] = key
        elif key != SYNTH_KEY and key not in derived:
            extras[key] = value
    synth = _synth_block(record.get(SYNTH_KEY), where, SYNTH_KEY)
    for field in ("source_files", "metadata", "context_ids"):
        if field in synth:
            data[field] = synth[field]
            names[field] = f"{SYNTH_KEY}.{field}"
    _keep_extras(data, extras)
    return data, names


def _from_deepeval(record: Mapping[str, Any], where: str) -> tuple[dict[str, Any], dict[str, str]]:
    data: dict[str, Any] = {name: record[name] for name in _DEEPEVAL_NAMES if name in record}
    for field in ("context", "retrieval_context"):  # save_as("jsonl") joins them with "|"
        if field in data:
            data[field] = split_list(data[field])
    names: dict[str, str] = {"metadata": "additional_metadata"}
    metadata = _synth_block(record.get("additional_metadata"), where, "additional_metadata")
    synth = _synth_block(metadata.pop(SYNTH_KEY, None), where, f"additional_metadata.{SYNTH_KEY}")
    source_file = record.get("source_file")
    if source_file is not None and not isinstance(source_file, str):
        raise DatasetError(
            f"{where}: field 'source_file': expected a string or null, got {kind(source_file)}"
        )
    if source_file is not None:
        data["source_files"] = [source_file]
        names["source_files"] = "source_file"
    for field in ("context_ids", "source_files"):
        if field in synth:
            data[field] = synth[field]
            names[field] = f"additional_metadata.{SYNTH_KEY}.{field}"
    data["metadata"] = metadata
    for field in CONVERSATION_TEXT_FIELDS:
        if field in record:
            data[field] = record[field]
    for field in TOOL_FIELDS:  # a judgeval 0.0.x example's are in _synth
        if record.get(field) is not None:
            data[field] = _deepeval_tool_calls(record[field])
        elif field in synth:
            data[field] = synth[field]
            names[field] = f"additional_metadata.{SYNTH_KEY}.{field}"
    if record.get("turns") is not None:
        data["turns"] = _deepeval_turns(record["turns"])
    elif is_deepeval_conversation(record):  # a scenario not played out yet
        data["turns"] = []
    # a judgeval 1.x example (its example_id, name...) may hold synth's own fields as they are
    for field in ("context_ids", "source_files", "metadata"):
        if record.get(field) is not None:
            data[field] = record[field]
            names[field] = field
    known = {*_DEEPEVAL_NAMES, *DEFAULTED_FIELDS, *CONVERSATION_FIELDS, *TOOL_FIELDS}
    known |= {"additional_metadata", "source_file"}
    if redundant_persona(record):
        known.add("persona")
    _keep_extras(data, {k: v for k, v in record.items() if k not in known})
    return data, names


def _deepeval_tool_calls(calls: object) -> object:
    """deepeval's tool calls under synth's fields: the null ``description`` and ``reasoning``
    deepeval writes are left out; anything else is left for validation to report."""
    if not isinstance(calls, list):
        return calls
    return [
        {k: v for k, v in call.items() if v is not None or k not in ("description", "reasoning")}
        if isinstance(call, Mapping)
        else call
        for call in calls
    ]


def _deepeval_turns(turns: object) -> object:
    """deepeval's turns under synth's names (see :func:`deepeval_turn`); anything else is left for
    validation to report."""
    if not isinstance(turns, list):
        return turns
    return [deepeval_turn(turn) if isinstance(turn, Mapping) else turn for turn in turns]


# ---- writing -------------------------------------------------------------------------------------
def to_synth(golden: Golden) -> dict[str, Any]:
    """The golden's fields under synth's names, every field present (null when unset) but the
    tool calls, which are there only when set (a golden about no tools looks as it always has)."""
    record = golden.model_dump()
    for field in TOOL_FIELDS:
        if record[field] is None:
            del record[field]
    return record


def columns_of(goldens: Sequence[Golden]) -> tuple[str, ...]:
    """The fields a table of ``goldens`` has: a golden's, the tool calls' when one has them, and a
    conversation's when one is."""
    tools = tuple(
        field for field in TOOL_FIELDS if any(getattr(g, field) is not None for g in goldens)
    )
    if any(isinstance(golden, ConversationalGolden) for golden in goldens):
        return (*FIELDS, *tools, *CONVERSATION_FIELDS)
    return (*FIELDS, *tools)


def _reserved_check(golden: Golden, where: str) -> None:
    if SYNTH_KEY in golden.metadata:
        raise DatasetError(
            f"{where}: metadata key '{SYNTH_KEY}' is reserved for synth's own fields in exports"
        )


def to_deepeval(golden: Golden, where: str) -> dict[str, Any]:
    """A deepeval ``Golden``: synth-only fields go in ``additional_metadata['_synth']``."""
    _reserved_check(golden, where)
    return {
        "input": golden.input,
        "actual_output": golden.actual_output,
        "expected_output": golden.expected_output,
        "context": golden.context,
        "retrieval_context": golden.retrieval_context,
        "source_file": golden.source_files[0] if golden.source_files else None,
        "additional_metadata": {
            **golden.metadata,
            SYNTH_KEY: {"context_ids": golden.context_ids, "source_files": golden.source_files},
        },
        **_tool_fields(golden),
    }


def _tool_fields(golden: Golden) -> dict[str, Any]:
    """The golden's tool calls (deepeval's ``ToolCall`` fields), those it has."""
    record = golden.model_dump(include=set(TOOL_FIELDS))
    return {field: record[field] for field in TOOL_FIELDS if record[field] is not None}


#: a judgeval 1.x example's properties, in order: judgeval's own example fields, then synth's
JUDGEVAL_FIELDS = (
    "input",
    "actual_output",
    "expected_output",
    "retrieval_context",
    "context",
    "tools_called",
    "expected_tools",
    "context_ids",
    "source_files",
    "metadata",
)


def to_judgeval(golden: Golden, where: str) -> dict[str, Any]:
    """A judgeval (1.x) ``Example``'s properties: every field of :data:`JUDGEVAL_FIELDS`, in that
    order, null where the golden has none.

    judgeval 1.x examples hold any properties (``Example.create(**row)``), so every field keeps
    its name and nothing needs a ``_synth`` block. A judgeval dataset has one schema for all its
    examples (inferred from them, or declared), so every example has the same fields in the
    same order: a field left out of some examples would be missing from them.
    """
    del where  # every golden fits
    record = golden.model_dump()
    return {name: record[name] for name in JUDGEVAL_FIELDS}


def to_judgeval_legacy(golden: Golden, where: str) -> dict[str, Any]:
    """A judgeval 0.0.x ``Example``: synth-only fields go in ``additional_metadata['_synth']``."""
    record = to_deepeval(golden, where)
    del record["source_file"]  # an Example has no source_file; the list is in _synth
    for field in TOOL_FIELDS:  # judgeval 0.0.x's tool calls are names only: synth's in _synth
        if field in record:
            record["additional_metadata"][SYNTH_KEY][field] = record.pop(field)
    return record


def to_ragas(golden: Golden, where: str) -> dict[str, Any]:
    """A ragas testset row: a ``SingleTurnSample`` (nulls left out, as ragas writes them), its
    ``synthesizer_name`` (``Testset.from_list`` needs one), and ``_synth``.

    ``reference_context_ids`` is always written, ``[]`` included: a golden made from no chunk
    says so, rather than leaving ragas to read None ("not known"). ``persona_name``,
    ``query_style`` and ``query_length`` are the golden's ``persona``, ``query_style`` and
    ``query_length`` when it records them (synth's words: ``terse``, ``short``...).
    """
    if golden.expected_tools is not None:
        return _to_ragas_multi_turn(golden)
    row: dict[str, Any] = {
        "user_input": golden.input,
        "response": golden.actual_output,
        "reference": golden.expected_output,
        "reference_contexts": golden.context,
        "retrieved_contexts": golden.retrieval_context,
    }
    for name, key in _RAGAS_STYLE.items():
        value = golden.metadata.get(key)
        row[name] = value if isinstance(value, str) and value else None
    row = {key: value for key, value in row.items() if value is not None}
    row["reference_context_ids"] = list(golden.context_ids)
    row["synthesizer_name"] = synthesizer_name(golden)
    row[SYNTH_KEY] = {"source_files": golden.source_files, "metadata": golden.metadata}
    return row


def _to_ragas_multi_turn(golden: Golden) -> dict[str, Any]:
    """An agent's golden as a ragas ``MultiTurnSample`` row: the request as the human message
    (then, when a system's calls are recorded, its AI message with them), the expected calls as
    ``reference_tool_calls`` (``name``, ``args``). Their results ride in ``_synth``."""
    messages: list[dict[str, Any]] = [{"content": golden.input, "type": "human"}]
    if golden.tools_called is not None or golden.actual_output is not None:
        calls = [{"name": c.name, "args": c.input_parameters} for c in golden.tools_called or []]
        messages.append({"content": golden.actual_output or "", "type": "ai", "tool_calls": calls})
    row: dict[str, Any] = {"user_input": messages}
    if golden.expected_output is not None:
        row["reference"] = golden.expected_output
    row["reference_tool_calls"] = [
        {"name": call.name, "args": call.input_parameters} for call in golden.expected_tools or []
    ]
    row["synthesizer_name"] = synthesizer_name(golden)
    row[SYNTH_KEY] = {
        "source_files": golden.source_files,
        "metadata": golden.metadata,
        "context_ids": golden.context_ids,
        "context": golden.context,
        **_tool_fields(golden),
    }
    return row


def _from_ragas_multi_turn(
    record: Mapping[str, Any], where: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """A ragas ``MultiTurnSample`` row (an agent's golden): its first human message the input,
    the expected calls from ``_synth`` (with their results) or ``reference_tool_calls``."""
    messages = record["user_input"]
    human = next(
        (m for m in messages if isinstance(m, Mapping) and m.get("type", "human") == "human"), None
    )
    if human is None:
        raise DatasetError(f"{where}: field 'user_input': no human message")
    data: dict[str, Any] = {"input": human.get("content")}
    names = {"input": "user_input"}
    if record.get("reference") is not None:
        data["expected_output"] = record["reference"]
        names["expected_output"] = "reference"
    reference = record.get("reference_tool_calls")
    if isinstance(reference, list):
        data["expected_tools"] = [_ragas_call(call) for call in reference]
        names["expected_tools"] = "reference_tool_calls"
    for message in messages:
        if isinstance(message, Mapping) and message.get("type") == "ai":
            data["actual_output"] = message.get("content") or None
            data["tools_called"] = [_ragas_call(c) for c in message.get("tool_calls") or []]
    synth = _synth_block(record.get(SYNTH_KEY), where, SYNTH_KEY)
    for field in ("source_files", "metadata", "context_ids", "context", *TOOL_FIELDS):
        if field in synth:
            data[field] = synth[field]
            names[field] = f"{SYNTH_KEY}.{field}"
    return data, names


def _ragas_call(call: object) -> object:
    if isinstance(call, Mapping) and "args" in call:
        return {"name": call.get("name"), "input_parameters": call["args"]}
    return call


#: the ragas sample fields synth fills from a golden's metadata
_RAGAS_STYLE = {
    "persona_name": "persona",
    "query_style": "query_style",
    "query_length": "query_length",
}
#: the ragas fields synth's export derives from the golden (dropped when such a row is read back)
RAGAS_DERIVED = ("synthesizer_name", *_RAGAS_STYLE)


def synthesizer_name(golden: Golden) -> str:
    """What made the golden, as ragas names a sample's synthesizer: ``synth``, then its question
    type and its evolutions when it records them (``synth:simple:reasoning+in_breadth``)."""
    parts = ["synth"]
    kind = golden.metadata.get("question_type")
    if isinstance(kind, str) and kind:
        parts.append(kind)
    evolutions = golden.metadata.get("evolutions")
    if isinstance(evolutions, list) and evolutions:
        parts.append("+".join(str(name) for name in evolutions))
    return ":".join(parts)


__all__ = [
    "CONVERSATION_FIELDS",
    "CONVERSATION_TEXT_FIELDS",
    "FIELDS",
    "JUDGEVAL_FIELDS",
    "LIST_FIELDS",
    "DEFAULTED_FIELDS",
    "RAGAS_DERIVED",
    "STRING_FIELDS",
    "SYNTH_KEY",
    "TOOL_FIELDS",
    "columns_of",
    "describe_errors",
    "golden_from_record",
    "kind",
    "synthesizer_name",
    "to_deepeval",
    "to_judgeval",
    "to_judgeval_legacy",
    "to_ragas",
    "to_synth",
    "validate_golden",
]
