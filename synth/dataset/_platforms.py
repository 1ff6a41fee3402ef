"""Goldens as the dataset files of evaluation platforms: promptfoo, LangSmith, Langfuse, Phoenix.

Each platform has a place for the question and the reference answer; what it has no place for
(the golden's context, ids, sources, a recorded answer) rides in its ``metadata`` object under
``_synth``, beside the golden's own metadata, so ``Dataset.load`` gives the goldens back unchanged.
These are single-turn formats: conversations are refused. docs/dataset.md ("Evaluation
platforms") has what each golden becomes in each; the files themselves are written and read in
``synth/dataset/_platform_files.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from synth.data import Golden
from synth.errors import DatasetError

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
_CONTEXT_JOIN = "\n\n"


def _metadata(golden: Golden, where: str, placed: Sequence[str]) -> dict[str, Any]:
    """The golden's metadata plus ``_synth``: its fields other than ``placed`` (the ones the
    platform holds itself)."""
    if SYNTH_KEY in golden.metadata:
        raise DatasetError(
            f"{where}: metadata key '{SYNTH_KEY}' is reserved for synth's own fields in exports"
        )
    rest = golden.model_dump(exclude={"metadata", *placed})
    for field in ("expected_tools", "tools_called"):  # an agent's calls, when there are any
        if rest.get(field) is None:
            rest.pop(field, None)
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


# ---- reading them back ---------------------------------------------------------------------------
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
        got = "null" if value is None else f"a {type(value).__name__}"
        raise DatasetError(f"{where}: field '{shown}': expected an object, got {got}")
    return value


__all__ = [
    "PHOENIX_COLUMNS",
    "PHOENIX_KEYS",
    "PROMPTFOO_ASSERTION",
    "SYNTH_KEY",
    "from_platform",
    "is_platform_record",
    "to_langfuse",
    "to_langsmith",
    "to_phoenix",
    "to_promptfoo",
]
