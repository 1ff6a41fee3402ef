"""What deepeval's own ``EvaluationDataset.save_as`` writes, read as deepeval reads it back.

docs/dataset.md ("Files deepeval saved") says what is read. deepeval 4.3 writes every field,
null where unset: a record whose ``scenario`` is set is a ``ConversationalGolden`` (its ``turns``
null until deepeval's simulator plays it out: no turns yet here), any other a ``Golden``.
``.jsonl`` and ``.csv`` join a list's items with ``|``, split again as deepeval does. What a turn
carries beside role and content, and the fields synth has no place for (``name``, ``comments``,
``token_cost``...), are kept in the turn's or the golden's ``metadata`` when set.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: deepeval's own separator of list items in a cell or a JSONL string
DEEPEVAL_SEPARATOR = "|"
#: the turn fields synth's Turn has; deepeval's others go in the turn's metadata
_TURN_FIELDS = ("role", "content")


def is_deepeval_conversation(record: Mapping[str, Any]) -> bool:
    """True for deepeval's rule: a record whose ``scenario`` is set is a conversation."""
    return bool(record.get("scenario")) and "input" not in record


def split_list(value: object) -> object:
    """A list field as deepeval's JSONL holds it (``"a|b"``, ``""``) as a list; anything else as is
    (a list, null, or a wrong value for validation to report)."""
    if isinstance(value, str):
        return value.split(DEEPEVAL_SEPARATOR) if value else []
    return value


def deepeval_turn(turn: Mapping[str, Any]) -> dict[str, Any]:
    """A deepeval turn under synth's names: role and content, the rest that is set in metadata
    (its ``metadata``, or the older ``additional_metadata``, first)."""
    metadata = turn.get("metadata", turn.get("additional_metadata"))
    row: dict[str, Any] = {k: turn[k] for k in _TURN_FIELDS if k in turn}
    kept = dict(metadata) if isinstance(metadata, Mapping) else {}
    for key, value in turn.items():
        if key not in (*_TURN_FIELDS, "metadata", "additional_metadata") and value is not None:
            kept.setdefault(key, value)
    row["metadata"] = kept if metadata is None or isinstance(metadata, Mapping) else metadata
    return row


def redundant_persona(record: Mapping[str, Any]) -> bool:
    """True when deepeval's ``persona`` only repeats ``user_description`` (deepeval keeps the two
    in step), so it need not ride along in metadata."""
    persona = record.get("persona")
    if persona is None:
        return True
    return persona == {"characteristics": record.get("user_description")}


__all__ = [
    "DEEPEVAL_SEPARATOR",
    "deepeval_turn",
    "is_deepeval_conversation",
    "redundant_persona",
    "split_list",
]
