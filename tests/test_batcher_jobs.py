"""The batcher's jobs against a scripted Batch API (tests/scripted_batches.py): what goes out in
which job, what is sent again and how often, what fails and with what, what the journal and the
run's report hold, and how a resumed run finds its jobs instead of submitting them again."""

from __future__ import annotations

import asyncio

import pytest
from scripted_batches import FAST, MemoryLog, ScriptedAPI, ask, bounded

from synth.errors import ModelError, ServerError
from synth.llm._batcher import MAX_POLL_ERRORS, Batcher
from synth.llm.base import Completion
from synth.llm.batch import BatchConfig, JobStatus

MODEL = "openai:m"


def answers(batcher: Batcher, *prompts: str, label: str = "stage") -> list[str]:
    """The replies to ``prompts``, asked at once (a wave)."""

    async def wave() -> list[Completion]:
        return await asyncio.gather(*ask(batcher, *prompts, label=label))

    return [c.text for c in bounded(wave)]


def outcomes(batcher: Batcher, *prompts: str) -> list[BaseException | str]:
    """The reply text or the error of each of ``prompts``, asked at once."""

    async def wave() -> list[BaseException | Completion]:
        return await asyncio.gather(*ask(batcher, *prompts), return_exceptions=True)

    return [o if isinstance(o, BaseException) else o.text for o in bounded(wave)]


def bound(batcher: Batcher, log: MemoryLog | None = None) -> tuple[dict, list[str]]:
    """Bind ``batcher`` as a run does; the run's report and the notes it was given."""
    report: dict = {}
    notes: list[str] = []
    batcher.bind(lambda: log if log is not None else MemoryLog(), notes.append, report)
    return report, notes


def test_a_wave_goes_out_as_one_job_and_is_counted_by_stage() -> None:
    api = ScriptedAPI()
    batcher = Batcher(api, FAST, MODEL)
    report, notes = bound(batcher)
    assert answers(batcher, "a", "b", label="critic") == ["A", "B"]
    assert answers(batcher, "c", label="inputs") == ["C"]
    assert api.ids() == [["a", "b"], ["c"]]
    stages = report[MODEL]["stages"]
    assert stages["critic"] == {"jobs": 1, "requests": 2, "retried": 0, "failed": 0}
    assert stages["inputs"] == {"jobs": 1, "requests": 1, "retried": 0, "failed": 0}
    assert report[MODEL]["jobs"]["job-1"] == {
        "state": "completed",
        "requests": 2,
        "labels": {"critic": 2},
        "completed": 2,
        "failed": 0,
    }
    assert notes == [
        "batch job job-1: completed, 2 of 2 done, 0 failed",
        "batch job job-2: completed, 1 of 1 done, 0 failed",
    ]


def test_requests_that_trickle_in_within_the_settle_time_share_one_job() -> None:
    api = ScriptedAPI()
    batcher = Batcher(api, BatchConfig(poll_interval=0.01, settle=1.0), MODEL)

    async def trickle() -> list[Completion]:
        first = ask(batcher, "a")
        await asyncio.sleep(0.05)  # far less than settle: the queue has not settled
        return await asyncio.gather(*first, *ask(batcher, "b"))

    assert [c.text for c in bounded(trickle)] == ["A", "B"]
    assert api.ids() == [["a", "b"]]


def test_a_queue_longer_than_max_requests_goes_out_in_several_jobs() -> None:
    api = ScriptedAPI()
    batcher = Batcher(api, FAST.model_copy(update={"max_requests": 2}), MODEL)
    assert answers(batcher, "a", "b", "c", "d", "e") == ["A", "B", "C", "D", "E"]
    assert api.ids() == [["a", "b"], ["c", "d"], ["e"]]


def test_an_error_line_goes_out_again_in_the_next_job_and_is_counted_as_retried() -> None:
    api = ScriptedAPI()
    api.error_lines = {"b"}
    batcher = Batcher(api, FAST, MODEL)
    report, _ = bound(batcher)
    assert answers(batcher, "a", "b") == ["A", "B"]
    assert api.ids() == [["a", "b"], ["b"]]
    assert report[MODEL]["stages"]["stage"] == {"jobs": 2, "requests": 3, "retried": 1, "failed": 0}


@pytest.mark.parametrize("resubmits", [0, 2])
def test_a_request_fails_once_it_was_sent_again_max_resubmits_times(resubmits: int) -> None:
    api = ScriptedAPI()
    api.outcomes.extend(["expired"] * (resubmits + 1))
    batcher = Batcher(api, FAST.model_copy(update={"max_resubmits": resubmits}), MODEL)
    report, _ = bound(batcher)
    errors = outcomes(batcher, "a", "b")
    assert all(isinstance(error, ModelError) for error in errors)
    assert [str(e) for e in errors] == [
        f"{MODEL}: batch request {cid} failed: the job ended expired" for cid in "ab"
    ]
    assert api.ids() == [["a", "b"]] * (resubmits + 1)
    row = report[MODEL]["stages"]["stage"]
    assert row == {"jobs": resubmits + 1, "requests": 2 * (resubmits + 1), "retried": 2 * resubmits,
                   "failed": 2}  # fmt: skip


