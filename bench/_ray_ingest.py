"""``bench/ingest.py --ray``: synth's ingest on a local Ray cluster of 1 and 2 workers against the
single-process path, Ray's cost per file, and a projection for a larger cluster.

Each measurement runs in a fresh interpreter. ``single``: ``ingest_documents(folder,
embedder="hash")``; ``ray N``: the same call with ``ray=True`` inside a Ray started with
``num_cpus=N`` (its start-up timed apart); ``tiny``: both paths over many one-line text files,
whose difference per file is what Ray adds to each file (a task, its arguments and results through
the object store); ``rates``: what one core does alone, per stage: reading and chunking (pages
per second), the local MiniLM embedder and the hash embedder (chunks per second, torch on one
thread), and Chroma's insert of those chunks through synth's one writer (chunks per second).

The projection multiplies the per-core rates by the cores of the cluster and compares them with
the bounds that do not grow with it: the one writer's Chroma insert, and this process's walk and
skip-unchanged check, which hashes every file (measured as part of ``single``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from _corpus import CorpusShape, build_corpus
from _util import markdown_table, run_child

#: one-line files for the per-file cost
TINY_FILES = 300


def child_single(
    folder: Path, store: Path, tiny: tuple[Path, Path] | None = None
) -> dict[str, Any]:
    """The single-process ingest of ``folder`` (and its rerun); with ``tiny``, that folder's too,
    under ``"tiny"``, once the first ingest has warmed this process (as ``child_ray`` does)."""
    from synth import load_documents

    pages = sum(f.pages or 0 for f in load_documents(folder).files)
    result = {"pages": pages, **_ingest_twice(folder, store, ray=False)}
    if tiny is not None:
        result["tiny"] = _ingest_twice(*tiny, ray=False)
    return result


def child_ray(
    folder: Path, store: Path, workers: int, tiny: tuple[Path, Path] | None = None
) -> dict[str, Any]:
    """The Ray ingest of ``folder`` (and its rerun) on a fresh local Ray of ``workers`` CPUs; with
    ``tiny`` (a folder and its store), that folder's too, under ``"tiny"``, on the same Ray once
    the first ingest has warmed it: its workers have imported synth, so what differs from the
    warmed single process is the cost of the tasks themselves, not of starting them."""
    import ray

    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    start = time.perf_counter()
    ray.init(address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False)
    ray.get(ray.remote(lambda: 0).remote())  # a worker is up
    startup = time.perf_counter() - start
    try:
        result = {"workers": workers, "startup_seconds": startup}
        result.update(_ingest_twice(folder, store, ray=True))
        if tiny is not None:
            result["tiny"] = {"workers": workers, **_ingest_twice(*tiny, ray=True)}
    finally:
        ray.shutdown()
    return result


def _ingest_twice(folder: Path, store: Path, *, ray: bool) -> dict[str, Any]:
    """The timed ingest of ``folder`` into ``store`` (on the Ray already started, with ``ray``),
    then its rerun."""
    from synth import ingest_documents

    start = time.perf_counter()
    report = ingest_documents(folder, embedder="hash", store_path=store, ray=ray)
    seconds = time.perf_counter() - start
    start = time.perf_counter()
    again = ingest_documents(folder, embedder="hash", store_path=store, ray=ray)
    return {
        "seconds": seconds,
        "files": len(report.files),
        "chunks": report.chunks,
        "embedded": report.embedded,
        "rerun_seconds": time.perf_counter() - start,
        "rerun_embedded": again.embedded,
        "rows": [(f.path, f.status, f.chunks, f.document_id) for f in report.files],
    }


def child_rates(folder: Path, store: Path) -> dict[str, Any]:
    import torch

    from synth import ChunkingConfig, ChunkStore, HashEmbedder, iter_chunks, load_documents
    from synth.store.local_embedder import LocalEmbedder, local_embedder_installed

    torch.set_num_threads(1)
    start = time.perf_counter()
    loaded = load_documents(folder)
    chunks = list(iter_chunks(loaded.documents, ChunkingConfig()))
    read_seconds = time.perf_counter() - start
    pages = sum(f.pages or 0 for f in loaded.files)
    texts = [chunk.text for chunk in chunks]
    rates: dict[str, Any] = {"pages": pages, "chunks": len(chunks), "read_seconds": read_seconds}
    start = time.perf_counter()
    vectors = HashEmbedder().embed_array(texts)
    rates["hash_seconds"] = time.perf_counter() - start
    if local_embedder_installed():
        local = LocalEmbedder(device="cpu")
        local.embed_array(texts[:8])  # the model loads
        sample = texts[: min(len(texts), 256)]
        start = time.perf_counter()
        local.embed_array(sample)
        rates["local_chunks_per_second"] = len(sample) / (time.perf_counter() - start)
    with ChunkStore(HashEmbedder(), path=store) as opened:
        prepared = opened.prepare(chunks, assume_new=True)
        assert len(prepared.vectors) == len(vectors)
        start = time.perf_counter()
        opened.commit(prepared)
        rates["chroma_seconds"] = time.perf_counter() - start
    return rates


def child_main(
    mode: str, folder: Path, store: Path, workers: int, tiny: tuple[Path, Path] | None = None
) -> dict[str, Any]:
    if mode == "single":
        return child_single(folder, store, tiny)
    if mode == "ray":
        return child_ray(folder, store, workers, tiny)
    return child_rates(folder, store)


def write_tiny(folder: Path, count: int = TINY_FILES) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        (folder / f"t{index:04d}.txt").write_text(f"Tiny file {index} about lamp {index}.\n")


def measure(
    script: Path, work: Path, pages: int, log: Any, tiny_files: int = TINY_FILES
) -> dict[str, Any]:
    """Every Ray measurement over a corpus of ``pages`` PDF pages (and as many paragraphs), the
    per-file cost over ``tiny_files`` one-line files."""
    folder, tiny = work / "ray-corpus", work / "ray-tiny"
    build_corpus(work / "pool", folder, CorpusShape(pdf_pages=pages, docx_paragraphs=pages))
    write_tiny(tiny, tiny_files)

    def child(mode: str, source: Path, name: str, workers: int = 0, *more: str) -> dict[str, Any]:
        log(f"ray bench: {mode} {workers or ''} over {source.name} {' '.join(more)}")
        args = ["--child-ray", mode, str(source), str(work / name), str(workers), *more]
        return run_child(script, args)

    # the single process and the 1-worker Ray ingest the tiny files too, each after the corpus
    # (warm: see child_ray), which spares a Ray start and an interpreter
    single = child("single", folder, "s-single", 0, str(tiny), str(work / "t-single"))
    tiny_single = single.pop("tiny")
    runs = [child("ray", folder, "s-ray1", 1, str(tiny), str(work / "t-ray1"))]
    tiny_ray = runs[0].pop("tiny")
    runs.append(child("ray", folder, "s-ray2", 2))
    for run in runs:
        if run["rows"] != single["rows"] or run["rerun_embedded"] != 0:
            raise RuntimeError("the Ray ingest did not give the single-process rows")
    rates = child("rates", folder, "s-rates")
    return {"single": single, "ray": runs, "tiny": [tiny_single, tiny_ray], "rates": rates}


def tables(result: dict[str, Any], nodes: int, cores: int) -> dict[str, str]:
    """The throughput table, the per-file cost and the cluster projection."""
    single, runs = result["single"], result["ray"]
    pages = single["pages"]
    rows = [["single process", "-", pages, single["seconds"], pages / single["seconds"], "-"]]
    for run in runs:
        rows.append(
            [
                f"Ray, {run['workers']} worker(s)",
                run["startup_seconds"],
                pages,
                run["seconds"],
                pages / run["seconds"],
                single["seconds"] / run["seconds"],
            ]
        )
    throughput = markdown_table(
        ["path", "Ray start s", "PDF pages", "ingest s", "pages/s", "vs single"], rows
    )
    tiny_single, tiny_ray = result["tiny"]
    per_file = (tiny_ray["seconds"] - tiny_single["seconds"]) / tiny_single["files"]
    overhead = markdown_table(
        ["files", "single s", "Ray (1 worker) s", "Ray's cost per file, ms"],
        [[tiny_single["files"], tiny_single["seconds"], tiny_ray["seconds"], per_file * 1000]],
    )
    return {
        "Ray throughput": throughput,
        "Ray overhead": overhead,
        "Cluster projection": projection(result, nodes, cores, per_file),
    }


def projection(result: dict[str, Any], nodes: int, cores: int, per_file: float) -> str:
    """Pages per second of ``nodes`` x ``cores`` from the per-core rates, against the bounds."""
    rates, single = result["rates"], result["single"]
    pages, chunks = rates["pages"], rates["chunks"]
    chunks_per_page = chunks / pages
    total = nodes * cores
    read_rate = pages / rates["read_seconds"]  # one core reading and chunking
    files_per_page = single["files"] / single["pages"]
    # the driver's share of a file: its walk, stat and hash, plus the task's round trip
    rows = [
        ["read + chunk (per core, x cores)", read_rate, read_rate * total],
        ["task round trip (driver, one process)", 1 / (per_file * files_per_page), None],
        ["Chroma insert (one writer)", chunks / rates["chroma_seconds"] / chunks_per_page, None],
    ]
    local = rates.get("local_chunks_per_second")
    if local:
        rows.append(["MiniLM on CPU (per core, x cores)", local / chunks_per_page, None])
        rows[-1][2] = rows[-1][1] * total
    for row in rows:
        if row[2] is None:
            row[2] = row[1]
    bound = min(rows, key=lambda row: row[2])
    rows.append([f"projected, {nodes} nodes x {cores} cores: bound by {bound[0]}", "", bound[2]])
    return markdown_table(["stage", "pages/s here", f"pages/s at {total} cores"], rows)


__all__ = ["child_main", "measure", "tables"]
