"""The first ten minutes: every mistake a user can make is one clear line and a non-zero exit.

Each case runs ``synth.cli.main`` as the console script does and checks that stderr holds exactly
one ``synth: error: ...`` line that names the problem and the way out, with no traceback; a few run
the real ``python -m synth`` process, and ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import uuid
import warnings
from pathlib import Path

import pytest
import synth_replies

from synth import Dataset, Golden
from synth.cli import main
from synth.contexts.select import SEED_PASSES, most_goldens
from synth.data import Chunk
from synth.errors import DatasetError

REPO = Path(__file__).resolve().parent.parent
SAMPLE_DOCS = REPO / "sample_docs"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    """The single ``synth: error:`` line of ``err`` (notices aside); fails on a traceback."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("synth: error: ")]
    assert len(lines) == 1, err
    return lines[0]


def assert_fails(
    argv: list[str], capsys: pytest.CaptureFixture[str], *fragments: str, code: int = 2
) -> str:
    got, _, err = run(argv, capsys)
    assert got == code, err
    line = one_error_line(err)
    for fragment in fragments:
        assert fragment in line, line
    return line


@pytest.fixture
def dataset_file(tmp_path: Path) -> Path:
    goldens = [
        Golden(input=f"What is {n} + {n}?", expected_output=str(2 * n), context_ids=[f"c{n}"])
        for n in range(3)
    ]
    return Dataset(goldens).save(tmp_path / "goldens.jsonl")


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module in the working folder with an ``answer`` function (a unique name per test)."""
    name = f"errors_user_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text("def answer(question):\n    return '0'\n")
    monkeypatch.chdir(tmp_path)
    return name


@pytest.fixture
def closes_leaked_clients() -> object:
    """The command made HTTP clients it leaves to the process exit; collect them here, so their
    sockets' ResourceWarnings do not land in a later test."""
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


# ---- ingest ----------------------------------------------------------------------------------------


def test_ingest_unknown_embedder(capsys: pytest.CaptureFixture[str]) -> None:
    assert_fails(
        ["ingest", str(SAMPLE_DOCS), "--embedder", "hsah"], capsys, "unknown embedder", "hash"
    )


def test_ingest_openai_embedder_without_a_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert_fails(
        ["ingest", str(SAMPLE_DOCS), "--embedder", "openai:text-embedding-3-small"],
        capsys,
        "OPENAI_API_KEY",
        "base_url",
    )


def test_ingest_overlap_not_below_chunk_size(capsys: pytest.CaptureFixture[str]) -> None:
    line = assert_fails(
        [
            "ingest",
            str(SAMPLE_DOCS),
            "--embedder",
            "hash",
            "--chunk-size",
            "10",
            "--chunk-overlap",
            "20",
        ],
        capsys,
        "chunk_overlap (20) must be smaller than chunk_size (10)",
    )
    assert "Value error" not in line


def test_ingest_unknown_encoding(capsys: pytest.CaptureFixture[str]) -> None:
    assert_fails(
        ["ingest", str(SAMPLE_DOCS), "--embedder", "hash", "--encoding", "cl100k"],
        capsys,
        "unknown tiktoken encoding 'cl100k'",
        "cl100k_base",
    )


def test_ingest_of_a_missing_path_says_so_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["ingest", str(tmp_path / "nope"), "--embedder", "hash"], capsys)
    assert code == 1
    assert "no such file or folder" in out
    assert "Traceback" not in err


# ---- export ----------------------------------------------------------------------------------------


def test_export_missing_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert_fails(
        ["export", str(tmp_path / "nope.jsonl"), "-f", "ragas"], capsys, "nope.jsonl: no such file"
    )


def test_export_unsupported_suffix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    assert_fails(
        ["export", str(notes), "-f", "ragas"], capsys, "unsupported dataset suffix '.txt'", ".jsonl"
    )


def test_export_malformed_dataset_names_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"input": "fine"}\n{"input": 3}\n')
    assert_fails(["export", str(bad), "-f", "ragas"], capsys, "bad.jsonl: line 2: field 'input'")


