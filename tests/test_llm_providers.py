"""The anthropic and gemini adapters, against fake SDK modules and clients with the SDKs' surface.

The real SDKs are optional and not installed in CI, so each test installs a small fake module under
the SDK's import name; the adapters import it exactly as they would import the real one.
"""

from __future__ import annotations

import sys
import types
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from synth import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    EndpointError,
    IncompleteCompletionError,
    ModelConnectionError,
    ModelTimeoutError,
    RateLimitError,
    RetryConfig,
    ServerError,
    make_llm,
)

FAST = RetryConfig(initial_delay=0.001, max_delay=0.005)


class Verdict(BaseModel):
    supported: bool
    reason: str


# ---- a fake anthropic SDK ------------------------------------------------------------------------


def _fake_anthropic() -> types.ModuleType:
    sdk = types.ModuleType("anthropic")

    class AnthropicError(Exception):
        pass

    class APIError(AnthropicError):
        def __init__(self, message: str, request: Any = None, *, body: Any = None) -> None:
            super().__init__(message)

    class APIStatusError(APIError):
        def __init__(self, message: str, *, response: Any, body: Any = None) -> None:
            super().__init__(message)
            self.response = response
            self.status_code = response.status_code

    class APIConnectionError(APIError):
        pass

    class APITimeoutError(APIConnectionError):
        pass

    class Messages:
        def __init__(self) -> None:
            self.sent: list[dict[str, Any]] = []
            self.script: list[Any] = []
            self.usage: Any = None  # the usage every reply reports (None: 12 in, 6 out)

        # the keyword surface of anthropic 2.x Messages.create (a subset)
        def create(
            self,
            *,
            max_tokens: int,
            messages: Any,
            model: str,
            metadata: Any = None,
            output_config: Any = None,
            stop_sequences: Any = None,
            stream: Any = None,
            system: Any = None,
            thinking: Any = None,
            extra_headers: Any = None,
            extra_query: Any = None,
            extra_body: Any = None,
            timeout: Any = None,
        ) -> Any:
            sent = {k: v for k, v in locals().items() if k != "self" and v is not None}
            self.sent.append(sent)
            item = (
                self.script.pop(0)
                if self.script
                else ("end_turn", '{"supported": true, "reason": "r"}')
            )
            if isinstance(item, Exception):
                raise item
            stop, text = item
            return SimpleNamespace(
                content=[SimpleNamespace(type="text", text=text)],
                stop_reason=stop,
                model=model,
                usage=self.usage or SimpleNamespace(input_tokens=12, output_tokens=6),
            )

    class Anthropic:
        def __init__(
            self,
            *,
            api_key: str | None = None,
            base_url: str | None = None,
            timeout: Any = None,
            max_retries: int = 2,
        ) -> None:
            self.kwargs = {"base_url": base_url, "timeout": timeout, "max_retries": max_retries}
            self.base_url = base_url or "https://api.anthropic.com"
            self.messages = Messages()

    for cls in (
        AnthropicError,
        APIError,
        APIStatusError,
        APIConnectionError,
        APITimeoutError,
        Anthropic,
    ):
        setattr(sdk, cls.__name__, cls)
    return sdk


