"""The review server's API through starlette's TestClient: who may ask, what is saved, and how.

Each test reviews a real dataset file; what a decision saved is read back with Dataset.load, the
way the next ``synth review`` (or ``synth export --status``) would read it.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import report_data
from starlette.testclient import TestClient

from synth import Dataset
from synth.dataset._journal import journal_path
from synth.dataset.review import status_of
from synth.review import ReviewStore, Session, make_app, new_session
from synth.review.app import MAX_BODY

PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"
TOKEN = "t0ken-for-tests"


@contextlib.contextmanager
def _client(path: Path, reviewer: str = "ann") -> Iterator[TestClient]:
    """A client of a review server on ``path``; its store is closed (journal folded) after."""
    with (
        ReviewStore(path, reviewer=reviewer) as store,
        TestClient(make_app(store, Session(TOKEN, PORT)), base_url=BASE) as client,
    ):
        yield client


@pytest.fixture(params=[".jsonl", ".json"])
def dataset_file(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return report_data.dataset(8).save(tmp_path / f"goldens{request.param}")


@pytest.fixture
def client(dataset_file: Path) -> Iterator[TestClient]:
    with _client(dataset_file) as client:
        yield client


def _auth(**extra: str) -> dict[str, str]:
    return {"X-Synth-Token": TOKEN, **extra}


def _keys(client: TestClient) -> list[str]:
    answer = client.get("/api/goldens", headers=_auth())
    assert answer.status_code == 200
    return [g["key"] for g in answer.json()["goldens"]]


def _decide(client: TestClient, key: str, status: str, reason: str | None = None) -> Any:
    return client.post(
        "/api/decide", json={"key": key, "status": status, "reason": reason}, headers=_auth()
    )


def test_the_page_needs_the_token_and_carries_a_strict_csp(client: TestClient) -> None:
    refused = client.get("/")
    assert refused.status_code == 403 and "session token" in refused.text
    assert client.get("/?token=wrong").status_code == 403
    page = client.get(f"/?token={TOKEN}")
    assert page.status_code == 200
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'nonce-" in csp
    nonce = csp.split("'nonce-")[1].split("'")[0]
    assert f'<script nonce="{nonce}">' in page.text
    assert "<script>" not in page.text  # no inline script without the nonce
    assert 'src="http' not in page.text and 'href="http' not in page.text  # no remote assets
    assert page.headers["referrer-policy"] == "no-referrer"


#: what every answer carries, whatever it answers (the page's CSP differs only by its nonce)
SECURITY_HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    "x-frame-options": "DENY",
}
API_CSP = (
    "default-src 'none'; script-src 'none'; style-src 'none'; connect-src 'self'; "
    "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def test_every_answer_carries_the_security_headers(client: TestClient) -> None:
    key = _keys(client)[0]
    answers = {
        "page": client.get(f"/?token={TOKEN}"),
        "refused page": client.get("/"),
        "goldens": client.get("/api/goldens", headers=_auth()),
        "decision": _decide(client, key, "accepted"),
        "unknown golden": _decide(client, "nope", "accepted"),
        "refused decision": client.post("/api/decide", json={"key": key, "status": "accepted"}),
    }
    for name, answer in answers.items():
        assert {h: answer.headers.get(h) for h in SECURITY_HEADERS} == SECURITY_HEADERS, name
        if name != "page":
            assert answer.headers["content-security-policy"] == API_CSP, name
    nonce = answers["page"].headers["content-security-policy"].split("'nonce-")[1].split("'")[0]
    assert answers["page"].headers["content-security-policy"] == API_CSP.replace(
        "'none'; style-src 'none'", f"'nonce-{nonce}'; style-src 'nonce-{nonce}'"
    )
    refusal = answers["refused page"]
    assert refusal.headers["content-type"].startswith("text/plain")
    assert refusal.text.startswith("synth review: refused: ")


def test_reads_and_writes_without_the_token_are_refused(client: TestClient) -> None:
    assert client.get("/api/goldens").status_code == 403
    key = _keys(client)[0]
    body = {"key": key, "status": "accepted"}
    for headers in ({}, {"X-Synth-Token": "nope"}, {"X-Synth-Token": TOKEN[:-1]}):
        answer = client.post("/api/decide", json=body, headers=headers)
        assert answer.status_code == 403, headers
        assert answer.json()["error"] == (
            "refused: missing or wrong session token; open the URL synth review printed"
        )
    assert client.post("/api/edit", json={"key": key, "input": "x"}).status_code == 403


def test_the_hostile_text_is_in_the_page_only_as_escaped_json(client: TestClient) -> None:
    page = client.get(f"/?token={TOKEN}").text
    assert "<script>alert(1)" not in page and "<img src=x onerror" not in page
    assert "\\u003cscript\\u003ealert(1)" in page


@pytest.mark.parametrize(
    ("headers", "match"),
    [
        (
            {"Origin": "http://evil.example"},
            "refused: a page from 'http://evil.example' may not use this review server",
        ),
        (
            {"Origin": "http://127.0.0.1:9999"},
            "refused: a page from 'http://127.0.0.1:9999' may not use this review server",
        ),
        (
            {"Host": "evil.example"},
            f"refused: Host 'evil.example' is not this review server (127.0.0.1:{PORT})",
        ),
        (
            {"Sec-Fetch-Site": "cross-site"},
            "refused: a request from another site may not use this review server",
        ),
    ],
)
def test_a_request_from_another_origin_or_host_is_refused_even_with_the_token(
    client: TestClient, dataset_file: Path, headers: dict[str, str], match: str
) -> None:
    key = _keys(client)[0]
    answer = client.post(
        "/api/decide", json={"key": key, "status": "accepted"}, headers=_auth(**headers)
    )
    assert (answer.status_code, answer.json()) == (403, {"error": match})
    assert all(status_of(g) == "pending" for g in Dataset.load(dataset_file))


def test_the_servers_own_origin_is_allowed(client: TestClient) -> None:
    key = _keys(client)[0]
    for origin in (BASE, f"http://localhost:{PORT}"):
        answer = client.post(
            "/api/decide", json={"key": key, "status": "accepted"}, headers=_auth(Origin=origin)
        )
        assert answer.status_code == 200, answer.text


def test_a_decision_is_in_the_file_when_it_is_answered(
    client: TestClient, dataset_file: Path
) -> None:
    keys = _keys(client)
    answer = _decide(client, keys[2], "rejected", "not answerable from context")
    assert answer.status_code == 200
    assert answer.json()["golden"]["status"] == "rejected"
    assert answer.json()["counts"] == {"accepted": 0, "rejected": 1, "pending": 9}
    saved = Dataset.load(dataset_file)
    record = saved[2].metadata["review"]
    assert record["status"] == "rejected" and record["reviewer"] == "ann"
    assert record["reason"] == "not answerable from context"
    assert record["time"].endswith("Z")
    assert [status_of(g) for i, g in enumerate(saved) if i != 2] == ["pending"] * 9
    assert saved.metadata["run_id"] == "feedc0ffee000001"  # the dataset's metadata is kept


def test_an_edit_keeps_the_original_and_the_file_round_trips(dataset_file: Path) -> None:
    with _client(dataset_file) as client:
        key = _keys(client)[1]
        first = client.post(
            "/api/edit", json={"key": key, "expected_output": "About 2 kWh."}, headers=_auth()
        )
        assert first.status_code == 200
        client.post("/api/edit", json={"key": key, "expected_output": "2 kWh."}, headers=_auth())
        golden = Dataset.load(dataset_file)[1]  # at once: the journal is read with the file
    assert golden.expected_output == "2 kWh."
    assert golden.metadata["review"]["original"] == {"expected_output": "It keeps 2 kWh."}
    assert golden.metadata["review"]["status"] == "accepted"
    # closed, the store has folded the journal into the file: exactly what Dataset.save writes
    assert not journal_path(dataset_file).exists()
    expected = Dataset.load(dataset_file)
    copy = expected.save(dataset_file.with_name("copy" + dataset_file.suffix))
    assert dataset_file.read_text(encoding="utf-8") == copy.read_text(encoding="utf-8")
    assert expected[1] == golden


def test_decisions_survive_a_new_server_on_the_same_file(dataset_file: Path) -> None:
    with _client(dataset_file) as client:
        keys = _keys(client)
        _decide(client, keys[0], "accepted")
        _decide(client, keys[3], "rejected", "duplicate")
    with _client(dataset_file, reviewer="bob") as client:
        answer = client.get("/api/goldens", headers=_auth()).json()
    assert answer["counts"] == {"accepted": 1, "rejected": 1, "pending": 8}
    with _client(dataset_file) as client:
        for key in _keys(client)[5:8]:
            counts = _decide(client, key, "accepted").json()["counts"]
    assert counts == {"accepted": 4, "rejected": 1, "pending": 5}  # counted, not recounted
    assert answer["goldens"][3]["reason"] == "duplicate"


def test_two_writers_at_once_lose_no_golden(dataset_file: Path) -> None:
    store = ReviewStore(dataset_file, reviewer="ann")
    keys = list(store.keys)
    barrier = threading.Barrier(2)

    def review(half: list[str], status: str) -> None:
        barrier.wait()
        for key in half:
            store.decide(key, status)

    threads = [
        threading.Thread(target=review, args=(keys[0::2], "accepted")),
        threading.Thread(target=review, args=(keys[1::2], "rejected")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    saved = [status_of(g) for g in Dataset.load(dataset_file)]
    assert saved == ["accepted", "rejected"] * (len(keys) // 2)
    store.close()
    assert [status_of(g) for g in Dataset.load(dataset_file)] == saved


def test_two_tabs_on_one_golden_last_write_wins_and_an_edit_is_kept(
    dataset_file: Path,
) -> None:
    store = ReviewStore(dataset_file, reviewer="ann")
    app = make_app(store, Session(TOKEN, PORT))
    with store, TestClient(app, base_url=BASE) as one, TestClient(app, base_url=BASE) as other:
        key = _keys(one)[4]
        one.post("/api/edit", json={"key": key, "input": "Reworded?"}, headers=_auth())
        _decide(other, key, "accepted")  # the other tab never saw the edit
        _decide(one, key, "rejected", "ambiguous")
        _decide(other, _keys(other)[5], "accepted")
    saved = Dataset.load(dataset_file)
    assert saved[4].input == "Reworded?" and status_of(saved[4]) == "rejected"
    assert saved[4].metadata["review"]["original"]["input"].startswith("Question 4")
    assert status_of(saved[5]) == "accepted"


def test_a_file_changed_behind_the_servers_back_is_not_overwritten(dataset_file: Path) -> None:
    with _client(dataset_file) as client:
        keys = _keys(client)
        Dataset.load(dataset_file)[:3].save(dataset_file)  # e.g. a refill ran meanwhile
        answer = _decide(client, keys[0], "accepted")
    assert answer.status_code == 409 and "changed by something else" in answer.json()["error"]
    assert answer.json()["error"].endswith(
        "nothing was saved: restart synth review to review the file as it is now"
    )
    assert len(Dataset.load(dataset_file)) == 3


@pytest.mark.parametrize(
    ("path", "body", "status", "match"),
    [
        ("/api/decide", {"key": "nope", "status": "accepted"}, 404, "no golden 'nope'"),
        ("/api/decide", {"key": "{key}", "status": "maybe"}, 400, "must be one of"),
        ("/api/decide", {"key": "{key}", "status": 1}, 400, "'status' must be a string"),
        ("/api/decide", {"key": "{key}"}, 400, "'status' must be a string"),
        ("/api/decide", {"key": "{key}", "status": "accepted", "x": 1}, 400, "unknown field"),
        ("/api/decide", ["not", "an object"], 400, "must be a JSON object"),
        ("/api/decide", {"key": "{key}", "status": "accepted", "reason": "bad"}, 400, "only"),
        ("/api/edit", {"key": "{key}"}, 400, "give the new input"),
        ("/api/edit", {"key": "{key}", "input": "   "}, 400, "must not be empty"),
        ("/api/edit", {"key": "{key}", "expected_output": 3}, 400, "a string or null"),
    ],
)
def test_bad_requests_are_4xx_with_a_clear_message_and_save_nothing(
    client: TestClient, dataset_file: Path, path: str, body: Any, status: int, match: str
) -> None:
    before = dataset_file.read_bytes()
    key = _keys(client)[0]
    if isinstance(body, dict):
        body = {k: (key if v == "{key}" else v) for k, v in body.items()}
    answer = client.post(path, json=body, headers=_auth())
    assert answer.status_code == status and match in answer.json()["error"], answer.text
    assert dataset_file.read_bytes() == before


def test_a_body_that_is_not_json_is_refused(client: TestClient) -> None:
    answer = client.post(
        "/api/decide", content=b"{oops", headers=_auth(**{"Content-Type": "application/json"})
    )
    assert answer.status_code == 400 and "not valid JSON" in answer.json()["error"]
    form = client.post("/api/decide", data={"key": "k"}, headers=_auth())
    assert form.status_code == 415 and "as JSON" in form.json()["error"]


def test_csv_and_parquet_are_saved_whole(tmp_path: Path) -> None:
    for suffix in (".csv", ".parquet"):
        path = report_data.dataset(3).save(tmp_path / f"g{suffix}")
        with _client(path) as client:
            assert _decide(client, _keys(client)[1], "accepted").status_code == 200
        assert status_of(Dataset.load(path)[1]) == "accepted", suffix


def test_an_unsupported_file_is_refused_in_one_line(tmp_path: Path) -> None:
    from synth import ConfigError

    with pytest.raises(ConfigError, match="synth review saves decisions into the dataset"):
        ReviewStore(tmp_path / "goldens.txt", reviewer="ann")


def test_the_page_and_its_data_name_the_file_and_each_answer_names_its_golden(
    client: TestClient, dataset_file: Path
) -> None:
    page = client.get(f"/?token={TOKEN}").text
    assert f"<title>synth review: {dataset_file.name}</title>" in page
    answer = client.get("/api/goldens", headers=_auth())
    assert answer.headers["content-type"] == "application/json"
    data = answer.json()
    assert data["name"] == dataset_file.name
    key = data["goldens"][3]["key"]
    assert _decide(client, key, "accepted").json()["golden"]["key"] == key
    edited = client.post("/api/edit", json={"key": key, "input": "Reworded?"}, headers=_auth())
    assert edited.json()["golden"]["key"] == key


@pytest.mark.parametrize(
    ("body", "headers", "status", "message"),
    [
        (b"{}", {}, 415, "send the decision as JSON (Content-Type: application/json)"),
        (b"{oops", {"Content-Type": "application/json"}, 400, "the request body is not valid JSON"),
        (
            b"[1]",
            {"Content-Type": "application/json"},
            400,
            "the request body must be a JSON object",
        ),
        (
            b'{"key": "k", "status": "accepted", "x": 1, "a": 2}',
            {"Content-Type": "application/json"},
            400,
            "unknown field(s) a, x; send ['key', 'status', 'reason']",
        ),
        (
            b'{"key": "k"}',
            {"Content-Type": "application/json"},
            400,
            "field 'status' must be a string",
        ),
        (
            b'{"key": "k", "status": "accepted", "reason": 2}',
            {"Content-Type": "application/json"},
            400,
            "field 'reason' must be a string or null",
        ),
    ],
)
def test_a_refused_body_is_told_what_to_send(
    client: TestClient, body: bytes, headers: dict[str, str], status: int, message: str
) -> None:
    answer = client.post("/api/decide", content=body, headers=_auth(**headers))
    assert (answer.status_code, answer.json()) == (status, {"error": message})


def test_json_with_a_charset_is_json(client: TestClient, dataset_file: Path) -> None:
    key = _keys(client)[2]
    answer = client.post(
        "/api/decide",
        content=f'{{"key": "{key}", "status": "accepted"}}'.encode(),
        headers=_auth(**{"Content-Type": "application/json; charset=utf-8"}),
    )
    assert answer.status_code == 200, answer.text
    assert status_of(Dataset.load(dataset_file)[2]) == "accepted"


def test_a_decision_that_cannot_be_written_is_a_500_and_changes_nothing(
    client: TestClient, dataset_file: Path
) -> None:
    key = _keys(client)[1]
    journal_path(dataset_file).mkdir()  # the journal cannot be opened for appending
    answer = _decide(client, key, "accepted")
    assert answer.status_code == 500
    error = answer.json()["error"]
    assert error.startswith("the decision could not be saved: ") and "Is a directory" in error
    data = client.get("/api/goldens", headers=_auth()).json()
    assert data["counts"] == {"accepted": 0, "rejected": 0, "pending": 10}
    assert data["goldens"][1]["status"] == "pending"
    journal_path(dataset_file).rmdir()


def test_a_new_session_has_a_fresh_token_of_24_random_bytes_on_its_port() -> None:
    first, second = new_session(8123), new_session(8123)
    assert first.port == 8123 and first.token != second.token
    assert len(first.token) == 32 and re.fullmatch(r"[A-Za-z0-9_-]+", first.token)
    assert first.url == f"http://127.0.0.1:8123/?token={first.token}"


def test_a_body_over_the_size_limit_is_refused_and_saves_nothing(
    client: TestClient, dataset_file: Path
) -> None:
    key = _keys(client)[0]
    huge = "x" * (MAX_BODY + 1)
    answer = client.post("/api/edit", json={"key": key, "expected_output": huge}, headers=_auth())
    assert answer.status_code == 413
    assert Dataset.load(dataset_file)[0].expected_output != huge
    fits = "y" * 300_000  # an edited answer of a few hundred kilobytes is taken
    answer = client.post("/api/edit", json={"key": key, "expected_output": fits}, headers=_auth())
    assert answer.status_code == 200
