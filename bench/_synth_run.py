"""synth's side of the generation benches: one ``Synthesizer`` run against a given server."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

MODEL = "openai:gpt-4o-mini"
FAKE_KEY = "sk-bench-not-a-real-key"


def run_synth(
    paths: list[str],
    base_url: str,
    work: Path,
    *,
    num_goldens: int | None,
    goldens_per_context: int,
    contexts_per_document: int | None,
    max_concurrent: int,
    chunk_size: int,
    embedder: str,
    pipeline: str | None = None,
    seed: int = 0,
    client_rpm: float | None = None,
    rpm_window: float = 60.0,
) -> dict[str, Any]:
    """Generate goldens from ``paths`` with a fresh run directory, store and no response cache.

    ``client_rpm`` gives the run synth's own requests-per-``rpm_window`` budget
    (``Synthesizer(rpm=, rate_window=)``), so requests are paced instead of refused by the server.
    The run is timed in an interpreter that has imported synth and the packages it loads on first
    use (chromadb, the openai SDK), as a long-lived process has; that import time is measured
    apart (``import_seconds``).
    """
    os.environ["OPENAI_API_KEY"] = FAKE_KEY  # the fake server takes any key; nothing is sent out

    started = time.perf_counter()
    import chromadb  # noqa: F401 - imported on first use by the store
    import openai  # noqa: F401 - imported on first use by the model adapter

    from synth.contexts.config import ContextConstructionConfig
    from synth.pipeline import Synthesizer

    import_seconds = time.perf_counter() - started

    options: dict[str, Any] = {
        "model": MODEL,
        "rpm": client_rpm,
        "rate_window": rpm_window,
        "base_url": base_url,
        "embedder": embedder,
        "max_concurrent": max_concurrent,
        "seed": seed,
        "cache": None,
        "run_dir": work / "run",
        "store_path": work / "store",
    }
    if pipeline is not None:
        synthesizer = Synthesizer.from_pipeline(pipeline, **options)
        contexts = synthesizer.context_construction_config
    else:
        synthesizer = Synthesizer(**options)
        contexts = ContextConstructionConfig()
    changes: dict[str, Any] = {"chunk_size": chunk_size}
    if contexts_per_document is not None:
        changes["max_contexts_per_document"] = contexts_per_document
    contexts = ContextConstructionConfig.model_validate({**contexts.model_dump(), **changes})
    error = None
    goldens: list[Any] = []
    start, start_clock = time.perf_counter(), time.monotonic()
    try:
        dataset = synthesizer.generate_goldens_from_docs(
            paths,
            num_goldens=num_goldens,
            max_goldens_per_context=goldens_per_context,
            include_expected_output=True,
            context_construction_config=contexts,
        )
        goldens = list(dataset)
    except Exception as exc:  # noqa: BLE001 - the bench reports how a run fails, whatever it is
        error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    seconds = time.perf_counter() - start
    manifest = synthesizer.manifest or {}
    complete = [g for g in goldens if g.input.strip() and (g.expected_output or "").strip()]
    return {
        "tool": "synth",
        "seconds": seconds,
        "import_seconds": import_seconds,
        "started_monotonic": start_clock,  # the clock of the fake server's request log
        "delivered": len(complete),
        "returned": len(goldens),
        "error": error,
        "status": manifest.get("status"),
        "shortfall": manifest.get("shortfall", []),
        "stages": manifest.get("stages", []),
        "totals": manifest.get("totals", {}),
        "contexts": manifest.get("contexts", {}),
        "config": manifest.get("config", {}),
        "max_concurrent": synthesizer.max_concurrent,
        "files": (manifest.get("inputs") or {}).get("files"),
        "sample": [
            {"input": golden.input, "expected_output": golden.expected_output}
            for golden in complete[:2]
        ],
    }
