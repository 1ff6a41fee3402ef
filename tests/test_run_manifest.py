"""The manifest's arithmetic (synth/run/manifest.py): usage per stage, retries split by kind and
family, rows with their usage columns, and the totals; every count read back exactly."""

from __future__ import annotations

import platform
import re
from collections import Counter
from importlib import metadata

import pytest

from synth.llm.pricing import price_for
from synth.llm.usage import Usage
from synth.run import manifest
from synth.run.manifest import (
    LABEL_STAGE,
    RETRY_KINDS,
    USAGE_FIELDS,
    add_usage,
    now,
    package_versions,
    retries_by_kind,
    stage_row,
    stats_rows,
    totals,
    usage_by_stage,
    with_usage,
)
from synth.stage.stats import StageStats

MODEL = "openai:gpt-4o-mini"
ZERO_KINDS = dict.fromkeys(RETRY_KINDS, 0)


def zeros(**values: float) -> dict[str, float]:
    return {**dict.fromkeys(USAGE_FIELDS, 0), **values}


def cost(input_tokens: int, output_tokens: int) -> float:
    price = price_for(MODEL)
    assert price is not None
    return (input_tokens * price.input + output_tokens * price.output) / 1e6


def test_the_label_map_and_the_field_list_are_the_documented_ones() -> None:
    assert LABEL_STAGE == {
        "critic": "critic",
        "inputs": "inputs",
        "filter": "filter",
        "filter_rewrite": "filter",
        "evolve": "evolve",
        "style": "style",
        "expected": "expected",
        # the final check's requests (the input alone, with its context, its rewrite)
        "check_alone": "check",
        "check_context": "check",
        "check_rewrite": "check",
        "check_language": "check",
        # the language re-asks of the steps that write inputs, counted in their step's row
        "inputs_language": "inputs",
        "filter_language": "filter",
        "evolve_language": "evolve",
        "style_language": "style",
        "conversation_language": "conversation",  # a conversation's turns, asked again
    }
    assert USAGE_FIELDS == (
        "requests",
        "cancelled",
        "embedding_requests",
        "cached",
        "retries",
        "failures",
        "input_tokens",
        "cached_input_tokens",
        "cache_write_tokens",
        "output_tokens",
        "cost_usd",
    )
    assert RETRY_KINDS == (
        "rate_limit",
        "server",
        "timeout",
        "connection",
        "incomplete",
        "invalid_output",
    )


def test_now_is_utc_to_the_second() -> None:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", now())


def test_package_versions_names_python_and_the_installed_packages(monkeypatch) -> None:
    versions = package_versions()
    assert versions["python"] == platform.python_version()
    assert list(versions) == [
        "python",
        "synth",
        "pydantic",
        "chromadb",
        "openai",
        "numpy",
        "tiktoken",
        "rich",
    ]
    assert versions["numpy"] == metadata.version("numpy")
    # a package not installed is left out, and the ones after it still listed
    monkeypatch.setattr(manifest, "_PACKAGES", ("no-such-package-here", "numpy"))
    assert package_versions() == {
        "python": platform.python_version(),
        "numpy": metadata.version("numpy"),
    }


def test_usage_by_stage_sums_each_label_into_its_stage() -> None:
    first = Usage()
    first.record(MODEL, "filter", requests=2, input_tokens=100, output_tokens=10)
    first.record(MODEL, "filter_rewrite", requests=1, cached_responses=1, input_tokens=7)
    first.record(MODEL, "filter", retry="rate_limit")
    first.record(MODEL, "filter", retry="server", failure="server")
    first.record(MODEL, "custom", requests=3, output_tokens=4, retry="reask")
    second = Usage()
    second.record(MODEL, "filter", requests=1, input_tokens=1, output_tokens=2, retry="rate_limit")
    second.record(MODEL, "critic", requests=5, cached_responses=2, failure="timeout")
    second.record("function:mine", "inputs", requests=1, input_tokens=3)  # no price: no cost
    rows = usage_by_stage([first, second])
    assert rows == {
        "filter": zeros(
            requests=4,
            cached=1,
            retries=3,
            failures=1,
            input_tokens=108,
            output_tokens=12,
            cost_usd=pytest.approx(cost(100, 10) + cost(7, 0) + cost(1, 2)),
            **{"chat:rate_limit": 2, "chat:server": 1},
        ),
        "custom": zeros(
            requests=3, retries=1, output_tokens=4, cost_usd=cost(0, 4), **{"chat:reask": 1}
        ),
        "critic": zeros(requests=5, cached=2, failures=1),
        "inputs": zeros(requests=1, input_tokens=3),
    }


def test_usage_by_stage_counts_only_an_embedders_retries_under_its_stage() -> None:
    usage = Usage()
    usage.record("hash", "embeddings:dedup", requests=4, input_tokens=50, retry="timeout")
    usage.record("hash", "embeddings:dedup", retry="timeout")
    usage.record("hash", "embeddings:dedup", retry="connection", failure="connection")
    usage.record("hash", "embeddings:search", requests=9, input_tokens=20)  # no retries: no row
    usage.record("hash", "embeddings:ingest", requests=2, retry="rate_limit")  # a row of its own
    usage.record(MODEL, "dedup", requests=1, retry="server")
    assert usage_by_stage([usage]) == {
        "dedup": zeros(
            requests=1,
            retries=4,  # the chat request's retry and the embedder's three
            **{"chat:server": 1, "embeddings:timeout": 2, "embeddings:connection": 1},
        ),
        "ingest": zeros(retries=1, **{"embeddings:rate_limit": 1}),
    }


