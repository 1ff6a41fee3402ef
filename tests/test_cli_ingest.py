"""`synth ingest` and `ingest_documents`: every file gets a status, a rerun embeds nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from synth import ChunkStore, ConfigError, HashEmbedder, ingest_documents
from synth.cli import main
from synth.ingest import ChunkingConfig
from synth.store import embedders as embedders_module

REPO = Path(__file__).resolve().parents[1]
SAMPLE_DOCS = REPO / "sample_docs"
CORPUS = Path(os.environ.get("SYNTH_CORPUS", REPO.parent / "shared" / "corpus"))
JSON_KEYS = {"files", "chunks", "tokens", "embedded", "reused"}


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(64)
        self.texts = 0

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        self.texts += len(texts)
        return super()._embed_batch(texts)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A small mixed folder: readable text, markdown and Word files, and files that cannot be read."""
    import docx

    root = tmp_path / "docs"
    (root / "sub folder").mkdir(parents=True)
    paragraph = "The harbour light turns every twelve seconds and the keeper logs each tide. "
    (root / "light.txt").write_text(paragraph * 120, encoding="utf-8")
    (root / "sub folder" / "notes ü.md").write_text("# Notes\n\nStorm flags mean wind.\n")
    document = docx.Document()
    document.add_paragraph("Lamp oil is ordered each spring.")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Item", "Cost"
    table.cell(1, 0).text, table.cell(1, 1).text = "Oil", "12"
    document.save(str(root / "supplies.docx"))
    (root / "broken.pdf").write_bytes(b"this is not a pdf at all")
    (root / "empty.txt").write_bytes(b"")
    (root / "picture.png").write_bytes(b"\x89PNG\r\n")
    (root / ".hidden.txt").write_text("secret")
    return root


