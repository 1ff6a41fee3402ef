"""Writing goldens under the field names other evaluation tools read: one writer per format.

docs/dataset.md ("Export to other tools") has each format's file, its fields and what the tool
keeps; deepeval's CSV is ``_deepeval_csv.py``, the chat-format ``messages`` ``_conversations.py``,
the evaluation platforms ``_platforms.py``. Conversational goldens export as deepeval's
``ConversationalGolden`` (``deepeval``) and as ``messages``; the other formats refuse them. Every
export is of the goldens' shareable form (``_public.py``): no model's ``base_url``, and
``source_files`` as the corpus names them, never a path from the local disk.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synth.data import Golden
from synth.dataset._conversations import single_turn_only, to_deepeval_any, to_messages
from synth.dataset._deepeval_csv import write_deepeval_csv
from synth.dataset._json import write_json_value, write_jsonl_records
from synth.dataset._platform_files import write_phoenix, write_promptfoo
from synth.dataset._platforms import to_langfuse, to_langsmith, to_phoenix, to_promptfoo
from synth.dataset._public import public_goldens
from synth.dataset._records import to_deepeval, to_judgeval, to_judgeval_legacy, to_ragas
from synth.errors import ConfigError, DatasetError

_Records = Sequence[dict[str, Any]]


def _write_list(path: Path, records: _Records) -> None:
    if path.suffix.lower() == ".jsonl":
        write_jsonl_records(path, records)
    else:
        write_json_value(path, records, records)


def _write_ragas(path: Path, records: _Records) -> None:
    kinds = {isinstance(record["user_input"], list) for record in records}
    if len(kinds) > 1:  # ragas takes a dataset of one kind of sample
        raise DatasetError(
            f"cannot export {path}: a ragas dataset holds one kind of sample, and these goldens "
            "mix agent goldens (expected_tools) with others; export them apart"
        )
    _write_list(path, records)


def _write_examples_object(path: Path, records: _Records) -> None:
    write_json_value(path, {"examples": records}, records)


@dataclass(frozen=True)
class ExportFormat:
    """One tool's file layout: what it is called and which suffixes it can be written as."""

    name: str
    description: str
    suffixes: tuple[str, ...]  # the first is the default
    to_record: Callable[[Golden, str], dict[str, Any]]
    write: Callable[[Path, _Records], None] = _write_list


EXPORT_FORMATS: dict[str, ExportFormat] = {
    "deepeval": ExportFormat("deepeval", "deepeval goldens", (".json", ".jsonl"), to_deepeval_any),
    "deepeval-csv": ExportFormat(
        "deepeval-csv",
        "deepeval goldens CSV",
        (".csv",),
        single_turn_only(to_deepeval, "deepeval-csv"),
        write_deepeval_csv,
    ),
    "judgeval": ExportFormat(
        "judgeval", "judgeval examples", (".json",), single_turn_only(to_judgeval, "judgeval")
    ),
    "judgeval-legacy": ExportFormat(
        "judgeval-legacy",
        "judgeval 0.0.x examples",
        (".json",),
        single_turn_only(to_judgeval_legacy, "judgeval-legacy"),
        _write_examples_object,
    ),
    "ragas": ExportFormat(
        "ragas",
        "ragas single-turn samples",
        (".jsonl", ".json"),
        single_turn_only(to_ragas, "ragas"),
        _write_ragas,
    ),
    "messages": ExportFormat("messages", "chat messages", (".jsonl",), to_messages),
    # evaluation platforms' dataset files (synth/dataset/_platforms.py)
    "promptfoo": ExportFormat(
        "promptfoo",
        "promptfoo test cases",
        (".yaml", ".yml", ".json"),
        single_turn_only(to_promptfoo, "promptfoo"),
        write_promptfoo,
    ),
    "langsmith": ExportFormat(
        "langsmith",
        "LangSmith examples",
        (".jsonl",),
        single_turn_only(to_langsmith, "langsmith"),
    ),
    "langfuse": ExportFormat(
        "langfuse",
        "Langfuse dataset items",
        (".jsonl",),
        single_turn_only(to_langfuse, "langfuse"),
    ),
    "phoenix": ExportFormat(
        "phoenix",
        "Phoenix dataset CSV",
        (".csv",),
        single_turn_only(to_phoenix, "phoenix"),
        write_phoenix,
    ),
}


def export_format(name: str) -> ExportFormat:
    """The export format called ``name``; ConfigError naming the known ones otherwise."""
    try:
        return EXPORT_FORMATS[name]
    except KeyError:
        known = ", ".join(EXPORT_FORMATS)
        raise ConfigError(f"unknown export format {name!r}; choose one of: {known}") from None


def export_goldens(goldens: Sequence[Golden], path: Path, format: str) -> Path:
    """Write ``goldens`` to ``path`` in another tool's format; return the path written."""
    spec = export_format(format)
    suffix = path.suffix.lower()
    if suffix not in spec.suffixes:
        allowed = " or ".join(spec.suffixes)
        raise ConfigError(f"{path}: a {spec.name} export is written as {allowed}, not {suffix!r}")
    records = [  # the shareable goldens: no base URL, no path from the local disk
        spec.to_record(golden, f"cannot export {path}: index {i}")
        for i, golden in enumerate(public_goldens(goldens))
    ]
    spec.write(path, records)
    return path


def default_export_path(source: Path, format: str) -> Path:
    """Next to the dataset: ``goldens.json`` -> ``goldens.ragas.jsonl``."""
    spec = export_format(format)
    name = spec.name.removesuffix("-csv")  # goldens.deepeval.csv
    return source.with_name(f"{source.stem}.{name}{spec.suffixes[0]}")


__all__ = [
    "EXPORT_FORMATS",
    "ExportFormat",
    "default_export_path",
    "export_format",
    "export_goldens",
]
