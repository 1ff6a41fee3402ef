"""``synth generate`` refuses what would fail later before it ingests or asks a model anything,
and says what went wrong in the user's words: the output path, unreadable folders, flag values,
and the notes it prints at the end."""

from __future__ import annotations

from pathlib import Path

import fake_openai
import pytest
import synth_replies

from synth.cli import main
from synth.cli.generate import check_output, small_corpus_note
from synth.dataset import SUFFIXES
from synth.errors import ConfigError
from synth.run.ingest import SHOWN_FILES, nothing_read

REPO = Path(__file__).resolve().parent.parent
SAMPLE = str(REPO / "sample_docs")


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    with fake_openai.FakeOpenAI(reply=synth_replies.reply) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-checks-not-a-real-key")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        yield fake


def error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("synth: error: ")]
    assert len(lines) == 1, err
    return lines[0]


def nothing_started() -> bool:
    """No run directory and no store: the command stopped before ingesting anything."""
    return not Path(".synth/runs").exists() and not Path(".synth/chroma").exists()


# ---- 1. the output path is checked before the run --------------------------------------------------


def test_an_unsupported_output_suffix_is_refused_before_any_request(server, capsys) -> None:
    code = main(["generate", SAMPLE, "--goldens", "4", "--embedder", "hash", "-o", "out.xyz"])
    line = error_line(capsys)
    assert code == 2
    assert "out.xyz" in line and "'.xyz'" in line
    for suffix in SUFFIXES:
        assert suffix in line
    assert server.request_count() == 0
    assert nothing_started()


def test_an_output_in_a_missing_folder_is_refused_before_any_request(server, capsys) -> None:
    out = Path("no-such-folder") / "goldens.jsonl"
    code = main(["generate", SAMPLE, "--goldens", "4", "--embedder", "hash", "-o", str(out)])
    line = error_line(capsys)
    assert code == 2
    assert "no-such-folder" in line and "does not exist" in line
    assert server.request_count() == 0
    assert nothing_started()


def test_the_pipeline_files_output_is_checked_too(server, tmp_path: Path, capsys) -> None:
    pipeline = tmp_path / "p.toml"
    pipeline.write_text('[run]\noutput = "goldens.txt"\n')
    code = main(["generate", SAMPLE, "--pipeline", str(pipeline), "--embedder", "hash"])
    assert code == 2 and "'.txt'" in error_line(capsys)
    assert server.request_count() == 0


def test_check_output_accepts_what_can_be_written_and_names_the_problem_otherwise(
    tmp_path: Path,
) -> None:
    for suffix in (".jsonl", ".json", ".csv", ".JSONL"):
        assert check_output(tmp_path / f"goldens{suffix}") == tmp_path / f"goldens{suffix}"
    with pytest.raises(ConfigError, match="unsupported suffix '\\(none\\)'"):
        check_output(tmp_path / "goldens")
    (tmp_path / "adir.jsonl").mkdir()
    with pytest.raises(ConfigError, match="it is a folder"):
        check_output(tmp_path / "adir.jsonl")
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ConfigError, match="is not a folder"):
        check_output(tmp_path / "afile" / "goldens.jsonl")


def test_plan_does_not_need_a_writable_output(server, capsys) -> None:
    code = main(["generate", SAMPLE, "--goldens", "4", "--embedder", "hash", "--plan", "-o", "x.y"])
    assert code == 0 and "plan" in capsys.readouterr().out


# ---- 2. a folder with nothing readable says why, file by file ---------------------------------------


def test_no_readable_document_names_each_files_reason(server, tmp_path: Path, capsys) -> None:
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "a.xyz").write_text("not a document type we read")
    (junk / "b.txt").write_text("")
    (junk / "c.pdf").write_bytes(b"%PDF-1.4 cut short")
    code = main(["generate", str(junk), "--goldens", "2", "--embedder", "hash"])
    line = error_line(capsys)
    assert code == 2
    assert f"no document could be read from {junk}: " in line
    assert "a.xyz: unsupported type .xyz" in line
    assert "b.txt: empty file" in line
    assert "c.pdf: damaged PDF" in line
    assert "more" not in line
    assert server.request_count() == 0


def test_an_empty_folder_says_it_holds_no_files(server, tmp_path: Path, capsys) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code = main(["generate", str(empty), "--goldens", "2", "--embedder", "hash"])
    line = error_line(capsys)
    assert code == 2 and "no files found" in line and str(empty) in line


def test_many_unreadable_files_are_cut_short_with_a_count(server, tmp_path: Path, capsys) -> None:
    junk = tmp_path / "junk"
    junk.mkdir()
    for n in range(SHOWN_FILES + 3):
        (junk / f"f{n}.xyz").write_text("x")
    code = main(["generate", str(junk), "--goldens", "2", "--embedder", "hash"])
    line = error_line(capsys)
    assert code == 2
    assert line.count("unsupported type .xyz") == SHOWN_FILES
    assert line.endswith("; and 3 more")


def test_nothing_read_message() -> None:
    class Row:
        def __init__(self, path: str, status: str, reason: str) -> None:
            self.path, self.status, self.reason = path, status, reason

    rows = [Row("d/a.pdf", "error", "encrypted PDF: pass --password"), Row("d/b", "skipped", "")]
    assert nothing_read(["d"], rows) == (
        "no document could be read from d: d/a.pdf: encrypted PDF: pass --password; d/b: skipped"
    )


# ---- 3. a flag's bad value is named by the flag -----------------------------------------------------


@pytest.mark.parametrize("flag", ["--goldens", "--max-concurrent"])
def test_a_flag_below_one_is_named_by_the_flag(flag: str, capsys) -> None:
    code = main(["generate", SAMPLE, flag, "0", "--model", "openai:m", "--embedder", "hash"])
    line = error_line(capsys)
    assert code == 2
    assert line == f"synth: error: {flag} must be at least 1, got 0"


def test_a_pipeline_files_run_key_is_named_as_the_file_spells_it(tmp_path: Path, capsys) -> None:
    pipeline = tmp_path / "p.toml"
    pipeline.write_text("[run]\ngoldens = 0\n")
    code = main(["generate", SAMPLE, "--pipeline", str(pipeline), "--model", "openai:m"])
    line = error_line(capsys)
    assert code == 2 and "p.toml: [run] goldens: " in line and "num_goldens" not in line


# ---- 4. the small-corpus note counts in words ------------------------------------------------------


def test_the_small_corpus_note_agrees_with_its_number() -> None:
    assert small_corpus_note(1).endswith("1 chunk sits in two contexts")
    assert small_corpus_note(2).endswith("2 chunks sit in two contexts")
    assert "1 chunks" not in small_corpus_note(1)
