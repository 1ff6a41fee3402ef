"""Scale bench: the time and peak memory of deduplicating N goldens' inputs, per golden, as N grows.

Each size offers N distinct generated inputs (every tenth a reworded copy of an earlier one, so
some are dropped) to :class:`synth.generate.dedup.Deduplicator` with the hash embedder, embedded
in batches of 64 as a run embeds them, and measures the wall time of the offers alone and the
peak memory Python allocated (``tracemalloc``) during them. Exact near-duplicate search compares
each input with every one kept, so its work grows as N squared; what must not grow faster than
that is the bookkeeping around it (the copies of the kept vectors).

    python bench/scale.py --sizes 1000,2000,5000 --out bench-results/scale.json
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import REPO, header, markdown_table, write_json  # noqa: E402

sys.path.insert(0, str(REPO))

WORDS = [f"term{i}" for i in range(5000)]


def inputs(n: int, seed: int = 0) -> list[str]:
    """``n`` questions of 12 random words; every tenth repeats an earlier one, reworded."""
    rng = random.Random(seed)
    out: list[str] = []
    for i in range(n):
        if i % 10 == 9:
            words = out[rng.randrange(len(out))].split()
            words[-1] = rng.choice(WORDS)
            out.append(" ".join(words))
        else:
            out.append("What is " + " ".join(rng.choice(WORDS) for _ in range(12)) + "?")
    return out


def measure(n: int) -> dict[str, Any]:
    from synth.generate.dedup import Deduplicator
    from synth.generate.draft import Draft
    from synth.store.hash_embedder import HashEmbedder

    embedder = HashEmbedder()
    texts = inputs(n)
    vectors = embedder.embed(texts)
    drafts = [Draft(id=f"d{i}", input=t) for i, t in enumerate(texts)]
    dedup = Deduplicator(None, threshold=0.9)
    tracemalloc.start()
    started = time.perf_counter()
    for draft, vector in zip(drafts, vectors, strict=True):
        dedup.offer(draft, vector)
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "goldens": n,
        "kept": len(dedup.kept),
        "dedup_s": round(seconds, 3),
        "ms_per_golden": round(1000 * seconds / n, 3),
        "peak_mb": round(peak / 1e6, 2),
        "dimension": embedder.dimension,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,2000,5000", help="goldens, comma-separated")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args(argv)
    rows = [measure(int(n)) for n in args.sizes.split(",")]
    write_json(args.out, {**header(sys.argv, ("synth", "numpy")), "rows": rows})
    columns = ["goldens", "kept", "dedup_s", "ms_per_golden", "peak_mb", "dimension"]
    print(markdown_table(columns, [[row[c] for c in columns] for row in rows]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
