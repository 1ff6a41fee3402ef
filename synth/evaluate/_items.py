"""Every dataset shape the evaluators take, as one list of :class:`EvalItem`.

Accepted: a :class:`~synth.dataset.Dataset`, a list of :class:`~synth.data.Golden` (or golden
dicts), a path to a saved dataset, or the mappings of the evaluator guide (``id``, ``question``,
``reference`` as a string or a list, ``contexts``, ``context_ids``, ``answer``). From a golden:
``input`` is the question, ``expected_output`` the reference, ``retrieval_context`` (else
``context``) the contexts, ``context_ids`` the relevant ids and ``actual_output`` the answer; a
:class:`~synth.data.ConversationalGolden` adds its turns before the question (``history``), which
the system is given with it and the judges read it in. An item's id is its ``id`` (or ``metadata["id"]``), else its position in the dataset.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth.data import ConversationalGolden, Golden
from synth.errors import ConfigError, DatasetError
from synth.evaluate.retrieved import context_texts


@dataclass(frozen=True)
class EvalItem:
    """One question to evaluate, with what the metrics compare against."""

    id: str
    question: str
    references: list[str] = field(default_factory=list)
    contexts: list[str] = field(default_factory=list)
    context_ids: list[str] = field(default_factory=list)
    answer: str | None = None
    #: the turns before the question (``{"role": ..., "content": ...}``), for a conversation
    history: list[dict[str, str]] = field(default_factory=list)

    @property
    def judged_question(self) -> str:
        """The question as the judges read it: after the conversation so far, when there is one."""
        if not self.history:
            return self.question
        turns = "\n".join(f"{t['role']}: {t['content']}" for t in self.history)
        return f"The conversation so far:\n{turns}\n\nThe user's last message: {self.question}"


def _strings(value: Any, what: str, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, Mapping):
        values = list(value)
        if all(isinstance(v, str) for v in values):
            return values
    raise ConfigError(f"{where}: {what} must be a string or a list of strings")


def _from_mapping(record: Mapping[str, Any], index: int) -> EvalItem:
    where = f"dataset item {index}"
    question = record.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ConfigError(f"{where}: 'question' must be a non-empty string")
    references = record.get("reference", record.get("references"))
    answer = record.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise ConfigError(f"{where}: 'answer' must be a string")
    item_id = record.get("id")
    return EvalItem(
        id=str(item_id) if item_id is not None else str(index),
        question=question,
        references=_strings(references, "'reference'", where),
        contexts=context_texts(record.get("contexts")),
        context_ids=_strings(record.get("context_ids"), "'context_ids'", where),
        answer=answer,
    )


def _from_golden(golden: Golden, index: int) -> EvalItem:
    contexts = golden.retrieval_context if golden.retrieval_context is not None else golden.context
    item_id = golden.metadata.get("id")
    return EvalItem(
        id=str(item_id) if item_id is not None else str(index),
        question=golden.input,
        references=[golden.expected_output] if golden.expected_output is not None else [],
        contexts=list(contexts or []),
        context_ids=list(golden.context_ids),
        answer=golden.actual_output,
        history=[
            {"role": t.role, "content": t.content}
            for t in (golden.history if isinstance(golden, ConversationalGolden) else [])
        ],
    )


def _golden(record: Any, index: int) -> Golden:
    from synth.dataset import Dataset

    try:
        return Dataset([record]).goldens[0]
    except DatasetError as exc:
        raise DatasetError(f"dataset item {index}: {exc}") from None


def _is_guide_record(record: Any) -> bool:
    return isinstance(record, Mapping) and "question" in record and "input" not in record


def _load(path: Path) -> list[Any]:
    if path.suffix.lower() in (".json", ".jsonl"):
        records = _guide_records(path)
        if records is not None:
            return records
    from synth.dataset import Dataset

    return list(Dataset.load(path))


def _guide_records(path: Path) -> list[Any] | None:
    """The file's records when it holds the guide's mappings (with ``question``), else None."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such dataset file") from None
    try:
        if path.suffix.lower() == ".jsonl":
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            records = json.loads(text)
    except json.JSONDecodeError:
        return None  # let the dataset loader report where the file is malformed
    if isinstance(records, list) and records and all(_is_guide_record(r) for r in records):
        return records
    return None


def as_items(dataset: Any) -> list[EvalItem]:
    """Return ``dataset`` (any accepted shape) as evaluation items, in order, with unique ids."""
    if isinstance(dataset, str | os.PathLike):
        records: list[Any] = _load(Path(dataset))
    elif isinstance(dataset, Mapping) or isinstance(dataset, Golden | EvalItem):
        raise ConfigError("expected a dataset (a list of items, a Dataset or a path), got one item")
    elif isinstance(dataset, Iterable):
        records = list(dataset)
    else:
        raise ConfigError(
            f"expected a dataset, a list of goldens or a path; got {type(dataset).__name__}"
        )
    items = []
    for index, record in enumerate(records):
        if isinstance(record, EvalItem):
            items.append(record)
        elif _is_guide_record(record):
            items.append(_from_mapping(record, index))
        elif isinstance(record, Golden | Mapping):
            golden = record if isinstance(record, Golden) else _golden(record, index)
            items.append(_from_golden(golden, index))
        else:
            raise ConfigError(
                f"dataset item {index}: expected a mapping or a Golden, got {type(record).__name__}"
            )
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise ConfigError(f"dataset item id {item.id!r} is not unique")
        seen.add(item.id)
    return items


__all__ = ["EvalItem", "as_items"]
