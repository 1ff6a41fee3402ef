"""Embedding requests take the chat requests' path: synth's one retry loop (Retry-After, re-asks of
cut-off and malformed replies), the run's limiter, counts by kind; a server no retry will fix stops
the run with one line; no secret is ever shown.

Everything runs against the fake OpenAI-compatible server over HTTP with the real ``openai`` SDK.
"""

from __future__ import annotations

import base64
import gc
import json
import socket
import threading
import traceback
import warnings
from pathlib import Path

import fake_openai
import numpy as np
import pytest
import synth_replies

from synth import Dataset, Golden, make_llm
from synth.cli import main
from synth.errors import (
    BadRequestError,
    ConfigError,
    EndpointError,
    OutputParseError,
    ServerError,
    SynthError,
)
from synth.llm._aimd import START
from synth.llm._redact import redact_text
from synth.llm.limiter import RateLimiter
from synth.llm.retry import RetryConfig
from synth.llm.usage import Usage
from synth.run.manifest import RETRY_KINDS
from synth.store.openai_embedder import OpenAIEmbedder, embeddings_label

REPO = Path(__file__).resolve().parent.parent
SAMPLE_DOCS = str(REPO / "sample_docs")
FAST = RetryConfig(initial_delay=0.001, max_delay=0.01, jitter=0)
KEY = "sk-provider-test-secret-0123456789"


@pytest.fixture
def quiet_gc() -> object:
    """Commands leave HTTP clients to the process exit; collect them here, quietly."""
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


