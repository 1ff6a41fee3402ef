"""Ingest bench: how fast synth loads, chunks, embeds and stores a large corpus, and in how much memory.

For each corpus size it builds (in a scratch folder) PDFs and .docx files, then measures, each in a
fresh interpreter so memory readings do not mix:

* ``bare``: pypdf ``extract_text()`` on every page and python-docx paragraph text: the floor for
  reading the same files;
* ``chroma``: chromadb's own ``collection.add`` of the very records synth stores (ids, hash vectors,
  texts, metadata), in batches of the client's max batch size;
* ``synth``: ``synth.ingest_documents(folder, embedder="hash")`` into a new store, then the same call
  again over the unchanged corpus (which must embed nothing, and read no file);
* ``stages``: the same work split into load, chunk, embed and store (and the one-off start-up:
  loading the tokenizer, opening the store), to see where the time goes;
* ``trace``: the synth run again under tracemalloc for the peak Python heap.

With ``--text-mb N`` it also ingests one generated N MB text file (``text``) and reports its peak
resident set above the reading taken after imports (``VmHWM`` from /proc/self/status), against the
aim of under 4 times the file's size; ``--sizes none`` runs that row alone.

Memory: ``ru_maxrss`` (peak resident set, whole process, including chromadb's native code) minus
the reading taken after imports; and the tracemalloc peak (Python allocations only, numpy included).

    python bench/ingest.py --sizes 1000,2000,4000 --out bench-results/ingest.json
    python bench/ingest.py --sizes none --text-mb 50

With ``--ray`` it measures instead the ingest on a local Ray cluster of 1 and 2 workers against
the single-process path over the first size, Ray's cost per file, and projects pages per second
for ``--nodes`` x ``--cores-per-node`` (see ``_ray_ingest``; needs ``pip install 'synth[ray]'``):

    python bench/ingest.py --ray --sizes 400 --out bench-results/ingest-ray.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _ray_ingest  # noqa: E402
from _corpus import CorpusShape, build_corpus  # noqa: E402
from _util import header, markdown_table, max_rss_mib, run_child, work_dir, write_json  # noqa: E402

PARTS = ("pdf", "docx", "all")
AIM_RATIO = 1.3
TEXT_AIM = 4.0  # a text file's peak resident set above the baseline, in times its size
PACKAGES = ("synth", "chromadb", "pypdf", "python-docx", "fpdf2", "tiktoken", "numpy")


# ---- child measurements (each runs in its own interpreter) ----------------------------------------


def _child_bare(folder: Path) -> dict[str, Any]:
    import docx
    import pypdf

    base = max_rss_mib()
    pages = paragraphs = chars = 0
    cpu = time.process_time()
    start = time.perf_counter()
    for path in sorted(folder.rglob("*.pdf")):
        reader = pypdf.PdfReader(path)
        for page in reader.pages:
            chars += len(page.extract_text() or "")
            pages += 1
    for path in sorted(folder.rglob("*.docx")):
        for paragraph in docx.Document(str(path)).paragraphs:
            chars += len(paragraph.text)
            paragraphs += 1
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "cpu_seconds": time.process_time() - cpu,
        "pdf_pages": pages,
        "docx_paragraphs": paragraphs,
        "chars": chars,
        "rss_base_mib": base,
        "rss_peak_mib": max_rss_mib(),
    }


def _chunks_and_vectors(folder: Path) -> tuple[list[Any], Any]:
    from synth import ChunkingConfig, HashEmbedder, chunk_documents, iter_load

    documents = [loaded.document for loaded in iter_load(folder) if loaded.document is not None]
    chunks = chunk_documents(documents, ChunkingConfig())
    vectors = HashEmbedder().embed_array([chunk.text for chunk in chunks])
    return chunks, vectors


def _metadata(chunk: Any) -> dict[str, Any]:
    """The metadata synth stores with a chunk, built here so Chroma gets the same records."""
    meta: dict[str, Any] = {
        "source": chunk.source,
        "document_id": chunk.document_id,
        "index": chunk.index,
        "token_count": chunk.token_count,
        "chunk_metadata": json.dumps(chunk.metadata, sort_keys=True),
    }
    if chunk.page_start is not None:
        meta["page_start"], meta["page_end"] = chunk.page_start, chunk.page_end
    return meta


def _child_chroma(folder: Path, store: Path) -> dict[str, Any]:
    import chromadb
    from chromadb.config import Settings

    chunks, vectors = _chunks_and_vectors(folder)
    client = chromadb.PersistentClient(str(store), settings=Settings(anonymized_telemetry=False))
    collection = client.get_or_create_collection(
        "bench", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
    )
    step = client.get_max_batch_size()
    cpu = time.process_time()
    start = time.perf_counter()
    for at in range(0, len(chunks), step):
        batch = chunks[at : at + step]
        collection.add(
            ids=[chunk.id for chunk in batch],
            embeddings=vectors[at : at + step],
            documents=[chunk.text for chunk in batch],
            metadatas=[_metadata(chunk) for chunk in batch],
        )
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    stored = collection.count()
    client.close()
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "chunks": len(chunks),
        "stored": stored,
        "batch": step,
    }


def _child_synth(folder: Path, store: Path, trace: bool) -> dict[str, Any]:
    import tracemalloc

    import chromadb  # noqa: F401  (imported before the baseline reading, as synth would)
    import chromadb.api.rust  # noqa: F401  (the client's bindings: chroma add's client has them)

    from synth import ingest_documents

    base = max_rss_mib()
    if trace:
        tracemalloc.start()
    cpu = time.process_time()
    start = time.perf_counter()
    first = ingest_documents(folder, embedder="hash", store_path=store)
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    traced: dict[str, Any] = {}
    if trace:
        traced = _traced_heap()
        tracemalloc.stop()
    peak = max_rss_mib()
    start = time.perf_counter()
    second = ingest_documents(folder, embedder="hash", store_path=store)
    again = time.perf_counter() - start
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "files": len(first.files),
        "files_ok": first.counts()["ok"],
        "chunks": first.chunks,
        "tokens": first.tokens,
        "embedded": first.embedded,
        "reused": first.reused,
        "rss_base_mib": base,
        "rss_peak_mib": peak,
        "tracemalloc_peak_mib": traced.get("peak_mib"),
        "tracemalloc": traced or None,
        "second_run": {
            "seconds": again,
            "chunks": second.chunks,
            "embedded": second.embedded,
            "reused": second.reused,
            "files_unchanged": second.unchanged,
            # files a reader opened: every file met but those skipped (unsupported, hidden) and
            # those found unchanged (an unreadable file is tried again)
            "files_read": sum(1 for f in second.files if f.status != "skipped" and not f.unchanged),
        },
    }


def _traced_heap() -> dict[str, Any]:
    """The traced heap's peak and what is left at the end, with and without the hash cache.

    The hash embedder memoises each word's feature hashes in a bounded ``functools.lru_cache``; it
    is the one part of the heap that grows with the corpus (until full), so it is measured apart.
    """
    import gc
    import tracemalloc

    from synth.store import hash_embedder

    current, peak = tracemalloc.get_traced_memory()
    cache = getattr(hash_embedder, "_word_hashes", None)
    info = cache.cache_info() if cache is not None else None
    if cache is not None:
        cache.cache_clear()
    gc.collect()
    return {
        "peak_mib": peak / 2**20,
        "end_mib": current / 2**20,
        "end_without_hash_cache_mib": tracemalloc.get_traced_memory()[0] / 2**20,
        "hash_cache_entries": info.currsize if info else None,
        "hash_cache_max_entries": info.maxsize if info else None,
    }


def _child_stages(folder: Path, store: Path) -> dict[str, Any]:
    import chromadb  # noqa: F401  (imported before any timing, as in the synth run)
    import chromadb.api.rust  # noqa: F401
    import numpy as np

    from synth import (
        ChunkingConfig,
        ChunkStore,
        Document,
        Embedder,
        HashEmbedder,
        chunk_documents,
        iter_load,
    )

    class Precomputed(Embedder):
        """Hands back vectors computed beforehand, so ``store.add`` times storing alone."""

        name = "precomputed:384"

        def __init__(self, table: dict[str, np.ndarray]) -> None:
            super().__init__(batch_size=256)
            self.table = table

        @property
        def dimension(self) -> int:
            return 384

        def _embed_batch(self, texts: list[str]) -> np.ndarray:
            return np.stack([self.table[text] for text in texts])

    times = {}
    start = time.perf_counter()  # the tokenizer loads once per process, on the first chunking
    chunk_documents([Document(id="warm-up", path="warm-up", text="warm up")], ChunkingConfig())
    times["tokenizer"] = time.perf_counter() - start
    start = time.perf_counter()
    documents = [loaded.document for loaded in iter_load(folder) if loaded.document is not None]
    times["load"] = time.perf_counter() - start
    start = time.perf_counter()
    chunks = chunk_documents(documents, ChunkingConfig())
    times["chunk"] = time.perf_counter() - start
    start = time.perf_counter()
    texts = [chunk.text for chunk in chunks]
    vectors = HashEmbedder().embed_array(texts)
    times["embed"] = time.perf_counter() - start
    table = dict(zip(texts, vectors, strict=True))
    start = time.perf_counter()
    opened = ChunkStore(Precomputed(table), path=store)
    times["open_store"] = time.perf_counter() - start
    with opened as chunk_store:
        start = time.perf_counter()
        for at in range(0, len(chunks), 256):  # the flush size ingest_documents uses
            chunk_store.add(chunks[at : at + 256])
        times["store"] = time.perf_counter() - start
    return {"seconds": times, "documents": len(documents), "chunks": len(chunks)}


def _vm_hwm_mib() -> float:
    """This process's peak resident set so far (VmHWM), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return max_rss_mib()