def test_export_wrong_output_suffix(dataset_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = dataset_file.with_name("out.jsonl")
    assert_fails(
        ["export", str(dataset_file), "-f", "judgeval", "-o", str(out)],
        capsys,
        "a judgeval export is written as .json",
    )
    assert not out.exists()


def test_export_unknown_format_is_one_line_naming_the_known_ones(
    dataset_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", str(dataset_file), "-f", "ragaz"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown format 'ragaz'" in err
    assert "ragas" in err and "jsonl" in err and "hf" in err


# ---- evaluate, compare, benchmark ------------------------------------------------------------------


def test_evaluate_missing_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert_fails(["evaluate", str(tmp_path / "nope.jsonl")], capsys, "no such dataset file")


def test_evaluate_system_module_not_found(
    dataset_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_fails(
        ["evaluate", str(dataset_file), "--system", "no_such_module_xyz:answer"],
        capsys,
        "cannot import 'no_such_module_xyz'",
    )


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        pytest.param(["--system", "{m}"], ("expected module:function",), id="no-function"),
        pytest.param(
            ["--system", "{m}:anwser"], ("has no attribute 'anwser'",), id="function-not-found"
        ),
        pytest.param(
            ["--system", "{m}:answer", "--metric", "faithfulnes"],
            ("unknown judge metric 'faithfulnes'", "faithfulness"),
            id="unknown-metric",
        ),
        pytest.param(
            ["--system", "{m}:answer", "--judge", "openai:gpt-4.1-mini"],
            ("no OpenAI API key", "OPENAI_API_KEY"),
            id="openai-judge-without-a-key",
        ),
        pytest.param(
            ["--system", "{m}:answer", "-o", "report.xyz"],
            ("unknown report suffix '.xyz'", ".json"),
            id="unknown-report-suffix",
        ),
    ],
)
def test_evaluate_bad_argument_with_a_user_module(
    args: list[str],
    fragments: tuple[str, ...],
    dataset_file: Path,
    user_module: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["evaluate", str(dataset_file), *(a.format(m=user_module) for a in args)]
    assert_fails(argv, capsys, *fragments)


def test_compare_missing_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "nope.json")
    assert_fails(["compare", missing, missing], capsys, "no such report file")


def test_compare_a_dataset_is_not_a_report(
    dataset_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_fails(
        ["compare", str(dataset_file), str(dataset_file)],
        capsys,
        "goldens.jsonl",
        "not a report written by synth",
    )


def test_compare_broken_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"metrics": ')
    assert_fails(
        ["compare", str(broken), str(broken)], capsys, "broken.json", "not a valid json report"
    )


def test_benchmark_two_systems_with_one_name(
    dataset_file: Path, user_module: str, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = f"a={user_module}:answer"
    assert_fails(
        ["benchmark", str(dataset_file), "--system", spec, "--system", spec],
        capsys,
        "two systems are named 'a'",
        "NAME=",
    )


def test_benchmark_unknown_ranking_metric(
    dataset_file: Path, user_module: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_fails(
        [
            "benchmark",
            str(dataset_file),
            "--system",
            f"{user_module}:answer",
            "--rank-by",
            "acuracy",
        ],
        capsys,
        "cannot rank by 'acuracy'",
        "exact_match",
    )


# ---- generate --------------------------------------------------------------------------------------


def test_generate_without_a_model_explains_and_shows_the_plan(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        ["generate", str(SAMPLE_DOCS), "--embedder", "hash", "--goldens", "4"], capsys
    )
    assert code == 2
    assert "Traceback" not in err
    assert "no model named and no API key found" in err
    assert "OPENAI_API_KEY" in err and "--model" in err and "--base-url" in err
    assert "plan:" in out and "requests" in out


def test_generate_missing_pipeline_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert_fails(
        ["generate", str(SAMPLE_DOCS), "--pipeline", "nope.toml"],
        capsys,
        "pipeline file nope.toml does not exist",
    )


@pytest.mark.parametrize(
    ("filename", "text", "fragments", "absent"),
    [
        pytest.param(
            "typo.toml",
            "[contexts]\nmax_context_lenght = 4\n",
            ("typo.toml: [contexts] max_context_lenght: unknown setting", "max_context_length"),
            ("Value error",),
            id="typo-names-file-table-key-and-the-known-keys",
        ),
        pytest.param(
            "bad.toml",
            "[contexts]\nchunk_size = 100\nchunk_overlap = 200\n",
            ("bad.toml: [contexts] chunk_overlap must be smaller than chunk_size",),
            ("Value error", "<root>"),
            id="value-out-of-range",
        ),
        pytest.param("bad.toml", "[contexts\n", ("is not valid TOML", "line 1"), (), id="not-toml"),
        pytest.param(
            "bad.toml",
            "[evolution.evolutions]\nreasonin = 1\n",
            ("[evolution]", "'reasoning'"),
            (),
            id="unknown-evolution",
        ),
    ],
)
def test_generate_bad_pipeline_file(
    filename: str,
    text: str,
    fragments: tuple[str, ...],
    absent: tuple[str, ...],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pipeline = tmp_path / filename
    pipeline.write_text(text)
    line = assert_fails(
        ["generate", str(SAMPLE_DOCS), "--pipeline", str(pipeline)], capsys, *fragments
    )
    for unwanted in absent:
        assert unwanted not in line


@pytest.mark.parametrize(
    ("spec", "fragments"),
    [
        pytest.param(
            "opnai:gpt-4.1-mini",
            ("unknown model provider 'opnai'", "did you mean 'openai'"),
            id="provider-typo",
        ),
        pytest.param(
            "gpt-4.1-mini",  # a bare name is OpenAI's: refused for want of a key, not its name
            ("no OpenAI API key",),
            id="without-a-provider",
        ),
        pytest.param(
            "openai",
            ("names a provider but no model", "'openai:<model>'"),
            id="provider-without-a-model",
        ),
    ],
)
def test_generate_bad_model_spec(
    spec: str, fragments: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    assert_fails(
        ["generate", str(SAMPLE_DOCS), "--model", spec, "--embedder", "hash"], capsys, *fragments
    )


def test_generate_no_readable_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    assert_fails(
        [
            "generate",
            str(tmp_path / "nope"),
            "--embedder",
            "hash",
            "--model",
            "openai:gpt-4.1-mini",
        ],
        capsys,
        "no document could be read",
        "nope",
    )


def test_generate_goldens_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    line = assert_fails(
        ["generate", str(SAMPLE_DOCS), "--goldens", "0", "--model", "openai:gpt-4.1-mini"],
        capsys,
        "--goldens must be at least 1",
    )
    assert "num_goldens" not in line  # the flag the user typed, not the setting behind it


@pytest.mark.parametrize("check", [["--check"], []], ids=["check", "update"])
def test_update_from_a_folder_with_no_readable_document_is_one_line_not_every_file_deleted(
    check: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A docs folder not checked out (an empty submodule) in CI: --check said every golden's
    file was deleted (exit 4, stale) where the update itself refused (exit 2)."""
    dataset = tmp_path / "goldens.jsonl"
    Dataset([Golden(input="What is the warranty?", source_files=["docs/warranty.md"])]).save(
        dataset
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "photo.bin").write_bytes(b"\x00\x01")
    before = dataset.read_bytes()
    assert_fails(
        ["update", str(dataset), str(tmp_path / "docs"), *check, "--model", "offline"],
        capsys,
        f"no document could be read from {tmp_path / 'docs'}",
        "unsupported type .bin",
    )
    assert dataset.read_bytes() == before


def test_update_max_concurrent_below_one_is_refused(
    dataset_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["update", str(dataset_file), str(SAMPLE_DOCS), "--max-concurrent", "0"]
    assert_fails(argv, capsys, "--max-concurrent must be at least 1, got 0")


GENERATE = ["generate", "{docs}", "--model", "offline", "-o", "{out}"]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["ingest", "{docs}", "--embedder", "hash", "--web-rate", "nan"], "--web-rate"),
        ([*GENERATE, "--web-rate", "nan"], "--web-rate"),
        ([*GENERATE, "--web-rate", "0"], "--web-rate"),
        ([*GENERATE, "--timeout", "nan"], "--timeout"),
        (["evaluate", "{data}", "--judge", "openai:m", "--timeout", "nan"], "--timeout"),
    ],
)
def test_a_number_flag_that_is_not_a_number_names_the_flag(
    argv: list[str], says: str, dataset_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """float('nan') passes every '<= 0' check: it came out as a pydantic traceback (--web-rate)
    or as the setting behind the flag ('pipeline: timeout: ...')."""
    out = dataset_file.parent / "out.jsonl"
    filled = [a.format(docs=SAMPLE_DOCS, data=dataset_file, out=out) for a in argv]
    assert_fails(filled, capsys, f"{says} must be positive, got {argv[-1]}")
    assert not out.exists()


@pytest.mark.parametrize("turns", ["1", "0", "-2"])
def test_generate_max_turns_below_two_names_the_flag(
    turns: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["generate", str(SAMPLE_DOCS), "--conversational", "--max-turns", turns]
    argv += ["--model", "offline", "--embedder", "hash", "-o", str(tmp_path / "talks.jsonl")]
    line = assert_fails(argv, capsys, f"--max-turns must be at least 2, got {turns}")
    assert "ConversationConfig" not in line
    assert not (tmp_path / "talks.jsonl").exists()


@pytest.mark.parametrize("where", ["file", "journal"])
def test_generate_refuses_to_replace_a_reviewed_dataset(
    where: str, dataset_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from synth.dataset import _journal
    from synth.dataset._keys import golden_key
    from synth.dataset.review import decide

    reviewed = Dataset.load(dataset_file)
    decided = decide(reviewed[0], "rejected", reason="wrong answer", reviewer="ann")
    if where == "file":
        reviewed.goldens[0] = decided
        reviewed.save(dataset_file)
    else:  # decided on the review page, not folded into the file yet
        _journal.append(dataset_file, _journal.entry(golden_key(reviewed[0]), decided))
    before = dataset_file.read_bytes()
    argv = ["generate", str(SAMPLE_DOCS), "--goldens", "2", "--embedder", "hash", "--quiet"]
    argv += ["--model", "offline", "-o", str(dataset_file)]
    assert_fails(argv, capsys, f"cannot write {dataset_file}", "1 reviewed golden", "another -o")
    assert dataset_file.read_bytes() == before


def test_generate_replaces_a_dataset_never_reviewed(dataset_file: Path) -> None:
    from synth.cli.generate import check_output

    assert check_output(dataset_file) == dataset_file  # a rerun writes its goldens there again


def test_generate_refused_key_is_one_line_and_non_zero_then_resumes_with_a_good_key(
    closes_leaked_clients: object,
    fake_openai: object,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_openai.faults = {"auth": 1.0}  # type: ignore[attr-defined]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-refused")
    out = tmp_path / "goldens.jsonl"
    argv = ["generate", str(SAMPLE_DOCS), "--goldens", "2", "--embedder", "hash", "--quiet"]
    argv += ["--model", "openai:gpt-4.1-mini", "--base-url", fake_openai.url, "-o", str(out)]  # type: ignore[attr-defined]
    argv += ["--grounding-threshold", "0"]  # this server's answers do not quote the context
    line = assert_fails(argv, capsys, "refused the API key", "OPENAI_API_KEY", "--model")
    assert f"server at {fake_openai.url}" in line  # type: ignore[attr-defined]
    assert not out.exists()
    # the key fixed, the same command delivers: the refusals were not kept as results (replies
    # a model would write: questions that name their subject, answers quoted from the context)
    fake_openai.faults = {}  # type: ignore[attr-defined]
    fake_openai.reply = synth_replies.reply  # type: ignore[attr-defined]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-accepted")
    code, _, err = run(argv, capsys)
    assert code == 0, err
    assert len(Dataset.load(out)) == 2


def test_evaluate_refused_key_is_one_line_and_non_zero(
    closes_leaked_clients: object,
    fake_openai: object,
    dataset_file: Path,
    user_module: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_openai.faults = {"auth": 1.0}  # type: ignore[attr-defined]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-refused")
    argv = ["evaluate", str(dataset_file), "--system", f"{user_module}:answer"]
    argv += ["--judge", "openai:gpt-4.1-mini", "--base-url", fake_openai.url]  # type: ignore[attr-defined]
    assert_fails(argv, capsys, "API key was refused", "OPENAI_API_KEY")


# ---- --debug and the real process ------------------------------------------------------------------


def test_debug_raises_the_error_instead(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such file"):
        main(["--debug", "export", str(tmp_path / "nope.jsonl"), "-f", "ragas"])


def _synth(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    return subprocess.run(
        [sys.executable, "-m", "synth", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_console_script_prints_one_line_and_debug_the_traceback(tmp_path: Path) -> None:
    plain = _synth("export", "nope.jsonl", "-f", "ragas", cwd=tmp_path)
    assert plain.returncode == 2
    assert plain.stderr.strip() == "synth: error: nope.jsonl: no such file"
    debug = _synth("--debug", "export", "nope.jsonl", "-f", "ragas", cwd=tmp_path)
    assert debug.returncode != 0
    assert "Traceback" in debug.stderr and "DatasetError: nope.jsonl: no such file" in debug.stderr


def test_a_billion_goldens_planned_ends_at_once_saying_the_most_the_documents_give(
    tmp_path: Path,
) -> None:
    # a billion used to keep the command busy and silent for minutes: the coverage seats and the
    # feed's batches were drawn one by one toward it; the timeout (120 s) is far below that
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_BASE_URL"}
    env["OPENAI_API_KEY"] = "sk-test-plan-not-a-real-key"  # a plan makes no request
    argv = ["generate", str(SAMPLE_DOCS), "--goldens", "1000000000", "--embedder", "hash"]
    done = subprocess.run(
        [sys.executable, "-m", "synth", *argv, "--plan"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "note: 1000000000 goldens asked: these documents can give at most " in done.stdout


def test_the_most_goldens_is_what_every_distinct_chunk_seeding_two_contexts_gives() -> None:
    chunks = [
        Chunk(id=f"c{i}", document_id="d", text=f"t{i}", source="a.md", index=i, token_count=1)
        for i in range(5)
    ]
    assert most_goldens([*chunks, chunks[0]], 3) == 5 * SEED_PASSES * 3


# ---- R5: refused keys under load, misspelt judges, broken user modules, --rank-by up front --------


def _many_goldens(folder: Path, n: int = 40) -> Path:
    goldens = [
        Golden(
            input=f"What is {k} + {k}?", expected_output=str(2 * k), context=[f"{k}+{k}={2 * k}"]
        )
        for k in range(n)
    ]
    return Dataset(goldens).save(folder / "many.jsonl")


@pytest.mark.parametrize("command", ["evaluate", "benchmark"])
def test_a_refused_key_under_load_prints_one_line_and_no_shutdown_traceback(
    command: str, fake_openai: object, tmp_path: Path, user_module: str
) -> None:
    # many judge calls in flight when the first 401 ends the run: each one left behind used to
    # be printed by asyncio.run() as "unhandled exception during asyncio.run() shutdown"
    fake_openai.faults = {"auth": 1.0}  # type: ignore[attr-defined]
    dataset = _many_goldens(tmp_path)
    argv = [command, str(dataset), "--system", f"{user_module}:answer"]
    if command == "benchmark":
        argv += ["--system", f"again={user_module}:answer"]
    argv += ["--judge", "openai:gpt-4.1-mini", "--judge", "b=openai:gpt-4.1"]
    argv += ["--base-url", fake_openai.url, "--n-jobs", "16"]  # type: ignore[attr-defined]
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_BASE_URL"}
    env["OPENAI_API_KEY"] = "sk-refused"
    done = subprocess.run(
        [sys.executable, "-m", "synth", *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    # the one notice a machine whose tiktoken cache lacks the encoding gets is not the error's
    lines = [line for line in done.stderr.splitlines() if "tiktoken's cache" not in line]
    assert len(lines) == 1 and lines[0].startswith("synth: error: "), done.stderr
    assert "API key was refused" in lines[0] and "sk-refused" not in done.stderr
    assert fake_openai.request_count("chat") >= 1  # type: ignore[attr-defined]


def test_evaluate_judge_provider_typo(
    dataset_file: Path, user_module: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = assert_fails(
        ["evaluate", str(dataset_file), "--judge", "opnai:gpt-4.1-mini"],
        capsys,
        "unknown model provider 'opnai'",
        "did you mean 'openai'",
    )
    assert "cannot import" not in line


@pytest.mark.parametrize(
    ("code", "fragments"),
    [
        ("def answer(q):\n    return q +\n", ("SyntaxError: invalid syntax", ".py, line 2)")),
        ("import os\nTOKEN = os.environ['NOPE_TOKEN']\n", ("raised KeyError: 'NOPE_TOKEN'",)),
    ],
)
def test_evaluate_system_module_failing_at_import(
    code: str,
    fragments: tuple[str, ...],
    dataset_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from synth.errors import ConfigError

    monkeypatch.chdir(tmp_path)
    name = f"broken_user_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(code)
    for flag, spec in (("--system", f"{name}:answer"), ("--retriever", f"{name}.py:answer")):
        line = assert_fails(["evaluate", str(dataset_file), flag, spec], capsys, *fragments)
        assert repr(name) in line or f"{name}.py" in line
    with pytest.raises(ConfigError) as info:  # --debug: the error, with the user's traceback
        main(["--debug", "evaluate", str(dataset_file), "--system", f"{name}:answer"])
    assert isinstance(info.value.__cause__, SyntaxError | KeyError)


def test_benchmark_unknown_ranking_metric_is_refused_before_any_call(
    closes_leaked_clients: object,
    fake_openai: object,
    dataset_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    name = f"counted_user_{uuid.uuid4().hex[:8]}"
    asked = tmp_path / "asked.txt"
    (tmp_path / f"{name}.py").write_text(
        f"def answer(q):\n    open({str(asked)!r}, 'a').write(q + '\\n')\n    return '0'\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    argv = ["benchmark", str(dataset_file), "--system", f"{name}:answer", "--rank-by", "nope"]
    argv += ["--judge", "openai:gpt-4.1-mini", "--base-url", fake_openai.url]  # type: ignore[attr-defined]
    assert_fails(argv, capsys, "cannot rank by 'nope'", "exact_match", "answer_relevance")
    assert not asked.exists()
    assert fake_openai.request_count() == 0  # type: ignore[attr-defined]