def test_retries_by_kind_reads_flat_keys_and_stage_rows_alike() -> None:
    flat = {"requests": 9, "chat:rate_limit": 2, "embeddings:timeout": 1, "chat:reask": 4}
    stage = {
        "retries": 3,
        "retries_by_kind": {"chat": {"rate_limit": 1, "server": 2}, "other": {"x": 5}},
    }
    assert retries_by_kind([flat, stage, {"stage": "inputs"}]) == {
        "chat": {**ZERO_KINDS, "rate_limit": 3, "server": 2, "reask": 4},
        "embeddings": {**ZERO_KINDS, "timeout": 1},
        "other": {**ZERO_KINDS, "x": 5},
    }
    assert retries_by_kind([]) == {"chat": ZERO_KINDS, "embeddings": ZERO_KINDS}
    # a row with both: the flat keys and the split are added together
    both = {"chat:timeout": 1.0, "retries_by_kind": {"chat": {"timeout": 2}}}
    assert retries_by_kind([both])["chat"] == {**ZERO_KINDS, "timeout": 3}
    assert type(retries_by_kind([both])["chat"]["timeout"]) is int  # counts, not floats


def test_add_usage_sums_rows_of_the_same_stage_and_their_kinds() -> None:
    one = {"filter": zeros(requests=2, cost_usd=0.5, **{"chat:server": 1}), "critic": {}}
    two = {"filter": {"requests": 3, "cached": 1, "chat:server": 2, "chat:timeout": 1}}
    assert add_usage(one, two) == {
        "filter": zeros(
            requests=5, cached=1, cost_usd=0.5, **{"chat:server": 3, "chat:timeout": 1}
        ),
        "critic": zeros(),
    }
    assert add_usage() == {}


def test_stage_rows_sort_their_drops() -> None:
    assert stage_row("filter", 5, 3, {"z": 1, "a": 1}) == {
        "stage": "filter",
        "items_in": 5,
        "items_out": 3,
        "dropped": {"a": 1, "z": 1},
    }
    assert list(stage_row("filter", 5, 3, {"z": 1, "a": 1})["dropped"]) == ["a", "z"]
    assert stage_row("inputs", 2, 6) == {
        "stage": "inputs",
        "items_in": 2,
        "items_out": 6,
        "dropped": {},
    }
    records = [
        StageStats(stage="critic", items_in=4, items_out=3, dropped=Counter(low=1)),
        StageStats(stage="inputs", items_in=3, items_out=6),
    ]
    assert stats_rows(records) == [
        stage_row("critic", 4, 3, {"low": 1}),
        stage_row("inputs", 3, 6),
    ]


def test_with_usage_adds_each_stages_columns_and_rows_for_other_labels() -> None:
    rows = [stage_row("inputs", 2, 4), stage_row("filter", 4, 3, {"bad": 1})]
    usage = {
        "filter": zeros(requests=3.0, cost_usd=0.12345678, **{"chat:server": 1}),
        "zeta": zeros(requests=1, input_tokens=5.0),
        "custom": zeros(failures=2),
    }
    out = with_usage(rows, usage)
    columns = dict.fromkeys(USAGE_FIELDS, 0)
    kinds = {"chat": ZERO_KINDS, "embeddings": ZERO_KINDS}
    assert out == [
        {**rows[0], **columns, "retries_by_kind": kinds},
        {
            **rows[1],
            **columns,
            "requests": 3,
            "cost_usd": 0.123457,
            "retries_by_kind": {"chat": {**ZERO_KINDS, "server": 1}, "embeddings": ZERO_KINDS},
        },
        {**stage_row("custom", 0, 0), **columns, "failures": 2, "retries_by_kind": kinds},
        {
            **stage_row("zeta", 0, 0),
            **columns,
            "requests": 1,
            "input_tokens": 5,
            "retries_by_kind": kinds,
        },
    ]
    assert type(out[1]["requests"]) is int and type(out[3]["input_tokens"]) is int
    assert type(out[0]["cost_usd"]) is float
    assert rows[0] == stage_row("inputs", 2, 4)  # the rows given are not changed


def test_totals_sum_the_rows_columns_and_kinds() -> None:
    rows = [
        {
            **zeros(requests=2, cached=1, retries=1, cost_usd=0.1000004),
            "retries_by_kind": {"chat": {"rate_limit": 1}},
        },
        {"requests": 3, "output_tokens": 7, "cost_usd": 0.2},
        {"stage": "inputs"},
    ]
    out = totals(rows)
    assert out == {
        **zeros(requests=5, cached=1, retries=1, output_tokens=7, cost_usd=0.3),
        "retries_by_kind": {"chat": {**ZERO_KINDS, "rate_limit": 1}, "embeddings": ZERO_KINDS},
    }
    assert type(out["requests"]) is int and type(out["cost_usd"]) is float
    assert totals([]) == {
        **zeros(cost_usd=0.0),
        "retries_by_kind": {"chat": ZERO_KINDS, "embeddings": ZERO_KINDS},
    }
