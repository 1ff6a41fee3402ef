"""Ingest on a real Ray cluster: a head started here on 127.0.0.1 (2 CPUs), a real `chroma run`.

The Ray path must give what the single-process path gives: the same per-file rows, chunk ids,
texts, metadata (fingerprints included) and vectors; a rerun over the unchanged corpus embeds
nothing. The head is stopped after the session by its process group, which this fixture started.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ingest_files import make_docx, make_pdf
from local_servers import free_port, stop

from synth import ChunkStore, ConfigError, HashEmbedder, LocalEmbedder, ingest_documents
from synth.cli import main
from synth.contexts.config import ContextConstructionConfig
from synth.run.ingest import ingest_for_run
from synth.store import ray_ingest
from synth.store.openai_embedder import OpenAIEmbedder

pytestmark = [pytest.mark.slow, pytest.mark.server]

REPO = Path(__file__).resolve().parents[1]
RAY_START_TIMEOUT = 120.0
CHUNKING = {"chunk_size": 48}
HOUR_AGO = time.time() - 3600


@pytest.fixture(scope="session")
def ray_head() -> Iterator[str]:
    """A Ray head (`ray start --head --block`) with 2 CPUs on this machine; yields its address."""
    # directly under the system's temp folder: Ray's socket paths must fit in 107 bytes, which a
    # pytest-xdist worker's deeper tmp_path (`.../popen-gw3/ray0/session_.../sockets/...`) does not
    temp = Path(tempfile.mkdtemp(prefix="synth-ray-"))
    port = free_port()
    # a cluster of this test session alone, on this machine: no token to share (Ray's default is a
    # token in ~/.ray, which the user's own clusters use)
    os.environ["RAY_AUTH_MODE"] = "disabled"
    env = {
        **os.environ,
        "RAY_USAGE_STATS_ENABLED": "0",
        # the workers import this checkout's synth, as the test process does
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    log = (temp / "head.log").open("wb")
    process = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("ray")),
            "start",
            "--head",
            "--block",
            f"--port={port}",
            "--num-cpus=2",
            "--include-dashboard=false",
            "--disable-usage-stats",
            f"--temp-dir={temp}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,  # its own process group: what the teardown ends
    )
    try:
        _wait_for_port(process, port, temp)
        yield f"127.0.0.1:{port}"
    finally:
        _stop_group(process)
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


def _wait_for_port(process: subprocess.Popen[bytes], port: int, temp: Path) -> None:
    deadline = time.monotonic() + RAY_START_TIMEOUT
    while True:
        if process.poll() is not None:
            pytest.fail(f"ray start exited with {process.returncode}: {_tail(temp)}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        if time.monotonic() > deadline:
            pytest.fail(f"the Ray head did not listen within {RAY_START_TIMEOUT}s: {_tail(temp)}")
        time.sleep(0.1)  # poll interval, not a wait for readiness


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    """End `ray start --block` (it stops the processes it started), then anything left in the
    process group it leads; only processes this fixture started."""
    stop(process, timeout=60)
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _tail(temp: Path) -> str:
    return (temp / "head.log").read_text(errors="replace")[-2000:]


def _corpus(folder: Path) -> Path:
    """Text, Markdown, .docx and PDF files, a corrupt PDF, an empty file and an unsupported one."""
    folder.mkdir()
    words = "tide lighthouse keeper harbour lantern storm channel buoy".split()
    for number in range(6):
        text = " ".join(f"{words[(number + i) % len(words)]}{i}" for i in range(160))
        (folder / f"note{number}.txt").write_text(f"Note {number}. {text}\n", encoding="utf-8")
    (folder / "guide.md").write_text("# Guide\n\n" + "Keep the lamp lit. " * 60, encoding="utf-8")
    make_docx(folder / "log.docx", [("p", "The keeper's log. " * 40)])
    make_pdf(folder / "chart.pdf", ["Chart of the channel. " * 30, "Buoys and lights. " * 30])
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >>\n")
    (folder / "empty.txt").write_text("", encoding="utf-8")
    (folder / "picture.png").write_bytes(b"\x89PNG\r\n")
    for file in folder.iterdir():  # settled: the fingerprints do not depend on when each run reads
        os.utime(file, (HOUR_AGO, HOUR_AGO))
    return folder


def _rows(report: Any) -> list[tuple[Any, ...]]:
    return [
        (f.path, f.status, f.reason, f.chunks, f.tokens, f.document_id, f.unchanged)
        for f in report.files
    ]


def _stored(store: ChunkStore) -> dict[str, tuple[str, dict[str, Any], np.ndarray]]:
    chunks = store.chunks()
    vectors = store.get_embeddings([c.id for c in chunks])
    records = store._get_by_ids([c.id for c in chunks], include=["metadatas"])
    return {
        c.id: (c.text, dict(records[c.id]["metadata"]), row)
        for c, row in zip(chunks, vectors, strict=True)
    }


def test_ray_ingest_stores_what_the_single_process_ingest_stores(
    ray_head: str, empty_chroma_server: str, tmp_path: Path
) -> None:
    chroma_server = empty_chroma_server
    docs = _corpus(tmp_path / "docs")
    here = ingest_documents(
        [docs], embedder=HashEmbedder(64), chunking=CHUNKING, store_path=tmp_path / "here"
    )
    on_ray = ingest_documents(
        [docs], embedder=HashEmbedder(64), chunking=CHUNKING, store_url=chroma_server, ray=ray_head
    )
    assert _rows(on_ray) == _rows(here)
    statuses = {f.path.rsplit("/", 1)[-1]: (f.status, f.reason) for f in on_ray.files}
    assert statuses["broken.pdf"][0] == "error" and statuses["broken.pdf"][1].startswith("damaged")
    assert statuses["empty.txt"] == ("error", "empty file")
    assert statuses["picture.png"] == ("skipped", "unsupported type .png")
    assert (on_ray.chunks, on_ray.tokens, on_ray.embedded) == (
        here.chunks,
        here.tokens,
        here.embedded,
    )
    assert on_ray.embedded > 10
    with (
        ChunkStore(HashEmbedder(64), path=tmp_path / "here", chunking=CHUNKING) as a,
        ChunkStore(HashEmbedder(64), url=chroma_server, chunking=CHUNKING) as b,
    ):
        single, ray = _stored(a), _stored(b)
    assert single.keys() == ray.keys()
    for chunk_id, (text, meta, vector) in single.items():
        assert ray[chunk_id][0] == text
        assert ray[chunk_id][1] == meta  # the fingerprints on each file's first chunk too
        np.testing.assert_allclose(ray[chunk_id][2], vector, atol=1e-6)
    assert any("file_sha256" in meta for _, meta, _ in ray.values())

    embedder = HashEmbedder(64)
    again = ingest_documents(
        [docs], embedder=embedder, chunking=CHUNKING, store_url=chroma_server, ray=ray_head
    )
    assert again.embedded == 0 and embedder.texts_embedded == 0
    assert again.unchanged == sum(1 for f in here.files if f.status == "ok")


def test_a_changed_file_is_read_again_on_ray_and_its_old_version_removed(
    ray_head: str, tmp_path: Path
) -> None:
    docs = _corpus(tmp_path / "docs")
    store = tmp_path / "store"
    ingest_documents([docs], embedder="hash:64", chunking=CHUNKING, store_path=store, ray=ray_head)
    (docs / "note0.txt").write_text("A new note about the fog horn. " * 20, encoding="utf-8")
    report = ingest_documents(
        [docs], embedder="hash:64", chunking=CHUNKING, store_path=store, ray=ray_head
    )
    changed = [f for f in report.files if not f.unchanged and f.status == "ok"]
    assert [f.path.rsplit("/", 1)[-1] for f in changed] == ["note0.txt"]
    assert report.removed == 1 and report.embedded == changed[0].chunks


def test_a_run_ingests_on_ray_with_the_chunks_of_a_single_process_run(
    ray_head: str, tmp_path: Path
) -> None:
    docs = _corpus(tmp_path / "docs")
    config = ContextConstructionConfig(chunk_size=64)
    results = []
    for name, ray in (("here", None), ("ray", ray_head)):
        store, pending, chunks = ingest_for_run(
            [str(docs)], config, HashEmbedder(64), store_path=tmp_path / name, ray=ray
        )
        try:
            report = pending.finish()
            results.append((_rows(report), chunks, store.count()))
        finally:
            pending.close()
            store.close()
    assert results[0] == results[1]


def test_synth_ingest_ray_without_an_address_starts_a_ray_for_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = _corpus(tmp_path / "docs")
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": str(REPO)}
    env.pop("RAY_ADDRESS", None)

    def command(store: str) -> list[str]:
        return ["ingest", str(docs), "--embedder", "hash:64", "--chunk-size", "48"] + [
            *("--store-path", str(tmp_path / store), "--json")
        ]

    # the single-process report in this process (no Ray here to start); the Ray one in a process
    # of its own, which starts a Ray of its own and must end it
    assert main(command("s0")) == 0
    here = json.loads(capsys.readouterr().out)
    # the Ray process says at exit whether it used Ray (imported only by an ingest that asks for
    # it; the Ray it started is shut down by then): its report alone is the same either way
    site = tmp_path / "site"
    site.mkdir()
    marker = tmp_path / "joined"
    (site / "sitecustomize.py").write_text(
        "import atexit, sys\n"
        "def _say():\n"
        f"    open({str(marker)!r}, 'w').write(str('ray' in sys.modules))\n"
        "atexit.register(_say)\n"
    )
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(REPO)])
    done = subprocess.run(
        [sys.executable, "-m", "synth", *command("s1"), "--ray"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == here
    assert here["embedded"] > 10
    assert marker.read_text() == "True"


# ---- without a cluster ------------------------------------------------------------------------------
def test_a_remote_embedder_stays_in_this_process_and_others_go_by_spec() -> None:
    remote = OpenAIEmbedder("text-embedding-3-small", base_url="http://127.0.0.1:9")
    assert ray_ingest.worker_spec(remote) is None
    assert ray_ingest.worker_spec(HashEmbedder(64, batch_size=7)) == ("hash:64", 7)

    class Odd(HashEmbedder):
        pass

    odd = Odd(64)
    assert ray_ingest.worker_spec(odd) is odd  # no spec makes it again: shipped as it is


def test_tasks_ask_for_a_gpu_share_only_for_the_neural_embedder_on_a_cluster_with_gpus() -> None:
    local = ray_ingest.worker_spec(LocalEmbedder())
    assert local == ("local:all-MiniLM-L6-v2", LocalEmbedder.default_batch_size)
    with_gpus = {"CPU": 32.0, "GPU": 4.0}
    assert ray_ingest.task_resources(with_gpus, local) == {"num_cpus": 1, "num_gpus": 0.125}
    assert ray_ingest.task_resources({"CPU": 2.0}, local) == {"num_cpus": 1}
    assert ray_ingest.task_resources(with_gpus, ("hash:64", 64)) == {"num_cpus": 1}
    assert ray_ingest.task_resources(with_gpus, None) == {"num_cpus": 1}  # a remote embedder


def test_ray_missing_is_one_line_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("some text here", encoding="utf-8")
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ConfigError, match=r"pip install 'synth\[ray\]'"):
        ingest_documents([tmp_path / "a.txt"], embedder="hash", store_path=tmp_path / "s", ray=True)


def test_ray_with_a_given_store_is_refused(tmp_path: Path) -> None:
    with ChunkStore("hash", path=tmp_path / "s") as store:
        with pytest.raises(ConfigError, match="opens its own store"):
            ingest_documents([tmp_path], store=store, ray=True)


class _NoRay:
    """A stand-in for the ray module that fails the test if a cluster is joined."""

    def is_initialized(self) -> bool:
        return False

    def init(self, **options: Any) -> None:
        raise AssertionError(f"ray.init was called: {options}")


def test_an_address_where_nothing_answers_is_one_line_before_ray_is_asked() -> None:
    port = free_port()  # nothing listens there
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        with pytest.raises(ConfigError, match=rf"cannot join the Ray cluster at {address}: nothing answers at 127\.0\.0\.1:{port}"):  # fmt: skip
            ray_ingest.connect(_NoRay(), address)


def test_synth_ingest_with_a_dead_ray_address_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.txt").write_text("Pumps are checked every spring.", encoding="utf-8")
    address = f"127.0.0.1:{free_port()}"
    store = str(tmp_path / "s")
    argv = ["ingest", str(tmp_path / "a.txt"), "--embedder", "hash", "--store-path", store]
    assert main([*argv, "--ray", address]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"synth: error: cannot join the Ray cluster at {address}: nothing answers at "
                   f"{address} (Connection refused)"]  # fmt: skip


def test_an_address_that_answers_or_names_no_port_is_left_to_ray() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        ray_ingest.probe(f"127.0.0.1:{listener.getsockname()[1]}")
    ray_ingest.probe("auto")


def test_ray_addresses() -> None:
    assert ray_ingest.ray_address(None) is None and ray_ingest.ray_address(False) is None
    assert ray_ingest.ray_address(True) == ray_ingest.LOCAL == ray_ingest.ray_address(" ")
    assert ray_ingest.ray_address(" 10.0.0.5:6379 ") == "10.0.0.5:6379"


def test_ray_reaches_the_ingest_from_the_flags_and_a_pipeline_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from synth import Synthesizer, pipeline
    from synth.cli import build_parser
    from synth.cli.generate import pipeline_from_args

    parser = build_parser()
    assert parser.parse_args(["ingest", "d", "--ray"]).ray is True
    assert parser.parse_args(["ingest", "d", "--ray", "h:6379"]).ray == "h:6379"
    assert parser.parse_args(["ingest", "d"]).ray is None
    assert pipeline_from_args(parser.parse_args(["generate", "d", "--ray", "h:1"])).ray == "h:1"
    file = tmp_path / "p.toml"
    file.write_text('[run]\nray = "head:6379"\n', encoding="utf-8")
    synthesizer = Synthesizer.from_pipeline(file)
    asked: list[Any] = []
    monkeypatch.setattr(pipeline, "ingest_for_run", lambda *a, **k: asked.append(k["ray"]))
    synthesizer._ingest(["d"], ContextConstructionConfig())
    assert asked == ["head:6379"]


def test_a_generate_run_on_ray_makes_the_goldens_of_a_run_without(
    ray_head: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from synth_replies import Replies

    from synth import FunctionModel, Synthesizer

    taken: list[object] = []
    take = ray_ingest.RayReads._take

    def counted(self: ray_ingest.RayReads, ray: object, head: object) -> object:
        taken.append(head)
        return take(self, ray, head)

    monkeypatch.setattr(ray_ingest.RayReads, "_take", counted)
    sample = REPO / "sample_docs"
    made = []
    for name, ray in (("here", None), ("ray", ray_head)):
        synthesizer = Synthesizer(
            FunctionModel(Replies(), name="replies"),
            embedder="hash",
            seed=5,
            ray=ray,
            store_path=tmp_path / f"{name}-store",
            run_dir=tmp_path / f"{name}-run",
        )
        with synthesizer:
            dataset = synthesizer.generate_goldens_from_docs(sample, num_goldens=3)
        made.append([(g.input, g.context, g.source_files) for g in dataset])
        assert synthesizer.manifest is not None
        assert synthesizer.manifest["stages"][0]["stage"] == "ingest"
        assert bool(taken) == (ray is not None)  # the files came back from Ray tasks, or not
    assert len(made[0]) == 3 and made[0] == made[1]
