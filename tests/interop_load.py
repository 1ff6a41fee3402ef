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


def main(argv: list[str]) -> int:
    tool, path, out = argv
    loaders = {
        "deepeval": lambda: _deepeval(path, csv=False),
        "deepeval-csv": lambda: _deepeval(path, csv=True),
        "deepeval-conversations": lambda: _deepeval_conversations(path),
        "judgeval": lambda: _judgeval(path),
        "judgeval-legacy": lambda: _judgeval_legacy(path),
        "ragas": lambda: _ragas(path),
    }
    result = loaders[tool]()
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(result, handle, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
