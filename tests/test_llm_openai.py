"""The openai adapter, through the real openai SDK over HTTP to the fake server."""

from __future__ import annotations

import asyncio
import json

import openai
import pytest
from fake_openai import Reply
from pydantic import BaseModel

from synth import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    IncompleteCompletionError,
    ModelTimeoutError,
    RateLimitError,
    RetryConfig,
    ServerError,
    make_llm,
    wrap_llm,
)
from synth.llm.openai import OpenAIModel

FAST = RetryConfig(initial_delay=0.001, max_delay=0.01)


class Rating(BaseModel):
    rating: int
    reason: str


def _llm(server, model="gpt-4.1-mini", **kwargs):
    kwargs.setdefault("retry", FAST)
    return make_llm("openai", model, base_url=server.url, api_key="sk-test-openai", **kwargs)


def test_text_completion_reports_tokens(fake_openai) -> None:
    fake_openai.reply = "Paris."
    with _llm(fake_openai) as llm:
        completion = asyncio.run(llm.arequest("Capital of France?", system="Be brief.", label="qa"))
        assert completion.text == "Paris."
        assert completion.input_tokens > 0 and completion.output_tokens == 1
        assert completion.finish_reason == "stop" and not completion.cached
        assert llm.complete("Again?") == "Paris."
    sent = fake_openai.requests[0].body
    assert sent["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Capital of France?"},
    ]


def test_nothing_is_sent_that_was_not_asked_for(fake_openai) -> None:
    with _llm(fake_openai) as llm:
        llm.complete("plain")
    with _llm(fake_openai, options={"temperature": 0, "seed": 7}, max_tokens=50) as llm:
        llm.complete("tuned")
    first, second = (r.body for r in fake_openai.requests)
    assert set(first) == {"model", "messages"}
    assert set(second) == {"model", "messages", "temperature", "seed", "max_completion_tokens"}
    assert second["max_completion_tokens"] == 50 and "max_tokens" not in second


def test_structured_call_uses_strict_json_schema(fake_openai) -> None:
    fake_openai.reply = {"rating": 4, "reason": "direct"}
    with _llm(fake_openai) as llm:
        verdict = llm.complete("Rate it.", schema=Rating)
    assert verdict == Rating(rating=4, reason="direct")
    fmt = fake_openai.requests[0].body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["name"] == "Rating"
    assert fmt["json_schema"]["schema"]["additionalProperties"] is False
    assert fmt["json_schema"]["schema"]["required"] == ["rating", "reason"]


def test_older_models_get_json_mode_and_the_schema_in_the_prompt(fake_openai) -> None:
    with _llm(fake_openai, model="gpt-3.5-turbo") as llm:
        verdict = llm.complete("Rate it.", schema=Rating)  # the smart reply reads the schema
    assert isinstance(verdict, Rating)
    body = fake_openai.requests[0].body
    assert body["response_format"] == {"type": "json_object"}
    assert "```json" in body["messages"][-1]["content"]


def test_prompt_mode_sends_no_response_format(fake_openai) -> None:
    with _llm(fake_openai, structured="prompt") as llm:
        assert isinstance(llm.complete("Rate it.", schema=Rating), Rating)
    body = fake_openai.requests[0].body
    assert "response_format" not in body and "JSON schema" in body["messages"][-1]["content"]


def test_a_server_refusing_json_schema_is_asked_with_json_mode(fake_openai) -> None:
    def reply(request):
        if request.get("response_format", {}).get("type") == "json_schema":
            return Reply(
                status=400,
                body={"error": {"message": "response_format json_schema is not supported"}},
            )
        return {"rating": 3, "reason": "ok"}

    fake_openai.reply = reply
    with _llm(fake_openai, cache={}) as llm:
        assert llm.complete("a", schema=Rating).rating == 3
        assert llm.complete("b", schema=Rating).rating == 3
        assert llm.usage.total.requests == 3  # the refused request counts too
        assert llm.complete("a", schema=Rating).rating == 3  # from the cache
        assert llm.usage.total.requests == 3 and llm.usage.total.cached_responses == 1
    kinds = [r.body.get("response_format", {}).get("type") for r in fake_openai.requests]
    assert kinds == ["json_schema", "json_object", "json_object"]  # remembered after the first


