"""bench/realistic.py's arithmetic: tokens read from the server's log and priced as billed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture(scope="module")
def realistic():
    sys.path.insert(0, str(BENCH))
    try:
        import _server
        import realistic

        yield realistic, _server
    finally:
        sys.path.remove(str(BENCH))


def _row(path: str, usage: dict) -> dict:
    return {"path": path, "usage": usage, "outcome": "ok", "started": 0.0, "finished": 1.0}


def test_cached_prompt_tokens_are_billed_at_the_cached_price_and_embeddings_apart(
    realistic,
) -> None:
    module, server = realistic
    rows = [
        _row(
            "/v1/chat/completions",
            {
                "prompt_tokens": 2_000_000,
                "completion_tokens": 1_000_000,
                "prompt_tokens_details": {"cached_tokens": 1_000_000},
            },
        ),
        _row("/v1/chat/completions", {"prompt_tokens": 0, "completion_tokens": 0}),
        _row("/v1/embeddings", {"prompt_tokens": 1_000_000}),
    ]
    counts = server.token_counts(rows)
    assert counts == {
        "prompt_tokens": 2_000_000,
        "cached_tokens": 1_000_000,
        "completion_tokens": 1_000_000,
        "embedding_tokens": 1_000_000,
    }
    prices = module.PRICES
    expected = prices["input"] + prices["cached"] + prices["output"] + prices["embedding"]
    assert module.dollars(counts) == pytest.approx(expected)


def test_ratios_are_synth_over_deepeval_per_golden(realistic) -> None:
    module, _ = realistic
    rows = {
        "synth generate": {"s_per_golden": 0.5, "dollars_per_1000_goldens": 1.0},
        "deepeval generate": {"s_per_golden": 2.0, "dollars_per_1000_goldens": 4.0},
        "synth evaluate": {"wall_s": 10.0},
        "deepeval evaluate": {"wall_s": 100.0},
    }
    assert module.compare(rows) == {
        "time_per_golden_synth_over_deepeval": 0.25,
        "dollars_per_golden_synth_over_deepeval": 0.25,
        "evaluate_time_synth_over_deepeval": 0.1,
    }


def test_expected_outputs_thrown_away_are_priced_per_input_answered(realistic) -> None:
    module, _ = realistic
    manifest = {
        "stages": [
            {
                "stage": "evolve",
                "requests": 10,
                "input_tokens": 10_000,
                "output_tokens": 1_000,
                "notes": {"ahead_kept": 9, "ahead_wasted": 1},
            },
            # 20 inputs answered in 5 requests: an input's share is 200 prompt tokens, not 800
            {
                "stage": "expected",
                "requests": 5,
                "items_in": 20,
                "input_tokens": 4_000,
                "output_tokens": 2_000,
                "notes": {"ahead_kept": 17, "ahead_redone": 2, "ahead_wasted": 1},
            },
        ]
    }
    found = module.speculation(manifest)
    assert found["expected_ahead"] == {
        "requests": 3,
        "prompt_tokens": 600,
        "completion_tokens": 300,
        "dollars": round((600 * 0.40 + 300 * 1.60) / 1e6, 5),
    }
    assert found["evolve_ahead"]["prompt_tokens"] == 1_000
    assert found["inputs_guessed"]["requests"] == 0


def test_an_evaluation_round_trip_counts_the_requests_sent_before_the_first_reply(
    realistic, tmp_path: Path
) -> None:
    import json

    module, _ = realistic
    rows = [  # two sent at once, a third only once the first reply was back
        {"path": "/v1/chat/completions", "started": 0.0, "finished": 1.5},
        {"path": "/v1/chat/completions", "started": 0.1, "finished": 3.0},
        {"path": "/v1/chat/completions", "started": 1.5, "finished": 2.5},
        {"path": "/v1/embeddings", "started": 0.0, "finished": 0.2},  # not a judge's request
    ]
    log = tmp_path / "requests.jsonl"
    log.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert module.round_trip(log) == {"sent_before_first_reply": 2, "longest_request_s": 2.9}
    assert module.round_trip(tmp_path / "none.jsonl") == {}
