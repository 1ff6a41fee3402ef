"""The evaluator guide's examples (seeds/002), with ``scikitplot.corpus`` replaced by ``synth``.

Each test runs one code block of the guide as written and checks the values it shows.
"""

from __future__ import annotations

import json

import pytest

from synth import (
    LLMJudge,
    cohen_kappa,
    evaluate_answers,
    evaluate_preference,
    krippendorff_alpha,
)


def toy_model(prompt, system):
    """A stand-in for a real model: it supports the first of two claims, quoting the first
    context, and rates 4 of 5."""
    if '"claims"' in prompt:
        context = prompt.split('<context index="1">\n')[1].split("\n</context>")[0]
        return json.dumps(
            {
                "claims": ["The answer's first claim.", "The answer's second claim."],
                "verdicts": [
                    {"index": 1, "reason": "stated", "evidence": context, "supported": True},
                    {"index": 2, "reason": "not stated", "evidence": "", "supported": False},
                ],
            }
        )
    return json.dumps({"score": 4, "reason": "Direct answer."})


dataset = [
    {
        "id": "q1",
        "question": "What is the capital of France?",
        "reference": "Paris",
        "contexts": ["Paris is the capital and largest city of France."],
    },
    {
        "id": "q2",
        "question": "Which planet is the largest?",
        "reference": ["Jupiter", "planet Jupiter"],
        "contexts": ["Jupiter is the largest planet in the Solar System."],
    },
]


def my_system(question):
    return {"Which planet is the largest?": "Jupiter"}.get(question, "Paris")


def test_judge_one_answer() -> None:
    judge = LLMJudge(toy_model)
    contexts = ["Paris is the capital and largest city of France."]
    result = judge.faithfulness(
        "What is the capital of France?",
        "Paris, a city of 30 million people, is the capital of France.",
        contexts,
    )
    assert result.score == 0.5
    assert result.details["n_claims"] == 2 and result.details["n_supported"] == 1
    assert judge.answer_relevance("What is the capital of France?", "Paris.").score == 0.75
    # the result keeps the parsed verdict and every completion
    assert result.verdict["verdicts"][1]["supported"] is False
    assert len(result.completions) == 1 and result.error is None and not result.undefined


def test_evaluate_a_system() -> None:
    report = evaluate_answers(my_system, dataset, judges={"toy": toy_model})
    assert report.metrics == {
        "exact_match": 1.0,
        "token_f1": 1.0,
        "faithfulness": 0.5,
        "answer_relevance": 0.75,
    }
    assert list(report.metrics) == [
        "exact_match",
        "token_f1",
        "faithfulness",
        "answer_relevance",
    ]


def test_panel() -> None:
    panel = evaluate_answers(
        None,
        [dict(item, answer="Paris") for item in dataset[:1]],
        judges={"first": toy_model, "second": toy_model},
        metrics=["answer_relevance"],
        text_metrics=[],
    )
    assert panel.metrics == {
        "answer_relevance/first": 0.75,
        "answer_relevance/second": 0.75,
        "answer_relevance": 0.75,
    }
    assert panel.usage["first"]["responses"] == 1
    assert panel.usage["second"]["responses"] == 1


def test_write_read_compare(tmp_path) -> None:
    report = evaluate_answers(my_system, dataset, judges={"toy": toy_model})
    report.write(tmp_path / "answers.json")
    again = type(report).read(tmp_path / "answers.json")
    comparison = report.compare(again)
    assert [(m.metric, m.delta) for m in comparison.metrics][:2] == [
        ("exact_match", 0.0),
        ("token_f1", 0.0),
    ]
    assert again == report


def test_head_to_head() -> None:
    def always_first(prompt, system):
        return '{"winner": "answer_a", "reason": "The first one."}'

    duel = evaluate_preference(
        dataset,
        ["Paris", "Jupiter"],
        ["Lyon", "Saturn"],
        judges={"biased": always_first},
        names=("mine", "baseline"),
    )
    assert duel.summary["biased"]["position_consistency"] == 0.0
    assert duel.summary["biased"]["ties"] == 2


def test_agreement_statistics() -> None:
    assert round(cohen_kappa([1, 2, 3, 3], [1, 2, 3, 2], weights="quadratic"), 3) == 0.8
    assert round(krippendorff_alpha([[1, 2, 3, None], [1, 2, 2, 4]], level="interval"), 3) == 0.706


#: every name the guide uses, as ``synth.<name>``
GUIDE_NAMES = [
    "make_llm", "LLMJudge", "JudgeResult", "parse_verdict", "context_texts", "evaluate_answers",
    "AnswerEvaluation", "evaluate_preference", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha",
    "IncompleteCompletionError", "CacheError",
]  # fmt: skip


@pytest.mark.parametrize("name", GUIDE_NAMES)
def test_guide_names_exist(name: str) -> None:
    import synth

    assert name in synth.__all__ and getattr(synth, name) is not None


def test_guide_methods_exist() -> None:
    from synth import AnswerEvaluation, JudgeResult

    for method in ("faithfulness", "answer_relevance", "context_precision", "context_recall",
                   "answer_correctness", "criteria_score", "preference"):  # fmt: skip
        assert callable(getattr(LLMJudge, method)), method
    for method in ("write", "read", "compare"):
        assert callable(getattr(AnswerEvaluation, method)), method
    assert {"score", "verdict", "completions", "error", "undefined"} <= set(
        JudgeResult.__dataclass_fields__
    )


# ---- "Connect a model" ----------------------------------------------------------------------------
SDKS = {"openai": "openai", "anthropic": "anthropic", "gemini": "google.genai"}


@pytest.mark.parametrize(
    ("provider", "model"),
    [("openai", "your-openai-model"), ("anthropic", "your-claude-model"),
     ("gemini", "your-gemini-model")],
)  # fmt: skip
def test_connect_a_model(provider: str, model: str, monkeypatch) -> None:
    """The guide's make_llm lines: made without a request; a missing SDK says what to install."""
    import importlib.util

    from synth import ConfigError, make_llm

    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(key, "test-key-not-real")  # the SDK's default client reads it
    try:
        installed = importlib.util.find_spec(SDKS[provider]) is not None
    except ModuleNotFoundError:  # the parent package (google) is missing too
        installed = False
    if not installed:
        with pytest.raises(ConfigError, match="pip install"):
            make_llm(provider, model, max_tokens=1024)
        return
    llm = make_llm(provider, model, max_tokens=1024)
    assert callable(llm.complete) and "test-key-not-real" not in repr(llm)


def test_importing_synth_imports_no_provider_sdk() -> None:
    import subprocess
    import sys

    code = (
        "import sys, synth; "
        "print(','.join(m for m in ('openai', 'anthropic', 'google.genai') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == ""
