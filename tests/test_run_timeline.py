"""The manifest's timeline: when each stage's requests left and came back, the time before the
first request, the request phase and the chain floor one golden's dependent requests set."""

from __future__ import annotations

import pytest

from synth import make_llm
from synth.llm.usage import Usage
from synth.run.manifest import timeline

START = 1_000.0


def _usage() -> Usage:
    usage = Usage()
    times = usage.timeline
    # (label, sent, back): the critic, then inputs, then filter beside evolve, then the final
    # check with the expected outputs asked beside it
    for label, sent, back in [
        ("critic", 2.0, 4.0),
        ("critic", 2.5, 4.5),
        ("inputs", 4.6, 6.6),
        ("filter", 6.7, 8.7),
        ("filter_rewrite", 8.8, 9.8),  # counted in the filter's row
        ("evolve", 6.7, 9.7),
        ("check_alone", 9.8, 10.8),
        ("check_context", 9.8, 11.3),
        ("expected", 9.9, 11.9),
        ("embeddings:critic", 1.0, 1.2),  # an embedder's: not a chat request of the chain
    ]:
        times.sent(label, START + sent)
        times.back(label, START + sent, START + back)
    return usage


def test_each_stage_says_when_its_requests_left_and_came_back() -> None:
    found = timeline([_usage()], START)
    assert list(found["stages"]) == ["critic", "inputs", "filter", "evolve", "check", "expected"]
    assert found["stages"]["critic"] == {
        "first_sent_s": 2.0,
        "last_sent_s": 2.5,
        "first_back_s": 4.0,
        "last_back_s": 4.5,
        "replies": 2,
        "mean_latency_s": 2.0,
    }
    assert found["stages"]["filter"]["last_back_s"] == 9.8
    assert found["stages"]["filter"]["mean_latency_s"] == 1.5
    assert found["to_first_request_s"] == 2.0
    assert found["requests_s"] == pytest.approx(9.9)


def test_the_chain_floor_adds_each_step_and_the_slower_of_the_steps_side_by_side() -> None:
    found = timeline([_usage()], START)
    # critic 2 + inputs 2 + max(filter 1.5, evolve 3) + max(check 1.25, expected 2): the expected
    # outputs were asked before the check's first reply, so the two count once
    assert found["chain_floor_s"] == pytest.approx(9.0)
    assert found["requests_over_floor"] == pytest.approx(9.9 / 9.0, abs=0.001)


def test_a_step_asked_after_the_one_before_answered_adds_to_the_floor() -> None:
    usage = Usage()
    for label, sent, back in [
        ("critic", 0.0, 2.0),
        ("inputs", 0.5, 2.5),
        ("check_alone", 3.0, 4.0),
    ]:
        usage.timeline.sent(label, START + sent)
        usage.timeline.back(label, START + sent, START + back)
    usage.timeline.sent("expected", START + 4.1)
    usage.timeline.back("expected", START + 4.1, START + 7.1)
    # inputs asked beside the critic: max(2, 2); then check 1, then expected 3 after it
    assert timeline([usage], START)["chain_floor_s"] == pytest.approx(6.0)


def test_a_session_without_requests_has_an_empty_timeline() -> None:
    found = timeline([Usage()], START)
    assert found == {
        "to_first_request_s": None,
        "requests_s": None,
        "chain_floor_s": 0.0,
        "requests_over_floor": None,
        "stages": {},
    }


def test_every_request_a_model_sends_is_timed_under_its_label() -> None:
    llm = make_llm(lambda prompt, system: "fine")
    llm.complete("q", label="inputs")
    llm.complete("q", label="inputs")
    times = llm.usage.timeline.by_label()["inputs"]
    assert times.replies == 2 and times.first_sent <= times.last_sent <= times.last_back
    merged = Usage().merge(llm.usage)
    assert merged.timeline.by_label()["inputs"].replies == 2