def _child_text(file: Path, store: Path) -> dict[str, Any]:
    import chromadb  # noqa: F401  (its import and the tokenizer are the baseline, not the file)

    from synth import ingest_documents
    from synth._tokens import get_encoding

    get_encoding("cl100k_base")
    base = _vm_hwm_mib()
    start = time.perf_counter()
    report = ingest_documents(file, embedder="hash", store_path=store)
    return {
        "seconds": time.perf_counter() - start,
        "chunks": report.chunks,
        "file_mib": file.stat().st_size / 2**20,
        "rss_base_mib": base,
        "rss_peak_mib": _vm_hwm_mib(),
    }


def write_text_file(path: Path, megabytes: float, seed: int = 7) -> None:
    """A text file of about ``megabytes`` MiB: paragraphs of sentences from a small vocabulary."""
    import random

    rng = random.Random(seed)
    words = (
        "solar panel inverter battery grid outage warranty claim alert yield storage charge "
        "the of and to a in is for on with"
    ).split()
    target, size = int(megabytes * 2**20), 0
    with path.open("w", encoding="utf-8", newline="") as out:
        while size < target:
            sentences = [
                " ".join(rng.choice(words) for _ in range(rng.randint(6, 25))).capitalize() + "."
                for _ in range(rng.randint(2, 8))
            ]
            paragraph = " ".join(sentences) + "\n\n"
            out.write(paragraph)
            size += len(paragraph)