def closed_port_url() -> str:
    """A base URL where nothing listens (a port bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def embedder_for(server: fake_openai.FakeOpenAI, **kwargs) -> OpenAIEmbedder:
    kwargs.setdefault("retry", FAST)
    return OpenAIEmbedder("m", base_url=server.url, **kwargs)


# ---- A: one retry loop, the limiter, counts ------------------------------------------------------
@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        ("rate_limit", "rate_limit"),
        ("server_error", "server"),
        ("overloaded", "server"),
        ("disconnect", "connection"),
        ("cutoff", "incomplete"),
        ("invalid_json", "invalid_output"),
        ("wrong_count", "invalid_output"),
    ],
)
def test_an_embedding_fault_is_retried_and_counted_by_kind(fake_openai, fault, kind) -> None:
    embedder = embedder_for(fake_openai)
    fake_openai.queue_faults(fault, endpoint="embeddings")
    vectors = embedder.embed_array(["a", "b", "c"], label="ingest")
    assert vectors.shape == (3, fake_openai.embedding_dim)
    assert fake_openai.request_count("embeddings") == 2  # the fault, then one good reply
    counts = embedder.usage.counts(label=embeddings_label("ingest"))
    assert counts.retries == {kind: 1}
    assert counts.requests == 2 and counts.responses == 1 and not counts.failures


def test_vectors_are_asked_as_base64_and_read_the_same_from_a_server_that_sends_lists(
    fake_openai,
) -> None:
    """base64 is asked for (a list of numbers costs the SDK a Python object per value); a
    server that ignores ``encoding_format`` and sends lists gives the same vectors."""
    texts = ["alpha", "beta", "gamma"]
    asked = embedder_for(fake_openai).embed_array(texts)
    assert [r.body["encoding_format"] for r in fake_openai.requests_to("embeddings")] == ["base64"]
    fake_openai.lists_only = True
    listed = embedder_for(fake_openai).embed_array(texts)
    assert asked.shape == listed.shape == (3, fake_openai.embedding_dim)
    assert np.array_equal(asked, listed)


@pytest.mark.parametrize(
    "spoilt",
    ["!!not base64!!", base64.b64encode(b"\x00\x00\x80").decode(), "", [], [[1.0, 2.0]]],
)
def test_a_vector_that_is_not_float32_values_is_asked_again(fake_openai, spoilt) -> None:
    """A base64 vector that does not decode, or not to whole float32 values, an empty one, a list
    of lists: an invalid reply, asked again (then the good one is read)."""
    embedder = embedder_for(fake_openai)
    embedder.embed(["first"])  # fixes the dimension

    real = embedder._vectors

    def spoil_once(response, count):
        embedder._vectors = real
        response.data[0].embedding = spoilt
        return real(response, count)

    embedder._vectors = spoil_once
    assert len(embedder.embed(["x", "y"])[0]) == fake_openai.embedding_dim
    assert embedder.usage.total.retries == {"invalid_output": 1}


def test_a_wrong_dimension_after_the_first_reply_is_asked_again(fake_openai) -> None:
    embedder = embedder_for(fake_openai)
    embedder.embed(["first"])
    fake_openai.queue_faults("wrong_dimension", endpoint="embeddings")
    assert len(embedder.embed(["x", "y"])[0]) == fake_openai.embedding_dim
    assert embedder.usage.total.retries == {"invalid_output": 1}


def test_malformed_replies_are_reasked_max_reasks_times_then_fail(fake_openai) -> None:
    embedder = embedder_for(fake_openai, retry=FAST.model_copy(update={"max_reasks": 1}))
    fake_openai.queue_faults("wrong_count", "invalid_json", endpoint="embeddings")
    with pytest.raises(OutputParseError, match="not lists of numbers"):
        embedder.embed(["a", "b"])
    assert fake_openai.request_count("embeddings") == 2
    assert embedder.usage.total.failures == {"invalid_output": 1}


def test_a_reply_with_a_vector_missing_says_so(fake_openai) -> None:
    embedder = embedder_for(fake_openai, retry=FAST.model_copy(update={"max_reasks": 0}))
    fake_openai.queue_faults("wrong_count", endpoint="embeddings")
    with pytest.raises(OutputParseError, match="1 vectors for 2 texts"):
        embedder.embed(["a", "b"])


def test_the_sdk_does_not_retry_behind_synths_back(fake_openai) -> None:
    embedder = embedder_for(fake_openai, max_retries=0)
    fake_openai.queue_faults("server_error", endpoint="embeddings")
    with pytest.raises(ServerError):
        embedder.embed(["a"])
    assert fake_openai.request_count("embeddings") == 1  # no SDK retry hidden inside


def test_retry_after_is_honoured_on_embeddings(fake_openai) -> None:
    fake_openai.retry_after = 0.3
    embedder = embedder_for(fake_openai)
    fake_openai.queue_faults("rate_limit", endpoint="embeddings")
    embedder.embed(["a"])
    limited, answered = fake_openai.requests_to("embeddings")
    assert limited.outcome == "rate_limit" and answered.outcome == "ok"
    # FAST alone would wait at most 0.01 s: the server's Retry-After set the wait
    assert answered.started - limited.finished >= 0.3


def test_embedding_requests_hold_slots_of_the_shared_limiter(fake_openai) -> None:
    fake_openai.latency = 0.05
    limiter = RateLimiter(2)
    embedder = embedder_for(fake_openai, limiter=limiter, batch_size=1)
    threads = [
        threading.Thread(target=embedder.embed, args=([f"t{i}a", f"t{i}b"],)) for i in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert fake_openai.request_count("embeddings") == 8
    assert fake_openai.peak_in_flight == 2 == limiter.peak_in_flight


def test_generate_under_faults_on_chat_and_embeddings_delivers_exactly_n(
    quiet_gc, tmp_path, monkeypatch, capsys
) -> None:
    faults = {"rate_limit": 0.05, "server_error": 0.05, "cutoff": 0.03, "invalid_json": 0.03}
    with fake_openai.FakeOpenAI(reply=synth_replies.reply, faults=faults, seed=3) as server:
        # every kind on embeddings, each followed by good replies so no batch runs out of re-asks
        # a 429, a 5xx, a cut-off and a malformed reply on embeddings (each kind alone is in the
        # tests above); only two malformed, so no batch runs out of re-asks (max_reasks=2)
        # however the concurrent batches take them
        server.queue_faults(
            "rate_limit", None, "server_error", None, "cutoff", None, None, "wrong_count",
            endpoint="embeddings",
        )  # fmt: skip
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.chdir(tmp_path)
        argv = ["generate", SAMPLE_DOCS, "--goldens", "20", "--base-url", server.url]
        code = main([*argv, "-o", "out.jsonl", "--json", "--max-concurrent", "4"])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert server.peak_in_flight <= 4
        assert not server.embedding_sequence  # every embedding fault was served
    report = json.loads(out)
    assert report["goldens"] == 20 == len(Dataset.load(tmp_path / "out.jsonl"))
    kinds = report["totals"]["retries_by_kind"]
    assert set(kinds) == {"chat", "embeddings"} and set(RETRY_KINDS) <= set(kinds["embeddings"])
    embedded = kinds["embeddings"]
    assert embedded["rate_limit"] == 1 and embedded["server"] == 1
    assert embedded["incomplete"] == 1 and embedded["invalid_output"] == 1
    assert sum(kinds["chat"].values()) > 0
    stages = {row["stage"]: row for row in report["stages"]}
    assert stages["ingest"]["retries_by_kind"]["embeddings"]["rate_limit"] == 1  # the first batch
    embed_retries = sum(sum(r["retries_by_kind"]["embeddings"].values()) for r in stages.values())
    assert embed_retries == 4
    assert report["totals"]["retries"] == sum(sum(k.values()) for k in kinds.values())


# ---- D: a server no retry will fix stops the run at once -----------------------------------------
def test_a_closed_port_stops_a_model_at_the_first_refused_connection() -> None:
    url = closed_port_url()
    usage = Usage()
    llm = make_llm("openai:m", base_url=url, retry=FAST, usage=usage)
    with pytest.raises(EndpointError) as caught:
        llm.complete("x")
    assert url in str(caught.value) and "check --base-url" in str(caught.value)
    assert usage.total.retries == {}  # not retried six times with backoff
    with pytest.raises(EndpointError):  # and later calls are not even sent
        llm.complete("y")


def test_400s_stop_after_three_but_once_answered_are_per_item(fake_openai) -> None:
    llm = make_llm("openai:m", base_url=fake_openai.url, retry=FAST)
    fake_openai.queue_faults("bad_request", "bad_request")
    for _ in range(2):  # one or two may be the items' fault
        with pytest.raises(BadRequestError):
            llm.complete("x")
    fake_openai.queue_faults("bad_request")
    with pytest.raises(EndpointError, match="refuses every request as invalid"):
        llm.complete("x")
    assert fake_openai.request_count("chat") == 3
    answered = make_llm("openai:m", base_url=fake_openai.url, retry=FAST)
    answered.complete("fine")
    fake_openai.queue_faults("bad_request", "bad_request", "bad_request", "not_found")
    for _ in range(4):
        with pytest.raises(BadRequestError):
            answered.complete("x")


def assert_one_line(err: str, *fragments: str) -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("synth: error: ")]
    assert len(lines) == 1, err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("where", ["closed_port", "not_found", "bad_request", "auth"])
def test_generate_against_a_hopeless_server_stops_with_one_line(
    quiet_gc, where, tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    fault = None if where == "closed_port" else where
    faults = {fault: 1.0} if fault else {}
    with fake_openai.FakeOpenAI(faults=faults, fault_endpoints=("chat", "embeddings")) as server:
        url = closed_port_url() if where == "closed_port" else server.url
        argv = ["generate", SAMPLE_DOCS, "--goldens", "5", "--base-url", url, "-o", "o.jsonl"]
        code = main([*argv, "--quiet"])
        _, err = capsys.readouterr()
        sent = server.request_count()
    assert code == 2
    fix = "OPENAI_API_KEY" if where == "auth" else "check --base-url"
    assert_one_line(err, url, fix)
    # the ingest's embedding requests leave together (they overlap the run), at most the
    # adaptive limiter's starting level of them; none is retried and nothing more is sent
    assert sent <= START
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.parametrize("where", ["closed_port", "not_found", "bad_request"])
def test_generate_with_local_embeddings_stops_on_the_chat_server(
    quiet_gc, where, tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    faults = {} if where == "closed_port" else {where: 1.0}
    with fake_openai.FakeOpenAI(faults=faults) as server:
        url = closed_port_url() if where == "closed_port" else server.url
        argv = ["generate", SAMPLE_DOCS, "--goldens", "5", "--base-url", url, "--quiet"]
        code = main([*argv, "--embedder", "hash", "--max-concurrent", "2", "-o", "o.jsonl"])
        _, err = capsys.readouterr()
        sent = server.request_count("chat")
    assert code == 2
    assert_one_line(err, url, "check --base-url", "--model")
    # a 404 stops at the first answer, 400s at the third; two requests may already be in flight
    assert sent <= (3 if where == "bad_request" else 1) + 1


def test_generate_batch_against_a_closed_port_stops_with_one_line(
    quiet_gc, tmp_path, monkeypatch, capsys
) -> None:
    """The Batch API's uploads go to the same server: nothing listening there stopped nothing,
    each request's refused upload was retried as its own for a minute, then exit 3."""
    import time

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    url = closed_port_url()
    argv = ["generate", SAMPLE_DOCS, "--goldens", "5", "--base-url", url, "--quiet", "--batch"]
    started = time.monotonic()
    code = main([*argv, "--embedder", "hash", "-o", "o.jsonl"])
    took = time.monotonic() - started
    _, err = capsys.readouterr()
    assert code == 2
    assert_one_line(err, url, "nothing answers there", "check --base-url")
    assert took < 20  # not a minute of retries
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.parametrize("where", ["closed_port", "not_found", "auth"])
def test_ingest_against_a_hopeless_server_stops_with_one_line(
    quiet_gc, where, tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    faults = {} if where == "closed_port" else {where: 1.0}
    with fake_openai.FakeOpenAI(faults=faults, fault_endpoints=("embeddings",)) as server:
        url = closed_port_url() if where == "closed_port" else server.url
        code = main(["ingest", SAMPLE_DOCS, "--embedder", "openai:m", "--base-url", url])
        _, err = capsys.readouterr()
        sent = server.request_count("embeddings")
    assert code == 2
    assert_one_line(err, url, "OPENAI_API_KEY" if where == "auth" else "check --base-url")
    assert sent <= 1


@pytest.mark.parametrize("where", ["closed_port", "not_found", "bad_request"])
def test_evaluate_with_a_judge_on_a_hopeless_server_stops_with_one_line(
    quiet_gc, where, tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "provider_system.py").write_text("def answer(question):\n    return '0'\n")
    goldens = [Golden(input=f"What is {n} + {n}?", expected_output=str(2 * n)) for n in range(8)]
    data = Dataset(goldens).save(tmp_path / "goldens.jsonl")
    faults = {} if where == "closed_port" else {where: 1.0}
    with fake_openai.FakeOpenAI(faults=faults) as server:
        url = closed_port_url() if where == "closed_port" else server.url
        argv = ["evaluate", str(data), "--system", "provider_system:answer"]
        code = main([*argv, "--judge", "openai:m", "--base-url", url, "--n-jobs", "1"])
        _, err = capsys.readouterr()
        sent = server.request_count("chat")
    assert code == 2
    assert_one_line(err, url, "check --base-url")
    assert sent <= 3


@pytest.mark.parametrize(
    "argv",
    [
        ["generate", SAMPLE_DOCS, "--goldens", "2", "--model", "openai:m", "--embedder", "hash"],
        ["ingest", SAMPLE_DOCS, "--embedder", "openai:m"],
    ],
    ids=["generate", "ingest"],
)
@pytest.mark.parametrize("base_url", ["localhost:8000/v1", "htp://127.0.0.1:8000/v1", "http://"])
def test_a_base_url_that_is_not_an_http_url_is_one_line_before_any_request(
    argv, base_url, tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    code = main([*argv, "--base-url", base_url])
    _, err = capsys.readouterr()
    assert code == 2
    line = assert_one_line(err, repr(base_url), "http:// or https://", "check --base-url")
    if "://" not in base_url:
        assert f"did you mean 'http://{base_url}'?" in line
    assert not (tmp_path / "goldens.jsonl").exists()


def test_an_empty_openai_base_url_variable_is_the_default_server(monkeypatch) -> None:
    # a CI secret that is not set comes through as an empty variable: the SDK would call ""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "")
    llm = make_llm("openai:m")
    assert llm.unwrap().base_url == "https://api.openai.com/v1/"  # type: ignore[attr-defined]
    embedder = OpenAIEmbedder("m")
    assert str(embedder._make_client().base_url) == "https://api.openai.com/v1/"
    embedder.close()
    llm.close()


def test_a_malformed_openai_base_url_variable_names_the_variable(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "127.0.0.1:8000/v1")
    for make in (lambda: make_llm("openai:m"), lambda: OpenAIEmbedder("m")):
        with pytest.raises(ConfigError, match="check OPENAI_BASE_URL"):
            make()


# ---- E: no secret anywhere -------------------------------------------------------------------------
def test_redact_text_hides_credentials_by_their_shape() -> None:
    text = (
        "key sk-proj-abcdefgh12345678 header Authorization: Bearer tok_0123456789abc "
        "api-key: azure0123456789 x-api-key=anth0123456789 url http://bob:pa55word@db:8000/x "
        "query https://h/v1?api_key=g00gle0123&token=t0k3n0123 keep key rotation and sk-12"
    )
    clean = redact_text(text)
    for secret in ("abcdefgh12345678", "tok_0123456789abc", "azure0123456789", "anth0123456789"):
        assert secret not in clean
    for secret in ("pa55word", "g00gle0123", "t0k3n0123", "bob:"):
        assert secret not in clean
    assert "key rotation and sk-12" in clean and "db:8000/x" in clean
    assert redact_text("a known value 1234567890", ["1234567890"]) == "a known value <redacted>"


def files_under(*roots: Path) -> list[Path]:
    return [p for root in roots for p in root.rglob("*") if p.is_file()]


def hnsw_segment_file(path: Path) -> bool:
    """Chroma's HNSW index files (``<store>/<segment uuid>/*.bin``). hnswlib allocates them with
    malloc for their whole capacity and writes the unused part as it is, so they may hold bytes
    of whatever the process freed before (a key in a request header included): synth writes
    nothing there. Seen once in about ten runs; the sqlite file next to them is checked."""
    return path.suffix == ".bin" and ".synth" in path.parts and "chroma" in path.parts


def assert_nowhere(secret: str, out: str, err: str, *roots: Path) -> None:
    assert secret not in out and secret not in err
    for path in files_under(*roots):
        if not hnsw_segment_file(path):
            assert secret.encode() not in path.read_bytes(), path


def test_a_key_echoed_by_the_server_is_shown_nowhere(quiet_gc, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    with fake_openai.FakeOpenAI(
        reply=synth_replies.reply, echo_key=True, fault_endpoints=("chat", "embeddings")
    ) as server:
        # embeddings: a refused key, quoted back with its "Bearer" header
        server.faults = {"auth": 1.0}
        assert main(["ingest", SAMPLE_DOCS, "--embedder", "openai:m", "--base-url", server.url])
        out, err = capsys.readouterr()
        assert "Bearer <redacted>" in err  # the server did echo it: the check below can fail
        assert_nowhere(KEY, out, err, tmp_path)
        # chat: every error path (429s and 5xx retried, then a refusal) echoes the key
        server.faults = {}
        faults = ("rate_limit", "server_error", "bad_request", "auth", "auth", "auth")
        server.queue_faults(*faults)
        argv = ["generate", SAMPLE_DOCS, "--goldens", "2", "--base-url", server.url]
        argv += ["--embedder", "hash", "-o", "o.jsonl", "--max-concurrent", "1"]
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 2
        assert_nowhere(KEY, out, err, tmp_path)
        server.sequence.clear()
        server.queue_faults(*faults)
        with pytest.raises(SynthError) as raised:  # --debug: the traceback is shown
            main([*argv, "--debug"])
        shown = "".join(traceback.format_exception(raised.value))
        out, err = capsys.readouterr()
        assert_nowhere(KEY, out + shown, err, tmp_path)

        with pytest.raises(EndpointError) as caught:  # a repr or a traceback neither
            server.sequence.clear()
            server.faults = {"bad_request": 1.0}
            llm = make_llm("openai:m", base_url=server.url, retry=FAST)
            for _ in range(3):
                try:
                    llm.complete("x")
                except BadRequestError as exc:
                    assert KEY not in repr(exc) and exc.__cause__ is None
        assert KEY not in repr(caught.value) and KEY not in str(caught.value)


@pytest.mark.parametrize("scheme", ["http://", ""])  # host:port is accepted without a scheme
def test_a_store_password_is_shown_nowhere(
    quiet_gc, tmp_path, monkeypatch, capsys, scheme: str
) -> None:
    monkeypatch.chdir(tmp_path)
    port = closed_port_url().split(":")[2].split("/")[0]
    store = f"{scheme}admin:Chr0maPassw0rd@127.0.0.1:{port}"
    code = main(["ingest", SAMPLE_DOCS, "--embedder", "hash", "--store-url", store, "--json"])
    out, err = capsys.readouterr()
    assert code == 2
    assert_one_line(err, "127.0.0.1")
    assert_nowhere("Chr0maPassw0rd", out, err, tmp_path)
    bad = "http://admin:Chr0maPassw0rd@127.0.0.1:1/some/path"  # refused before connecting
    assert main(["ingest", SAMPLE_DOCS, "--embedder", "hash", "--store-url", bad]) == 2
    out, err = capsys.readouterr()
    assert_one_line(err, "without a path")
    assert_nowhere("Chr0maPassw0rd", out, err, tmp_path)


def test_an_embedder_made_before_a_run_follows_each_run(quiet_gc, tmp_path, monkeypatch) -> None:
    """plan_from_docs makes the embedder before any model; the run that follows, and a second
    run after close(), still pace and count its requests with their own limiter and usage."""
    from synth import Synthesizer

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    with fake_openai.FakeOpenAI(reply=synth_replies.reply) as server:
        synth = Synthesizer("openai:m", embedder="openai:e", base_url=server.url)
        synth.plan_from_docs(SAMPLE_DOCS, num_goldens=2)
        embedder = synth._models().embedder()
        runs = []
        for _ in range(2):
            synth.generate_goldens_from_docs(SAMPLE_DOCS, num_goldens=2)
            _, _, usages, limiter, *_ = synth._models().models()
            assert synth._models().embedder() is embedder  # not made again
            assert embedder.limiter is limiter and embedder.usage is usages[0]
            runs.append((limiter, usages[0]))
            synth.close()
        assert runs[0][0] is not runs[1][0] and runs[0][1] is not runs[1][1]
