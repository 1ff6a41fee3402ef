"""Rate limits: ``Synthesizer(rpm=, tpm=)``, ``synth generate --rpm/--tpm`` and ``[run] rpm/tpm``
pace every request of a run through one shared limiter, so a server's requests-per-minute limit is
not tripped. Counts come from the fake server's log, never from the clock."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fake_openai
import numpy as np
import pytest
import synth_replies

from synth import Synthesizer
from synth.cli import build_parser, main
from synth.cli.generate import pipeline_from_args
from synth.errors import ConfigError, ShortfallWarning
from synth.run.models import RATE_MARGIN
from synth.store.embedder import Embedder

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_docs"
SERVER_RPM, WINDOW = 8, 2.0  # the server refuses a 9th request within two seconds
#: the paced budget: half the server's limit. The limiter may send a window's budget at once, so
#: the server's window can hold two client windows' requests; a loaded machine that delays one
#: burst's delivery by a tenth of a second brings it into the next one's window (one and two
#: under the limit each let a 429 through under a test suite's two workers). At half, any delay
#: shorter than a window stays within the limit.
PACED_RPM = SERVER_RPM // 2
#: goldens a run makes: three are 14 requests, past three of the server's windows paced and past
#: its limit unpaced (six were 23, and the paced run's 6 s more waiting caught no bug three miss)
GOLDENS = 3
#: the fake server answering synth's prompts (smart), or every request from its schema alone
SERVER_MODES = ("smart", "generic")


def fake_server(mode: str, **kw: Any) -> fake_openai.FakeOpenAI:
    if mode == "smart":
        return fake_openai.FakeOpenAI(reply=synth_replies.reply, **kw)
    return fake_openai.FakeOpenAI(mode="generic", **kw)


def run(server: fake_openai.FakeOpenAI, folder: str, **limits: float) -> Synthesizer:
    synth = Synthesizer(
        "openai:gpt-4o-mini",
        base_url=server.url,
        embedder="hash",  # the embedder calls no server: every logged request is a model's
        cache=None,
        run_dir=folder,
        grounding_threshold=0.0,  # the generic server cannot quote the context it never reads
        **limits,
    )
    with synth:
        synth.generate_goldens_from_docs(SAMPLE, num_goldens=GOLDENS)
    return synth


@pytest.mark.slow
@pytest.mark.parametrize("mode", SERVER_MODES)
def test_a_budget_under_the_servers_limit_gets_no_429(
    monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-rate-limit-not-a-real-key")
    with fake_server(mode, rpm=SERVER_RPM, rpm_window=WINDOW, latency=0.01) as server:
        # unpaced, the run bursts past the server's limit and is refused (the test can fail)
        run(server, "unpaced")
        assert server.outcomes().get("rpm_limit", 0) > 0
        server.reset()
        paced = run(server, "paced", rpm=PACED_RPM, rate_window=WINDOW)
        outcomes = server.outcomes()
    assert outcomes.get("rpm_limit", 0) == 0, outcomes
    assert outcomes["ok"] >= 10  # a real run went through, paced
    manifest = paced.manifest
    assert manifest["delivered"] == GOLDENS
    assert manifest["totals"]["retries"] == 0
    assert manifest["limits"]["rpm"] == PACED_RPM
    assert manifest["limits"]["paced_window"] == pytest.approx(WINDOW * (1 + RATE_MARGIN))


def test_the_flags_and_the_pipeline_file_set_the_budget(tmp_path: Path) -> None:
    pipeline = tmp_path / "limited.toml"
    pipeline.write_text("[run]\nrpm = 500\ntpm = 90000\n")
    parser = build_parser()
    args = parser.parse_args(["generate", "docs", "--pipeline", str(pipeline)])
    config = pipeline_from_args(args)
    assert (config.rpm, config.tpm) == (500, 90000)
    synth = Synthesizer.from_pipeline(config)
    assert (synth.rpm, synth.tpm) == (500, 90000)
    args = parser.parse_args(["generate", "docs", "--pipeline", str(pipeline), "--rpm", "60"])
    assert Synthesizer.from_pipeline(pipeline_from_args(args)).rpm == 60  # the flag wins
    args = parser.parse_args(["generate", "docs", "--rpm", "0"])
    with pytest.raises(ConfigError, match="--rpm must be positive"):
        pipeline_from_args(args)
    pipeline.write_text("[run]\nrpm = -5\n")
    with pytest.raises(ConfigError, match=r"\[run\] rpm"):
        pipeline_from_args(parser.parse_args(["generate", "docs", "--pipeline", str(pipeline)]))


@pytest.mark.parametrize("mode", SERVER_MODES)
def test_the_cli_paces_with_rpm(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-rate-limit-not-a-real-key")
    with fake_server(mode) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        argv = ["generate", str(SAMPLE), "--goldens", "2", "--embedder", "hash"]
        argv += ["--grounding-threshold", "0"]  # the generic server cannot quote the context
        assert main([*argv, "--rpm", "6000", "--tpm", "900000", "--quiet"]) == 0
    manifest = json.loads(next(Path(".synth/runs").glob("*/manifest.json")).read_text())
    assert manifest["limits"]["rpm"] == 6000 and manifest["limits"]["tpm"] == 900000


class _SameVector(Embedder):
    """Every text gets the same vector: every input after the first is a near-duplicate."""

    name = "same"

    @property
    def dimension(self) -> int:
        return 8

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), 8))


def test_the_shortfall_names_each_dedup_drop_once() -> None:
    synth = Synthesizer(
        synth_replies.answer, embedder=_SameVector(), cache=None, use_context_critic=False
    )
    contexts = [["The first passage talks about solar panels and their efficiency in winter."]]
    with pytest.warns(ShortfallWarning, match="delivered 1 of 4 goldens: every given context"):
        dataset = synth.generate_goldens_from_contexts(
            contexts, num_goldens=4, max_goldens_per_context=2
        )
    shortfall = synth.manifest["shortfall"]
    assert len(dataset) == 1
    dedup_lines = [r for r in shortfall if "dedup" in r or "duplicate" in r]
    assert dedup_lines == ["1 dropped as near-duplicates"], shortfall
