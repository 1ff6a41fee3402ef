"""Run by tests/test_interop.py with another tool's own Python: load a synth export with the real
library and write what it read as plain JSON.

    python interop_load.py TOOL EXPORT_FILE RESULT_FILE

Imports nothing from synth (synth is not installed in those environments).
"""

from __future__ import annotations

import json
import sys
from typing import Any

DEEPEVAL_FIELDS = (
    "input",
    "actual_output",
    "expected_output",
    "context",
    "retrieval_context",
    "source_file",
    "additional_metadata",
)


def _deepeval(path: str, csv: bool) -> list[dict[str, Any]]:
    from deepeval.dataset import EvaluationDataset

    dataset = EvaluationDataset()
    if csv:
        dataset.add_goldens_from_csv_file(
            path, context_col_delimiter="\x1f", retrieval_context_col_delimiter="\x1f"
        )
    else:
        dataset.add_goldens_from_json_file(path)
    return [{name: getattr(g, name) for name in DEEPEVAL_FIELDS} for g in dataset.goldens]


def _deepeval_tools(path: str) -> list[dict[str, Any]]:
    """Each golden's tool calls as deepeval's ``ToolCall`` objects hold them."""
    from deepeval.dataset import EvaluationDataset
    from deepeval.test_case import ToolCall

    dataset = EvaluationDataset()
    dataset.add_goldens_from_json_file(path)
    read = []
    for golden in dataset.goldens:
        row: dict[str, Any] = {"input": golden.input}
        for field in ("expected_tools", "tools_called"):
            calls = getattr(golden, field)
            assert calls is None or all(isinstance(c, ToolCall) for c in calls)
            row[field] = (
                None
                if calls is None
                else [
                    {"name": c.name, "input_parameters": c.input_parameters, "output": c.output}
                    for c in calls
                ]
            )
        read.append(row)
    return read


