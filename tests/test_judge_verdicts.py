"""Judge replies: a reason before every verdict a user reads one for (a supported claim's evidence
quote is its reason), faithfulness in two steps with evidence that synth locates in the contexts,
and how answer relevance treats a refusal."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fake_openai import FakeOpenAI
from pydantic import BaseModel

from synth import Golden, LLMJudge, assert_answer, make_llm
from synth.errors import OutputParseError
from synth.evaluate import _prompts
from synth.evaluate import _verdicts as v
from synth.llm.structured import parse_verdict, strict_json_schema

CONTEXTS = ["The reserve keeps 20% of the battery for outages.", "Panels face south."]

#: each judge schema whose reason a user reads beside the score, and its verdict field
VERDICTS = {
    v.RatingVerdict: "score",
    v.PreferenceVerdict: "winner",
    v.ContextVerdict: "relevant",
    v.Statement: "attributable",
    v.UnsupportedClaim: "supported",
    v.CorrectnessVerdict: "true_positives",
}


@pytest.mark.parametrize("schema", list(VERDICTS), ids=lambda s: s.__name__)
def test_every_judge_verdict_a_user_reads_a_reason_for_has_its_reason_first(
    schema: type[BaseModel],
) -> None:
    fields = list(schema.model_json_schema()["properties"])
    assert "reason" in fields
    assert fields.index("reason") < fields.index(VERDICTS[schema])


def _claim_shapes() -> dict[bool, dict[str, Any]]:
    """The two shapes of a claim's verdict as a strict provider is told them, by verdict."""
    schema = strict_json_schema(v.FaithfulnessVerdict)
    assert schema is not None
    options = schema["properties"]["verdicts"]["items"]["anyOf"]
    shapes = [schema["$defs"][o["$ref"].rsplit("/", 1)[1]] for o in options]
    # one value each, as enum: every strict mode takes enum
    return {shape["properties"]["supported"]["enum"][0]: shape for shape in shapes}


def test_the_judge_is_made_to_give_a_reason_for_every_unsupported_claim_and_none_for_a_quoted_one() -> (
    None
):
    shapes = _claim_shapes()
    unsupported, supported = shapes[False], shapes[True]
    # strict decoding writes every required field, in order: the reason before the verdict
    assert unsupported["required"] == ["index", "evidence", "reason", "supported"]
    # a supported claim's evidence is its reason (synth locates it); no text is written twice
    assert supported["required"] == ["index", "evidence", "supported"]
    assert supported["additionalProperties"] is False


def test_the_faithfulness_schema_lists_claims_before_verdicts_and_evidence_before_support() -> None:
    assert list(v.FaithfulnessVerdict.model_fields) == ["claims", "verdicts"]
    for shape in _claim_shapes().values():
        fields = list(shape["properties"])
        assert fields.index("evidence") < fields.index("supported")


def test_a_verdict_that_says_unsupported_without_a_reason_still_scores() -> None:
    raw = json.dumps(
        {"claims": ["a"], "verdicts": [{"index": 1, "evidence": "", "supported": False}]}
    )
    verdict = parse_verdict(raw, v.FaithfulnessVerdict)
    assert v.score_faithfulness(verdict, CONTEXTS, raw).score == 0.0


def reply(*verdicts: tuple[bool, str]) -> v.FaithfulnessVerdict:
    return v.FaithfulnessVerdict(
        claims=[f"claim {i}" for i in range(len(verdicts))],
        verdicts=[
            v.SupportedClaim(index=i, evidence=evidence, supported=True)
            if ok
            else v.UnsupportedClaim(index=i, evidence=evidence, reason="r", supported=False)
            for i, (ok, evidence) in enumerate(verdicts, start=1)
        ],
    )


def test_a_supported_claim_counts_only_when_its_evidence_is_found_in_the_contexts() -> None:
    scored = v.score_faithfulness(
        reply(
            (True, "keeps 20% of the battery"),  # found
            (True, "keeps 50% of the battery for the winter"),  # not in the contexts
            (True, ""),  # no evidence
            (False, ""),
        ),
        CONTEXTS,
    )
    assert scored.score == 0.25
    assert scored.details == {
        "n_claims": 4,
        "n_supported": 1,
        "n_unlocated": 2,
        "unlocated_claims": [2, 3],
    }


def test_evidence_differing_only_in_spacing_and_case_is_found_and_a_whole_short_context_too() -> (
    None
):
    scored = v.score_faithfulness(
        reply((True, "the RESERVE keeps  20%\nof the battery"), (True, "Panels face south.")),
        CONTEXTS,
    )
    assert scored.score == 1.0 and scored.details["n_unlocated"] == 0