def measure_text(work: Path, megabytes: float) -> dict[str, Any]:
    """One ingest of a generated text file, in a fresh interpreter: peak RSS above baseline."""
    file = work / f"text-{megabytes:g}mb.txt"
    write_text_file(file, megabytes)
    store = work / "text-store"
    shutil.rmtree(store, ignore_errors=True)
    result = run_child(Path(__file__), ["--child", "text", str(file), str(store)])
    growth = result["rss_peak_mib"] - result["rss_base_mib"]
    return {**result, "growth_mib": growth, "times_file": growth / result["file_mib"]}


def child_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["bare", "chroma", "synth", "trace", "stages", "text"])
    parser.add_argument("folder", type=Path)
    parser.add_argument("store", type=Path)
    args = parser.parse_args(argv)
    if args.mode == "bare":
        result = _child_bare(args.folder)
    elif args.mode == "chroma":
        result = _child_chroma(args.folder, args.store)
    elif args.mode == "stages":
        result = _child_stages(args.folder, args.store)
    elif args.mode == "text":
        result = _child_text(args.folder, args.store)
    else:
        result = _child_synth(args.folder, args.store, trace=args.mode == "trace")
    print(json.dumps(result))
    return 0


# ---- the bench --------------------------------------------------------------------------------------


def _best_of(script: Path, mode: str, folder: Path, store: Path, repeat: int) -> dict[str, Any]:
    """Run one measurement ``repeat`` times in fresh interpreters; keep the fastest run.

    The fastest run is the one least disturbed by other work on the machine; every run's time is
    kept in ``runs_seconds``, and memory readings are the largest seen.
    """
    runs = []
    for _ in range(repeat):
        shutil.rmtree(store, ignore_errors=True)
        runs.append(run_child(script, ["--child", mode, str(folder), str(store)]))
        shutil.rmtree(store, ignore_errors=True)
    best = dict(min(runs, key=_total_seconds))
    best["runs_seconds"] = [_total_seconds(run) for run in runs]
    for key in ("rss_peak_mib", "tracemalloc_peak_mib"):
        values = [run[key] for run in runs if run.get(key) is not None]
        if values:
            best[key] = max(values)
    if mode == "stages":  # each stage's best time, wherever it happened
        best["seconds"] = {
            stage: min(run["seconds"][stage] for run in runs) for stage in runs[0]["seconds"]
        }
    return best


