"""Scale bench: a run's time and memory per stage, per chunk and per golden, as the store grows.

``run`` (the default): for each store size (chunks), a corpus of plain-text files of seeded word
salad (``bench/_corpus.py``'s writer; file ``i`` is the same at every size, so a smaller corpus is
a prefix of a larger one; every file cut into about ``--chunks-per-file`` chunks) is ingested by
``synth.ingest_documents`` into a new Chroma store (hash embedder) in a fresh interpreter, then a
second interpreter generates ``--goldens`` goldens from the same folder and store
(``Synthesizer.generate_goldens_from_docs``: the files are unchanged, so the run reads their chunks
back from the store, as a run over a store built earlier does) against the fake OpenAI server
(``tests/fake_openai.py`` answering with ``tests/synth_replies.py``, ``--latency`` a request).

Each stage's time is the wall time spent inside its functions, summed over calls (patched in the
child; threads that overlap are each counted): reading the store back (``ingest_for_run``), seed
selection (the selector's draws and its set-up), the prose filter, coverage targets, the neighbour
index (its store read and its set-up), grouping (reads ahead and claims), the guesses of contexts
whose inputs are asked ahead, deduplication, the difficulty index (build and measurements), the
manifest's rewrites (``manifest``: all of each, its counts, the coverage measured and the write;
``write``: the manifest's and the dataset's file writes alone). What is left of the run's wall
time is the generation steps and the event loop. Each stage's CPU time (the calling threads',
``time.thread_time``) is kept beside its wall time: on a shared machine most of a stage's wall
time can be its wait for the interpreter's lock. The peak resident memory is ``ru_maxrss`` of
each child (the ingest's, the run's), the fake server apart.

``dedup``: the near-duplicate check alone, N inputs offered to one ``Deduplicator`` (hash
embedder; every tenth input a reworded copy), its time and the peak memory Python allocated.

    python bench/scale.py run --chunks 20000,200000 --goldens 1000 --out bench-results/scale.json
    python bench/scale.py dedup --sizes 1000,2000,5000
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import REPO, header, markdown_table, work_dir, write_json  # noqa: E402

sys.path.insert(0, str(REPO))

PACKAGES = ("synth", "numpy", "chromadb")
WORDS = [f"term{i}" for i in range(5000)]
REPLIES = "synth_replies:reply"
CHUNK_SIZE = 128  # tokens: small chunks keep 200,000 of them to about 100 MB of text
#: the words a chunk of CHUNK_SIZE tokens of the corpus writer's salad holds, about
WORDS_PER_CHUNK = 82

#: what the run child times: (module, attribute path, stage); each function is wrapped where the
#: caller looks it up, so the calls the run makes are the ones counted
TIMED = (
    ("synth.pipeline", "ingest_for_run", "store read"),
    ("synth.contexts.select", "SeedSelector.__post_init__", "select"),
    ("synth.contexts.select", "SeedSelector.next", "select"),
    ("synth.contexts.seed_feed", "check_prose", "prose"),
    ("synth.run.plan", "file_targets", "coverage"),
    ("synth.run.session", "measure_coverage", "coverage"),
    ("synth.contexts.index", "ChunkIndex.__init__", "index"),
    ("synth.store.chroma", "ChunkStore.get_embeddings", "index"),
    ("synth.contexts.seed_feed", "prefetch_neighbours", "group"),
    ("synth.contexts.seed_feed", "group_contexts", "group"),
    ("synth.contexts.guess", "Guesses.guess", "guess"),
    ("synth.generate.dedup", "Deduplicator.offer", "dedup"),
    ("synth.run.difficulty", "_build", "difficulty"),
    ("synth.generate.difficulty", "DifficultyIndex.measure_many", "difficulty"),
    ("synth.run.session", "RunSession._flush", "manifest"),
    ("synth.run.dir", "RunDir.write_manifest", "write"),
    ("synth.dataset", "Dataset.save", "write"),
    ("synth.pipeline.delivery", "inspect_dataset", "inspect"),
)
STAGES = tuple(dict.fromkeys(stage for _, _, stage in TIMED))


# ---- the corpus -------------------------------------------------------------------------------


def build_corpus(pool: Path, folder: Path, chunks: int, per_file: int) -> int:
    """Fill ``folder`` with hard links to the pool's files 0 .. F-1, F enough for ``chunks``
    chunks of ``per_file`` each; the pool's files are written once. Returns F."""
    from _corpus import _Writer

    files = max(1, round(chunks / per_file))
    folder.mkdir(parents=True, exist_ok=True)
    pool.mkdir(parents=True, exist_ok=True)
    for index in range(files):
        name = f"doc_{index:06d}.txt"
        source = pool / name
        if not source.exists():
            writer = _Writer(seed=3_000_000 + index)
            paragraphs = [
                writer.paragraph(WORDS_PER_CHUNK // 2) for _ in range(per_file * 2)
            ]  # two paragraphs a chunk, about: the chunker joins them
            source.write_text(f"Notes {index}\n\n" + "\n\n".join(paragraphs) + "\n", "utf-8")
        target = folder / name
        if not target.exists():
            os.link(source, target)
    return files


# ---- the children -----------------------------------------------------------------------------


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB (``ru_maxrss`` is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ingest_child(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--store", type=Path, required=True)
    args = parser.parse_args(argv)
    from synth import ingest_documents

    started = time.perf_counter()
    report = ingest_documents(
        args.corpus, embedder="hash", chunking={"chunk_size": CHUNK_SIZE}, store_path=args.store
    )
    seconds = time.perf_counter() - started
    chunks = sum(f.chunks for f in report.files)
    print(json.dumps({"seconds": seconds, "chunks": chunks, "peak_rss_mb": peak_rss_mb()}))
    return 0


class Timers:
    """Wall time inside each stage's functions, summed over calls, from any thread, and the CPU
    time the calling threads spent there (``time.thread_time``: not the time a thread waited for
    the interpreter's lock, which on a loaded machine is most of the wall time of some stages)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        self.cpu: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        self.calls: dict[str, int] = dict.fromkeys(STAGES, 0)
        self._lock = threading.Lock()

    def snapshot(self) -> dict[str, Any]:
        """The timings so far, and the peak memory, as the run child reports them."""
        with self._lock:
            return {
                "stage_seconds": dict(self.seconds),
                "stage_cpu_seconds": dict(self.cpu),
                "stage_calls": dict(self.calls),
                "peak_rss_mb": peak_rss_mb(),
            }

    def install(self) -> None:
        import importlib

        for module_name, path, stage in TIMED:
            owner: Any = importlib.import_module(module_name)
            *parents, name = path.split(".")
            for part in parents:
                owner = getattr(owner, part)
            setattr(owner, name, self._wrap(getattr(owner, name), stage))

    def _wrap(self, function: Callable[..., Any], stage: str) -> Callable[..., Any]:
        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            started, cpu = time.perf_counter(), time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent, used = time.perf_counter() - started, time.thread_time() - cpu
                with self._lock:
                    self.seconds[stage] += spent
                    self.cpu[stage] += used
                    self.calls[stage] += 1

        return timed


def scale_synthesizer(url: str, work: Path, store: Path) -> Any:
    """The synthesizer a scale run uses: the fake server's model, hash embeddings, no cache,
    its run directory in ``work``, the store at ``store`` (``bench/scale_parts.py`` too)."""
    from synth.pipeline import Synthesizer

    return Synthesizer(
        "openai:gpt-4o-mini",
        base_url=url,
        embedder="hash",
        cache=None,
        seed=0,
        run_dir=work / "run",
        store_path=store,
    )


def scale_goldens(synthesizer: Any, corpus: Path, goldens: int) -> Any:
    """A scale run's ``goldens`` from ``corpus``, cut as its store was (:data:`CHUNK_SIZE`)."""
    from synth.contexts.config import ContextConstructionConfig

    return synthesizer.generate_goldens_from_docs(
        [str(corpus)],
        num_goldens=goldens,
        max_goldens_per_context=2,
        include_expected_output=True,
        context_construction_config=ContextConstructionConfig(chunk_size=CHUNK_SIZE),
    )


def run_child(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--goldens", type=int, required=True)
    parser.add_argument("--tracemalloc", type=Path, help="write snapshots of Python's memory here")
    args = parser.parse_args(argv)
    os.environ["OPENAI_API_KEY"] = "sk-bench-not-a-real-key"  # the fake server takes any key
    import chromadb  # noqa: F401 - imported before the clock starts, as a long-lived process has
    import openai  # noqa: F401

    timers = Timers()
    timers.install()
    partial = args.work / "timings.json"
    stop = threading.Event()
    threads = [threading.Thread(target=_keep_writing, args=(timers, partial, stop), daemon=True)]
    if args.tracemalloc is not None:
        tracemalloc.start(int(os.environ.get("SCALE_TRACE_FRAMES", "8")))
        threads.append(
            threading.Thread(target=_trace_peak, args=(args.tracemalloc, stop), daemon=True)
        )
    for thread in threads:
        thread.start()
    synthesizer = scale_synthesizer(args.url, args.work, args.store)
    started = time.perf_counter()
    result: dict[str, Any] = {}
    try:
        dataset = scale_goldens(synthesizer, args.corpus, args.goldens)
        result["delivered"] = len(list(dataset))
    except BaseException as error:  # the timings so far are still printed, then it re-raises
        result["error"] = f"{type(error).__name__}: {error}"
        raise
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        if args.tracemalloc is not None:
            tracemalloc.take_snapshot().dump(str(args.tracemalloc.with_suffix(".end")))
            tracemalloc.stop()
        manifest = synthesizer.manifest or {}
        stages = manifest.get("stages", [])
        result |= {
            "seconds": time.perf_counter() - started,
            "status": manifest.get("status"),
            "requests": {row["stage"]: int(row.get("requests", 0)) for row in stages},
            **timers.snapshot(),
        }
        _write_whole(partial, result)
        print(json.dumps(result), flush=True)
    return 0


def _keep_writing(timers: Timers, path: Path, stop: threading.Event) -> None:
    """Write the timings so far every 10 s, for a child killed before it could print them."""
    while not stop.wait(10):
        _write_whole(path, timers.snapshot())


def _write_whole(path: Path, payload: dict[str, Any]) -> None:
    """``payload`` as JSON in ``path``, replaced whole: a child killed while writing leaves the
    last one."""
    part = path.with_suffix(".part")
    part.write_text(json.dumps(payload), encoding="utf-8")
    os.replace(part, path)


def _trace_peak(path: Path, stop: threading.Event) -> None:
    """Keep the snapshot of Python's allocations taken when they were largest (checked every
    2 s; a new one when they grew by 2%), in ``path`` (``tracemalloc``'s dump format)."""
    largest = 0
    while not stop.wait(2):
        current, _ = tracemalloc.get_traced_memory()
        if current > largest * 1.02:
            largest = current
            tracemalloc.take_snapshot().dump(str(path))


def child(kind: str, args: list[str], timeout: float, work: Path | None = None) -> dict[str, Any]:
    """What the child printed last; a failed (or timed-out) child's timings so far are printed
    before the error is raised (the run child writes them to ``work``/timings.json as it goes)."""
    command = [sys.executable, str(Path(__file__).resolve()), f"--{kind}-child", *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=timeout)
    except subprocess.TimeoutExpired:
        _print_partial(work, f"the {kind} child timed out after {timeout:g} s")
        raise
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        _print_partial(work, f"the {kind} child failed ({done.returncode})")
        raise RuntimeError(f"the {kind} child failed ({done.returncode}):\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _print_partial(work: Path | None, why: str) -> None:
    """The stage timings a failed run child left, to stderr."""
    path = None if work is None else work / "timings.json"
    if path is None or not path.exists():
        return
    partial = json.loads(path.read_text(encoding="utf-8"))
    seconds = partial.get("stage_seconds", {})
    print(f"{why}; its timings so far:", file=sys.stderr)
    print(
        markdown_table(
            ["stage", "s", "calls"],
            [
                [s, round(seconds.get(s, 0.0), 3), partial.get("stage_calls", {}).get(s, 0)]
                for s in STAGES
            ],
        ),
        file=sys.stderr,
    )
    extra = {k: v for k, v in partial.items() if k not in ("stage_seconds", "stage_calls")}
    print(json.dumps(extra), file=sys.stderr, flush=True)


# ---- the bench --------------------------------------------------------------------------------


def measure_run(size: int, goldens: int, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Ingest a store of about ``size`` chunks (once per size) and generate ``goldens`` from it."""
    from _server import FakeServer, ServerOptions

    folder = work / f"corpus-{size}"
    files = build_corpus(work / "pool", folder, size, args.chunks_per_file)
    store = work / f"store-{size}"
    ingest_file = work / f"ingest-{size}.json"
    if not ingest_file.exists():
        shutil.rmtree(store, ignore_errors=True)
        ingest = child("ingest", ["--corpus", str(folder), "--store", str(store)], args.timeout)
        ingest_file.write_text(json.dumps(ingest), encoding="utf-8")
    ingest = json.loads(ingest_file.read_text(encoding="utf-8"))
    run_work = work / f"run-{size}-{goldens}"
    shutil.rmtree(run_work, ignore_errors=True)
    options = ServerOptions(latency=args.latency, replies=REPLIES)
    trace = [] if args.tracemalloc is None else ["--tracemalloc", str(args.tracemalloc)]
    run_work.mkdir(parents=True)
    with FakeServer(options, run_work / "requests.jsonl") as server:
        run = child(
            "run",
            [
                *("--corpus", str(folder), "--store", str(store), "--work", str(run_work)),
                *("--url", server.url, "--goldens", str(goldens), *trace),
            ],
            args.timeout,
            run_work,
        )
    chunks = int(ingest["chunks"])
    stage_seconds = run["stage_seconds"]
    timed = sum(stage_seconds.values())
    return {
        "chunks": chunks,
        "files": files,
        "goldens": goldens,
        "delivered": run["delivered"],
        "ingest_s": round(ingest["seconds"], 2),
        "ingest_us_per_chunk": round(1e6 * ingest["seconds"] / chunks, 1),
        "ingest_peak_rss_mb": round(ingest["peak_rss_mb"]),
        "run_s": round(run["seconds"], 2),
        "run_peak_rss_mb": round(run["peak_rss_mb"]),
        "stage_s": {stage: round(value, 3) for stage, value in stage_seconds.items()},
        "stage_cpu_s": {
            stage: round(value, 3) for stage, value in run["stage_cpu_seconds"].items()
        },
        "stage_calls": run["stage_calls"],
        "rest_s": round(run["seconds"] - timed, 2),
        "requests": run["requests"],
        "load": os.getloadavg()[0],
    }


def run_tables(rows: list[dict[str, Any]]) -> str:
    columns = ["chunks", "files", "goldens", "delivered", "ingest s", "ingest µs/chunk"]
    columns += ["ingest peak MB", "run s", "run peak MB", "rest s", "load"]
    table = [
        [
            *(row["chunks"], row["files"], row["goldens"], row["delivered"]),
            *(row["ingest_s"], row["ingest_us_per_chunk"], row["ingest_peak_rss_mb"]),
            *(row["run_s"], row["run_peak_rss_mb"], row["rest_s"], round(row["load"], 1)),
        ]
        for row in rows
    ]
    stages = markdown_table(
        ["chunks", "goldens", *(f"{s} s" for s in STAGES)],
        [[r["chunks"], r["goldens"], *(r["stage_s"][s] for s in STAGES)] for r in rows],
    )

    def per_unit(key: str, label: str) -> str:
        """The table of each stage's ``key`` seconds a chunk (µs) and a golden (ms)."""
        return markdown_table(
            ["chunks", "goldens", *(f"{s} {label}µs/chunk, ms/golden" for s in STAGES)],
            [
                [
                    r["chunks"],
                    r["goldens"],
                    *(
                        f"{1e6 * r[key][s] / r['chunks']:.1f}, {1e3 * r[key][s] / r['goldens']:.2f}"
                        for s in STAGES
                    ),
                ]
                for r in rows
            ],
        )

    per, cpu = per_unit("stage_s", ""), per_unit("stage_cpu_s", "CPU ")
    return "\n\n".join([markdown_table(columns, table), stages, per, cpu])


# ---- dedup alone ------------------------------------------------------------------------------


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


def measure_dedup(n: int) -> dict[str, Any]:
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
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--ingest-child":
        return ingest_child(argv[1:])
    if argv and argv[0] == "--run-child":
        return run_child(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", choices=("run", "dedup"), default="run")
    parser.add_argument("--sizes", default="1000,2000,5000", help="dedup: goldens, comma-separated")
    parser.add_argument("--chunks", default="20000,50000,100000,200000", help="run: store sizes")
    parser.add_argument("--goldens", default="1000", help="run: goldens per size (a,b: each)")
    parser.add_argument("--chunks-per-file", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.005, help="fake server, s a request")
    parser.add_argument("--work", type=Path, help="keep corpora and stores here (reused)")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument(
        "--tracemalloc",
        type=Path,
        help="run: trace Python's allocations (slow); the largest snapshot is written here, the "
        "last (after the run) beside it with the suffix .end; compare two runs' with "
        "tracemalloc.Snapshot.load(path).compare_to(other, 'lineno')",
    )
    args = parser.parse_args(argv)
    if args.mode == "dedup":
        rows = [measure_dedup(int(n)) for n in args.sizes.split(",")]
        write_json(args.out, {**header(sys.argv, PACKAGES), "rows": rows})
        columns = ["goldens", "kept", "dedup_s", "ms_per_golden", "peak_mb", "dimension"]
        print(markdown_table(columns, [[row[c] for c in columns] for row in rows]))
        return 0
    results: list[dict[str, Any]] = []
    with work_dir(args.work, "scale") as work:
        for size in (int(n) for n in args.chunks.split(",")):
            for goldens in (int(n) for n in args.goldens.split(",")):
                results.append(measure_run(size, goldens, work, args))
                print(json.dumps(results[-1]), file=sys.stderr, flush=True)
                write_json(args.out, {**header(sys.argv, PACKAGES), "rows": results})
    print(run_tables(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