def test_a_verdict_missing_for_a_claim_is_a_malformed_reply() -> None:
    verdict = v.FaithfulnessVerdict(
        claims=["a", "b"], verdicts=[v.UnsupportedClaim(index=1, supported=False)]
    )
    with pytest.raises(OutputParseError, match=r"one verdict per claim, claims 1..2, got \[1\]"):
        v.score_faithfulness(verdict, CONTEXTS, raw="{}")


def test_a_judge_answering_from_the_schema_alone_supports_nothing_it_cannot_quote() -> None:
    with FakeOpenAI(mode="generic") as server:  # evidence made up, never read from the prompt
        judge = LLMJudge(make_llm("openai:judge", base_url=server.url, api_key="sk-test"))
        result = judge.faithfulness("How much does the reserve keep?", "20%.", CONTEXTS)
        judge.close()
    verdict = result.verdict
    assert verdict is not None and len(verdict["claims"]) == len(verdict["verdicts"]) >= 1
    assert result.score == 0.0
    assert result.details["n_unlocated"] == result.details["n_claims"]


def test_the_faithfulness_prompt_asks_for_claims_that_stand_alone_then_quoted_evidence() -> None:
    prompt = _prompts.faithfulness_prompt("q", "a", CONTEXTS)
    assert "stand alone" in prompt and "copied word for word" in prompt
    assert prompt.index('"claims"') < prompt.index('"verdicts"')
    assert prompt.index('"evidence"') < prompt.index('"supported"')
    shown = json.loads(prompt.split("nothing else:\n")[1].split("\n")[0])["verdicts"]
    by_verdict = {entry["supported"]: list(entry) for entry in shown}
    assert by_verdict[True] == ["index", "evidence", "supported"]
    assert by_verdict[False] == ["index", "evidence", "reason", "supported"]


def test_answer_relevance_says_how_a_refusal_is_rated_and_asks_the_reason_first() -> None:
    prompt = _prompts.answer_relevance_prompt("q", "I cannot answer that.")
    assert "refusal" in prompt and "cannot be answered" in prompt
    fmt = prompt[prompt.index("Reply with") :]
    assert fmt.index('"reason"') < fmt.index('"score"')


def test_every_prompt_format_shows_the_reason_before_the_verdict() -> None:
    formats = {
        "precision": (_prompts.context_precision_prompt("q", CONTEXTS, None), '"relevant"'),
        "recall": (_prompts.context_recall_prompt("q", CONTEXTS, "r"), '"attributable"'),
        "correctness": (_prompts.answer_correctness_prompt("q", "a", "r"), '"true_positives"'),
        "criteria": (_prompts.criteria_prompt("q", "a", "polite", 5), '"score"'),
        "preference": (_prompts.preference_prompt("q", "a", "b"), '"winner"'),
    }
    for name, (prompt, verdict) in formats.items():
        fmt = prompt[prompt.index("Reply with") :]
        assert fmt.index('"reason"') < fmt.index(verdict), name
    assert (
        json.loads(
            _prompts.faithfulness_prompt("q", "a", CONTEXTS)
            .split("nothing else:\n")[1]
            .split("\n")[0]
        )["verdicts"][0]["index"]
        == 1
    )


def test_a_failed_faithfulness_check_names_each_unsupported_claim_with_the_judges_reason() -> None:
    def judge(prompt: str, system: str | None = None) -> str:
        quote = "keeps 20% of the battery"
        return json.dumps(
            {
                "claims": ["The reserve keeps 20%.", "The reserve lasts a week."],
                "verdicts": [
                    {"index": 1, "evidence": quote, "supported": True},
                    {
                        "index": 2,
                        "evidence": "",
                        "reason": "no context gives a duration",
                        "supported": False,
                    },
                ],
            }
        )

    golden = Golden(input="How long does the reserve last?", retrieval_context=CONTEXTS)
    with pytest.raises(AssertionError) as failed:
        assert_answer(golden, "It keeps 20% and lasts a week.", metrics=["faithfulness"],
                      judges={"j": judge}, threshold=0.9)  # fmt: skip
    message = str(failed.value)
    assert "faithfulness 0.50 < 0.9" in message
    assert "unsupported: The reserve lasts a week. (no context gives a duration)" in message
    assert "The reserve keeps 20%." not in message  # a supported claim is no reason to fail
