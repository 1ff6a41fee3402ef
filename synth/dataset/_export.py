"""Writing goldens under the field names other evaluation tools read.

- ``deepeval``: deepeval's goldens JSON, a list of ``Golden`` objects (``input``,
  ``actual_output``, ``expected_output``, ``context``, ``retrieval_context``, ``source_file``,
  ``additional_metadata``), as ``EvaluationDataset.add_goldens_from_json_file`` reads it; ``.json``
  (or ``.jsonl``, one golden per line).
- ``deepeval-csv``: the same goldens as deepeval's CSV, as
  ``EvaluationDataset.add_goldens_from_csv_file`` reads it given
  ``context_col_delimiter="\\x1f"`` and ``retrieval_context_col_delimiter="\\x1f"``
  (see ``synth/dataset/_deepeval_csv.py``); ``.csv``.
- ``ragas``: ragas testset rows: ``SingleTurnSample`` fields (``user_input``, ``response``,
  ``reference``, ``reference_contexts``, ``retrieved_contexts``, ``reference_context_ids``,
  ``persona_name``, ``query_style``, ``query_length``) and ``synthesizer_name``, as
  ``EvaluationDataset.from_jsonl`` and ``Testset.from_list`` read them; ``.jsonl`` (or ``.json``,
  a list for ``from_list``).
- ``judgeval``: judgeval 1.x, a JSON list of example properties under synth's own field names
  (every field in every example, in one order, null where unset: a judgeval dataset has one
  schema), as ``Dataset.add_from_json`` reads it (each object becomes
  ``Example.create(**object)``); ``.json``.
- ``judgeval-legacy``: judgeval 0.0.x, ``{"examples": [...]}`` with ``Example`` fields, as
  ``EvalDataset.add_from_json`` reads it; ``.json``.
- ``messages``: chat-format JSONL, ``{"messages": [{"role": ..., "content": ...}]}`` per golden
  (see ``synth/dataset/_conversations.py``); ``.jsonl``.
- ``promptfoo`` (``.yaml`` or ``.json`` test cases), ``langsmith`` and ``langfuse`` (``.jsonl``),
  ``phoenix`` (``.csv``): evaluation platforms' dataset files, see
  ``synth/dataset/_platforms.py``.

Conversational goldens export as deepeval's ``ConversationalGolden`` (``deepeval``) and as
``messages``; the other formats hold single-turn goldens and refuse them.

What the tools keep: judgeval 1.x keeps every field under its own name. deepeval and judgeval 0.0.x
keep synth's ``metadata`` as ``additional_metadata``, with ``context_ids`` and ``source_files``
under its ``_synth`` key; ragas keeps ``context_ids`` as ``reference_context_ids`` but has no field
for ``source_files`` and ``metadata``, which ride in a ``_synth`` field that ragas ignores when it
loads rows (and drops if it saves them again). ``Dataset.load`` reads them all back as the goldens
were exported. The dataset's own metadata is not part of any of these formats and is lost.

Every export is of the goldens' shareable form (``synth/dataset/_public.py``): no model's
``base_url``, and ``source_files`` as the corpus names them, never a path from the local disk.
The ragas rows also name each golden's ``synthesizer_name`` (``Testset.from_list`` needs it) and,
where the golden records them, its persona, query style and length.
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