def test_base_url_from_the_environment(fake_openai, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key")
    with make_llm("openai:gpt-4o-mini") as llm:
        assert llm.complete("hi")
        assert llm.identity()["base_url"].startswith(fake_openai.url)
    assert fake_openai.requests[0].headers["authorization"] == "Bearer sk-env-key"


def test_no_key_and_no_server_is_an_authentication_error() -> None:
    with pytest.raises(AuthenticationError, match="OPENAI_API_KEY"):
        make_llm("openai:gpt-4o-mini")


class _OldCompletions:
    def create(self, *, model, messages, temperature=None, max_tokens=None, timeout=None):
        raise AssertionError("never called")


class _OldClient:
    """A client whose create() has an older, smaller signature."""

    base_url = "http://127.0.0.1:9/v1"

    def __init__(self) -> None:
        self.chat = type("Chat", (), {"completions": _OldCompletions()})()


def test_arguments_the_client_does_not_take_are_refused_when_made() -> None:
    with pytest.raises(ConfigError, match="'seed'"):
        make_llm("openai:m", client=_OldClient(), options={"seed": 1})
    with pytest.raises(ConfigError, match="max_completion_tokens"):
        make_llm("openai:m", client=_OldClient(), max_tokens=10)
    assert make_llm("openai:m", client=_OldClient(), options={"max_tokens": 10})
    with pytest.raises(ConfigError, match="did you mean 'temperature'"):
        make_llm("openai:m", base_url="http://127.0.0.1:9/v1", options={"temprature": 0})
    with pytest.raises(ConfigError, match="model"):
        make_llm("openai:m", base_url="http://127.0.0.1:9/v1", options={"model": "other"})


def test_old_client_without_response_format_is_prompted(fake_openai) -> None:
    model = OpenAIModel("m", client=_OldClient())
    args = model.request_arguments("Rate it.", None, Rating, model._mode)
    assert "response_format" not in args and "JSON schema" in args["messages"][-1]["content"]


@pytest.mark.parametrize(
    ("fault", "error"),
    [("auth", AuthenticationError), ("bad_request", BadRequestError)],
)
def test_auth_and_bad_request_are_not_retried(fake_openai, fault, error) -> None:
    fake_openai.queue_faults(fault)
    with _llm(fake_openai) as llm:
        with pytest.raises(error):
            llm.complete("x")
        assert llm.usage.total.failures == {error.kind: 1}
        assert llm.usage.total.retries == {}
    assert fake_openai.request_count() == 1


def test_rate_limit_carries_retry_after(fake_openai) -> None:
    fake_openai.retry_after = 2.5
    fake_openai.queue_faults("rate_limit")
    with _llm(fake_openai, max_retries=0) as llm:
        with pytest.raises(RateLimitError) as caught:
            llm.complete("x")
    assert caught.value.retry_after == pytest.approx(2.5)


@pytest.mark.parametrize(
    ("fault", "reason"), [("cutoff", "length"), ("content_filter", "content_filter")]
)
def test_an_early_stop_is_an_incomplete_completion(fake_openai, fault, reason) -> None:
    fake_openai.reply = "A long answer that goes on and on."
    fake_openai.queue_faults(fault)
    with _llm(fake_openai) as llm:
        with pytest.raises(IncompleteCompletionError) as caught:
            llm.complete("x")
        assert llm.usage.total.failures == {"incomplete": 1}
    assert caught.value.finish_reason == reason
    assert fake_openai.request_count() == 1  # a cut-off text reply is not asked again


def test_a_hung_request_times_out(fake_openai) -> None:
    fake_openai.queue_faults("hang")
    with _llm(fake_openai, timeout=0.3, max_retries=0) as llm:
        with pytest.raises(ModelTimeoutError):
            llm.complete("x")
        assert llm.usage.total.failures == {"timeout": 1}


def test_an_async_client_is_awaited(fake_openai) -> None:
    async def main() -> str:
        client = openai.AsyncOpenAI(base_url=fake_openai.url, api_key="sk-async", max_retries=0)
        llm = make_llm("openai:m", client=client, retry=FAST)
        try:
            return await llm.acomplete("hi", schema=Rating)
        finally:
            await client.close()

    assert isinstance(asyncio.run(main()), Rating)


def test_sdk_errors_are_translated_in_the_adapter(fake_openai) -> None:
    fake_openai.queue_faults("server_error")
    model = OpenAIModel("m", base_url=fake_openai.url, api_key="sk-x")
    try:
        with pytest.raises(Exception) as caught:
            asyncio.run(model.arequest("x"))
    finally:
        model.close()
    assert type(caught.value).__module__ == "synth.errors"
    assert caught.value.kind == "server"
    assert json.dumps(model.identity())  # identity is plain JSON


def test_a_key_echoed_in_an_error_is_hidden(fake_openai) -> None:
    # no "sk-" prefix: such a key is hidden by its shape alone (see test_redact_text_*)
    key, header = "echoed-key-0123456789", "gw-header-secret-42"
    fake_openai.reply = Reply(
        status=401,
        body={"error": {"message": f"key {key} and header {header} refused", "code": "bad_key"}},
    )
    options = {"extra_headers": {"X-Gateway-Key": header}}
    with make_llm(
        "openai:m", base_url=fake_openai.url, api_key=key, options=options, retry=FAST
    ) as llm:
        adapter = llm.unwrap()
        secrets, adapter._secrets = adapter._secrets, ()
        with pytest.raises(AuthenticationError) as leaked:
            llm.complete("x")
        assert key in str(leaked.value)  # the server really echoes it: the check below can fail
        adapter._secrets = secrets
        with pytest.raises(AuthenticationError) as caught:
            llm.complete("y")
    message = str(caught.value)
    assert "refused" in message and "<redacted>" in message
    assert key not in message and header not in message
    assert caught.value.__cause__ is None  # the SDK's exception, which holds the key, is dropped


def test_a_client_passed_in_has_its_sdk_retries_turned_off(fake_openai) -> None:
    client = fake_openai.client(max_retries=3)
    fake_openai.queue_faults("server_error", "server_error")
    llm = make_llm("openai:m", client=client, retry=FAST, max_retries=1)
    with pytest.raises(ServerError):
        llm.complete("x")
    assert fake_openai.request_count() == 2  # synth's one retry, none hidden inside the SDK
    assert llm.usage.total.retries == {"server": 1}
    assert client.max_retries == 3  # the caller's client itself is left as it was
    client.close()


def test_a_response_format_chosen_in_options_is_kept_and_the_schema_still_given(
    fake_openai,
) -> None:
    fake_openai.reply = {"rating": 5, "reason": "fine"}
    options = {"response_format": {"type": "json_object"}}
    with _llm(fake_openai, options=options) as llm:
        assert llm.complete("Rate it.", schema=Rating).rating == 5
    body = fake_openai.requests[0].body
    assert body["response_format"] == {"type": "json_object"}
    assert "```json" in body["messages"][-1]["content"]  # else the model never sees the schema


def test_a_hung_connection_cannot_stall_even_when_the_sdk_would_wait(fake_openai) -> None:
    fake_openai.queue_faults("hang")
    client = fake_openai.client(timeout=60)  # the SDK alone would wait a minute
    adapter = OpenAIModel("m", client=client, timeout=None)
    llm = wrap_llm(adapter, timeout=0.3, max_retries=0)
    with pytest.raises(ModelTimeoutError, match="did not answer within 0.3 s"):
        llm.complete("x")
    assert llm.usage.total.failures == {"timeout": 1}
    fake_openai.close()  # releases the hung request, so the SDK's thread ends
    client.close()


def test_many_requests_in_flight_go_through_small_connection_pools(fake_openai) -> None:
    """At 64 in flight the model's client has four pools of 16; every request is answered and
    none waits for a connection: the server answers none until all 64 are in."""
    import threading

    from synth.llm._pool import ShardedTransport

    all_in = threading.Barrier(64, timeout=30)  # broken (a server error) if fewer ever arrive

    def reply(request: dict) -> str:
        all_in.wait()
        return "ok"

    fake_openai.reply = reply
    with _llm(fake_openai, max_concurrent=64) as llm:

        async def ask_all() -> list[str]:
            return await asyncio.gather(*(llm.acomplete(f"q{i}") for i in range(64)))

        assert asyncio.run(ask_all()) == ["ok"] * 64
        transports = [
            m._client._client._transport for m in _inner_models(llm) if hasattr(m, "_client")
        ]
    assert transports and all(isinstance(t, ShardedTransport) for t in transports)
    assert len(transports[0]) == 4
    assert fake_openai.peak_in_flight == 64
    with _llm(fake_openai, max_concurrent=16) as llm:  # one pool is enough: the SDK's own
        assert not any(
            isinstance(m._client._client._transport, ShardedTransport)
            for m in _inner_models(llm)
            if hasattr(m, "_client")
        )


def _inner_models(llm):  # type: ignore[no-untyped-def]
    seen = []
    while llm is not None and llm not in seen:
        seen.append(llm)
        llm = getattr(llm, "inner", None)
    return seen


def test_a_429_is_retried_no_sooner_than_its_retry_after(fake_openai, monkeypatch) -> None:
    """The wait the retry layer really asks for, over HTTP: a 429 saying ``Retry-After: 5`` is
    slept on for 5 s (plus at most 10% spread), though the backoff alone would be under 0.5 s.
    ``asyncio.sleep`` is replaced by one that records the delay and returns at once."""
    waits: list[float] = []
    real_sleep = asyncio.sleep

    async def recording_sleep(delay: float, result=None):  # type: ignore[no-untyped-def]
        waits.append(delay)
        return await real_sleep(0, result)

    monkeypatch.setattr(asyncio, "sleep", recording_sleep)
    fake_openai.reply = "fine"
    fake_openai.retry_after = 5.0
    fake_openai.queue_faults("rate_limit", "rate_limit", None)
    with _llm(fake_openai, retry=RetryConfig()) as llm:  # initial_delay 0.5, jitter 0.5
        assert llm.complete("q") == "fine"
        assert llm.usage.total.retries == {"rate_limit": 2}
    assert fake_openai.outcomes() == {"rate_limit": 2, "ok": 1}
    assert len(waits) == 2 and all(5.0 <= w <= 5.0 + 0.5 + 0.001 for w in waits), waits
    # a Retry-After shorter than the backoff leaves the backoff as it is
    waits.clear()
    fake_openai.retry_after = 0.001
    fake_openai.queue_faults("rate_limit", None)
    with _llm(fake_openai, retry=RetryConfig(initial_delay=2.0, jitter=0.0)) as llm:
        assert llm.complete("again") == "fine"
    assert waits == [2.0]


def test_a_request_posted_by_the_client_is_what_create_would_have_sent(fake_openai) -> None:
    """Requests skip ``create``'s walk over the arguments (see synth/llm/openai.py) and post them
    through the client: body and headers are what ``chat.completions.create`` sends for the same
    arguments, request options (extra headers, query, body, timeout) included."""
    from pydantic import BaseModel

    from synth.llm.openai import OpenAIModel

    class Answer(BaseModel):
        answer: str
        sources: list[int]

    fake_openai.reply = '{"answer": "Paris", "sources": [1]}'
    options = {
        "temperature": 0.2,
        "seed": 7,
        "extra_headers": {"X-Team": "qa"},
        "extra_query": {"api-version": "2025-01-01"},
        "extra_body": {"top_k": 3},
    }
    with _llm(fake_openai, options=options, timeout=30.0) as llm:
        (model,) = [m for m in _inner_models(llm) if isinstance(m, OpenAIModel)]
        assert model._send == model._post  # the SDK's own client, options in plain JSON
        completion = asyncio.run(llm.arequest("Capital?", system="Be brief.", schema=Answer))
        assert completion.text == fake_openai.reply
        arguments = model.request_arguments("Capital?", "Be brief.", Answer, "json_schema")
        model._create(**arguments)
    posted, created = fake_openai.requests
    assert posted.path == created.path == "/v1/chat/completions"
    assert posted.body == created.body
    assert posted.body["top_k"] == 3 and posted.body["response_format"]["type"] == "json_schema"
    varying = {"x-stainless-retry-count", "x-stainless-read-timeout", "idempotency-key"}
    # the posted request asks for the raw response, as with_raw_response does: its headers
    # carry the provider's rate limits
    assert posted.headers.pop("x-stainless-raw-response") == "true"
    assert {k: v for k, v in posted.headers.items() if k not in varying} == {
        k: v for k, v in created.headers.items() if k not in varying
    }
    assert posted.headers["x-team"] == "qa"


def test_options_that_are_not_plain_json_go_through_create(fake_openai) -> None:
    """An option holding anything but JSON's own types (a tuple here) is left to ``create``,
    which knows how to send it."""
    from synth.llm.openai import OpenAIModel

    fake_openai.reply = "ok"
    with _llm(fake_openai, options={"stop": ("END",)}) as llm:
        (model,) = [m for m in _inner_models(llm) if isinstance(m, OpenAIModel)]
        assert model._send == model._create
        assert llm.complete("Say ok") == "ok"
    assert fake_openai.requests[0].body["stop"] == ["END"]
