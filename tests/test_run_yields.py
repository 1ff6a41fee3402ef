"""The run's expected yields (synth/run/yields.py), read back exactly: the prior, what each
observation adds, the rates ahead of a candidate, the manifest's report and the contexts a gap
needs. The stream's tests reach these through whole first waves; these pin the numbers."""

from __future__ import annotations

import pytest

from synth.run.yields import COMMIT, PRIOR_KEEP, PRIOR_WEIGHT, Yields, contexts_for


def test_before_any_observation_every_stage_keeps_its_share_of_the_prior() -> None:
    yields = Yields(["inputs", "filter"], per_context=2)
    assert yields.stages == ["inputs", "filter", COMMIT]
    # three stages together keep PRIOR_KEEP: each keeps its cube root
    assert yields.prior == pytest.approx(PRIOR_KEEP ** (1 / 3))
    assert yields.rate("filter") == pytest.approx(yields.prior)
    assert yields.per_new_context() == pytest.approx(2 * PRIOR_KEEP)
    assert yields.report() == {
        "inputs": round(yields.prior, 3),
        "filter": round(yields.prior, 3),
        COMMIT: round(yields.prior, 3),
    }


def test_each_observation_adds_to_the_evidence_of_its_stage_alone() -> None:
    yields = Yields(["inputs", "filter"], per_context=2, prior_keep=1.0)
    yields.observe("filter", judged=1, kept=0)  # one draft judged counts
    assert yields.rate("filter") == pytest.approx(PRIOR_WEIGHT / (1 + PRIOR_WEIGHT))
    yields.observe("filter", judged=3, kept=3)  # a second observation adds to the first
    assert yields.rate("filter") == pytest.approx((3 + PRIOR_WEIGHT) / (4 + PRIOR_WEIGHT))
    assert yields.rate("inputs") == 1.0
    yields.observe("inputs", judged=2, kept=1)
    yields.observe("inputs", judged=2, kept=5)  # never more kept than judged
    assert yields.rate("inputs") == pytest.approx((3 + PRIOR_WEIGHT) / (4 + PRIOR_WEIGHT))
    assert yields.report() == {"inputs": 0.875, "filter": 0.875, COMMIT: 1.0}


def test_a_run_that_does_not_learn_keeps_its_prior_whatever_it_sees() -> None:
    yields = Yields(["inputs"], per_context=3, prior_keep=1.0, learn=False)
    yields.observe("inputs", judged=4, kept=0)
    assert yields.rate("inputs") == 1.0 and yields.per_new_context() == 3.0


def test_the_rates_ahead_of_a_candidate_are_those_of_the_stages_it_has_not_passed() -> None:
    yields = Yields(["inputs", "filter"], per_context=2, prior_keep=1.0)
    yields.observe("inputs", judged=4, kept=0)  # rate 0.5
    yields.observe("filter", judged=12, kept=4)  # rate 0.5
    assert yields.ahead(0) == pytest.approx(0.25)
    assert yields.ahead(1) == pytest.approx(0.5)
    assert yields.ahead(2) == 1.0  # only the commit left, never observed
    assert yields.per_new_context() == pytest.approx(0.5)


def test_the_contexts_a_gap_needs_round_up_but_not_for_float_noise() -> None:
    assert contexts_for(0, 2) == 0 and contexts_for(-1.5, 2) == 0
    assert contexts_for(5, 2) == 3 and contexts_for(4, 2) == 2
    assert contexts_for(0.1, 0.9) == 1
    # a quotient within half a millionth of a whole number counts as that number
    assert contexts_for(6.0000008, 2) == 3
    assert contexts_for(6.00001, 2) == 4