def test_the_error_lines_reason_is_in_the_error_of_a_request_that_gives_up() -> None:
    api = ScriptedAPI()
    api.error_lines = {"a"}
    batcher = Batcher(api, FAST.model_copy(update={"max_resubmits": 0}), MODEL)
    (error,) = outcomes(batcher, "a")
    assert str(error) == f"{MODEL}: batch request a failed: line a: server_error"


def test_a_refused_submit_fails_the_requests_with_the_providers_error() -> None:
    api = ScriptedAPI()
    api.submit_errors.append(ModelError("quota exceeded"))
    batcher = Batcher(api, FAST, MODEL)
    first = outcomes(batcher, "a", "b")
    assert all(isinstance(o, ModelError) and str(o) == "quota exceeded" for o in first)
    assert api.jobs == {}


def test_polls_that_fail_now_and_then_do_not_fail_the_job() -> None:
    api = ScriptedAPI()
    running = JobStatus("in_progress", total=1)
    api.statuses.extend(
        [ServerError("502"), running, *[ServerError("502")] * (MAX_POLL_ERRORS - 1)]
    )
    batcher = Batcher(api, FAST, MODEL)
    report, notes = bound(batcher)
    assert answers(batcher, "a") == ["A"]
    assert api.polls["job-1"] == MAX_POLL_ERRORS + 2
    # a failed first poll shows the job as submitted, the next one as the provider said; the
    # failed polls after it change nothing, so nothing new is shown until the job ends
    assert notes == [
        "batch job job-1: submitted, 0 of 1 done, 0 failed",
        "batch job job-1: in_progress, 0 of 1 done, 0 failed",
        "batch job job-1: completed, 1 of 1 done, 0 failed",
    ]


def test_max_poll_errors_in_a_row_fail_the_jobs_requests_with_the_last() -> None:
    api = ScriptedAPI()
    api.statuses.append(JobStatus("in_progress", total=1))
    api.statuses.extend(ServerError(f"502 #{n}") for n in range(MAX_POLL_ERRORS))
    batcher = Batcher(api, FAST, MODEL)
    report, _ = bound(batcher)
    (error,) = outcomes(batcher, "a")
    assert isinstance(error, ServerError) and str(error) == f"502 #{MAX_POLL_ERRORS - 1}"
    assert api.polls["job-1"] == MAX_POLL_ERRORS + 1
    # the report keeps the last state the provider gave
    assert report[MODEL]["jobs"]["job-1"]["state"] == "in_progress"


@pytest.mark.parametrize("where", ["status", "results"])
def test_a_job_that_cannot_be_read_fails_its_requests_with_the_providers_error(where: str) -> None:
    api = ScriptedAPI()
    errors = api.statuses if where == "status" else api.results_errors
    errors.append(ModelError("no such batch"))
    batcher = Batcher(api, FAST, MODEL)
    assert [str(o) for o in outcomes(batcher, "a", "b")] == ["no such batch"] * 2
    assert api.polls["job-1"] == 1  # not polled again: the error is not transient


def test_each_poll_waits_longer_up_to_the_longest_wait() -> None:
    api = ScriptedAPI()
    api.statuses.extend([JobStatus("in_progress", total=1)] * 6)
    config = BatchConfig(poll_interval=0.02, backoff=2.0, max_poll_interval=0.05, settle=0)
    batcher = Batcher(api, config, MODEL)
    waits: list[float] = []
    real_sleep = asyncio.sleep

    async def recorded(seconds: float) -> None:
        waits.append(seconds)
        await real_sleep(0)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("synth.llm._batcher.asyncio.sleep", recorded)
        assert answers(batcher, "a") == ["A"]
    polls = [w for w in waits if w > 0]
    assert polls == [0.02, 0.04, 0.05, 0.05, 0.05, 0.05]


def test_the_journal_holds_each_job_before_it_is_polled_and_its_end() -> None:
    api = ScriptedAPI()
    log = MemoryLog()
    batcher = Batcher(api, FAST, MODEL)
    bound(batcher, log)

    async def first_poll(job_id: str) -> JobStatus:
        assert [key for key, _ in log.appended] == ["job-1"]  # journaled before this poll
        return JobStatus("completed", total=2, completed=2, done=True)

    api.status = first_poll  # type: ignore[method-assign]
    assert answers(batcher, "a", "b", label="critic") == ["A", "B"]
    assert log.appended == [
        ("job-1", {"model": MODEL, "state": "submitted", "custom_ids": ["a", "b"],
                   "labels": {"critic": 2}}),
        ("job-1", {"model": MODEL, "state": "completed", "custom_ids": ["a", "b"],
                   "labels": {"critic": 2}}),
    ]  # fmt: skip