def _ragas_tools(path: str) -> list[dict[str, Any]]:
    """Each row as ragas' ``MultiTurnSample`` (through ``EvaluationDataset`` and ``Testset``)."""
    from ragas import EvaluationDataset, MultiTurnSample
    from ragas.testset.synthesizers.testset_schema import Testset

    with open(path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    samples = EvaluationDataset.from_jsonl(path).samples
    assert all(isinstance(s, MultiTurnSample) for s in samples)
    testset = Testset.from_list(rows)
    assert [s.eval_sample for s in testset.samples] == samples
    return [
        {
            "messages": [m.model_dump() for m in s.user_input],
            "reference": s.reference,
            "reference_tool_calls": [
                {"name": c.name, "args": c.args} for c in s.reference_tool_calls or []
            ],
        }
        for s in samples
    ]


def _deepeval_conversations(path: str) -> list[dict[str, Any]]:
    from deepeval.dataset import ConversationalGolden, EvaluationDataset

    dataset = EvaluationDataset()
    dataset.add_goldens_from_json_file(path)
    assert all(isinstance(g, ConversationalGolden) for g in dataset.goldens)
    return [
        {
            "scenario": g.scenario,
            "expected_outcome": g.expected_outcome,
            "user_description": g.user_description,
            "context": g.context,
            "additional_metadata": g.additional_metadata,
            "turns": [
                {"role": t.role, "content": t.content, "metadata": t.metadata} for t in g.turns
            ],
        }
        for g in dataset.goldens
    ]


class _RecordingClient:
    """Stands in for judgeval's JudgmentSyncClient: keeps what would be uploaded."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    def post_projects_datasets_by_dataset_identifier_examples(self, **call: Any) -> dict:
        self.entries.extend(call["payload"]["examples"])
        return {}


def _judgeval(path: str) -> dict[str, Any]:
    from judgeval.data.example import Example
    from judgeval.datasets.dataset import Dataset

    client = _RecordingClient()
    dataset = Dataset(name="synth", project_id="p", project_name="p", client=client)  # type: ignore[arg-type]
    dataset.add_from_json(path)
    uploaded = [
        {k: v for k, v in entry.items() if k not in ("example_id", "created_at")}
        for entry in client.entries
    ]
    with open(path, encoding="utf-8") as handle:
        examples = [Example.create(**row) for row in json.load(handle)]
    return {
        "uploaded": uploaded,
        "created": [example.properties for example in examples],
        "schema": _judgeval_schema(examples),
    }


def _judgeval_schema(examples: list[Any]) -> Any:
    """The schema judgeval infers for a dataset of ``examples`` (``datasets.create`` without
    one), or its refusal."""
    from judgeval.datasets.dataset_factory import infer_schema_from_examples

    try:
        return infer_schema_from_examples(examples)
    except ValueError as exc:
        return {"refused": str(exc)}


def _judgeval_legacy(path: str) -> list[dict[str, Any]]:
    from judgeval.data.datasets import EvalDataset

    dataset = EvalDataset(judgment_api_key="offline")
    dataset.add_from_json(path)
    fields = {"input", "actual_output", "expected_output", "context", "retrieval_context"}
    return [e.model_dump(include=fields | {"additional_metadata"}) for e in dataset.examples]


def _ragas(path: str) -> dict[str, Any]:
    from ragas import EvaluationDataset
    from ragas.testset.synthesizers.testset_schema import Testset

    with open(path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    testset = Testset.from_list(rows)
    return {
        "samples": [sample.model_dump() for sample in EvaluationDataset.from_jsonl(path).samples],
        "testset": [
            {"synthesizer_name": s.synthesizer_name, "eval_sample": s.eval_sample.model_dump()}
            for s in testset.samples
        ],
    }


def _deepeval_save_as(path: str) -> dict[str, str]:
    """Goldens (the JSON at ``path``: ``{"single": [...], "conversational": [...]}``) saved with
    deepeval's own ``EvaluationDataset.save_as`` in every file type it has; the files written."""
    import os

    from deepeval.dataset import ConversationalGolden, EvaluationDataset, Golden
    from deepeval.test_case import Turn

    with open(path, encoding="utf-8") as handle:
        spec = json.load(handle)
    single = EvaluationDataset(goldens=[Golden(**g) for g in spec["single"]])
    talks = [
        ConversationalGolden(**{**g, "turns": [Turn(**t) for t in g["turns"]] or None})
        for g in spec["conversational"]
    ]
    conversational = EvaluationDataset(goldens=talks)
    folder = os.path.dirname(os.path.abspath(path))
    written = {}
    for file_type in ("jsonl", "json", "csv"):
        written[f"single.{file_type}"] = single.save_as(file_type, folder, file_name="single")
        written[f"talks.{file_type}"] = conversational.save_as(file_type, folder, file_name="talks")
    return written


def _langsmith(path: str) -> list[dict[str, Any]]:
    """Each line as LangSmith's ``ExampleCreate`` (what ``Client.create_examples`` sends)."""
    from langsmith.schemas import ExampleCreate

    with open(path, encoding="utf-8") as handle:
        examples = [ExampleCreate(**json.loads(line)) for line in handle if line.strip()]
    return [
        {"inputs": e.inputs, "outputs": e.reference_outputs, "metadata": e.metadata}
        for e in examples
    ]


def _langfuse(path: str) -> list[dict[str, Any]]:
    """Each line as Langfuse's ``CreateDatasetItemRequest``, dumped as the API body it sends."""
    from langfuse.api.dataset_items.types.create_dataset_item_request import (
        CreateDatasetItemRequest,
    )

    with open(path, encoding="utf-8") as handle:
        items = [json.loads(line) for line in handle if line.strip()]
    requests = [CreateDatasetItemRequest(dataset_name="synth", **item) for item in items]
    return [r.dict(by_alias=True) for r in requests]  # type: ignore[attr-defined]


def _phoenix(path: str) -> dict[str, Any]:
    """What Phoenix's client uploads for the CSV and for the same table as a DataFrame, with
    the keys synth documents, each file's rows split into inputs, outputs and metadata as
    Phoenix's upload does."""
    import csv
    import gzip
    import io
    from pathlib import Path

    import pandas as pd
    from phoenix.client.resources.datasets import (
        DatasetKeys,
        _prepare_csv,
        _prepare_dataframe_as_csv,
    )

    keys = DatasetKeys(
        input_keys=frozenset({"input"}),
        output_keys=frozenset({"expected_output"}),
        metadata_keys=frozenset(
            {
                "actual_output",
                "context",
                "retrieval_context",
                "context_ids",
                "source_files",
                "metadata",
            }
        ),
    )
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)

    def examples(upload: Any) -> list[dict[str, Any]]:
        data = upload[1].read()
        if upload[3].get("Content-Encoding") == "gzip":
            data = gzip.decompress(data)
        rows = csv.DictReader(io.StringIO(data.decode("utf-8")))
        return [
            {
                "input": {k: row[k] for k in keys.input},
                "output": {k: row[k] for k in keys.output},
                "metadata": {k: row[k] for k in keys.metadata},
            }
            for row in rows
        ]

    return {
        "csv": examples(_prepare_csv(Path(path), keys)),
        "dataframe": examples(_prepare_dataframe_as_csv(frame, keys)),
    }


def main(argv: list[str]) -> int:
    tool, path, out = argv
    loaders = {
        "deepeval": lambda: _deepeval(path, csv=False),
        "deepeval-csv": lambda: _deepeval(path, csv=True),
        "deepeval-conversations": lambda: _deepeval_conversations(path),
        "deepeval-tools": lambda: _deepeval_tools(path),
        "ragas-tools": lambda: _ragas_tools(path),
        "judgeval": lambda: _judgeval(path),
        "judgeval-legacy": lambda: _judgeval_legacy(path),
        "ragas": lambda: _ragas(path),
        "deepeval-save-as": lambda: _deepeval_save_as(path),
        "langsmith": lambda: _langsmith(path),
        "langfuse": lambda: _langfuse(path),
        "phoenix": lambda: _phoenix(path),
    }
    result = loaders[tool]()
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(result, handle, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
