"""Difficulty bench: how long building a DifficultyIndex and measuring goldens against it take.

The corpus is the ingest bench's seeded word salad (``_corpus._Writer``): ``--chunks`` chunks of
about ``--words`` words, with random ``--dimension``-wide float32 vectors standing in for the run's
chunk vectors. Each of ``--inputs`` questions is 8 to 16 words picked from one chunk plus 2 to 4
from anywhere, with a random vector, and names that chunk as its source.

Reported, each the fastest of ``--repeat`` runs: importing bm25s (paid once per process, in a fresh
interpreter), building the index (tokenizing every chunk, the BM25 index, normalizing the vectors),
``measure_many`` over all inputs, and ``measure`` called once per input.

    python bench/difficulty.py
    python bench/difficulty.py --chunks 8000 --inputs 1000 --out bench-results/difficulty.json
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _corpus import _Writer  # noqa: E402
from _util import header, markdown_table, write_json  # noqa: E402

from synth.generate.difficulty import DifficultyIndex  # noqa: E402

PACKAGES = ("synth", "bm25s", "numpy")


def corpus(chunks: int, words: int, dimension: int) -> tuple[list[str], list[str], np.ndarray]:
    """Chunk ids, texts and unit-free random vectors, the same for the same arguments."""
    writer = _Writer(seed=11)
    texts = [writer.paragraph(words) for _ in range(chunks)]
    ids = [f"chunk-{i}" for i in range(chunks)]
    vectors = np.random.default_rng(11).standard_normal((chunks, dimension)).astype(np.float32)
    return ids, texts, vectors


def questions(
    texts: list[str], ids: list[str], count: int, dimension: int
) -> tuple[list[str], list[list[str]], np.ndarray]:
    """Inputs drawn from their source chunk's words and a few others, their sources, vectors."""
    rng = random.Random(12)
    every = " ".join(texts).split()
    inputs: list[str] = []
    sources: list[list[str]] = []
    for _ in range(count):
        source = rng.randrange(len(texts))
        own = texts[source].split()
        picked = rng.sample(own, min(len(own), rng.randint(8, 16)))
        picked += rng.sample(every, rng.randint(2, 4))
        rng.shuffle(picked)
        inputs.append(" ".join(picked) + "?")
        sources.append([ids[source]])
    vectors = np.random.default_rng(12).standard_normal((count, dimension)).astype(np.float32)
    return inputs, sources, vectors


def fastest(repeat: int, work: Callable[[], Any]) -> tuple[float, Any]:
    """The shortest wall time of ``repeat`` runs of ``work``, and its last result."""
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - start)
    return best, result


def import_seconds() -> float:
    """Seconds to import bm25s in a fresh interpreter that has already imported numpy."""
    code = (
        "import time, numpy; t = time.perf_counter(); import bm25s; print(time.perf_counter() - t)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout.strip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Time DifficultyIndex build and measurement.")
    parser.add_argument("--chunks", type=int, default=2000, help="chunks in the index (2000)")
    parser.add_argument("--words", type=int, default=200, help="words per chunk, about (200)")
    parser.add_argument("--inputs", type=int, default=200, help="goldens measured (200)")
    parser.add_argument("--dimension", type=int, default=384, help="vector width (384)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each timing (3)")
    parser.add_argument("--out", type=Path, help="write the results here as JSON")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if min(args.chunks, args.words, args.inputs, args.dimension, args.repeat) < 1:
        parser.error("every count must be at least 1")

    ids, texts, chunk_vectors = corpus(args.chunks, args.words, args.dimension)
    inputs, sources, input_vectors = questions(texts, ids, args.inputs, args.dimension)
    DifficultyIndex(ids[:2], texts[:2])  # imports bm25s here, not inside the first timing

    build, index = fastest(args.repeat, lambda: DifficultyIndex(ids, texts, chunk_vectors))
    batch, measured = fastest(
        args.repeat, lambda: index.measure_many(inputs, sources, input_vectors)
    )
    single, one_by_one = fastest(
        args.repeat,
        lambda: [
            index.measure(text, source, vector)
            for text, source, vector in zip(inputs, sources, input_vectors, strict=True)
        ],
    )
    if one_by_one != measured:
        raise RuntimeError("measure one by one differs from measure_many")
    labels = {
        label: sum(d.label == label for d in measured) for label in ("easy", "medium", "hard")
    }
    rows = [
        ["import bm25s", import_seconds() * 1000, ""],
        ["build index", build * 1000, f"{args.chunks} chunks of ~{args.words} words"],
        ["measure_many", batch * 1000, f"{args.inputs} inputs"],
        ["measure x N", single * 1000, f"{args.inputs} calls"],
    ]
    print(markdown_table(["step", "ms", "what"], rows))
    print(f"labels: {labels}; bm25 rank 1: {sum(d.bm25_rank == 1 for d in measured)}")
    write_json(
        args.out,
        {
            **header(["bench/difficulty.py", *(argv or sys.argv[1:])], PACKAGES),
            "chunks": args.chunks,
            "words": sum(len(t.split()) for t in texts) / len(texts),
            "inputs": args.inputs,
            "dimension": args.dimension,
            "seconds": {row[0]: row[1] / 1000 for row in rows},
            "labels": labels,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
