"""``batch=True`` / ``--batch``: generation through the Batch API of the fake server (real ``openai``
SDK over HTTP to tests/fake_batches.py), against a plain run over ``/v1/chat/completions``.

Each stage of the chain (critic, inputs, filter, evolve, expected) is one wave; a wave goes out as
one job. Error lines go out again in the next job, and so does what an expired, failed or
cancelled job did not finish; a killed run polls the jobs it journaled and submits nothing twice.
"""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI
from synth_replies import reply
from synth_runs import PATIENCE, SAMPLE, child_env, end_process, finish_here, wait_for

from synth import Dataset, Synthesizer
from synth.generate.steps import RUNS_AHEAD
from synth.llm.batch import BatchConfig
from synth.run.stream import GATE_FROM
from synth.run.yields import PRIOR_KEEP, contexts_for

N = 20
SEED = 3
#: the stages of the chain, one wave each when nothing is dropped
CHAIN = ("critic", "inputs", "filter", "evolve", "check_alone", "check_context", "expected")
#: the jobs of a run with nothing dropped: evolve runs ahead of the filter (RUNS_AHEAD), so
#: their requests leave together, in one job; so do the final check's two requests
JOBS = len(CHAIN) - len(RUNS_AHEAD) - 1
FAST = BatchConfig(poll_interval=0.02, max_poll_interval=0.1, settle=0.05)
KEY = "sk-batch-test-not-a-real-key-0123456789"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeOpenAI(reply=reply) as fake:
        fake.batches.delay = 0.05
        yield fake


def run(
    server: FakeOpenAI, folder: Path, batch: BatchConfig | None, **kw: Any
) -> tuple[Dataset, dict[str, Any]]:
    """The goldens and the manifest of a run with ``batch`` (None: over the chat endpoint)."""
    kw.setdefault("embedder", "hash")
    synth = Synthesizer(
        "openai:fake-model",
        base_url=server.url,
        cache=None,
        batch=batch,
        seed=SEED,
        run_dir=folder,
        **kw,
    )
    with synth:
        dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=N)
    assert KEY not in repr(synth)
    return dataset, synth.manifest or {}


def records(dataset: Dataset, *, same_server: bool = True) -> list[dict[str, Any]]:
    """The goldens as JSON; from two servers, without what names the server (its URL is in
    the models' identity, and so in the run id)."""
    rows = [golden.model_dump(mode="json") for golden in dataset]
    for row in rows if not same_server else []:
        row["metadata"].pop("models")
        row["metadata"].pop("run_id")
    return rows


def stages(manifest: dict[str, Any]) -> dict[str, dict[str, int]]:
    """The manifest's batch counts by stage (jobs, requests, retried, failed)."""
    (report,) = manifest["batches"].values()
    return report["stages"]


