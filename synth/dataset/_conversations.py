"""Conversational goldens under other tools' names: deepeval's ``ConversationalGolden`` and chat
``messages``.

- deepeval: ``scenario``, ``expected_outcome``, ``user_description``, ``context``, ``turns``
  (each ``role``, ``content`` and ``metadata``, where an assistant turn's citations are) and
  ``additional_metadata`` (synth's ``metadata``, with ``context_ids`` and ``source_files`` under
  ``_synth``), as ``EvaluationDataset.add_goldens_from_json_file`` reads it. deepeval reads a
  record with no ``scenario`` as a single-turn golden, so a conversation without one is refused.
- messages: one ``{"messages": [{"role": ..., "content": ...}, ...]}`` per line, OpenAI's chat
  format: a conversation's turns, or a single-turn golden's input and expected output. Nothing
  else rides along; loading it back gives conversations with those turns alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from synth.data import ConversationalGolden, Golden
from synth.dataset._records import SYNTH_KEY, to_deepeval
from synth.errors import ConfigError, DatasetError


def to_deepeval_any(golden: Golden, where: str) -> dict[str, Any]:
    """A deepeval ``ConversationalGolden`` for a conversation, a deepeval ``Golden`` otherwise."""
    if not isinstance(golden, ConversationalGolden):
        return to_deepeval(golden, where)
    if not golden.scenario:
        raise DatasetError(
            f"{where}: a conversation needs a scenario for deepeval (it reads one without as a "
            "single-turn golden)"
        )
    if SYNTH_KEY in golden.metadata:
        raise DatasetError(
            f"{where}: metadata key '{SYNTH_KEY}' is reserved for synth's own fields in exports"
        )
    return {
        "scenario": golden.scenario,
        "expected_outcome": golden.expected_outcome,
        "user_description": golden.user_description,
        "context": golden.context,
        "turns": [turn.model_dump() for turn in golden.turns],
        "additional_metadata": {
            **golden.metadata,
            SYNTH_KEY: {"context_ids": golden.context_ids, "source_files": golden.source_files},
        },
    }


def to_messages(golden: Golden, where: str) -> dict[str, Any]:
    """The golden as a chat: its turns, or its input and (when set) its expected output (a
    conversation with no turns yet has no chat: DatasetError)."""
    if isinstance(golden, ConversationalGolden):
        if not golden.turns:
            raise DatasetError(
                f"{where}: a conversation with no turns yet (a scenario) has no messages; "
                "export it as deepeval"
            )
        turns = [(t.role, t.content) for t in golden.turns]
    else:
        turns = [("user", golden.input)]
        if golden.expected_output is not None:
            turns.append(("assistant", golden.expected_output))
    return {"messages": [{"role": role, "content": content} for role, content in turns]}


def single_turn_only(
    to_record: Callable[[Golden, str], dict[str, Any]], format_name: str
) -> Callable[[Golden, str], dict[str, Any]]:
    """``to_record`` refusing conversations (a format with no place for turns)."""

    def convert(golden: Golden, where: str) -> dict[str, Any]:
        if isinstance(golden, ConversationalGolden):
            raise ConfigError(
                f"{where}: a {format_name} export holds single-turn goldens; export "
                "conversations as deepeval or messages"
            )
        return to_record(golden, where)

    return convert


__all__ = ["single_turn_only", "to_deepeval_any", "to_messages"]
