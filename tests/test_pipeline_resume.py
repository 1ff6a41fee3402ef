"""Kill a real ``synth generate`` process midway (SIGKILL, or Ctrl-C), run the same command again:
no completed request is made twice, no golden is lost or doubled, and the dataset equals an
uninterrupted run's. The fake OpenAI server runs as a subprocess with ``synth_replies:reply``."""

from __future__ import annotations

import json
import math
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from synth_runs import (
    GOLDENS,
    STOP_DEADLINE,
    Server,
    check_only_lost_answers_were_repeated,
    command,
    finish_here,
    interrupt,
    manifests,
    recorded,
    reference_dataset,
    repeats,
    servers,
    started,
    wait_for,
)

from synth.dataset import Dataset
from synth.run.yields import PRIOR_KEEP, contexts_for


@pytest.fixture
def server_factory(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    with servers(tmp_path) as start:
        yield start


@dataclass(frozen=True)
class Uninterrupted:
    goldens: list[dict]  # without what names its server (see same_goldens)
    answered: list[str]  # the request bodies its server answered, in order


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Uninterrupted]:
    """The same command run once to its end, against a server of its own (the fake's replies
    depend on the request alone), made once for the tests that compare a resumed run with it."""
    folder = tmp_path_factory.mktemp("uninterrupted")
    with servers(folder) as start:
        server = start()
        goldens = reference_dataset(server, folder / "reference")
        yield Uninterrupted(_unplaced(goldens, server, None), server.answered())


def _unplaced(goldens: Dataset, server: Server, work: Path | None) -> list[dict]:
    """The goldens without the server's address and the run id made from it (the one thing a run
    against another server does differently), once checked: the address is ``server``'s, the run
    id that of the run in ``work``."""
    dumped = [g.model_dump() for g in goldens]
    for golden in dumped:
        run_id = golden["metadata"].pop("run_id")
        if work is not None:
            assert [path.parent.name for path in manifests(work)] == [run_id]
        models = golden["metadata"]["models"].values()
        urls = [model.pop("base_url") for model in models if "base_url" in model]
        assert urls and all(url.startswith(server.url) for url in urls)
    return dumped


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGINT], ids=["sigkill", "ctrl-c"])
def test_stopped_between_requests_then_rerun_repeats_no_completed_request(
    tmp_path: Path,
    server_factory: Callable[..., Server],
    uninterrupted: Uninterrupted,
    stop: signal.Signals,
) -> None:
    release = tmp_path / "release-the-gate"
    gate = 25  # about half the run's requests
    server = server_factory(SYNTH_REPLIES_GATE=str(gate), SYNTH_REPLIES_RELEASE=str(release))
    work = tmp_path / "work"
    work.mkdir()
    cache = work / ".synth" / "cache.sqlite"
    with started(command(server), work) as run:

        def answered_and_recorded() -> bool:
            # the gate holds every later request: wait until the run has stored all the answers
            return len(server.chat()) >= gate and recorded(cache) >= gate

        wait_for(answered_and_recorded, run, f"{gate} answers were recorded")
        if stop == signal.SIGINT:
            stderr = interrupt(run)
        else:
            run.send_signal(stop)
            _, stderr = run.communicate(timeout=STOP_DEADLINE)
    completed = server.answered()
    assert len(completed) == gate
    assert not (work / "out.jsonl").exists()
    found = manifests(work)
    assert len(found) == 1
    status = json.loads(found[0].read_text())["status"]
    if stop == signal.SIGKILL:
        assert run.returncode == -signal.SIGKILL and status == "running"  # killed, not finished
    else:  # Ctrl-C while requests hang at the server: a clean stop all the same
        assert run.returncode == 130, stderr
        assert "Traceback" not in stderr and "run the same command again to resume" in stderr
        assert status == "interrupted"

    release.touch()
    rerun = finish_here(command(server), work)
    assert rerun.returncode == 0, rerun.stderr
    # no request completed before the stop was made again (the requests the gate held were
    # answered to a dead process once it opened: the rerun had to make those)
    assert server.repeated(completed) == []
    resumed = Dataset.load(work / "out.jsonl")
    assert len(resumed) == GOLDENS
    assert len({g.metadata["draft_id"] for g in resumed}) == GOLDENS  # none doubled
    manifest = json.loads(found[0].read_text())
    assert manifest["status"] == "complete" and len(manifest["sessions"]) == 2
    assert manifest["stages"][-1]["items_out"] == GOLDENS

    assert _unplaced(resumed, server, work) == uninterrupted.goldens


@pytest.mark.slow
def test_sigkill_mid_flight_then_rerun_gives_the_uninterrupted_dataset(
    tmp_path: Path, server_factory: Callable[..., Server], uninterrupted: Uninterrupted
) -> None:
    server = server_factory()
    work = tmp_path / "work"
    work.mkdir()
    with started(command(server, "--max-concurrent", "4"), work) as run:

        def some_contexts_filtered() -> bool:
            found = list((work / ".synth" / "runs").glob("*/filter.jsonl"))
            return bool(found) and len(found[0].read_text().splitlines()) >= 3

        wait_for(some_contexts_filtered, run, "three contexts were filtered")
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=STOP_DEADLINE)
        dead_at = time.monotonic()
    stored = recorded(work / ".synth" / "cache.sqlite")
    assert stored > 0
    rerun = finish_here(command(server, "--max-concurrent", "4"), work)
    assert rerun.returncode == 0, rerun.stderr
    # a kill at any moment: only answers still on their way to the run (at most
    # --max-concurrent) can have been lost, and only those were asked for again
    lost = check_only_lost_answers_were_repeated(server, dead_at, stored, 4)
    both_runs = len(server.chat())
    resumed = Dataset.load(work / "out.jsonl")
    assert _unplaced(resumed, server, work) == uninterrupted.goldens
    whole_run = len(uninterrupted.answered)
    assert repeats(uninterrupted.answered) == 0  # an uninterrupted run repeats nothing
    # the rerun did only what was left; a first-wave spare's evolution is asked for beside its
    # filter's scoring, before its gate is known, so how many of those each run sends depends on
    # when the others answered (at most one per draft of each spare)
    spares = contexts_for(GOLDENS, 2 * PRIOR_KEEP) - math.ceil(GOLDENS / 2)
    assert both_runs <= whole_run + lost + 2 * spares


@pytest.mark.slow
def test_ctrl_c_mid_flight_stops_cleanly_keeping_everything_done(
    tmp_path: Path, server_factory: Callable[..., Server]
) -> None:
    server = server_factory()
    work = tmp_path / "work"
    work.mkdir()
    with started(command(server, "--max-concurrent", "4"), work) as run:

        def some_inputs_written() -> bool:
            found = list((work / ".synth" / "runs").glob("*/inputs.jsonl"))
            return bool(found) and len(found[0].read_text().splitlines()) >= 2

        wait_for(some_inputs_written, run, "two contexts had inputs")
        stderr = interrupt(run)
        dead_at = time.monotonic()
    assert run.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "run the same command again to resume" in stderr
    manifest_file = manifests(work)[0]
    # stderr says which way it ended: unwound, or ended by the deadline (GRACE)
    assert json.loads(manifest_file.read_text())["status"] == "interrupted", stderr
    stored = recorded(work / ".synth" / "cache.sqlite")
    assert len(json.loads(manifest_file.read_text())["sessions"]) == 1
    rerun = finish_here(command(server), work)
    assert rerun.returncode == 0, rerun.stderr
    assert len(Dataset.load(work / "out.jsonl")) == GOLDENS
    check_only_lost_answers_were_repeated(server, dead_at, stored, 4)