def test_a_batch_run_delivers_the_goldens_of_a_plain_run_in_one_job_per_stage(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    plain, plain_manifest = run(server, tmp_path / "plain", None)
    chat_requests = server.request_count("chat")
    batched, manifest = run(server, tmp_path / "batch", FAST)
    assert server.request_count("chat") == chat_requests  # nothing went to the chat endpoint
    assert len(batched) == N
    assert records(batched) == records(plain)
    by_stage = stages(manifest)
    assert set(by_stage) == set(CHAIN)
    assert all(row["jobs"] == 1 and row["retried"] == 0 for row in by_stage.values()), by_stage
    assert len(server.batches.submitted) == JOBS
    assert set(server.batches.custom_id_counts().values()) == {1}
    sent = sum(row["requests"] for row in by_stage.values())
    assert plain_manifest["totals"]["requests"] == chat_requests
    assert manifest["totals"]["requests"] == sent
    # the same requests but for the first wave's spare contexts: how far a spare gets before it
    # waits at its gate (GATE_FROM steps: inputs and filter) depends on when the others answer
    spares = contexts_for(N, 2 * PRIOR_KEEP) - math.ceil(N / 2)
    assert abs(sent - chat_requests) <= GATE_FROM * spares, (sent, chat_requests)
    journal = (tmp_path / "batch" / "batches.jsonl").read_text()
    assert len({json.loads(line)["key"] for line in journal.splitlines()}) == JOBS
    assert KEY not in journal


def test_error_lines_go_out_again_in_the_next_job(server: FakeOpenAI, tmp_path: Path) -> None:
    plain, _ = run(server, tmp_path / "plain", None)
    server.batches.error_share = 0.3
    # resent as often as a plain run's retries (6): no request gives up, no context is lost
    patient = FAST.model_copy(update={"max_resubmits": 6})
    batched, manifest = run(server, tmp_path / "batch", patient)
    assert records(batched) == records(plain)
    counts = server.batches.custom_id_counts()
    again = {cid for cid, n in counts.items() if n > 1}
    retried = sum(row["retried"] for row in stages(manifest).values())
    assert again and retried == sum(counts[cid] - 1 for cid in again)
    # each request sent again was an error line of the job before
    jobs = list(server.batches.submitted.items())
    for (_, ids), (_, later) in zip(jobs, jobs[1:], strict=False):
        assert set(ids) & set(later) <= again
    assert max(row["jobs"] for row in stages(manifest).values()) > 1
    assert not any(row["failed"] for row in stages(manifest).values())


@pytest.mark.parametrize("outcome", ["expired", "failed"])
def test_what_an_ended_job_did_not_finish_is_submitted_again(
    server: FakeOpenAI, tmp_path: Path, outcome: str
) -> None:
    server.batches.outcomes.append(outcome)  # the first job (the critic's) ends so
    batched, manifest = run(server, tmp_path / "batch", FAST)
    assert len(batched) == N
    (first, ids), (_, second) = list(server.batches.submitted.items())[:2]
    answered = set(ids[: len(ids) // 2]) if outcome == "expired" else set()
    # exactly the unfinished ones go out again, in the next job, once (beside the next wave's)
    assert set(ids) & set(second) == set(ids) - answered
    again = {cid for cid, n in server.batches.custom_id_counts().items() if n > 1}
    assert again == set(ids) - answered and set(
        server.batches.custom_id_counts()[c] for c in again
    ) == {2}
    assert stages(manifest)["critic"]["retried"] == len(ids) - len(answered)
    assert manifest["batches"]["openai:fake-model"]["jobs"][first]["state"] == outcome


def test_a_cancelled_job_is_resubmitted_for_what_it_did_not_finish(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    server.batches.delay = 30.0  # the test cancels the first job long before it would end
    client = server.client()

    cancelled: list[str] = []

    def cancel_first(text: str) -> None:
        if not cancelled and "in_progress" in text:
            server.batches.delay = 0.05
            cancelled.append(text)
            first = next(iter(server.batches.submitted))
            assert client.batches.cancel(first).status == "cancelling"

    progress = Notes(cancel_first)
    batched, _ = run(server, tmp_path / "batch", FAST, progress=progress)
    assert len(batched) == N
    first = next(iter(server.batches.jobs.values()))
    assert first["status"] == "cancelled"
    assert any("cancelled" in line for line in progress.lines)
    counts = server.batches.custom_id_counts()
    assert sum(n > 1 for n in counts.values()) == len(first["lines"]) - len(first["lines"]) // 2


class Notes:
    """A progress display that records its notes and hands each to ``on_note``."""

    def __init__(self, on_note: Any) -> None:
        self.lines: list[str] = []
        self.on_note = on_note

    def start(self, snapshot: Any) -> None:
        pass

    def stop(self) -> None:
        pass

    def note(self, text: str) -> None:
        self.lines.append(text)
        self.on_note(text)


@pytest.mark.parametrize("sloppy", [{}, {"missing": 0.3, "renumbered": 0.2}])
def test_a_model_that_knows_no_prompt_answers_a_batch_run_as_a_plain_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, sloppy: dict[str, float]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    results = []
    for batch in (None, FAST):
        # a server per run: the generic mode's replies depend on how often it saw a request
        with FakeOpenAI(mode="generic", sloppy=sloppy, seed=2) as generic:
            generic.batches.delay = 0.05
            dataset, manifest = run(
                generic, tmp_path / str(batch is None), batch, grounding_threshold=0.0
            )
            results.append((records(dataset, same_server=False), manifest))
            if batch is not None:
                assert set(generic.batches.custom_id_counts().values()) == {1}
    (plain, _), (batched, manifest) = results
    assert batched == plain and len(batched) == N
    if sloppy:  # re-asks of malformed replies went out as their own requests, in later jobs
        assert manifest["totals"]["retries"] > 0
        assert max(row["jobs"] for row in stages(manifest).values()) > 1


def test_a_killed_run_polls_its_jobs_and_submits_nothing_twice(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    server.batches.delay = 0.5
    pipeline = tmp_path / "batch.toml"
    pipeline.write_text("[batch]\npoll_interval = 0.05\nmax_poll_interval = 0.2\nsettle = 0.1\n")
    cmd = [
        *("-m", "synth", "generate", str(SAMPLE), "--goldens", str(N), "--batch"),
        *("--model", "openai:fake-model", "--base-url", server.url, "--embedder", "hash"),
        *("--seed", str(SEED), "-o", "out.jsonl", "--quiet", "--pipeline", str(pipeline)),
    ]
    env = child_env(OPENAI_API_KEY=KEY)
    journals = lambda: list((tmp_path / ".synth" / "runs").glob("*/batches.jsonl"))  # noqa: E731
    proc = subprocess.Popen([sys.executable, *cmd], cwd=tmp_path, env=env, stderr=subprocess.PIPE)
    try:
        # the second job journaled: the first finished, its answers cached, the second in flight
        wait_for(lambda: _jobs_in(journals()) >= 2, proc, "the second job id in the journal")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=PATIENCE)
    finally:
        end_process(proc)
    killed_jobs = dict(server.batches.submitted)
    polls = dict(server.batches.polls)
    done = finish_here([sys.executable, *cmd], tmp_path, KEY)  # the rerun: in this process
    assert done.returncode == 0, done.stderr
    assert len(Dataset.load(tmp_path / "out.jsonl")) == N
    assert set(server.batches.custom_id_counts().values()) == {1}  # no request in two jobs
    second = list(killed_jobs)[1]
    assert server.batches.polls[second] > polls.get(second, 0)  # the rerun polled it again
    assert len(server.batches.submitted) == JOBS


def _jobs_in(journals: list[Path]) -> int:
    if not journals:
        return 0
    lines = journals[0].read_text().split("\n")[:-1]  # only complete lines
    return len({json.loads(line)["key"] for line in lines})


def test_batch_usage_is_priced_at_half_the_list_price(tmp_path: Path) -> None:
    from synth.llm.pricing import price_for

    listed, batch = price_for("openai:gpt-4.1-mini"), price_for("openai:gpt-4.1-mini@batch")
    assert listed is not None and batch == (listed.input / 2, listed.output / 2, 0.05, None)
    assert price_for("gemini:gemini-2.5-flash@batch") is None  # no batch rate known
    plans = [
        Synthesizer("openai:gpt-4.1-mini", embedder="hash", batch=batch_arg).plan_from_docs(
            SAMPLE, num_goldens=N
        )
        for batch_arg in (None, True)
    ]
    # half, to the rounding of each stage's cost (6 places: up to a millionth a stage between them)
    rounding = 1e-6 * len(plans[0].stages)
    assert plans[0].cost_usd and plans[1].cost_usd == pytest.approx(
        plans[0].cost_usd / 2, abs=rounding
    )


def test_anthropic_message_batches_deliver_the_goldens_over_http(
    server: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server.batches.error_share = 0.2
    root = server.url.removesuffix("/v1")  # the anthropic SDK's paths start with /v1
    patient = FAST.model_copy(update={"max_resubmits": 6})
    synth = Synthesizer(
        "anthropic:fake-model", base_url=root, embedder="hash", cache=None, batch=patient
    )
    with synth:
        dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=N)
    assert len(dataset) == N
    manifest = synth.manifest or {}
    by_stage = stages(manifest)
    assert set(by_stage) == set(CHAIN)
    assert sum(row["retried"] for row in by_stage.values()) > 0  # errored lines, sent again
    assert all(job["endpoint"] == "/v1/messages" for job in server.batches.jobs.values())
    assert server.request_count("chat") == 0
    # usage counts each request once; the lines sent again are in the batch counts
    sent = sum(row["requests"] - row["retried"] for row in by_stage.values())
    assert manifest["totals"]["requests"] == sent
    # each errored line goes out again, at most max_resubmits times (which lines err depends on
    # the jobs' ids, and so on how the stages' requests fell into jobs)
    counts = set(server.batches.custom_id_counts().values())
    assert max(counts) > 1 and max(counts) <= patient.max_resubmits + 1, counts


def test_batch_settings_come_from_a_pipeline_file_and_a_model_without_a_batch_api_is_refused(
    tmp_path: Path,
) -> None:
    from synth import ConfigError, FunctionModel
    from synth.run.config import pipeline_from_dict

    config = pipeline_from_dict({"batch": {"poll_interval": 0.5}})
    assert config.batch == BatchConfig(poll_interval=0.5)
    assert pipeline_from_dict({}).batch is None  # no table: no batching
    with pytest.raises(ConfigError, match="max_resubmits"):
        pipeline_from_dict({"batch": {"max_resubmits": -1}})
    synth = Synthesizer.from_pipeline(config, model=FunctionModel(lambda p, s: "x"))
    assert synth.batch == BatchConfig(poll_interval=0.5)
    with synth, pytest.raises(ConfigError, match="openai: or anthropic:"):
        synth.generate_goldens_from_contexts([["a text"]], num_goldens=1)
