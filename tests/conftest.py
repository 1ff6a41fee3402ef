"""Test-wide guards: no test reaches the internet or a real model.

Any socket connection to an address other than loopback fails, API keys are removed from the
environment, and hub downloads are switched off, so a test that would call a real provider fails
loudly instead of passing by luck.
"""

from __future__ import annotations

import ipaddress
import os
import random
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

for _key in (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "OPENAI_BASE_URL",
):
    os.environ.pop(_key, None)
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["ANONYMIZED_TELEMETRY"] = "False"

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_local(address: object) -> bool:
    if isinstance(address, tuple) and address:
        host = address[0]
        if host in ("localhost", ""):
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False
    return True  # unix sockets


def _guarded_connect(self: socket.socket, address: object) -> None:
    if not _is_local(address):
        raise OSError(f"tests may not reach the network: connect to {address!r} refused")
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    if not _is_local(address):
        raise OSError(f"tests may not reach the network: connect to {address!r} refused")
    return _real_connect_ex(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--shuffle-seed",
        type=int,
        default=None,
        help="run the test files in an order shuffled with this seed, and each file's tests in "
        "an order of their own, to find a test that passes only after (or before) another",
    )


def pytest_report_header(config: pytest.Config) -> str | None:
    seed = config.getoption("--shuffle-seed")
    return None if seed is None else f"tests shuffled with --shuffle-seed {seed}"


#: files whose tests share nothing made once per file, handed to the parallel workers one test at
#: a time: each page of test_docs.py is a run of its own (the file is a minute and more in all)
SPREAD_FILES = frozenset({"tests/test_docs.py"})


#: the longest units of work, longest first (measured on this 2-core machine, docs/testing.md "How
#: long the suite takes"), handed to the workers before the rest: a worker is given its next unit
#: while it still runs the one before (up to three one-test units at a time), so a long unit handed
#: out last keeps one worker busy alone at the end while the other has nothing left to do. An
#: entry names a file, a test, or (no brackets) a parametrized test's every case; a stale list
#: costs time, not results. test_interop.py leads: 33 s with its tools' environments built, it
#: builds the missing ones first (pip and npm, 280 s on a machine that had none)
LONGEST_FIRST = (
    "tests/test_interop.py",
    "tests/test_bench_ingest.py",
    "tests/test_ingest_ray.py",
    "tests/test_report_eval_browser.py",
    "tests/test_pipeline_cli.py",
    "tests/test_pipeline_flow.py",
    "tests/test_pipeline_rate_limit.py",
    "tests/test_interrupt.py",
    "tests/test_batch_api.py",
    "tests/test_report_browser.py",
    "tests/test_llm_embeddings_path.py",
    "tests/test_llm_adaptive.py",
    "tests/test_docs.py::test_doc_blocks[docs/large-corpora.md]",
    "tests/test_update.py",
    "tests/test_run_lifecycle.py",
    "tests/test_pipeline_resume.py",
    "tests/test_refill.py",
    "tests/test_review_browser.py",
    "tests/test_scale_memory.py",
    "tests/test_store_reingest.py",
    "tests/test_stop_signals.py",
    "tests/test_generate_difficulty.py",
    "tests/test_ci_action.py",
    "tests/test_bench_generate.py",
    "tests/test_bench_formats.py",
    "tests/test_properties.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seed = config.getoption("--shuffle-seed")
    if seed is not None:
        items[:] = shuffled(items, random.Random(seed))
    elif hasattr(config, "workerinput"):
        # a parallel worker: every worker orders its collection alike, and the scheduler hands
        # the units out in that order
        order = {nodeid: n for n, nodeid in enumerate(dispatch_order([i.nodeid for i in items]))}
        items.sort(key=lambda item: order[item.nodeid])


def dispatch_order(nodeids: list[str]) -> list[str]:
    """``nodeids`` with the units of :data:`LONGEST_FIRST` first, in its order, then the rest as
    collected; the tests of one unit keep their order."""

    def rank(nodeid: str) -> int:
        unit = scope_of(nodeid)
        for n, prefix in enumerate(LONGEST_FIRST):
            if unit == prefix or unit.startswith(prefix + "["):
                return n
        return len(LONGEST_FIRST)

    return sorted(nodeids, key=rank)


def pytest_configure(config: pytest.Config) -> None:
    # the hook below exists only where pytest-xdist is loaded (not under `-p no:xdist`)
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_FileScheduling(), "synth-file-scheduling")


