"""Goldens as the dataset files of evaluation platforms: promptfoo, LangSmith, Langfuse, Phoenix.

Each platform has a place for the question and the reference answer; what it has no place for
(the golden's context, ids, sources, a recorded answer) rides in its ``metadata`` object under
``_synth``, beside the golden's own metadata, so ``Dataset.load`` gives the goldens back unchanged.
These are single-turn formats: conversations are refused.

- ``promptfoo``: a list of promptfoo test cases, as ``tests: file://goldens.promptfoo.yaml`` reads
  it: ``vars`` (``input``, and ``context``, the golden's context joined with blank lines: a list
  var would make promptfoo run one test per item), ``assert`` (a ``factuality`` check against the
  expected output, when there is one) and ``metadata``; ``.yaml`` or ``.json``.
- ``langsmith``: one example per line, ``{"inputs": {"input"}, "outputs": {"expected_output",
  "context"}, "metadata"}``, as ``Client.create_examples(dataset_id=..., examples=...)`` takes them
  (``outputs`` are the reference outputs its evaluators see); ``.jsonl``.
- ``langfuse``: one dataset item per line, ``{"input", "expected_output", "metadata"}``, the
  keyword arguments of ``Langfuse.create_dataset_item``; ``.jsonl``.
- ``phoenix``: a CSV for Phoenix's ``create_dataset(csv_file_path=..., **PHOENIX_KEYS)`` (or
  ``upload_dataset``): ``input`` is the input key, ``expected_output`` the output key, the other
  columns (``actual_output``, ``context``, ``retrieval_context``, ``context_ids``,
  ``source_files``, ``metadata``) metadata keys. Cells are synth's CSV cells (lists and metadata
  as JSON text, which Phoenix keeps as strings), so it is read back as synth's CSV.
  :func:`phoenix_frame` gives the same table as a DataFrame for ``dataframe=``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth.data import Golden
from synth.dataset._io import dumps_records, write_text
from synth.errors import DatasetError

if TYPE_CHECKING:
    import pandas as pd

#: the key of the synth-only fields inside a platform's metadata (as in the other exports)
SYNTH_KEY = "_synth"
#: the columns of the phoenix export, by the role Phoenix's upload gives them
PHOENIX_KEYS: dict[str, tuple[str, ...]] = {
    "input_keys": ("input",),
    "output_keys": ("expected_output",),
    "metadata_keys": (
        "actual_output",
        "context",
        "retrieval_context",
        "context_ids",
        "source_files",
        "metadata",
    ),
}
PHOENIX_COLUMNS: tuple[str, ...] = tuple(c for cs in PHOENIX_KEYS.values() for c in cs)
#: what promptfoo asserts of an answer given the expected one (an LLM-graded factual match)
PROMPTFOO_ASSERTION = "factuality"
#: the suffixes of promptfoo's YAML tests, which Dataset.load reads
YAML_SUFFIXES = (".yaml", ".yml")
_CONTEXT_JOIN = "\n\n"


def _metadata(golden: Golden, where: str, placed: Sequence[str]) -> dict[str, Any]:
    """The golden's metadata plus ``_synth``: its fields other than ``placed`` (the ones the
    platform holds itself)."""
    if SYNTH_KEY in golden.metadata:
        raise DatasetError(
            f"{where}: metadata key '{SYNTH_KEY}' is reserved for synth's own fields in exports"
        )
    rest = golden.model_dump(exclude={"metadata", *placed})
    return {**golden.metadata, SYNTH_KEY: rest}


def to_promptfoo(golden: Golden, where: str) -> dict[str, Any]:
    """A promptfoo test case: ``vars``, ``assert`` (when there is an expected output),
    ``metadata``."""
    variables: dict[str, Any] = {"input": golden.input}
    if golden.context:
        variables["context"] = _CONTEXT_JOIN.join(golden.context)
    test: dict[str, Any] = {"vars": variables}
    if golden.expected_output is not None:
        test["assert"] = [{"type": PROMPTFOO_ASSERTION, "value": golden.expected_output}]
    test["metadata"] = _metadata(golden, where, ("input", "expected_output"))
    return test


def to_langsmith(golden: Golden, where: str) -> dict[str, Any]:
    """A LangSmith example: ``inputs``, ``outputs`` (the reference), ``metadata``."""
    outputs: dict[str, Any] = {}
    if golden.expected_output is not None:
        outputs["expected_output"] = golden.expected_output
    if golden.context is not None:
        outputs["context"] = golden.context
    return {
        "inputs": {"input": golden.input},
        "outputs": outputs,
        "metadata": _metadata(golden, where, ("input", "expected_output", "context")),
    }


def to_langfuse(golden: Golden, where: str) -> dict[str, Any]:
    """A Langfuse dataset item: ``input``, ``expected_output``, ``metadata``."""
    return {
        "input": golden.input,
        "expected_output": golden.expected_output,
        "metadata": _metadata(golden, where, ("input", "expected_output")),
    }


def to_phoenix(golden: Golden, where: str) -> dict[str, Any]:
    """A row of the Phoenix table: the golden's fields under :data:`PHOENIX_COLUMNS`."""
    del where  # every single-turn golden fits
    record = golden.model_dump()
    return {column: record[column] for column in PHOENIX_COLUMNS}