def _total_seconds(run: dict[str, Any]) -> float:
    seconds = run["seconds"]
    return sum(seconds.values()) if isinstance(seconds, dict) else float(seconds)


def measure_size(
    work: Path, pool: Path, shape: CorpusShape, parts: list[str], repeat: int, log: Any
) -> dict[str, Any]:
    """Build the corpus of ``shape`` and run every measurement on it."""
    script = Path(__file__).resolve()
    corpus = work / f"corpus-{shape.pdf_pages}-{shape.docx_paragraphs}"
    started = time.perf_counter()
    build_corpus(pool, corpus, shape)
    log(f"corpus {corpus.name}: built in {time.perf_counter() - started:.1f} s")
    stores = work / "stores"
    results: dict[str, Any] = {}
    for part in parts:
        folder = corpus if part == "all" else corpus / part
        row: dict[str, Any] = {}
        for mode in ("bare", "chroma", "synth"):
            row[mode] = _best_of(script, mode, folder, stores / f"{part}-{mode}", repeat)
        bare, chroma, synth = row["bare"], row["chroma"], row["synth"]
        row["items"] = bare["pdf_pages"] + bare["docx_paragraphs"]
        row["floor_seconds"] = bare["seconds"] + chroma["seconds"]
        row["ratio"] = synth["seconds"] / row["floor_seconds"]
        row["cpu_ratio"] = synth["cpu_seconds"] / (bare["cpu_seconds"] + chroma["cpu_seconds"])
        results[part] = row
        log(
            f"  {part}: synth {synth['seconds']:.2f} s, bare {bare['seconds']:.2f} s, "
            f"chroma {chroma['seconds']:.2f} s, ratio {row['ratio']:.2f} "
            f"(cpu {row['cpu_ratio']:.2f})"
        )
    stages = _best_of(script, "stages", corpus, stores / "stages", repeat)
    trace = _best_of(script, "trace", corpus, stores / "trace", 1)
    log(f"  stages: {', '.join(f'{k} {v:.2f} s' for k, v in stages['seconds'].items())}")
    return {
        "pdf_pages": shape.pdf_pages,
        "docx_paragraphs": shape.docx_paragraphs,
        "pdf_files": shape.pdf_files,
        "docx_files": shape.docx_files,
        "parts": results,
        "stages": stages,
        "trace": trace,
    }


def tables(results: list[dict[str, Any]]) -> dict[str, str]:
    """The three markdown tables: throughput, stages, memory."""
    speed_rows = []
    for result in results:
        for part, row in result["parts"].items():
            bare, chroma, synth = row["bare"], row["chroma"], row["synth"]
            speed_rows.append(
                [
                    f"{result['pdf_pages']}p + {result['docx_paragraphs']}¶",
                    part,
                    row["items"],
                    synth["chunks"],
                    bare["seconds"],
                    chroma["seconds"],
                    synth["seconds"],
                    row["items"] / bare["seconds"],
                    row["items"] / synth["seconds"],
                    row["ratio"],
                    row["cpu_ratio"],
                    synth["second_run"]["seconds"],
                    synth["second_run"]["files_read"],
                    synth["second_run"]["embedded"],
                ]
            )
    speed = markdown_table(
        [
            "corpus",
            "files",
            "pages/¶",
            "chunks",
            "bare extract s",
            "chroma add s",
            "synth ingest s",
            "bare pages/s",
            "synth pages/s",
            "synth / (bare+chroma)",
            "same, CPU time",
            "2nd run s",
            "2nd run files read",
            "2nd run embedded",
        ],
        speed_rows,
    )
    stage_rows = []
    for result in results:
        seconds = result["stages"]["seconds"]
        stage_rows.append(
            [
                f"{result['pdf_pages']}p + {result['docx_paragraphs']}¶",
                seconds["tokenizer"],
                seconds["open_store"],
                seconds["load"],
                seconds["chunk"],
                seconds["embed"],
                seconds["store"],
                sum(seconds.values()),
                result["parts"]["all"]["synth"]["seconds"],
                result["parts"]["all"]["floor_seconds"],
            ]
        )
    stages = markdown_table(
        [
            "corpus",
            "load tokenizer s",
            "open store s",
            "load s",
            "chunk s",
            "embed (hash) s",
            "store s",
            "sum s",
            "synth ingest s",
            "bare+chroma s",
        ],
        stage_rows,
    )
    memory_rows = []
    for result in results:
        synth = result["parts"]["all"]["synth"]
        bare = result["parts"]["all"]["bare"]
        memory_rows.append(
            [
                f"{result['pdf_pages']}p + {result['docx_paragraphs']}¶",
                synth["chunks"],
                synth["rss_base_mib"],
                synth["rss_peak_mib"],
                synth["rss_peak_mib"] - synth["rss_base_mib"],
                result["trace"]["tracemalloc_peak_mib"],
                _traced(result, "end_mib"),
                _traced(result, "end_without_hash_cache_mib"),
                _traced(result, "hash_cache_entries"),
                bare["rss_peak_mib"] - bare["rss_base_mib"],
            ]
        )
    memory = markdown_table(
        [
            "corpus",
            "chunks",
            "synth rss after imports MiB",
            "synth rss peak MiB",
            "synth rss growth MiB",
            "synth tracemalloc peak MiB",
            "heap at end MiB",
            "same without hash cache MiB",
            "hash cache entries",
            "bare extract rss growth MiB",
        ],
        memory_rows,
    )
    return {"throughput": speed, "stages": stages, "memory": memory}