def test_a_resumed_run_waits_on_its_journaled_job_and_submits_nothing_again() -> None:
    api = ScriptedAPI()
    api.jobs["job-7"] = [("a", {"prompt": "a"}), ("b", {"prompt": "b"})]
    api._final["job-7"] = "completed"
    log = MemoryLog()
    log.append("job-6", {"model": "openai:other", "state": "submitted", "custom_ids": ["c"]})
    log.append("job-7", {"model": MODEL, "state": "in_progress", "custom_ids": ["a", "b"],
                         "labels": {"critic": 2}})  # fmt: skip
    batcher = Batcher(api, FAST, MODEL)
    report, _ = bound(batcher, log)

    async def resumed() -> list[str]:
        replies = [(await batcher.request("a", {"prompt": "a"}, "critic")).text]
        # b's answer came with a's: kept until b is asked, then given without a job
        replies.append((await batcher.request("b", {"prompt": "b"}, "critic")).text)
        # another model's job is not this one's
        replies.append((await batcher.request("c", {"prompt": "c"}, "critic")).text)
        return replies

    assert bounded(resumed) == ["A", "B", "C"]
    assert api.ids() == [["a", "b"], ["c"]] and api.polls == {"job-7": 1, "job-2": 1}
    assert report[MODEL]["jobs"]["job-7"] == {
        "requests": 2,
        "state": "completed",
        "completed": 2,
        "failed": 0,
        "labels": {"critic": 2},
    }
    assert log.records["job-7"]["labels"] == {"critic": 2}


def test_a_run_opens_its_journal_once_at_its_first_request() -> None:
    api = ScriptedAPI()
    opened: list[MemoryLog] = []

    def journal() -> MemoryLog:
        opened.append(MemoryLog())
        return opened[-1]

    batcher = Batcher(api, FAST, MODEL)
    batcher.bind(journal, lambda text: None, {})
    assert opened == []  # not at bind: the run directory may not be open yet

    async def two_waves() -> None:
        await asyncio.gather(*ask(batcher, "a", "b"))
        await asyncio.gather(*ask(batcher, "c"))

    bounded(two_waves)
    assert len(opened) == 1 and list(opened[0].records) == ["job-1", "job-2"]


@pytest.mark.parametrize("journaled", [{"state": "in_progress"}, {}])
def test_a_resumed_job_shows_its_journaled_state_until_a_poll_says_otherwise(
    journaled: dict[str, str],
) -> None:
    api = ScriptedAPI()
    api.jobs["job-7"] = [("a", {"prompt": "a"})]
    api._final["job-7"] = "completed"
    api.statuses.append(ServerError("502"))
    log = MemoryLog()
    log.append("job-7", {"model": MODEL, "custom_ids": ["a"], **journaled})
    batcher = Batcher(api, FAST, MODEL)
    _, notes = bound(batcher, log)
    assert answers(batcher, "a") == ["A"]
    state = journaled.get("state", "submitted")  # a record without one was never polled
    assert notes[0] == f"batch job job-7: {state}, 0 of 1 done, 0 failed"


def test_what_a_resumed_job_did_not_finish_is_sent_again_whenever_it_is_asked() -> None:
    api = ScriptedAPI()
    api.jobs["job-7"] = [("b", {"prompt": "b"}), ("a", {"prompt": "a"})]
    api._final["job-7"] = "expired"
    log = MemoryLog()
    log.append("job-7", {"model": MODEL, "custom_ids": ["b", "a"]})
    batcher = Batcher(api, FAST, MODEL)
    bound(batcher, log)

    async def one_then_the_other() -> list[str]:
        first = (await batcher.request("a", {"prompt": "a"}, "critic")).text
        return [first, (await batcher.request("b", {"prompt": "b"}, "critic")).text]

    assert bounded(one_then_the_other) == ["A", "B"]
    assert api.ids() == [["b", "a"], ["a"], ["b"]]


def test_a_request_its_journaled_job_did_not_finish_goes_out_in_a_new_job() -> None:
    api = ScriptedAPI()
    api.jobs["job-7"] = [("a", {"prompt": "a"})]
    api._final["job-7"] = "expired"
    log = MemoryLog()
    log.append("job-7", {"model": MODEL, "custom_ids": ["a"], "labels": {"critic": 1}})
    batcher = Batcher(api, FAST, MODEL)
    report, _ = bound(batcher, log)
    assert answers(batcher, "a", label="critic") == ["A"]
    assert api.ids() == [["a"], ["a"]]
    assert report[MODEL]["jobs"]["job-7"]["labels"] == {"critic": 1}
    assert report[MODEL]["jobs"]["job-7"]["state"] == "expired"


def test_binding_a_new_run_forgets_the_old_runs_jobs() -> None:
    api = ScriptedAPI()
    first = MemoryLog()
    first.append("job-7", {"model": MODEL, "custom_ids": ["a"]})
    api.jobs["job-7"] = [("a", {"prompt": "a"})]
    api._final["job-7"] = "completed"
    batcher = Batcher(api, FAST, MODEL)
    bound(batcher, first)
    bound(batcher, MemoryLog())  # another run, with an empty journal
    assert answers(batcher, "a") == ["A"]
    assert api.ids() == [["a"], ["a"]] and "job-7" not in api.polls
