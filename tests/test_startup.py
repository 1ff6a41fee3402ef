"""Start-up: a command imports what it needs when it needs it.

``synth --help`` declares every command's arguments and imports none of the library behind them;
``synth export`` reads and writes a dataset without the store, the models or pandas; ``import
synth`` loads a public name only when it is read. Checked by which modules a fresh interpreter
holds afterwards (``sys.modules``), never by a clock: ``bench/startup.py`` measures the time.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import synth
from synth.cli._flags import STATUS_FILTERS
from synth.dataset.review import STATUS_FILTERS as REVIEW_STATUS_FILTERS

ROOT = Path(__file__).resolve().parent.parent
#: what no command that only parses or converts should pay for
HEAVY = ("chromadb", "torch", "openai", "pandas", "numpy", "tiktoken", "langchain_text_splitters")
#: and what `synth --help` needs none of either
HELP_HEAVY = (
    *HEAVY,
    "pydantic",
    "rich",
    "asyncio",
    "synth.data",
    "synth.pipeline",
    "synth.dataset",
)

_RUN = """
import contextlib, io, json, sys
from synth.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main({argv!r})
    except SystemExit as stop:
        code = stop.code
print(json.dumps({{"code": code, "loaded": [m for m in {heavy!r} if m in sys.modules]}}))
"""


def _command_imports(
    argv: list[str], heavy: tuple[str, ...], cwd: Path = ROOT
) -> dict[str, object]:
    """The exit code of ``synth argv`` run in a fresh interpreter, and which of ``heavy`` it loaded."""
    code = _RUN.format(argv=argv, heavy=heavy)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=cwd
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def test_help_imports_no_library_behind_the_commands() -> None:
    assert _command_imports(["--help"], HELP_HEAVY) == {"code": 0, "loaded": []}


def test_version_prints_the_version_and_imports_no_library() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "synth", "--version"], capture_output=True, text=True, cwd=ROOT
    )
    assert (out.returncode, out.stdout) == (0, f"synth {synth.__version__}\n")
    assert _command_imports(["--version"], HELP_HEAVY) == {"code": 0, "loaded": []}


def test_a_command_help_imports_no_library_either() -> None:
    for command in ("generate", "export", "evaluate", "ingest"):
        assert _command_imports([command, "--help"], HELP_HEAVY) == {"code": 0, "loaded": []}


def test_export_imports_neither_store_nor_models_nor_pandas(tmp_path: Path) -> None:
    goldens = [synth.Golden(input=f"question {i}?", expected_output="yes") for i in range(3)]
    synth.Dataset(goldens).save(tmp_path / "goldens.jsonl")
    argv = ["export", "goldens.jsonl", "-f", "deepeval", "-o", "out.json"]
    assert _command_imports(argv, HEAVY, cwd=tmp_path) == {"code": 0, "loaded": []}
    assert len(json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))) == 3


def test_import_synth_loads_a_name_when_it_is_read() -> None:
    code = (
        "import sys, synth; before = 'synth.data' in sys.modules; golden = synth.Golden; "
        "print(before, 'synth.data' in sys.modules, 'synth.pipeline' in sys.modules, "
        "golden.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "False", "synth.data"]


def test_from_synth_import_works_for_every_name() -> None:
    code = f"from synth import {', '.join(synth.__all__)}; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        synth.NoSuchThing  # noqa: B018


def _type_checking_imports(package: str = "synth") -> dict[str, tuple[str, ...]]:
    """What ``package``'s __init__.py imports under ``if _typing.TYPE_CHECKING:``, by module."""
    init = ROOT.joinpath(*package.split("."), "__init__.py")
    tree = ast.parse(init.read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "_typing.TYPE_CHECKING"
    )
    found: dict[str, tuple[str, ...]] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module
        found[node.module] = tuple(alias.name for alias in node.names)
    return found