def _traced(result: dict[str, Any], key: str) -> Any:
    return (result["trace"].get("tracemalloc") or {}).get(key)


def parse_sizes(text: str) -> list[int]:
    if text.strip() == "none":
        return []
    sizes = [int(part) for part in text.split(",") if part.strip()]
    if not sizes or any(size < 1 for size in sizes):
        raise argparse.ArgumentTypeError("sizes are positive integers, e.g. 1000,2000,4000")
    return sizes


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        return child_main(argv[1:])
    if argv[:1] == ["--child-ray"]:
        mode, folder, store, workers = argv[1:5]
        tiny = (Path(argv[5]), Path(argv[6])) if len(argv) > 6 else None
        result = _ray_ingest.child_main(mode, Path(folder), Path(store), int(workers), tiny)
        print(json.dumps(result))
        return 0
    parser = argparse.ArgumentParser(
        description="Measure synth's ingest (load, chunk, hash-embed, store) against bare "
        "pypdf/python-docx extraction plus Chroma's own insert, for a few corpus sizes."
    )
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        default=[1000, 2000, 4000],
        help="PDF pages per corpus, comma-separated (default 1000,2000,4000)",
    )
    parser.add_argument(
        "--docx-ratio",
        type=float,
        default=1.0,
        help=".docx paragraphs per PDF page in each corpus (default 1.0)",
    )
    parser.add_argument(
        "--parts",
        default="pdf,docx,all",
        help="which folders to time separately: pdf, docx, all (default all three; 'all' "
        "is always included)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs of each timing, the fastest kept (default 3)",
    )
    parser.add_argument(
        "--text-mb",
        type=float,
        default=0.0,
        help="also ingest one generated text file of this many MiB and report its peak memory",
    )
    parser.add_argument("--out", type=Path, help="write the results here as JSON")
    parser.add_argument(
        "--workdir", type=Path, help="scratch folder (default: a new temporary folder)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument(
        "--ray", action="store_true", help="measure the ingest on Ray instead (see above)"
    )
    parser.add_argument("--nodes", type=int, default=16, help="nodes projected with --ray (16)")
    parser.add_argument(
        "--tiny-files",
        type=int,
        default=_ray_ingest.TINY_FILES,
        help=f"one-line files for Ray's cost per file with --ray ({_ray_ingest.TINY_FILES})",
    )
    parser.add_argument(
        "--cores-per-node", type=int, default=8, help="cores per node projected with --ray (8)"
    )
    args = parser.parse_args(argv)
    if args.ray:
        return _main_ray(args, argv)
    parts = [part.strip() for part in args.parts.split(",") if part.strip()]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        parser.error(f"unknown --parts {', '.join(unknown)}; choose from {', '.join(PARTS)}")
    parts = [part for part in PARTS if part in parts or part == "all"]
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    results = []
    text_row = None
    with work_dir(args.workdir, "ingest", keep=args.keep) as work:
        if args.text_mb > 0:
            log(f"text file: {args.text_mb:g} MiB")
            text_row = measure_text(work, args.text_mb)
        for size in args.sizes:
            shape = CorpusShape(
                pdf_pages=size, docx_paragraphs=max(1, round(size * args.docx_ratio))
            )
            results.append(measure_size(work, work / "pool", shape, parts, args.repeat, log))
    if not results:
        return _report_text_only(args, argv, text_row)
    rendered = tables(results)
    if text_row is not None:
        rendered["Text file"] = text_table(text_row)
    all_rows = [result["parts"]["all"] for result in results]
    summary = {
        "aim_ratio": AIM_RATIO,
        "worst_ratio": max(row["ratio"] for row in all_rows),
        "worst_cpu_ratio": max(row["cpu_ratio"] for row in all_rows),
        "within_aim": all(row["ratio"] <= AIM_RATIO for row in all_rows),
        "second_run_embedded": sum(
            part["synth"]["second_run"]["embedded"]
            for result in results
            for part in result["parts"].values()
        ),
        "second_run_files_read": sum(
            part["synth"]["second_run"]["files_read"]
            for result in results
            for part in result["parts"].values()
        ),
        "rss_growth_mib": [
            row["synth"]["rss_peak_mib"] - row["synth"]["rss_base_mib"] for row in all_rows
        ],
        "tracemalloc_peak_mib": [result["trace"]["tracemalloc_peak_mib"] for result in results],
    }
    payload = {
        **header(["bench/ingest.py", *argv], PACKAGES),
        "timing": "wall clock (perf_counter) and CPU time (process_time, all threads) of the "
        "fastest of --repeat runs, each in a fresh interpreter",
        "memory_measure": "ru_maxrss (peak RSS, whole process) minus the reading after imports; "
        "tracemalloc peak (Python heap) in a separate run",
        "sizes": results,
        "text_file": text_row,
        "summary": summary,
        "tables": rendered,
    }
    write_json(args.out, payload)  # first: printing to a closed pipe must not lose it
    for title, table in rendered.items():
        print(f"\n### {title}\n\n{table}")
    print(
        f"\nworst synth / (bare + chroma) ratio: {summary['worst_ratio']:.2f} wall, "
        f"{summary['worst_cpu_ratio']:.2f} CPU (aim <= {AIM_RATIO}); second runs embedded "
        f"{summary['second_run_embedded']} chunks and read {summary['second_run_files_read']} files"
    )
    return 0


