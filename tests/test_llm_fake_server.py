"""The fake OpenAI-compatible server itself: the real openai SDK against every scripted behaviour."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import openai
import pytest
from fake_openai import FakeOpenAI, Reply, example_for_schema, smart_reply
from pydantic import BaseModel, Field

FAKE_SERVER = Path(__file__).with_name("fake_openai.py")


class Verdict(BaseModel):
    claims: list[str]
    supported: bool
    rating: int = Field(ge=1, le=5)
    reason: str | None = None


def _ask(client: openai.OpenAI, content: str = "hello", **kwargs):
    return client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": content}], **kwargs
    )


def test_chat_with_and_without_response_format(fake_openai) -> None:
    client = fake_openai.client()
    plain = _ask(client, "Paris is the capital of France. It lies on the Seine river.")
    assert plain.choices[0].finish_reason == "stop"
    assert plain.usage.prompt_tokens > 0 and plain.usage.completion_tokens > 0
    schema = {"name": "Verdict", "schema": Verdict.model_json_schema(), "strict": False}
    structured = _ask(
        client, "Judge this.", response_format={"type": "json_schema", "json_schema": schema}
    )
    verdict = Verdict.model_validate_json(structured.choices[0].message.content)
    assert 1 <= verdict.rating <= 5
    as_object = _ask(client, "Reply in JSON.", response_format={"type": "json_object"})
    assert isinstance(json.loads(as_object.choices[0].message.content), dict)
    assert [r.body.get("response_format", {}).get("type") for r in fake_openai.requests] == [
        None,
        "json_schema",
        "json_object",
    ]
    client.close()


def test_schema_in_the_prompt_is_answered_in_shape() -> None:
    prompt = (
        "Judge the answer.\n\nReply with one JSON object that matches this JSON schema:\n```json\n"
        + json.dumps(Verdict.model_json_schema())
        + "\n```"
    )
    reply = smart_reply({"messages": [{"role": "user", "content": prompt}]})
    Verdict.model_validate_json(reply)
    assert example_for_schema(Verdict.model_json_schema())["rating"] in range(1, 6)


def test_fixed_replies_and_reply_functions(fake_openai) -> None:
    client = fake_openai.client()
    fake_openai.reply = "fixed text"
    assert _ask(client).choices[0].message.content == "fixed text"
    fake_openai.reply = {"score": 4}
    assert json.loads(_ask(client).choices[0].message.content) == {"score": 4}
    fake_openai.reply = lambda request: request["messages"][-1]["content"].upper()
    assert _ask(client, "shout").choices[0].message.content == "SHOUT"
    fake_openai.reply = Reply(
        content="partial",
        finish_reason="length",
        usage={"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
    )
    answer = _ask(client)
    assert answer.choices[0].finish_reason == "length" and answer.usage.prompt_tokens == 7
    fake_openai.reply = lambda request: 1 / 0
    with pytest.raises(openai.InternalServerError, match="ZeroDivisionError"):
        _ask(client)
    assert fake_openai.requests[-1].outcome == "reply_error"
    client.close()


def test_faults_in_sequence(fake_openai) -> None:
    client = fake_openai.client()
    fake_openai.reply = '{"a": 1}'
    fake_openai.queue_faults(
        "rate_limit",
        "server_error",
        "overloaded",
        "auth",
        "bad_request",
        "cutoff",
        "content_filter",
        "invalid_json",
        "prose",
        None,
    )
    with pytest.raises(openai.RateLimitError) as limited:
        _ask(client)
    assert limited.value.response.headers["retry-after-ms"] == "10"
    with pytest.raises(openai.InternalServerError):
        _ask(client)
    with pytest.raises(openai.InternalServerError):
        _ask(client)
    with pytest.raises(openai.AuthenticationError):
        _ask(client)
    with pytest.raises(openai.BadRequestError):
        _ask(client)
    cut = _ask(client).choices[0]
    assert cut.finish_reason == "length" and cut.message.content == '{"a"'
    assert _ask(client).choices[0].finish_reason == "content_filter"
    with pytest.raises(ValueError):
        json.loads(_ask(client).choices[0].message.content)
    prose = _ask(client).choices[0].message.content
    assert prose.startswith("Sure!") and '{"a": 1}' in prose
    assert _ask(client).choices[0].message.content == '{"a": 1}'
    outcomes = fake_openai.outcomes()
    assert outcomes["ok"] == 1 and outcomes["rate_limit"] == 1 and len(fake_openai.requests) == 10
    client.close()


def test_hang_never_answers_and_disconnect_drops(fake_openai) -> None:
    client = fake_openai.client(timeout=0.3)
    fake_openai.queue_faults("hang", "disconnect")
    with pytest.raises(openai.APITimeoutError):
        _ask(client)
    with pytest.raises(openai.APIConnectionError):
        _ask(client)
    assert fake_openai.requests[0].status is None
    client.close()


def test_fault_rates_are_seeded_and_bounded() -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        FakeOpenAI(faults={"explode": 0.1})
    with pytest.raises(ValueError, match="more than 1"):
        FakeOpenAI(faults={"server_error": 0.7, "cutoff": 0.6})
    counts = []
    for _ in range(2):
        with FakeOpenAI(faults={"server_error": 0.3}, seed=5) as server:
            client = server.client()
            for _ in range(40):
                try:
                    _ask(client)
                except openai.InternalServerError:
                    pass
            counts.append(server.outcomes())
            client.close()
    assert counts[0] == counts[1] and 0 < counts[0]["server_error"] < 40


def test_rpm_limit_returns_429_with_the_wait() -> None:
    with FakeOpenAI(rpm=3, rpm_window=30.0) as server:
        client = server.client()
        for _ in range(3):
            _ask(client)
        with pytest.raises(openai.RateLimitError) as limited:
            _ask(client)
        wait = float(limited.value.response.headers["retry-after"])
        assert 0 < wait <= 30
        assert server.outcomes() == {"ok": 3, "rpm_limit": 1}
        client.close()


def test_log_duplicates_and_reset(fake_openai) -> None:
    client = fake_openai.client(api_key="sk-log-test")
    _ask(client, "same")
    _ask(client, "same")
    _ask(client, "other")
    assert len(fake_openai.duplicates()) == 1
    first = fake_openai.requests[0]
    assert first.prompt == "same" and first.headers["authorization"] == "Bearer sk-log-test"
    assert fake_openai.peak_in_flight >= 1 and fake_openai.in_flight == 0
    fake_openai.reset()
    assert fake_openai.request_count() == 0
    client.close()


def test_embeddings_are_deterministic_in_both_encodings(fake_openai) -> None:
    client = fake_openai.client()
    first = client.embeddings.create(model="e", input=["alpha", "beta"])  # SDK asks for base64
    again = client.embeddings.create(model="e", input="alpha", encoding_format="float")
    assert len(first.data) == 2 and len(first.data[0].embedding) == fake_openai.embedding_dim
    assert first.data[0].embedding == pytest.approx(again.data[0].embedding, abs=1e-6)
    assert first.data[0].embedding != first.data[1].embedding
    assert sum(v * v for v in again.data[0].embedding) == pytest.approx(1.0, abs=1e-5)
    small = client.embeddings.create(model="e", input="x", dimensions=8, encoding_format="float")
    assert len(small.data[0].embedding) == 8
    assert fake_openai.request_count("embeddings") == 3
    client.close()


def test_standalone_process_logs_and_takes_a_reply_function(tmp_path: Path) -> None:
    (tmp_path / "my_replies.py").write_text(
        "def reply(request):\n    return 'custom: ' + request['messages'][-1]['content']\n"
    )
    log = tmp_path / "requests.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            str(FAKE_SERVER),
            "--port",
            "0",
            "--replies",
            "my_replies:reply",
            "--log",
            str(log),
            "--sequence",
            "server_error",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        client = openai.OpenAI(
            base_url=url,
            api_key="sk-standalone-secret",
            max_retries=0,
            default_headers={"api-key": "azure-style-secret", "X-Route": "eu"},
        )
        with pytest.raises(openai.InternalServerError):
            _ask(client, "one")
        assert _ask(client, "two").choices[0].message.content == "custom: two"
        client.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["outcome"] for r in rows] == ["server_error", "ok"]
    assert "sk-standalone-secret" not in log.read_text()
    assert "azure-style-secret" not in log.read_text()
    assert rows[0]["headers"]["x-route"] == "eu"  # other headers are kept


class _Item(BaseModel):
    index: int
    expected_output: str


class _Batch(BaseModel):
    outputs: list[_Item]


def test_smart_reply_follows_a_numbered_batch() -> None:
    prompt = (
        "Context:\nThe Seine flows through Paris and into the English Channel at Le Havre.\n\n"
        "Inputs (3 in all):\n[1]\nWhere does the Seine flow?\n\n[2]\nWhere is its mouth?\n\n"
        "[3]\nWhich city does it cross?\n\nReply with one JSON object."
    )
    schema = {"name": "Batch", "schema": _Batch.model_json_schema()}
    reply = smart_reply(
        {
            "messages": [{"role": "user", "content": prompt}],
            "response_format": {"type": "json_schema", "json_schema": schema},
        }
    )
    batch = _Batch.model_validate_json(reply)
    assert [item.index for item in batch.outputs] == [1, 2, 3]
    assert all(item.expected_output for item in batch.outputs)
