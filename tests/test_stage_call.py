"""What a stage's one request
sends, counts, re-asks and forgets."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from synth.errors import IncompleteCompletionError, OutputParseError
from synth.llm.base import LLM, Completion, FunctionModel, run_sync
from synth.llm.factory import wrap_llm
from synth.llm.structured import parse_verdict
from synth.stage.call import REFUSED, ask_checked, ask_raw, forget
from synth.stage.stats import StageStats
from synth.stage.templates import SYSTEM


class Reply(BaseModel):
    inputs: list[str]


class Recorder(LLM):
    """A model that gives its replies in turn and keeps what each request was sent with."""

    provider = "function"
    model = "recorder"

    def __init__(self, *replies: Completion) -> None:
        self.replies = list(replies)
        self.sent: list[dict[str, Any]] = []

    async def arequest(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[BaseModel] | None = None,
        label: str | None = None,
    ) -> Completion:
        self.sent.append({"prompt": prompt, "system": system, "schema": schema, "label": label})
        return self.replies.pop(0)


def _no_blank(text: str) -> list[str]:
    inputs = parse_verdict(text, Reply).inputs
    if not all(t.strip() for t in inputs):
        raise OutputParseError("a blank input")
    return inputs


BLANK = '{"inputs": [" "]}'
GOOD = '{"inputs": ["What is it?"]}'


def test_ask_raw_sends_the_system_message_schema_and_label_and_counts_one_request() -> None:
    llm = Recorder(Completion(text="the text", finish_reason="stop"), Completion(text="again"))
    stats = StageStats(stage="s", requests=2)
    assert run_sync(ask_raw(llm, "the prompt", Reply, "inputs", stats)) == "the text"
    assert llm.sent == [
        {"prompt": "the prompt", "system": SYSTEM, "schema": Reply, "label": "inputs"}
    ]
    assert stats.requests == 3
    assert run_sync(ask_raw(llm, "p", Reply, "x", None)) == "again"


def test_ask_raw_refuses_a_cut_off_reply_and_keeps_its_text() -> None:
    llm = Recorder(Completion(text='{"inputs": ["Wh', finish_reason="length"))
    stats = StageStats(stage="s")
    with pytest.raises(IncompleteCompletionError) as caught:
        run_sync(ask_raw(llm, "p", Reply, "inputs", stats))
    assert caught.value.text == '{"inputs": ["Wh'
    assert stats.requests == 1


def test_ask_checked_returns_the_parse_of_an_accepted_reply_without_a_reask() -> None:
    llm = Recorder(Completion(text=GOOD))
    stats = StageStats(stage="s")
    assert run_sync(ask_checked(llm, "p", Reply, _no_blank, "inputs", stats)) == ["What is it?"]
    assert stats.requests == 1 and stats.notes == {}


def test_refused_replies_are_asked_again_up_to_max_reasks_then_the_last_refusal_raised() -> None:
    replies = iter([BLANK, BLANK, '{"inputs": ["", "x"]}', GOOD])
    cache: dict[str, str] = {}
    llm = wrap_llm(FunctionModel(lambda prompt, system: next(replies)), cache=cache, max_reasks=2)
    stats = StageStats(stage="s")
    with pytest.raises(OutputParseError, match="a blank input"):
        run_sync(ask_checked(llm, "p", Reply, _no_blank, "inputs", stats))
    assert stats.requests == 3 and stats.notes == {"reasked": 2}
    assert llm.usage.total.retries == {REFUSED: 2} and REFUSED == "refused"
    assert cache == {}  # the last refusal is forgotten too: a rerun asks again
    assert next(replies) == GOOD  # three replies asked for, no more


def test_a_refusal_within_the_budget_is_forgotten_and_the_next_reply_kept() -> None:
    replies = iter([BLANK, GOOD])
    cache: dict[str, str] = {}
    llm = wrap_llm(FunctionModel(lambda prompt, system: next(replies)), cache=cache, max_reasks=1)
    stats = StageStats(stage="s")
    assert run_sync(ask_checked(llm, "p", Reply, _no_blank, "inputs", stats)) == ["What is it?"]
    assert stats.requests == 2 and stats.notes == {"reasked": 1}
    assert llm.usage.total.retries == {"refused": 1}
    assert len(cache) == 1 and json.loads(next(iter(cache.values())))["text"] == GOOD


def test_no_reask_budget_raises_the_first_refusal_and_still_forgets_it() -> None:
    cache: dict[str, str] = {}
    llm = wrap_llm(FunctionModel(lambda prompt, system: BLANK), cache=cache, max_reasks=0)
    stats = StageStats(stage="s")
    with pytest.raises(OutputParseError, match="a blank input"):
        run_sync(ask_checked(llm, "p", Reply, _no_blank, "inputs", stats))
    assert stats.requests == 1 and stats.notes == {} and cache == {}
    assert llm.usage.total.retries == {}


def test_a_bare_model_gets_the_default_two_reasks_and_no_stats_are_needed() -> None:
    llm = Recorder(*(Completion(text=BLANK) for _ in range(3)), Completion(text=GOOD))
    with pytest.raises(OutputParseError, match="a blank input"):
        run_sync(ask_checked(llm, "p", Reply, _no_blank, "inputs", None))
    assert len(llm.sent) == 3 and len(llm.replies) == 1


def test_a_reply_that_is_not_json_of_the_schema_is_raised_as_malformed_not_reasked() -> None:
    llm = Recorder(Completion(text="not json"), Completion(text=GOOD))
    stats = StageStats(stage="s")

    def refuse(text: str) -> list[str]:
        raise OutputParseError("the step's own refusal")

    with pytest.raises(OutputParseError) as caught:
        run_sync(ask_checked(llm, "p", Reply, refuse, "inputs", stats))
    assert "the step's own refusal" not in str(caught.value)
    assert caught.value.raw == "not json"
    assert stats.requests == 1 and stats.notes == {} and len(llm.replies) == 1


def test_forget_removes_only_the_reply_sent_with_the_system_message_and_schema() -> None:
    cache: dict[str, str] = {}
    llm = wrap_llm(FunctionModel(lambda prompt, system: GOOD), cache=cache)
    run_sync(ask_raw(llm, "p", Reply, "inputs", None))
    run_sync(ask_raw(llm, "other", Reply, "inputs", None))
    assert len(cache) == 2
    forget(llm, "p", Reply)
    assert len(cache) == 1
    run_sync(ask_raw(llm, "other", Reply, "inputs", None))  # still cached: not asked again
    assert len(cache) == 1
    forget(Recorder(), "p", Reply)  # no cache in the chain: nothing to do


def test_json_that_does_not_fit_the_schema_is_raised_as_malformed_not_reasked() -> None:
    llm = Recorder(Completion(text='{"other": 1}'), Completion(text=GOOD))
    stats = StageStats(stage="s")

    def refuse(text: str) -> list[str]:
        raise OutputParseError("the step's own refusal")

    with pytest.raises(OutputParseError) as caught:
        run_sync(ask_checked(llm, "p", Reply, refuse, "inputs", stats))
    assert "the step's own refusal" not in str(caught.value)
    assert caught.value.raw == '{"other": 1}'
    assert stats.requests == 1 and stats.notes == {} and len(llm.replies) == 1


def test_a_refused_reply_is_counted_under_the_stages_label() -> None:
    replies = iter([BLANK, GOOD])
    llm = wrap_llm(FunctionModel(lambda prompt, system: next(replies)), max_reasks=1)
    run_sync(ask_checked(llm, "p", Reply, _no_blank, "evolve", None))
    labels = llm.usage.by_label()
    assert list(labels) == ["evolve"] and labels["evolve"].retries == {"refused": 1}
