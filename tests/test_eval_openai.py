"""Judges made from a ``provider:model`` spec, over HTTP to the fake OpenAI-compatible server.

The real ``openai`` SDK talks to tests/fake_openai.py on 127.0.0.1: token counts come from the
server, the identity records the provider and model, and neither the API key nor the server's
address is written anywhere a report goes.
"""

from __future__ import annotations

import json

import pytest
from fake_openai import FakeOpenAI
from judge_replies import faithfulness_reply

from synth import LLMJudge, evaluate_answers, make_llm, read_report
from synth.cli import main
from synth.evaluate.gate import check_comparable, gate_scores

SECRET = "sk-judge-secret-0123456789"

DATASET = [
    {
        "id": "q1",
        "question": "Capital of France?",
        "reference": "Paris",
        "contexts": ["Paris is the capital."],
    },
    {
        "id": "q2",
        "question": "Largest planet?",
        "reference": "Jupiter",
        "contexts": ["Jupiter is large."],
    },
]


def judge_reply(request: dict) -> dict:
    prompt = "\n".join(str(m.get("content", "")) for m in request["messages"])
    if '"claims"' in prompt:
        return faithfulness_reply(prompt, [True, False], ["x", "y"])
    return {"score": 4, "reason": "fine"}


@pytest.fixture
def server():
    with FakeOpenAI(reply=judge_reply) as fake:
        yield fake


def test_judge_from_make_llm_counts_tokens_and_hides_the_key(server, tmp_path) -> None:
    judge = LLMJudge(
        make_llm("openai:judge-model", base_url=server.url, api_key=SECRET, max_retries=0)
    )
    report = evaluate_answers(lambda q: "Paris", DATASET, judges={"gpt": judge}, keep_verdicts=True)
    assert report.metrics["faithfulness"] == 0.5 and report.metrics["answer_relevance"] == 0.75
    assert server.request_count("chat") == 4
    usage = report.usage["gpt"]
    assert usage["responses"] == 4 and usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    identity = report.judges["gpt"]
    assert identity["provider"] == "openai" and identity["model"] == "judge-model"
    assert identity["prompt_version"] and identity["prompt_hash"]
    assert all(
        r.headers.get("Authorization", r.headers.get("authorization")) == f"Bearer {SECRET}"
        for r in server.requests
    )
    for suffix in ("json", "jsonl", "yaml", "toml"):
        path = report.write(tmp_path / f"report.{suffix}")
        assert SECRET not in path.read_text(encoding="utf-8")
        assert read_report(path) == report
    assert SECRET not in repr(judge) and SECRET not in json.dumps(judge.identity())


def test_spec_string_judge_and_cache_rerun_makes_no_request(server, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    cache: dict = {}
    first = evaluate_answers(
        lambda q: "Paris", DATASET, judges={"gpt": "openai:judge-model"}, cache=cache
    )
    assert server.request_count("chat") == 4
    again = evaluate_answers(
        lambda q: "Paris", DATASET, judges={"gpt": "openai:judge-model"}, cache=cache
    )
    assert server.request_count("chat") == 4  # every reply came from the cache
    assert again.usage["gpt"]["cached_responses"] == 4 and again.usage["gpt"]["input_tokens"] == 0
    assert again.metrics == first.metrics
    assert all(SECRET not in key and SECRET not in str(value) for key, value in cache.items())


def test_cli_judge_spec_with_base_url(server, monkeypatch, tmp_path, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.json").write_text(
        json.dumps([dict(d, answer="Paris") for d in DATASET]), encoding="utf-8"
    )
    code = main(["evaluate", "data.json", "--judge", "openai:judge-model", "--base-url", server.url,
                 "--metric", "answer_relevance", "-o", "out.json"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert list(report["metrics"]) == ["exact_match", "token_f1", "answer_relevance"]
    assert report["metrics"]["answer_relevance"] == 0.75
    assert report["judges"]["openai:judge-model"]["model"] == "judge-model"
    assert SECRET not in (tmp_path / "out.json").read_text(encoding="utf-8")
    assert SECRET not in capsys.readouterr().out


def test_a_report_and_a_baseline_name_no_judge_server(server, tmp_path) -> None:
    """A report and a gate's baseline are shared: a judge is named by provider and model, never by
    the (often private) server it was asked through."""
    judge = LLMJudge(
        make_llm("openai:judge-model", base_url=server.url, api_key=SECRET, max_retries=0)
    )
    report = evaluate_answers(lambda q: "Paris", DATASET, judges={"gpt": judge})
    baseline = gate_scores(lambda q: "Paris", DATASET, judges={"gpt": judge})
    written = [report.write(tmp_path / "report.json"), baseline.write(tmp_path / "base.json")]
    address = server.url.split("//", 1)[1].split("/", 1)[0]  # 127.0.0.1:PORT
    for path in written:
        text = path.read_text(encoding="utf-8")
        assert '"judge-model"' in text
        assert address not in text and "base_url" not in text
    # a baseline made when identities still held the address compares as the same judge
    before = baseline.model_copy(deep=True)
    before.judges["gpt"]["base_url"] = server.url
    check_comparable(before, baseline)
