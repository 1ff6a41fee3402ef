"""Two parts of a scale run measured apart, in CPU time: the chunk index and the manifest's rewrites.

``index``: a :class:`~synth.contexts.index.ChunkIndex` of N synthetic chunks (ids as a store makes
them, 100 chunks a file, 384-dimensional unit vectors) built three times (the fastest kept) and
queried 400 times in a file and 20 times across files; with ``--store``, also the read of a
store's vectors by id (``ChunkStore.get_embeddings``, the calling thread's CPU), as a run makes it.

``rewrites``: a run of ``--goldens`` goldens from a folder and a store that ``bench/scale.py run``
made (``--work``'s ``corpus-N`` and ``store-N``), against the fake server, with each rewrite of the
manifest while the run goes timed apart (``time.thread_time``), and the last one (counted from
the start, indented) too; once the run has kept ``--fraction`` of its goldens, one rewrite is
repeated ``--repeat`` times (its median kept) and, with ``--prof``, profiled.

    python bench/scale_parts.py index --chunks 20000,200000 --store /tmp/scale/store-200000
    python bench/scale_parts.py rewrites --corpus /tmp/scale/corpus-200000 \\
        --store /tmp/scale/store-200000 --work /tmp/rewrites --goldens 5000
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import REPO  # noqa: E402

sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))


def cpu(function: Callable[[], object], repeat: int = 1) -> float:
    """The fewest CPU seconds of ``repeat`` calls of ``function``."""
    spent = []
    for _ in range(repeat):
        started = time.process_time()
        function()
        spent.append(time.process_time() - started)
    return min(spent)


def measure_index(size: int) -> dict[str, float]:
    import numpy as np

    from synth._ids import chunk_id
    from synth.contexts.index import ChunkIndex
    from synth.data import Chunk
    from synth.store.embedder import unit_rows

    rng = np.random.default_rng(7)
    chunks = [
        Chunk(
            id=chunk_id(f"doc{i // 100}", "p", i % 100),
            document_id=f"doc{i // 100}",
            source=f"doc_{i // 100:06d}.txt",
            index=i % 100,
            text="x",
            token_count=1,
        )
        for i in range(size)
    ]
    vectors = unit_rows(rng.standard_normal((size, 384), dtype=np.float32), in_place=True)
    built = cpu(lambda: ChunkIndex(chunks, vectors), repeat=3)
    index = ChunkIndex(chunks, vectors)
    queries = vectors[rng.integers(size, size=400)]
    step = size // 400
    in_file = cpu(
        lambda: [
            index.query(queries[i : i + 1], 12, source=chunks[i * step].source) for i in range(400)
        ]
    )
    across = cpu(lambda: index.query(queries[:20], 12))
    return {
        "chunks": size,
        "build_us_per_chunk": round(1e6 * built / size, 2),
        "query_in_a_file_us": round(1e6 * in_file / 400, 1),
        "query_across_files_ms": round(1e3 * across / 20, 2),
    }


def measure_store_read(path: Path) -> dict[str, float]:
    from synth.store.chroma import ChunkStore

    store = ChunkStore("hash", path=path, chunking={"chunk_size": 128})
    ids = [chunk.id for chunk in store.chunks()]
    store.rest()  # as a run's read: the first call on the collection loads it again
    started = time.thread_time()
    store.get_embeddings(ids)
    spent = time.thread_time() - started
    store.close()
    return {"chunks": len(ids), "read_us_per_chunk": round(1e6 * spent / len(ids), 1)}


def index_main(args: argparse.Namespace) -> None:
    for size in (int(s) for s in args.chunks.split(",")):
        print(json.dumps(measure_index(size)), flush=True)
    for store in args.store:
        print(json.dumps(measure_store_read(store)), flush=True)


def rewrites_main(args: argparse.Namespace) -> None:
    os.environ["OPENAI_API_KEY"] = "sk-bench-not-a-real-key"  # the fake server takes any key
    import chromadb  # noqa: F401 - imported before the clock starts, as in bench/scale.py
    import openai  # noqa: F401
    from _server import FakeServer, ServerOptions
    from scale import scale_goldens, scale_synthesizer

    from synth.run.session import RunSession

    real = RunSession._flush
    running: list[float] = []
    last: list[float] = []
    probe: dict[str, Any] = {}

    def flush(self: RunSession, force: bool = False) -> None:
        stream = self.stream
        kept = stream.goldens_so_far if stream is not None else 0
        if not force and not probe and self.result is None and kept >= args.fraction * args.goldens:
            spent = []
            for _ in range(args.repeat):
                self._last_flush = 0.0  # rewritten whatever the clock says
                started = time.thread_time()
                real(self, False)
                spent.append(time.thread_time() - started)
            probe.update(goldens=kept, ms=round(1e3 * statistics.median(spent), 2))
            if args.prof is not None:
                profile = cProfile.Profile()
                self._last_flush = 0.0
                profile.runcall(real, self, False)
                text = io.StringIO()
                pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(40)
                args.prof.write_text(text.getvalue(), encoding="utf-8")
            return
        before, started = self._last_flush, time.thread_time()
        real(self, force)
        spent = time.thread_time() - started
        if force:
            last.append(spent)
        elif self._last_flush != before:  # a rewrite, not a call too soon after the last one
            running.append(spent)

    RunSession._flush = flush  # type: ignore[method-assign]
    args.work.mkdir(parents=True, exist_ok=True)
    options = ServerOptions(latency=0.005, replies="synth_replies:reply")
    with FakeServer(options, args.work / "requests.jsonl") as server:
        synthesizer = scale_synthesizer(server.url, args.work, args.store)
        dataset = scale_goldens(synthesizer, args.corpus, args.goldens)
    tenth = running[-max(len(running) // 10, 1) :]
    print(
        json.dumps(
            {
                "delivered": len(list(dataset)),
                "rewrites": len(running),
                "ms_a_rewrite": round(1e3 * sum(running) / max(len(running), 1), 2),
                "ms_a_rewrite_last_tenth": round(1e3 * sum(tenth) / max(len(tenth), 1), 2),
                "repeated": probe,
                "last_ms": [round(1e3 * s, 1) for s in last],
                "load": os.getloadavg()[0],
            }
        ),
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = parser.add_subparsers(dest="part", required=True)
    index = parts.add_parser("index", help="the chunk index's set-up and queries, the store read")
    index.add_argument("--chunks", default="20000,200000", help="synthetic chunks, comma-separated")
    index.add_argument("--store", type=Path, action="append", default=[], help="a store to read")
    rewrites = parts.add_parser("rewrites", help="the manifest's rewrites in a run")
    rewrites.add_argument("--corpus", type=Path, required=True)
    rewrites.add_argument("--store", type=Path, required=True)
    rewrites.add_argument("--work", type=Path, required=True)
    rewrites.add_argument("--goldens", type=int, default=5000)
    rewrites.add_argument("--fraction", type=float, default=0.95)
    rewrites.add_argument("--repeat", type=int, default=20)
    rewrites.add_argument("--prof", type=Path, help="write the repeated rewrite's profile here")
    args = parser.parse_args()
    index_main(args) if args.part == "index" else rewrites_main(args)


if __name__ == "__main__":
    main()
