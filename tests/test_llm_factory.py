"""make_llm: providers, spec strings, callables, identities, and what is never shown."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from synth import ConfigError, FunctionModel, Usage, make_llm, parse_model_spec
from synth.llm._redact import REDACTED, redact_url
from synth.llm.cache import CacheModel
from synth.llm.openai import OpenAIModel
from synth.llm.usage import UsageModel


def test_spec_strings() -> None:
    assert parse_model_spec("openai:gpt-4.1-mini") == ("openai", "gpt-4.1-mini")
    assert parse_model_spec("openai:llama3.1:8b") == ("openai", "llama3.1:8b")
    assert parse_model_spec(" Anthropic:claude-x ") == ("anthropic", "claude-x")
    assert parse_model_spec("gemini") == ("gemini", None)
    with pytest.raises(ConfigError):
        parse_model_spec("")


def test_spec_and_separate_model_agree(fake_openai) -> None:
    one = make_llm("openai:gpt-4o-mini", base_url=fake_openai.url)
    two = make_llm("openai", "gpt-4o-mini", base_url=fake_openai.url)
    assert one.identity() == two.identity()
    assert one.identity()["model"] == "gpt-4o-mini"
    with pytest.raises(ConfigError, match="another"):
        make_llm("openai:gpt-4o", "gpt-4o-mini", base_url=fake_openai.url)
    with pytest.raises(ConfigError, match="needs a model"):
        make_llm("openai", base_url=fake_openai.url)
    one.close()
    two.close()


def test_unknown_provider_suggests_the_closest() -> None:
    with pytest.raises(ConfigError, match="did you mean 'openai'"):
        make_llm("opena:gpt-4o")
    with pytest.raises(ConfigError, match="did you mean 'gemini'"):
        make_llm("gemeni", "x")
    with pytest.raises(ConfigError, match="known: openai, anthropic, gemini"):
        make_llm("zzz:model")
    with pytest.raises(ConfigError):
        make_llm(42)  # type: ignore[arg-type]


def test_a_callable_is_a_model() -> None:
    llm = make_llm(lambda prompt, system: f"{system}|{prompt}")
    assert llm.complete("q", system="s") == "s|q"
    assert llm.identity()["provider"] == "function"
    assert isinstance(llm, UsageModel) and llm.usage.total.responses == 1
    with pytest.raises(ConfigError):
        make_llm(lambda p, s: p, "model-name")


def test_a_made_model_is_returned_as_is_and_a_bare_one_is_wrapped() -> None:
    made = make_llm(lambda p, s: p)
    assert make_llm(made) is made
    with pytest.raises(ConfigError, match="already a made model"):
        make_llm(made, usage=Usage())
    bare = FunctionModel(lambda p, s: p, name="echo")
    wrapped = make_llm(bare)
    assert isinstance(wrapped, UsageModel) and wrapped.unwrap() is bare
    assert wrapped.identity() == {"provider": "function", "model": "echo"}


def test_identity_and_repr_redact_secrets(fake_openai) -> None:
    options = {
        "temperature": 0,
        "extra_headers": {"api-key": "sk-header-secret", "X-Route": "eu"},
        "extra_query": {"api-version": "2024-06-01", "key": "sk-query-secret"},
    }
    llm = make_llm(
        "openai:gpt-4o", base_url=fake_openai.url, api_key="sk-main-secret", options=options
    )
    shown = repr(llm) + json.dumps(llm.identity()) + repr(llm.unwrap())
    for secret in ("sk-header-secret", "sk-query-secret", "sk-main-secret", "2024-06-01", "eu"):
        assert secret not in shown
    assert llm.identity()["options"]["extra_headers"] == {"api-key": REDACTED, "X-Route": REDACTED}
    assert llm.identity()["options"]["temperature"] == 0
    llm.complete("hi")
    sent = fake_openai.requests[0]
    assert sent.headers["api-key"] == "sk-header-secret"  # still sent, only never shown
    llm.close()


def test_urls_lose_credentials() -> None:
    shown = redact_url("https://user:pw@gw.example/v1?key=abc&x=1")
    assert shown.startswith("https://gw.example/v1?key=")
    assert "abc" not in shown and "pw" not in shown and "user" not in shown
    assert redact_url(None) is None


def test_adapter_refuses_client_and_base_url_together(fake_openai) -> None:
    client = fake_openai.client()
    with pytest.raises(ConfigError, match="give base_url"):
        OpenAIModel("m", client=client, base_url=fake_openai.url)
    with pytest.raises(ConfigError, match="structured"):
        make_llm("openai:m", client=client, structured="xml")
    with pytest.raises(ConfigError, match="max_tokens"):
        make_llm("openai:m", client=client, max_tokens=0)
    client.close()


def test_importing_synth_loads_no_sdk_and_making_a_model_loads_only_its_own() -> None:
    code = (
        "import sys, synth\n"
        "before = [m for m in ('openai', 'anthropic', 'google.genai') if m in sys.modules]\n"
        "synth.make_llm('openai:gpt-4o', base_url='http://127.0.0.1:9/v1')\n"
        "after = [m for m in ('openai', 'anthropic', 'google.genai') if m in sys.modules]\n"
        "print(before, after)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after = out.stdout.strip().split("] [")
    assert before == "["  # no SDK at all, openai included
    assert "openai" in after and "anthropic" not in after and "google.genai" not in after


def test_the_api_key_is_not_part_of_the_identity_or_the_cache_key(fake_openai) -> None:
    one = make_llm("openai:gpt-4o", base_url=fake_openai.url, api_key="sk-first-key-1111", cache={})
    two = make_llm("openai:gpt-4o", base_url=fake_openai.url, api_key="sk-other-key-2222", cache={})
    other_url = make_llm(
        "openai:gpt-4o", base_url=fake_openai.url + "/x", api_key="sk-first-key-1111", cache={}
    )
    key_of = [m.layer(CacheModel).key("p", system="s") for m in (one, two, other_url)]
    assert key_of[0] == key_of[1]  # changing only the key changes nothing: it is not an input
    assert key_of[0] != key_of[2]  # the endpoint is
    assert one.identity() == two.identity()
    assert "sk-first" not in json.dumps(one.identity()) + repr(one)
    for model in (one, two, other_url):
        model.close()