def _main_ray(args: argparse.Namespace, argv: list[str]) -> int:
    """``--ray``: the Ray measurements over the first of ``--sizes``, their tables and JSON."""
    if not args.sizes:
        raise SystemExit("--ray needs a size: --sizes N (PDF pages)")

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    with work_dir(args.workdir, "ingest-ray", keep=args.keep) as work:
        result = _ray_ingest.measure(Path(__file__), work, args.sizes[0], log, args.tiny_files)
    rendered = _ray_ingest.tables(result, args.nodes, args.cores_per_node)
    for run in [result["single"], *result["ray"], *result["tiny"]]:
        run.pop("rows", None)  # checked equal in measure(); not worth keeping
    payload = {
        **header(["bench/ingest.py", *argv], (*PACKAGES, "ray")),
        "timing": "wall clock (perf_counter) of one run each, in a fresh interpreter",
        "ray": result,
        "tables": rendered,
    }
    write_json(args.out, payload)
    for title, table in rendered.items():
        print(f"\n### {title}\n\n{table}")
    return 0


def text_table(row: dict[str, Any]) -> str:
    """The text-file row: its size, peak RSS above the baseline, and how many times its size."""
    return markdown_table(
        ["file MiB", "chunks", "seconds", "peak RSS above baseline MiB", "times the file", "aim"],
        [
            [
                round(row["file_mib"], 1),
                row["chunks"],
                round(row["seconds"], 1),
                round(row["growth_mib"], 1),
                round(row["times_file"], 2),
                f"< {TEXT_AIM:g}",
            ]
        ],
    )


def _report_text_only(args: argparse.Namespace, argv: list[str], row: dict[str, Any] | None) -> int:
    if row is None:
        print("nothing to measure: give --sizes or --text-mb", file=sys.stderr)
        return 2
    payload = {**header(["bench/ingest.py", *argv], PACKAGES), "text_file": row}
    write_json(args.out, payload)
    print(f"\n### Text file\n\n{text_table(row)}")
    within = row["times_file"] < TEXT_AIM
    print(f"\npeak above baseline: {row['times_file']:.2f} times the file (aim < {TEXT_AIM:g})")
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