@pytest.fixture
def anthropic_sdk(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    sdk = _fake_anthropic()
    monkeypatch.setitem(sys.modules, "anthropic", sdk)
    return sdk


def _response(status: int, headers: dict[str, str] | None = None) -> Any:
    return SimpleNamespace(status_code=status, headers=headers or {})


def test_anthropic_text_system_and_max_tokens(anthropic_sdk) -> None:
    client = anthropic_sdk.Anthropic()
    client.messages.script = [("end_turn", "Paris.")]
    llm = make_llm("anthropic", "claude-3-5-haiku-20241022", client=client, retry=FAST)
    completion = llm.complete("Capital?", system="Be brief.")
    assert completion == "Paris."
    sent = client.messages.sent[0]
    assert sent["system"] == "Be brief."
    assert sent["max_tokens"] == 4096
    assert sent["messages"] == [{"role": "user", "content": "Capital?"}]
    assert llm.usage.total.input_tokens == 12 and llm.usage.total.output_tokens == 6
    assert llm.identity()["max_tokens"] == 4096
    make_llm("anthropic:claude-3-5-haiku", client=client, max_tokens=100).complete("x")
    assert client.messages.sent[-1]["max_tokens"] == 100


def test_anthropic_structured_output_or_prompt(anthropic_sdk) -> None:
    client = anthropic_sdk.Anthropic()
    new = make_llm("anthropic", "claude-sonnet-4-5", client=client, retry=FAST)
    assert new.complete("Judge.", schema=Verdict).supported
    fmt = client.messages.sent[-1]["output_config"]["format"]
    assert fmt["type"] == "json_schema" and fmt["schema"]["additionalProperties"] is False
    old = make_llm("anthropic", "claude-3-5-haiku", client=client, retry=FAST)
    assert old.complete("Judge.", schema=Verdict).supported
    sent = client.messages.sent[-1]
    assert "output_config" not in sent and "JSON schema" in sent["messages"][0]["content"]


def test_anthropic_cut_off_and_refusal_are_incomplete(anthropic_sdk) -> None:
    client = anthropic_sdk.Anthropic()
    client.messages.script = [("max_tokens", "Paris is"), ("refusal", "")]
    llm = make_llm("anthropic", "claude-3-5-haiku", client=client, retry=FAST)
    with pytest.raises(IncompleteCompletionError) as cut:
        llm.complete("x")
    with pytest.raises(IncompleteCompletionError) as refused:
        llm.complete("y")
    assert cut.value.finish_reason == "length" and refused.value.finish_reason == "content_filter"


def test_anthropic_errors_are_translated_and_retried(anthropic_sdk) -> None:
    client = anthropic_sdk.Anthropic()
    client.messages.script = [
        anthropic_sdk.APIStatusError(
            "slow down", response=_response(429, {"retry-after": "0.001"})
        ),
        anthropic_sdk.APIStatusError("overloaded", response=_response(529)),
        anthropic_sdk.APITimeoutError("timed out"),
        ("end_turn", "fine"),
        anthropic_sdk.APIStatusError("bad key", response=_response(401)),
    ]
    llm = make_llm("anthropic", "claude-3-5-haiku", client=client, retry=FAST)
    assert llm.complete("x") == "fine"
    assert llm.usage.total.retries == {"rate_limit": 1, "server": 1, "timeout": 1}
    with pytest.raises(AuthenticationError):
        llm.complete("y")
    bare = make_llm("anthropic", "claude-3-5-haiku", client=client, max_retries=0)
    client.messages.script = [
        anthropic_sdk.APIStatusError("slow", response=_response(429, {"retry-after-ms": "1500"}))
    ]
    with pytest.raises(RateLimitError) as caught:
        bare.complete("z")
    assert caught.value.retry_after == pytest.approx(1.5)


def test_anthropic_arguments_it_does_not_take_are_refused(anthropic_sdk) -> None:
    client = anthropic_sdk.Anthropic()
    with pytest.raises(ConfigError, match="'temperature'"):
        make_llm("anthropic", "claude-3-5-haiku", client=client, options={"temperature": 0})
    with pytest.raises(ConfigError, match="system"):
        make_llm("anthropic", "claude-3-5-haiku", client=client, options={"system": "x"})


def test_anthropic_default_client_reads_the_environment(anthropic_sdk, monkeypatch) -> None:
    with pytest.raises(AuthenticationError, match="ANTHROPIC_API_KEY"):
        make_llm("anthropic:claude-3-5-haiku")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    llm = make_llm("anthropic:claude-3-5-haiku", timeout=30)
    adapter = llm.unwrap()
    assert adapter._owned_client.kwargs == {"base_url": None, "timeout": 30, "max_retries": 0}
    assert "sk-ant-secret" not in repr(llm) + repr(llm.identity())


def test_a_missing_sdk_says_what_to_install(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(ConfigError, match="pip install anthropic"):
        make_llm("anthropic:claude-3-5-haiku")
    monkeypatch.setitem(sys.modules, "google.genai", None)
    with pytest.raises(ConfigError, match="pip install google-genai"):
        make_llm("gemini:gemini-2.5-flash")


# ---- a fake google-genai SDK ---------------------------------------------------------------------


def _fake_genai() -> tuple[types.ModuleType, types.ModuleType, types.ModuleType]:
    genai = types.ModuleType("google.genai")
    errors = types.ModuleType("google.genai.errors")
    gtypes = types.ModuleType("google.genai.types")

    class APIError(Exception):
        def __init__(self, code: int, response_json: Any, response: Any = None) -> None:
            super().__init__(f"{code} {response_json}")
            self.code, self.details, self.response = code, response_json, response

    class ClientError(APIError):
        pass

    class ServerError(APIError):
        pass

    class GenerateContentConfig(BaseModel):
        http_options: Any = None
        system_instruction: Any = None
        temperature: float | None = None
        top_p: float | None = None
        max_output_tokens: int | None = None
        stop_sequences: list[str] | None = None
        seed: int | None = None
        response_mime_type: str | None = None
        response_json_schema: Any = None

    class Models:
        def __init__(self) -> None:
            self.sent: list[dict[str, Any]] = []
            self.script: list[Any] = []
            self.usage: Any = None  # the usage every reply reports (None: 9 in, 4 + 3 out)

        def generate_content(self, *, model: str, contents: Any, config: Any = None) -> Any:
            GenerateContentConfig.model_validate(config or {})  # what the real SDK does with a dict
            self.sent.append({"model": model, "contents": contents, "config": config})
            item = (
                self.script.pop(0)
                if self.script
                else ("STOP", '{"supported": false, "reason": "r"}')
            )
            if isinstance(item, Exception):
                raise item
            finish, text = item
            return SimpleNamespace(
                text=text,
                candidates=[SimpleNamespace(finish_reason=SimpleNamespace(name=finish))],
                usage_metadata=self.usage
                or SimpleNamespace(
                    prompt_token_count=9, candidates_token_count=4, thoughts_token_count=3
                ),
                model_version=model,
                prompt_feedback=None,
            )

    class Client:
        def __init__(self, *, api_key: str | None = None, http_options: Any = None) -> None:
            self.http_options = http_options
            self.models = Models()
            # where google-genai keeps the key and the endpoint
            url = (http_options or {}).get(
                "base_url"
            ) or "https://generativelanguage.googleapis.com/"
            self._api_client = SimpleNamespace(
                api_key=api_key, _http_options=SimpleNamespace(base_url=url)
            )

    errors.APIError, errors.ClientError, errors.ServerError = APIError, ClientError, ServerError
    gtypes.GenerateContentConfig = GenerateContentConfig
    genai.Client, genai.errors, genai.types = Client, errors, gtypes
    return genai, errors, gtypes


@pytest.fixture
def genai_sdk(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    genai, errors, gtypes = _fake_genai()
    monkeypatch.setitem(sys.modules, "google.genai", genai)
    monkeypatch.setitem(sys.modules, "google.genai.errors", errors)
    monkeypatch.setitem(sys.modules, "google.genai.types", gtypes)
    return genai


def test_gemini_text_config_and_tokens(genai_sdk) -> None:
    client = genai_sdk.Client()
    client.models.script = [("STOP", "Paris.")]
    llm = make_llm(
        "gemini",
        "gemini-2.5-flash",
        client=client,
        max_tokens=64,
        options={"temperature": 0},
        timeout=20,
    )
    assert llm.complete("Capital?", system="Be brief.") == "Paris."
    sent = client.models.sent[0]
    assert sent["contents"] == "Capital?"
    assert sent["config"] == {
        "temperature": 0,
        "system_instruction": "Be brief.",
        "max_output_tokens": 64,
        "http_options": {"timeout": 20000},
    }
    assert llm.usage.total.input_tokens == 9 and llm.usage.total.output_tokens == 4 + 3


def test_gemini_structured_modes(genai_sdk) -> None:
    client = genai_sdk.Client()
    llm = make_llm("gemini", "gemini-2.5-flash", client=client, retry=FAST)
    assert llm.complete("Judge.", schema=Verdict).supported is False
    config = client.models.sent[-1]["config"]
    assert config["response_mime_type"] == "application/json"
    assert config["response_json_schema"]["title"] == "Verdict"
    json_mode = make_llm("gemini", "gemini-2.0-flash", client=client, structured="json_object")
    json_mode.complete("Judge.", schema=Verdict)
    sent = client.models.sent[-1]
    assert "response_json_schema" not in sent["config"] and "JSON schema" in sent["contents"]


def test_gemini_finish_reasons(genai_sdk) -> None:
    client = genai_sdk.Client()
    client.models.script = [("MAX_TOKENS", "Par"), ("SAFETY", "")]
    llm = make_llm("gemini", "gemini-2.5-flash", client=client)
    with pytest.raises(IncompleteCompletionError, match="cut off"):
        llm.complete("x")
    with pytest.raises(IncompleteCompletionError, match="filtered"):
        llm.complete("y")


def test_gemini_errors_are_translated(genai_sdk) -> None:
    errors = genai_sdk.errors
    client = genai_sdk.Client()
    request = httpx.Request("POST", "http://127.0.0.1/")
    client.models.script = [
        errors.ClientError(429, {"error": {"status": "RESOURCE_EXHAUSTED"}}),
        errors.ServerError(503, {"error": {"status": "UNAVAILABLE"}}),
        httpx.ReadTimeout("slow", request=request),
        httpx.ConnectError("refused", request=request),
        ("STOP", "ok"),
    ]
    llm = make_llm("gemini", "gemini-2.5-flash", client=client, retry=FAST)
    # a refused connection is retried once the server has answered (before, it stops the run:
    # test_a_refused_connection_before_any_answer_stops_every_provider)
    client.models.script = [("STOP", "warm")]
    assert llm.complete("w") == "warm"
    client.models.script = [
        errors.ClientError(429, {"error": {"status": "RESOURCE_EXHAUSTED"}}),
        errors.ServerError(503, {"error": {"status": "UNAVAILABLE"}}),
        httpx.ReadTimeout("slow", request=request),
        httpx.ConnectError("refused", request=request),
        ("STOP", "ok"),
    ]
    assert llm.complete("x") == "ok"
    assert llm.usage.total.retries == {"connection": 1, "rate_limit": 1, "server": 1, "timeout": 1}
    bare = make_llm("gemini", "gemini-2.5-flash", client=client, max_retries=0)
    client.models.script = [("STOP", "warm")]
    assert bare.complete("w") == "warm"
    for error, expected in [
        (errors.ClientError(403, {}), AuthenticationError),
        (httpx.ConnectError("refused", request=request), ModelConnectionError),
        (httpx.ConnectTimeout("slow", request=request), ModelTimeoutError),
        (errors.ServerError(500, {}), ServerError),
    ]:
        client.models.script = [error]
        with pytest.raises(expected):
            bare.complete("y")


def test_gemini_options_are_config_fields(genai_sdk, monkeypatch) -> None:
    client = genai_sdk.Client()
    with pytest.raises(ConfigError, match="did you mean 'temperature'"):
        make_llm("gemini", "gemini-2.5-flash", client=client, options={"temprature": 0.2})
    with pytest.raises(AuthenticationError, match="GEMINI_API_KEY"):
        make_llm("gemini:gemini-2.5-flash")
    monkeypatch.setenv("GEMINI_API_KEY", "gm-secret-key")
    llm = make_llm("gemini:gemini-2.5-flash")
    assert "gm-secret-key" not in repr(llm) + repr(llm.identity())


def test_gemini_endpoint_is_in_the_identity_and_a_key_in_an_error_is_hidden(genai_sdk) -> None:
    default = make_llm(
        "gemini:gemini-2.5-flash", client=genai_sdk.Client(api_key="gm-key-12345678")
    )
    gateway = genai_sdk.Client(api_key="gm-key-12345678", http_options={"base_url": "http://gw/"})
    routed = make_llm("gemini:gemini-2.5-flash", client=gateway, max_retries=0)
    assert default.identity()["base_url"].startswith("https://generativelanguage")
    assert routed.identity()["base_url"] == "http://gw/"  # so the two never share cache entries
    gateway.models.script = [
        genai_sdk.errors.ClientError(400, {"error": "bad key gm-key-12345678"})
    ]
    with pytest.raises(BadRequestError) as caught:
        routed.complete("x")
    assert "gm-key-12345678" not in str(caught.value) and "<redacted>" in str(caught.value)


def test_anthropic_key_in_an_error_is_hidden(anthropic_sdk) -> None:
    client = anthropic_sdk.Anthropic(api_key="sk-ant-echo-1234567")
    client.api_key = "sk-ant-echo-1234567"
    client.messages.script = [
        anthropic_sdk.APIStatusError("key sk-ant-echo-1234567 refused", response=_response(401))
    ]
    llm = make_llm("anthropic:claude-3-5-haiku", client=client)
    with pytest.raises(AuthenticationError) as caught:
        llm.complete("x")
    assert "sk-ant-echo-1234567" not in str(caught.value) and "refused" in str(caught.value)


def test_a_refused_connection_before_any_answer_stops_every_provider(
    anthropic_sdk, genai_sdk
) -> None:
    """Anthropic and Gemini share OpenAI's guard: nothing listening, before any good answer, is
    one EndpointError naming the server, and later calls are not sent."""
    request = httpx.Request("POST", "http://127.0.0.1/")
    anthropic_client = anthropic_sdk.Anthropic(base_url="http://127.0.0.1:9")
    refused = anthropic_sdk.APIConnectionError("Connection error.")
    refused.__cause__ = httpx.ConnectError("refused", request=request)  # as the SDK raises it
    anthropic_client.messages.script = [refused]
    gemini_client = genai_sdk.Client()
    gemini_client.models.script = [httpx.ConnectError("refused", request=request)]
    for llm, client in [
        (
            make_llm("anthropic", "claude-3-5-haiku", client=anthropic_client, retry=FAST),
            anthropic_client.messages,
        ),
        (
            make_llm("gemini", "gemini-2.5-flash", client=gemini_client, retry=FAST),
            gemini_client.models,
        ),
    ]:
        with pytest.raises(EndpointError, match="nothing answers there") as caught:
            llm.complete("x")
        assert llm.unwrap().base_url in str(caught.value)  # type: ignore[attr-defined]
        assert llm.usage.total.retries == {}  # stopped at once, not retried
        client.script = (
            [("end_turn", "late")] if client is anthropic_client.messages else [("STOP", "late")]
        )
        with pytest.raises(EndpointError):
            llm.complete("y")  # not sent: the script is still there
        assert client.script


def test_anthropic_caches_the_system_and_the_context_prefix(anthropic_sdk) -> None:
    client = anthropic_sdk.Anthropic()
    llm = make_llm("anthropic", "claude-3-5-haiku", client=client, retry=FAST)
    llm.complete("<context>\nParis is in France.\n</context>\nWrite 2 questions.", system="S")
    sent = client.messages.sent[0]
    assert sent["system"] == "S"  # the breakpoint below covers it
    assert sent["messages"][0]["content"] == [
        {
            "type": "text",
            "text": "<context>\nParis is in France.\n</context>",
            "cache_control": {"type": "ephemeral"},
        },
        {"type": "text", "text": "\nWrite 2 questions."},
    ]


def test_anthropic_cache_reads_and_writes_are_counted_and_priced(anthropic_sdk) -> None:
    client = anthropic_sdk.Anthropic()
    # Anthropic's input_tokens leaves out what was read from and written to the cache
    client.messages.usage = SimpleNamespace(
        input_tokens=100,
        output_tokens=50,
        cache_read_input_tokens=2_000,
        cache_creation_input_tokens=1_000,
    )
    llm = make_llm("anthropic", "claude-sonnet-4-5", client=client, retry=FAST)
    llm.complete("x")
    total = llm.usage.total
    assert total.input_tokens == 3_100
    assert total.cached_input_tokens == 2_000 and total.cache_write_tokens == 1_000
    expected = (100 * 3.00 + 2_000 * 0.30 + 1_000 * 3.75 + 50 * 15.00) / 1e6
    assert llm.usage.cost().total_usd == pytest.approx(expected)


def test_gemini_cached_content_tokens_are_counted_and_priced(genai_sdk) -> None:
    client = genai_sdk.Client()
    client.models.usage = SimpleNamespace(
        prompt_token_count=5_000, candidates_token_count=10, cached_content_token_count=4_000
    )
    llm = make_llm("gemini", "gemini-2.5-flash", client=client)
    llm.complete("x")
    assert llm.usage.total.input_tokens == 5_000
    assert llm.usage.total.cached_input_tokens == 4_000
    expected = (1_000 * 0.30 + 4_000 * 0.03 + 10 * 2.50) / 1e6
    assert llm.usage.cost().total_usd == pytest.approx(expected)
