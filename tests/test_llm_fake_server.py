"""The fake OpenAI-compatible server itself: the real openai SDK against every scripted behaviour."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import openai
import pytest
from fake_openai import FakeOpenAI, Reply, example_for_schema, generic_reply, smart_reply
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


# ---- the generic mode: replies from the JSON schema alone ----------------------------------------


def _batch_schema(n: int, number: str = "index", bounded: bool = True) -> dict:
    """A numbered batch reply like synth's: ``n`` entries, each numbered 1..n."""
    numbering: dict = {"type": "integer", "minimum": 1}
    if bounded:
        numbering["maximum"] = n
    entry = {
        "type": "object",
        "properties": {
            number: numbering,
            "score": {"type": "number", "minimum": 0, "maximum": 1},
            "feedback": {"type": "string"},
        },
        "required": [number, "score", "feedback"],
    }
    return {
        "type": "object",
        "properties": {"scores": {"type": "array", "minItems": n, "maxItems": n, "items": entry}},
        "required": ["scores"],
    }


def _request(schema: dict, prompt: str = "Score these.", in_prompt: bool = False) -> dict:
    if in_prompt:
        text = f"{prompt}\n\nReply with JSON matching:\n```json\n{json.dumps(schema)}\n```"
        return {"messages": [{"role": "user", "content": text}]}
    return {
        "messages": [{"role": "user", "content": prompt}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "R", "schema": schema}},
    }


def _generic(schema: dict, seed: int = 0, **kw) -> object:
    return json.loads(generic_reply(_request(schema, **kw), random.Random(seed)))


def test_generic_strings_are_its_own_and_honour_their_length_bounds() -> None:
    prompt = "The Zanzibar quokka migrates over Kilimanjaro every Thursday afternoon."
    schema = {
        "type": "object",
        "properties": {
            "free": {"type": "string"},
            "short": {"type": "string", "maxLength": 12},
            "long": {"type": "string", "minLength": 200},
        },
    }
    reply = _generic(schema, prompt=prompt)
    assert set(reply) == {"free", "short", "long"}
    words = set(re.findall(r"[A-Za-z]+", " ".join(reply.values())))
    assert not words & {"Zanzibar", "quokka", "migrates", "Kilimanjaro", "Thursday"}  # no prompt
    assert reply["free"].startswith("The ") and reply["free"].endswith(".")
    assert len(reply["short"]) <= 12 and len(reply["long"]) >= 200
    # seeded: the same rng gives the same reply, another seed another one
    assert _generic(schema, seed=0) == _generic(schema, seed=0) != _generic(schema, seed=1)


def test_generic_numbers_sit_three_quarters_up_their_bounds() -> None:
    schema = {
        "type": "object",
        "properties": {
            "score": {"type": "number", "minimum": 0, "maximum": 1},
            "rating": {"type": "integer", "minimum": 1, "maximum": 5},
            "offset": {"type": "number", "minimum": 10, "maximum": 20},
            "free_number": {"type": "number"},
            "free_integer": {"type": "integer"},
            "flag": {"type": "boolean"},
            "nothing": {"type": "null"},
        },
    }
    assert _generic(schema) == {
        "score": 0.75,
        "rating": 4,
        "offset": 17.5,
        "free_number": 0.75,  # unbounded: three quarters from 0 to 1
        "free_integer": 0,
        "flag": True,
        "nothing": None,
    }


@pytest.mark.parametrize(
    ("bounds", "count"),
    [
        ({}, 3),
        ({"minItems": 2}, 3),
        ({"minItems": 5}, 5),
        ({"maxItems": 2}, 2),
        ({"minItems": 4, "maxItems": 4}, 4),
    ],
)
def test_generic_arrays_have_min_items_but_three_at_least_never_more_than_max(
    bounds: dict, count: int
) -> None:
    schema = {"type": "object", "properties": {"inputs": {"type": "array", **bounds}}}
    inputs = _generic(schema)["inputs"]
    assert len(inputs) == count and all(isinstance(i, str) and i for i in inputs)


