"""What hides a key before anything shows it (synth/llm/_redact.py), read back exactly: each kind of
credential in free text, a URL's user and query values, the settings that may carry keys, the
secrets a model knows of, and the order they are scrubbed in."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from synth.llm._redact import (
    REDACTED,
    redact_options,
    redact_text,
    redact_url,
    scrub,
    secret_values,
)

R = REDACTED


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("key sk-proj-abc123XYZ_-9 refused", f"key {R} refused"),
        ("sk-abc is too short to be a key", "sk-abc is too short to be a key"),
        ("Authorization: Bearer abc.def-123", f"Authorization: Bearer {R}"),
        ("authorization: basic   QWxhZGRpbjpvcGVu==", f"authorization: basic   {R}"),
        ("x-api-key: abcd1234; next", f"x-api-key: {R}; next"),
        ('{"api_key": "secretvalue", "n": 1}', f'{{"api_key": "{R}", "n": 1}}'),
        ("x-goog-api-key=AIzaSyExample&alt=json", f"x-goog-api-key={R}&alt=json"),
        (
            "GET https://user:pa55@proxy.example/v1 failed",
            f"GET https://{R}@proxy.example/v1 failed",
        ),
        ("GET /v1?token=abc123&x=1#frag", f"GET /v1?token={R}&x=1#frag"),
        ("form a=1&signature=zz9&b=2", f"form a=1&signature={R}&b=2"),
        (
            "GET https://b.s3.amazonaws.com/d.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            "&X-Amz-Credential=AKIAEXAMPLE%2F20261207&X-Amz-Security-Token=FwoGZX"
            "&X-Amz-Signature=9f2c",
            "GET https://b.s3.amazonaws.com/d.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            f"&X-Amz-Credential={R}&X-Amz-Security-Token={R}&X-Amz-Signature={R}",
        ),
        (
            "https://g.example/o?x-goog-signature=ab12&n=1",
            f"https://g.example/o?x-goog-signature={R}&n=1",
        ),
        ("nothing secret here: 42 goldens", "nothing secret here: 42 goldens"),
    ],
)
def test_every_kind_of_credential_in_free_text_is_hidden_and_the_rest_kept(
    text: str, shown: str
) -> None:
    assert redact_text(text) == shown


def test_the_secrets_a_model_knows_are_hidden_longest_first() -> None:
    secrets = ("gateway-token", "gateway-token-long")
    assert redact_text("sent gateway-token-long and gateway-token", secrets) == f"sent {R} and {R}"
    # the longer first: the shorter one inside it, replaced first, would leave its ends behind
    # (and sorting them as text, not by length, would put the shorter one first here)
    assert scrub("a x-zz-secret-y b", ("zz-secret", "x-zz-secret-y")) == f"a {R} b"
    assert scrub("a abcdefgh b", ("", "abcdefgh")) == f"a {R} b"  # a blank secret is skipped


def test_a_urls_user_and_query_values_are_hidden_its_place_kept() -> None:
    assert redact_url(None) is None and redact_url("") == ""
    assert redact_url("https://h.example/v1") == "https://h.example/v1"
    assert redact_url("https://me:pw@h.example:8443/v1?key=abc&empty=&n=2#top") == (
        "https://h.example:8443/v1?key=%3Credacted%3E&empty=%3Credacted%3E&n=%3Credacted%3E#top"
    )
    # a password holding "@": everything up to the last one is the user part
    assert redact_url("https://me:p@ss@h.example/") == "https://h.example/"
    # a store given as host:port, with or without a user, keeps its form
    assert redact_url("localhost:8000") == "localhost:8000"
    assert redact_url("me:pw@db.example:5432") == "db.example:5432"


def test_the_settings_that_may_carry_keys_are_hidden_and_the_others_kept() -> None:
    options = {
        "extra_headers": {"api-key": "k1", "x-team": "t"},
        "extra_query": "api-version=1&sig=zz",
        "timeout": 30,
        "metadata": {"project": "p"},  # a mapping, but not a setting that carries keys
        "organization": None,
    }
    assert redact_options(options) == {
        "extra_headers": {"api-key": R, "x-team": R},
        "extra_query": R,
        "timeout": 30,
        "metadata": {"project": "p"},
        "organization": None,
    }
    assert redact_options({"extra_headers": None}) == {"extra_headers": None}
    assert redact_options(None) == {}


def test_a_models_secrets_are_its_keys_tokens_and_secret_settings_long_enough_to_be_one() -> None:
    inner = SimpleNamespace(api_key="google-inner-key")  # google-genai keeps it inside
    client = SimpleNamespace(api_key="client-key-123", auth_token="bearer-tok-1", _api_client=inner)
    options = {
        "extra_headers": {"api-key": "header-key-9", "short": "tiny"},
        "extra_query": "q=secretive",
    }
    assert secret_values(client, options, api_key="given-key-42") == (
        "bearer-tok-1",
        "client-key-123",
        "given-key-42",
        "google-inner-key",
        "header-key-9",
        "q=secretive",
    )
    # eight characters is long enough; seven is not; non-strings are no secrets
    bare = SimpleNamespace(api_key="8chars!!", auth_token=12345678)
    assert secret_values(bare, None, api_key="7chars!") == ("8chars!!",)
    assert secret_values(None, {}) == ()