def test_a_run_imports_no_evaluator_nor_report_page_nor_schema_validator() -> None:
    """A run reads manifests through synth.report (refills): the package imports a report's
    page, and with it the evaluators and their YAML, only when one is read; the tools' argument
    checks import jsonschema (60 ms) only when a run has tools."""
    unused = ("synth.evaluate", "synth.report.dataset", "yaml", "jsonschema")
    code = (
        "import sys, synth.cli.generate, synth.pipeline; "
        f"print([m for m in {unused!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_report_function_is_read_from_its_module() -> None:
    import synth.report as report

    found = _type_checking_imports("synth.report")
    assert found == {module: (name,) for name, module in report._HOME.items()}
    for name, module in report._HOME.items():
        assert getattr(report, name).__module__ == module and name in report.__all__
    with pytest.raises(AttributeError, match="no_such_report"):
        report.no_such_report  # noqa: B018


def test_names_copied_into_the_cli_agree_with_the_library() -> None:
    assert STATUS_FILTERS == REVIEW_STATUS_FILTERS


_FIRST_REQUEST = """
import contextlib, io, json, sys
sys.path.insert(0, {tests!r})
from fake_openai import FakeOpenAI
from judge_replies import faithfulness_reply
from synth.cli import main
loaded = []
def reply(request):
    if not loaded:
        loaded.append([m for m in {heavy!r} if m in sys.modules])
    prompt = "\\n".join(str(m.get("content", "")) for m in request["messages"])
    if '"claims"' in prompt:
        return faithfulness_reply(prompt, [True])
    return {{"score": 4, "reason": "fine"}}
argv = ["evaluate", "data.json", "--judge", "openai:judge", "--base-url", None, "--json"]
with FakeOpenAI(reply=reply) as server, contextlib.redirect_stdout(io.StringIO()):
    argv[5] = server.url
    code = main(argv)
print(json.dumps({{"code": code, "loaded": loaded[0]}}))
"""


def test_evaluate_sends_its_first_judge_request_before_loading_what_scoring_needs(
    tmp_path: Path,
) -> None:
    """What only scores, summarizes and writes the replies (the generate package that locates a
    faithfulness verdict's evidence, numpy for the intervals, yaml for a .yaml report, rich for
    the tables, the tokenizer a provider's budget would need) is imported once replies are back, while the rest
    are still out, and what only generation needs (the language check) not at all: the first
    request does not wait for it."""
    items = [
        {"id": f"q{i}", "question": f"What is item {i}?", "contexts": [f"Item {i} is blue."],
         "answer": f"Item {i} is blue."}
        for i in range(3)
    ]  # fmt: skip
    (tmp_path / "data.json").write_text(json.dumps(items), encoding="utf-8")
    heavy = ("numpy", "synth.generate", "yaml", "tiktoken", "synth._language", "rich")
    code = _FIRST_REQUEST.format(tests=str(ROOT / "tests"), heavy=heavy)
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env={**os.environ, "OPENAI_API_KEY": "sk-test-startup", "PYTHONPATH": str(ROOT)},
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {"code": 0, "loaded": []}


_FIRST_RUN = """
import contextlib, io, json, sys, threading
sys.path.insert(0, {tests!r})
from fake_openai import FakeOpenAI, smart_reply
from synth.cli import main
loaded = []
first_chat = threading.Event()
def reply(request):
    if not loaded:
        loaded.append([m for m in ("chromadb",) if m in sys.modules])
        first_chat.set()
    return smart_reply(request)
argv = ["generate", "docs", "--goldens", "2", "--embedder", "openai:text-embedding-3-small",
        "--base-url", None, "--json", "-o", "goldens.jsonl"]
with FakeOpenAI(reply=reply) as server, contextlib.redirect_stdout(io.StringIO()):
    choose = server._choose_fault
    def embeddings_after_the_first_chat(kind, *args, **kwargs):
        if kind == "embeddings":  # the vectors come back once a chat request is out
            first_chat.wait(60)
        return choose(kind, *args, **kwargs)
    server._choose_fault = embeddings_after_the_first_chat
    argv[7] = server.url
    code = main(argv)
print(json.dumps({{"code": code, "loaded": loaded[0] if loaded else None}}))
"""


def test_a_first_run_sends_its_first_requests_before_opening_chroma(tmp_path: Path) -> None:
    """Into a new store (its folder not there yet) nothing stored needs reading: Chroma (its
    import and client, 0.5 s of a core) opens at the ingest's first write, which follows the
    embeddings, while the critic's first requests are out."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("pumps", "valves"):
        text = f"The {name} are checked every spring. Each check takes an hour of work. " * 30
        (docs / f"{name}.txt").write_text(text, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-c", _FIRST_RUN.format(tests=str(ROOT / "tests"))],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "OPENAI_API_KEY": "sk-test-startup", "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["code"] in (0, 3), out.stderr[-2000:]
    assert result["loaded"] == []  # no chromadb when the first chat request arrived
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=str(tmp_path / ".synth" / "chroma"), settings=Settings(anonymized_telemetry=False)
    )
    (collection,) = client.list_collections()
    assert collection.count() > 0  # and the chunks were stored after it