def _json_run(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    code = main(["ingest", *args, "--json"])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    report["_code"], report["_err"] = code, captured.err
    return report


# ---- the library call ----------------------------------------------------------------------------------
def test_second_ingest_of_an_unchanged_folder_embeds_nothing(docs: Path, tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    with ChunkStore(embedder, path=tmp_path / "db", chunking={"chunk_size": 64}) as store:
        first = ingest_documents(docs, store=store)
        assert first.embedded == first.chunks == embedder.texts > 3
        assert first.reused == 0
        seen: list[str] = []
        second = ingest_documents([docs], store=store, on_file=lambda row: seen.append(row.path))
    assert embedder.texts == first.embedded  # zero embedding calls the second time
    assert (second.embedded, second.reused) == (0, first.chunks)
    assert seen == [row.path for row in second.files]
    assert second.tokens == first.tokens


def test_every_file_gets_a_status_and_reason(docs: Path, tmp_path: Path) -> None:
    report = ingest_documents(docs, embedder=HashEmbedder(32), store_path=tmp_path / "db")
    rows = {Path(row.path).name: row for row in report.files}
    assert {
        "light.txt",
        "notes ü.md",
        "supplies.docx",
        "broken.pdf",
        "empty.txt",
        "picture.png",
        ".hidden.txt",
    } <= set(rows)
    for name in ("light.txt", "notes ü.md", "supplies.docx"):
        assert rows[name].status == "ok" and rows[name].chunks >= 1 and rows[name].tokens > 0
    for name in ("broken.pdf", "empty.txt"):
        assert rows[name].status == "error" and rows[name].reason and rows[name].chunks == 0
    for name in ("picture.png", ".hidden.txt"):
        assert rows[name].status == "skipped" and rows[name].reason
    assert report.counts() == {"ok": 3, "error": 2, "skipped": 2}
    assert report.chunks == sum(row.chunks for row in report.files)
    with ChunkStore(HashEmbedder(32), path=tmp_path / "db") as store:
        assert store.count() == report.chunks
        assert {Path(source).name for source in store.sources()} == {
            "light.txt",
            "notes ü.md",
            "supplies.docx",
        }


def test_a_store_and_conflicting_settings_are_refused(docs: Path, tmp_path: Path) -> None:
    with ChunkStore(HashEmbedder(32), path=tmp_path / "db") as store:
        with pytest.raises(ConfigError, match="embedder"):
            ingest_documents(docs, store=store, embedder="hash:64")
        with pytest.raises(ConfigError, match="chunking"):
            ingest_documents(docs, store=store, chunking=ChunkingConfig(chunk_size=10))
        ingest_documents(docs, store=store, embedder="hash:32", chunking={"chunk_size": 1024})
    with pytest.raises(ConfigError, match="at least one"):
        ingest_documents([], embedder="hash")


# ---- the command -----------------------------------------------------------------------------------------
def test_cli_json_shape_and_rerun(docs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = _json_run(capsys, str(docs), "--embedder", "hash", "--chunk-size", "64")
    assert first["_code"] == 0
    assert JSON_KEYS <= set(first)
    assert all(set(row) == {"path", "status", "reason", "chunks"} for row in first["files"])
    assert len(first["files"]) == 7
    assert first["embedded"] == first["chunks"] > 0 and first["reused"] == 0
    second = _json_run(capsys, str(docs), "--embedder", "hash", "--chunk-size", "64")
    assert (second["embedded"], second["reused"]) == (0, first["chunks"])
    other = _json_run(capsys, str(docs), "--embedder", "hash", "--chunk-size", "128")
    assert other["embedded"] == other["chunks"]  # other chunking, other collection


def test_cli_table_lists_every_file_and_the_totals(
    docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ingest", str(docs), "--embedder", "hash:32", "--store-path", "store"]) == 0
    out = capsys.readouterr().out
    for name in ("light.txt", "supplies.docx", "broken.pdf", "empty.txt", "picture.png"):
        assert name in out
    for word in ("ok", "error", "skipped", "embedded now", "reused", "chunks", "tokens"):
        assert word in out
    assert Path("store").is_dir()
    assert main(["ingest", str(docs), "--embedder", "hash:32", "--store-path", "store"]) == 0
    again = capsys.readouterr().out
    assert "7 files (3 ok, 2 errors, 2 skipped)" in again
    assert ", 0 embedded now, " in again


def test_piped_report_keeps_rows_and_totals_whole_at_any_width() -> None:
    import io

    from rich.console import Console

    from synth.cli._ingest_view import print_ingest_report
    from synth.store import IngestedFile, IngestReport

    long_path = "docs/" + "very long folder name/" * 6 + "a file with a long name ü.pdf"
    reason = "damaged PDF: " + "a long explanation of what pypdf could not repair " * 3
    report = IngestReport(
        files=[
            IngestedFile(path=long_path, status="error", reason=reason.strip()),
            IngestedFile(path="docs/ok.txt", status="ok", chunks=3, tokens=1200),
        ],
        chunks=3,
        tokens=1200,
        embedded=3,
        embedder="hash:384",
        collection="synth-hash-384-c1024o0-0123456789",
        store=".synth/chroma",
    )
    out = io.StringIO()
    # not a terminal (a pipe or a file), whatever FORCE_COLOR says
    console = Console(file=out, width=30, highlight=False, force_terminal=False)
    print_ingest_report(report, console)
    lines = out.getvalue().splitlines()
    assert any(long_path in line and reason.strip() in line for line in lines)
    assert lines[-2:] == [
        "2 files (1 ok, 1 error, 0 skipped), 3 chunks, 1,200 tokens, 3 embedded now, 0 reused",
        "store: synth-hash-384-c1024o0-0123456789 in .synth/chroma (hash:384)",
    ]
    assert console.width == 30  # the console is left as it was


def test_cli_exits_nonzero_only_when_nothing_could_be_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "broken.pdf").write_bytes(b"nope")
    (bad / "image.png").write_bytes(b"nope")
    report = _json_run(capsys, str(bad), "--embedder", "hash")
    assert report["_code"] == 1
    assert [row["status"] for row in report["files"]] == ["error", "skipped"]
    (bad / "ok.txt").write_text("One readable sentence.")
    assert _json_run(capsys, str(bad), "--embedder", "hash")["_code"] == 0


def test_cli_bad_options_are_one_line_errors(
    docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ingest", str(docs), "--embedder", "hsah"]) == 2
    assert "did you mean 'hash'" in capsys.readouterr().err
    assert main(["ingest", str(docs), "--embedder", "hash", "--chunk-overlap", "2000"]) == 2
    assert "chunk_overlap" in capsys.readouterr().err


def test_cli_says_which_embedder_it_chose(
    docs: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedders_module, "local_embedder_installed", lambda: False)
    report = _json_run(capsys, str(docs))
    assert report["embedder"] == "hash:384"
    notices = [line for line in report["_err"].splitlines() if "no embedder named" in line]
    assert len(notices) == 1  # one line, never wrapped, whatever the width
    assert notices[0].startswith("no embedder named: using hash:384 (")
    assert notices[0].endswith("hash vectors only match shared words)")


def test_cli_openai_embedder_over_http(
    docs: Path, capsys: pytest.CaptureFixture[str], fake_openai, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cli-secret")
    args = [
        str(docs),
        "--embedder",
        "openai:fake-embed",
        "--base-url",
        fake_openai.url,
        "--batch-size",
        "2",
    ]
    first = _json_run(capsys, *args)
    assert first["embedded"] == first["chunks"] > 0
    assert fake_openai.request_count("embeddings") == -(-first["chunks"] // 2)
    second = _json_run(capsys, *args)
    assert second["embedded"] == 0
    assert fake_openai.request_count("embeddings") == -(-first["chunks"] // 2)
    written = [p for p in Path(".synth").rglob("*") if p.is_file()]
    assert written and not [p for p in written if b"sk-cli-secret" in p.read_bytes()]


# ---- as a user runs it -----------------------------------------------------------------------------------
def _sample_folder(tmp_path: Path, docs_fixture: Path) -> Path:
    has_samples = SAMPLE_DOCS.is_dir() and any(SAMPLE_DOCS.iterdir())
    return SAMPLE_DOCS if has_samples else docs_fixture


def _run_cli(*args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    # as a pipe to a script sees it: no variable may make rich treat the pipe as a terminal
    env = {k: v for k, v in os.environ.items() if k not in {"FORCE_COLOR", "TTY_COMPATIBLE"}}
    return subprocess.run(
        [sys.executable, "-m", "synth", "ingest", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**env, "PYTHONPATH": str(REPO), "COLUMNS": str(columns)},
    )


def _expected_summary(report: dict, embedded: int, reused: int) -> str:
    statuses = [row["status"] for row in report["files"]]
    errors = statuses.count("error")
    return (
        f"{len(statuses)} files ({statuses.count('ok')} ok, {errors} "
        f"error{'' if errors == 1 else 's'}, {statuses.count('skipped')} skipped), "
        f"{report['chunks']:,} chunks, {report['tokens']:,} tokens, "
        f"{embedded:,} embedded now, {reused:,} reused"
    )


@pytest.mark.slow
def test_python_m_synth_ingest_sample_docs_twice(tmp_path: Path, docs: Path) -> None:
    folder = _sample_folder(tmp_path, docs)
    first = _run_cli(str(folder), "--embedder", "hash", "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert JSON_KEYS <= set(report)
    assert report["embedded"] == report["chunks"] > 0 and report["reused"] == 0
    assert all(row["status"] in {"ok", "error", "skipped"} for row in report["files"])
    # piped, with a terminal width far too narrow for the rows: nothing may wrap or fold
    table = _run_cli(str(folder), "--embedder", "hash", columns=40)
    assert table.returncode == 0, table.stderr
    assert "Traceback" not in table.stderr
    lines = table.stdout.splitlines()
    assert _expected_summary(report, 0, report["chunks"]) in lines  # the second run embeds 0
    assert any(line.startswith("store: synth-hash-384-") for line in lines)
    for row in report["files"]:
        assert any(row["path"] in line and row["status"] in line for line in lines), row["path"]


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared real-world corpus is not here")
def test_ingest_real_world_corpus_gives_every_file_a_status(tmp_path: Path) -> None:
    result = _run_cli(str(CORPUS), "--embedder", "hash", "--json")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) <= 3  # at most a notice or two, never pypdf's warnings
    report = json.loads(result.stdout)
    on_disk = sorted(
        str(Path(dirpath, name).relative_to(CORPUS.parent)).replace(os.sep, "/")
        for dirpath, _, names in os.walk(CORPUS)
        for name in names
    )
    assert sorted(row["path"] for row in report["files"]) == on_disk
    statuses = {Path(row["path"]).name: row for row in report["files"]}
    assert statuses["libreoffice-writer-password.pdf"]["status"] == "error"
    assert "encrypt" in statuses["libreoffice-writer-password.pdf"]["reason"]
    assert all(row["reason"] for row in report["files"] if row["status"] != "ok")
    assert report["embedded"] == report["chunks"] > 0