@pytest.mark.parametrize("number", ["index", "position"])
def test_generic_numbers_batch_entries_in_order(number: str) -> None:
    reply = _generic(_batch_schema(6, number))
    assert [entry[number] for entry in reply["scores"]] == [1, 2, 3, 4, 5, 6]
    assert all(entry["score"] == 0.75 and entry["feedback"] for entry in reply["scores"])
    # a lower bound alone still numbers in order (a model sees no reason to stop at 2)
    unbounded = _generic(_batch_schema(4, number, bounded=False))
    assert [entry[number] for entry in unbounded["scores"]] == [1, 2, 3, 4]


def test_generic_enums_give_their_first_member_and_every_property_is_filled() -> None:
    schema = {
        "type": "object",
        "properties": {
            "verdict": {"enum": ["yes", "no", "idk"]},
            "kind": {"$ref": "#/$defs/Kind"},
            "maybe": {"anyOf": [{"type": "null"}, {"type": "string"}]},
            "fixed": {"const": "v1"},
            "nested": {"type": "object", "properties": {"a": {"type": "integer"}}},
        },
        "required": ["verdict"],  # a careful model fills the optional ones too
        "$defs": {"Kind": {"type": "string", "enum": ["alpha", "beta"]}},
    }
    for seed in range(30):
        reply = _generic(schema, seed=seed)
        assert set(reply) == {"verdict", "kind", "maybe", "fixed", "nested"}
        # the first member, whatever the seed: a verdict schema lists its passing value first
        assert reply["verdict"] == "yes" and reply["kind"] == "alpha" and reply["fixed"] == "v1"
        assert isinstance(reply["maybe"], str) and reply["nested"] == {"a": 0}


def test_generic_reads_a_schema_given_in_the_prompt() -> None:
    reply = _generic(_batch_schema(3), in_prompt=True)
    assert [entry["index"] for entry in reply["scores"]] == [1, 2, 3]
    plain = generic_reply({"messages": [{"role": "user", "content": "Hi"}]}, random.Random(0))
    assert plain.startswith("The ") and not plain.startswith("{")  # no schema: a sentence


def _numbers(reply: dict) -> list[int]:
    return [entry["index"] for entry in reply["scores"]]


@pytest.mark.parametrize(
    ("slip", "spoiled"),
    [
        (
            "missing",
            lambda got: len(got) == 4 and len(set(got)) == 4 and set(got) < {1, 2, 3, 4, 5},
        ),
        ("duplicated", lambda got: sorted(set(got)) == [1, 2, 3, 4, 5] and len(got) == 6),
        ("renumbered", lambda got: got in ([0, 1, 2, 3, 4], [2, 3, 4, 5, 6])),
        ("unnumbered", lambda got: got == [1, 1, 1, 1, 1]),
    ],
)
def test_each_sloppy_kind_spoils_batches_at_its_seeded_rate_and_counts_them(
    slip: str, spoiled
) -> None:
    schema = _batch_schema(5)
    with FakeOpenAI(mode="generic", sloppy={slip: 0.3}, seed=4) as server:
        client = server.client()
        replies = []
        for k in range(120):
            request = _request(schema, prompt=f"Score batch {k}.")
            answer = _ask(client, request["messages"][0]["content"], **_format(request))
            replies.append(json.loads(answer.choices[0].message.content))
        client.close()
    bad = [r for r in replies if _numbers(r) != [1, 2, 3, 4, 5]]
    assert all(spoiled(_numbers(r)) for r in bad), [_numbers(r) for r in bad]
    assert server.slips == {slip: len(bad)}
    assert 20 <= len(bad) <= 55  # about 0.3 of 120 (36), drawn from the seed
    if slip == "duplicated":  # the repeated entry is a copy of its neighbour
        assert all(
            any(a == b for a, b in zip(r["scores"], r["scores"][1:], strict=False)) for r in bad
        )
    # the same seed spoils the same requests; another seed others
    assert _spoiled_by(slip, seed=4) == [i for i, r in enumerate(replies[:20]) if r in bad]
    assert _spoiled_by(slip, seed=5) != _spoiled_by(slip, seed=4)


def _format(request: dict) -> dict:
    return {"response_format": request["response_format"]}


def _spoiled_by(slip: str, seed: int) -> list[int]:
    """Which of the first 20 batch requests a server seeded ``seed`` spoils."""
    schema = _batch_schema(5)
    spoiled = []
    with FakeOpenAI(mode="generic", sloppy={slip: 0.3}, seed=seed) as server:
        client = server.client()
        for k in range(20):
            request = _request(schema, prompt=f"Score batch {k}.")
            answer = _ask(client, request["messages"][0]["content"], **_format(request))
            if _numbers(json.loads(answer.choices[0].message.content)) != [1, 2, 3, 4, 5]:
                spoiled.append(k)
        client.close()
    return spoiled