class _FileScheduling:
    """`--dist loadfile` that spreads the tests of :data:`SPREAD_FILES` one at a time."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getvalue("dist") != "loadfile":
            return None
        from xdist.scheduler import LoadScopeScheduling

        # hand the units out in the collection's order (see LONGEST_FIRST), or in the shuffled
        # one, instead of xdist's own (most tests first, which leaves the one-test pages last)
        config.option.loadscopereorder = False

        class Scheduling(LoadScopeScheduling):
            def _split_scope(self, nodeid: str) -> str:
                return scope_of(nodeid)

        return Scheduling(config, log)


def scope_of(nodeid: str) -> str:
    """The unit of work a parallel worker takes ``nodeid`` in: its file, or the test alone.

    A file's tests run on one worker, so a module-scoped fixture (a whole run, a browser, a
    server) is made once per file, as in a serial run.
    """
    file = nodeid.split("::")[0]
    return nodeid if file in SPREAD_FILES else file


def shuffled(items: list[pytest.Item], rng: random.Random) -> list[pytest.Item]:
    """``items`` with their files in a random order and each file's tests in one of their own.

    A file's tests stay together: a module-scoped fixture (a whole run made once for a file's
    tests) is then made once, as in an ordinary run, instead of once per visit.
    """
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::")[0], []).append(item)
    groups = list(files.values())
    rng.shuffle(groups)
    for group in groups:
        rng.shuffle(group)
    return [item for group in groups for item in group]


@pytest.fixture(autouse=True)
def _isolated_cwd(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run every test in its own empty folder, so `.synth/` never lands in the repo."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


@pytest.fixture(autouse=True)
def _forget_modules_of_the_test(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A module a test imports from its own folders (a `--system my_agent:run` run in this
    process puts the folder on the path, as `python -m` would) is forgotten when it ends, and the
    path restored: the next test in this process may have a `my_agent` of its own."""
    path, modules = list(sys.path), set(sys.modules)
    yield
    sys.path[:] = path
    root = os.path.realpath(tmp_path_factory.getbasetemp()) + os.sep
    for name in set(sys.modules) - modules:
        file = getattr(sys.modules[name], "__file__", None)
        if file and os.path.realpath(file).startswith(root):
            del sys.modules[name]


# ---- model layer (engineer D): the fake OpenAI-compatible server ---------------------------------
import fake_openai as _fake_openai_module  # noqa: E402  (tests/ is on sys.path for conftest)


@pytest.fixture
def fake_openai() -> object:
    """A started :class:`fake_openai.FakeOpenAI` on 127.0.0.1; script it per test, read its log."""
    with _fake_openai_module.FakeOpenAI() as server:
        yield server


@pytest.fixture
def fake_openai_smart() -> object:
    """A fake server answering every request with :func:`fake_openai.smart_reply` (schema-shaped JSON)."""
    with _fake_openai_module.FakeOpenAI(reply=_fake_openai_module.smart_reply) as server:
        yield server


# ---- docs (engineer I): the fake server the docs' `synth` commands talk to -----------------------
import synth_replies as _synth_replies  # noqa: E402


def _docs_reply(request: dict) -> str:
    """synth's generation prompts get plausible stage replies; anything else (judges) the smart reply."""
    fmt = request.get("response_format") or {}
    name = (fmt.get("json_schema") or {}).get("name") if fmt.get("type") == "json_schema" else None
    prompt = "\n".join(str(m.get("content", "")) for m in request.get("messages") or [])
    if name in _synth_replies._BY_SCHEMA or _synth_replies.stage_of(prompt) != "other":
        return _synth_replies.reply(request)
    return _fake_openai_module.smart_reply(request)


@pytest.fixture
def fake_openai_docs() -> object:
    """A fake server answering synth's stage prompts like a model would, and judges with JSON."""
    with _fake_openai_module.FakeOpenAI(reply=_docs_reply) as server:
        yield server


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One chromium (``/usr/bin/chromium``, driven by Playwright) for a test module."""
    from playwright.sync_api import sync_playwright
    from report_browser import CHROMIUM

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        yield browser
        browser.close()


#: seconds a `chroma run` gets to answer its heartbeat
SERVER_START_TIMEOUT = 60.0


from local_servers import free_port, stop  # noqa: E402


# ---- a real chroma server (shared by the store and ingest tests) --------------------------------------------------------------------------
def _chroma_binary() -> str:
    candidate = Path(sys.executable).with_name("chroma")
    found = str(candidate) if candidate.exists() else shutil.which("chroma")
    if not found:
        pytest.fail("the `chroma` command (installed with chromadb) was not found")
    return found


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real `chroma run` on 127.0.0.1; yields its URL once its heartbeat answers."""
    data = tmp_path_factory.mktemp("chroma-server")
    port = free_port()
    log = (data / "server.log").open("wb")
    process = subprocess.Popen(
        [
            _chroma_binary(),
            "run",
            "--path",
            str(data / "db"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            if process.poll() is not None:
                pytest.fail(f"chroma run exited with {process.returncode}: {_tail(data)}")
            try:
                with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1) as reply:
                    if reply.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(
                    f"chroma run did not answer within {SERVER_START_TIMEOUT}s: {_tail(data)}"
                )
            time.sleep(0.05)  # poll interval, not a wait for readiness
        yield url
    finally:
        stop(process)
        log.close()


@pytest.fixture
def empty_chroma_server(chroma_server: str) -> str:
    """conftest's Chroma server with no collection: the server lives for the whole session of a
    worker, so a test that compares what it stores with another store must not meet what an
    earlier test (in any order) left in the same collection."""
    import chromadb
    from chromadb.config import Settings

    from synth.store._chroma_client import close_client

    host, port = chroma_server.removeprefix("http://").split(":")
    client = chromadb.HttpClient(
        host=host, port=int(port), settings=Settings(anonymized_telemetry=False)
    )
    try:
        for collection in client.list_collections():
            client.delete_collection(collection.name)
    finally:
        close_client(client)
    return chroma_server


def _tail(folder: Path) -> str:
    return (folder / "server.log").read_text(errors="replace")[-2000:]