# ---- files ---------------------------------------------------------------------------------------
def write_promptfoo(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """The test cases as a YAML list (``.yaml``, ``.yml``) or a JSON list (``.json``)."""
    import json

    dumps_records(records, path)  # a value JSON cannot hold is reported by golden and field
    if path.suffix.lower() == ".json":
        write_text(path, json.dumps(list(records), ensure_ascii=False, indent=2) + "\n")
        return
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(str, _yaml_text)
    text = yaml.dump(list(records), Dumper=Dumper, allow_unicode=True, sort_keys=False, width=100)
    write_text(path, text)


#: characters YAML reads as line breaks: a text holding one is written double-quoted, where
#: they are escaped (plain or single-quoted, a reader folds them into a space)
_YAML_BREAKS = frozenset("\x85\u2028\u2029")


def _yaml_text(dumper: Any, text: str) -> Any:
    style = '"' if _YAML_BREAKS & set(text) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


def write_phoenix(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """The rows as a CSV with synth's cells (no metadata sidecar: the dataset's metadata is not
    part of an export)."""
    import csv
    import io

    from synth.dataset._csv import _cell as cell

    dumps_records(records, path)
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow(PHOENIX_COLUMNS)
    for index, record in enumerate(records):
        where = f"{path}: index {index}"
        writer.writerow([cell(record, column, where) for column in PHOENIX_COLUMNS])
    write_text(path, buffer.getvalue())


def phoenix_frame(goldens: Sequence[Golden]) -> pd.DataFrame:
    """The phoenix export as a DataFrame (text cells, None where the CSV cell is empty), for
    Phoenix's ``create_dataset(dataframe=..., **PHOENIX_KEYS)``."""
    import pandas as pd

    from synth.dataset._conversations import single_turn_only
    from synth.dataset._csv import _cell as cell

    convert = single_turn_only(to_phoenix, "phoenix")
    rows = []
    for index, golden in enumerate(goldens):
        where = f"cannot make a Phoenix frame: index {index}"
        record = convert(golden, where)
        rows.append([cell(record, column, where) or None for column in PHOENIX_COLUMNS])
    return pd.DataFrame(rows, columns=list(PHOENIX_COLUMNS), dtype=object)


# ---- reading them back ---------------------------------------------------------------------------
def read_yaml(path: Path) -> list[Golden]:
    """The goldens of a promptfoo YAML test file (a list of test cases)."""
    import yaml

    from synth.dataset._io import read_text
    from synth.dataset._records import golden_from_record, kind

    try:
        document = yaml.safe_load(read_text(path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"line {mark.line + 1}: " if mark is not None else ""
        raise DatasetError(f"{path}: {at}invalid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(document, list):
        raise DatasetError(f"{path}: expected a list of promptfoo test cases, got {kind(document)}")
    return [golden_from_record(test, f"{path}: index {i}") for i, test in enumerate(document)]


def is_platform_record(record: Mapping[str, Any]) -> bool:
    """True for a promptfoo test, a LangSmith example or a Langfuse item (a Langfuse item has no
    field beyond ``input``, ``expected_output`` and ``metadata``, whose ``_synth`` names it)."""
    if "input" not in record and ("vars" in record or "inputs" in record):
        return True
    metadata = record.get("metadata")
    return (
        isinstance(metadata, Mapping)
        and SYNTH_KEY in metadata
        and record.keys() <= {"input", "expected_output", "metadata"}
    )


def from_platform(record: Mapping[str, Any], where: str) -> tuple[dict[str, Any], dict[str, str]]:
    """A platform's record as synth's fields (and the names they had in the file)."""
    names: dict[str, str] = {}
    if "vars" in record:
        variables = _object(record["vars"], where, "vars")
        data: dict[str, Any] = {"input": variables.get("input")}
        names["input"] = "vars.input"
        for check in record.get("assert") or []:
            if isinstance(check, Mapping) and check.get("type") == PROMPTFOO_ASSERTION:
                data["expected_output"] = check.get("value")
                names["expected_output"] = "assert.value"
    elif "inputs" in record:
        inputs = _object(record["inputs"], where, "inputs")
        outputs = _object(record.get("outputs") or {}, where, "outputs")
        data = {"input": inputs.get("input"), **outputs}
        names |= {"input": "inputs.input", "expected_output": "outputs.expected_output"}
        names["context"] = "outputs.context"
    else:
        data = {k: record[k] for k in ("input", "expected_output") if k in record}
    metadata = dict(_object(record.get("metadata") or {}, where, "metadata"))
    synth = _object(metadata.pop(SYNTH_KEY, None) or {}, where, f"metadata.{SYNTH_KEY}")
    for field, value in synth.items():
        data.setdefault(field, value)
        names.setdefault(field, f"metadata.{SYNTH_KEY}.{field}")
    data["metadata"] = metadata
    return data, names


def _object(value: object, where: str, shown: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        from synth.dataset._records import kind

        raise DatasetError(f"{where}: field '{shown}': expected an object, got {kind(value)}")
    return value


__all__ = [
    "PHOENIX_COLUMNS",
    "PHOENIX_KEYS",
    "PROMPTFOO_ASSERTION",
    "YAML_SUFFIXES",
    "from_platform",
    "is_platform_record",
    "phoenix_frame",
    "read_yaml",
    "to_langfuse",
    "to_langsmith",
    "to_phoenix",
    "to_promptfoo",
    "write_phoenix",
    "write_promptfoo",
]