def test_sloppy_leaves_alone_what_is_not_a_numbered_batch_and_reasks_are_answered_afresh() -> None:
    strings = {"type": "object", "properties": {"inputs": {"type": "array", "maxItems": 2}}}
    everything = {"missing": 1.0}
    with FakeOpenAI(mode="generic", sloppy=everything) as server:
        client = server.client()
        request = _request(strings)
        answer = _ask(client, "Write questions.", **_format(request))
        assert len(json.loads(answer.choices[0].message.content)["inputs"]) == 2
        assert server.slips == {}
        server.sloppy = {}
        batch = _request(_batch_schema(3))
        first = _ask(client, "Score these.", **_format(batch)).choices[0].message.content
        again = _ask(client, "Score these.", **_format(batch)).choices[0].message.content
        assert first != again  # the same request asked again is answered afresh
        assert _numbers(json.loads(first)) == _numbers(json.loads(again)) == [1, 2, 3]
        server.queue_faults("cutoff")  # faults apply in the generic mode too
        cut = _ask(client, "Score these.", **_format(batch)).choices[0]
        assert cut.finish_reason == "length"
        with pytest.raises(ValueError):
            json.loads(cut.message.content)
        client.close()
    with pytest.raises(ValueError, match="unknown sloppy kinds"):
        FakeOpenAI(mode="generic", sloppy={"swapped": 0.1})
    with pytest.raises(ValueError, match="give no reply"):
        FakeOpenAI(mode="generic", reply="text")


def test_standalone_generic_mode_with_sloppy_batches(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, str(FAKE_SERVER), "--port", "0", "--mode", "generic"]
        + ["--sloppy", "unnumbered=1", "--seed", "3"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().strip()
        client = openai.OpenAI(base_url=url, api_key="sk-standalone", max_retries=0)
        request = _request(_batch_schema(4))
        answer = _ask(client, "Score these.", **_format(request)).choices[0].message.content
        assert _numbers(json.loads(answer)) == [1, 1, 1, 1]
        client.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()


def test_prompt_cache_reports_a_repeated_prefix_of_1024_tokens_or_more_once_answered() -> None:
    long_system = " ".join(f"rule{i} applies to pump {i}." for i in range(400))  # > 1,024 tokens
    with FakeOpenAI(prompt_cache=True) as server:
        client = server.client()

        def ask(system: str, user: str) -> openai.types.CompletionUsage:
            messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
            return client.chat.completions.create(model="m", messages=messages).usage

        first = ask(long_system, "Which pump runs at night?")
        second = ask(long_system, "Which pump is on standby?")
        short = ask("Be brief.", "Which pump runs at night?")
        again_short = ask("Be brief.", "Which pump runs at night?")
    assert first.prompt_tokens > 1024 and first.prompt_tokens_details.cached_tokens == 0
    cached = second.prompt_tokens_details.cached_tokens
    # the shared system message is cached in steps of 128 tokens, the differing question is not
    assert 1024 <= cached <= second.prompt_tokens - 1 and (cached - 1024) % 128 == 0
    assert second.prompt_tokens - cached < 128 + 16
    assert short.prompt_tokens < 1024 and again_short.prompt_tokens_details.cached_tokens == 0


def test_prompt_cache_counts_what_the_log_records_and_token_latency_is_logged(
    tmp_path: Path,
) -> None:
    log = tmp_path / "requests.jsonl"
    system = "x " * 1500
    with FakeOpenAI(prompt_cache=True, token_latency=0.001, log_path=str(log)) as server:
        client = server.client()
        for _ in range(2):
            client.chat.completions.create(
                model="m",
                messages=[{"role": "system", "content": system}, {"role": "user", "content": "q"}],
            )
        client.embeddings.create(model="e", input=["one text", "two texts"])
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    chat = [r["usage"] for r in rows if r["path"].endswith("/chat/completions")]
    assert [u["prompt_tokens_details"]["cached_tokens"] > 0 for u in chat] == [False, True]
    embedding = next(r["usage"] for r in rows if r["path"].endswith("/embeddings"))
    assert embedding["prompt_tokens"] == 4
