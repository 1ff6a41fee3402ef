"""SIGTERM (``timeout``, ``docker stop``, a cancelled CI job) and a forced Ctrl-C stop a real
``synth generate`` the way one Ctrl-C does (synth/_interrupt.py): the manifest says
``interrupted``, the output's lock file is gone, a line says how to resume, and the same command
run again resumes the run."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from synth_runs import (
    REPO,
    STOP_DEADLINE,
    Server,
    command,
    finish_here,
    read_manifest,
    servers,
    started,
    wait_for,
)

from synth._interrupt import GRACE
from synth.dataset import Dataset

GOLDENS = 6


@pytest.fixture
def server_factory(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    with servers(tmp_path) as start:
        yield start


def stop(proc: subprocess.Popen, *signals: signal.Signals) -> str:
    """Send ``signals`` one after the other, then wait at most STOP_DEADLINE; the stderr."""
    for signum in signals:
        proc.send_signal(signum)
    try:
        proc.wait(timeout=STOP_DEADLINE)
    except subprocess.TimeoutExpired:
        raise AssertionError(
            f"the run was still going {STOP_DEADLINE} s after the signal"
        ) from None
    _, stderr = proc.communicate()
    return stderr


def check_interrupted_then_resumed(work: Path, stderr: str, cmd: list[str]) -> None:
    manifest = read_manifest(work)
    assert manifest is not None and manifest["status"] == "interrupted", stderr
    assert manifest["sessions"][-1]["status"] == "interrupted"
    assert not list(work.glob(".*.lock")), "the output's lock file was left"
    assert "run the same command again to resume" in stderr
    assert not (work / "out.jsonl").exists()
    rerun = finish_here(cmd, work)
    assert rerun.returncode == 0, rerun.stderr
    assert len(Dataset.load(work / "out.jsonl")) == GOLDENS
    assert len(read_manifest(work)["sessions"]) == 2  # the same run, resumed


def test_sigterm_while_requests_are_in_flight_records_interrupted_and_the_rerun_resumes(
    tmp_path: Path, server_factory: Callable[..., Server]
) -> None:
    server = server_factory(latency=0.3)
    work = tmp_path / "work"
    work.mkdir()
    cmd = command(server, goldens=GOLDENS)
    with started(cmd, work) as run:
        wait_for(lambda: len(server.chat()) >= 2, run, "two requests were answered")
        stderr = stop(run, signal.SIGTERM)
    assert run.returncode == 143, stderr
    assert "Traceback" not in stderr, stderr
    assert "synth: interrupted (SIGTERM)" in stderr
    check_interrupted_then_resumed(work, stderr, cmd)


# the command with its unwinding stuck where the interrupted run writes its manifest (as a thread
# the interpreter waits for, or a native call, can hold it), so only the forced end can end it
STUCK_UNWIND = textwrap.dedent(
    """
    import runpy, sys, threading
    from synth.run import session

    write = session.RunSession._flush

    def stuck(self, force=False):
        if self.status == "interrupted":
            threading.Event().wait()
        return write(self, force)

    session.RunSession._flush = stuck
    sys.argv = [sys.argv[1], *sys.argv[2:]]
    runpy.run_path(sys.argv[0], run_name="__main__")
    """
)


def test_a_ctrl_c_ended_by_force_still_records_interrupted_and_removes_the_lock_file(
    tmp_path: Path, server_factory: Callable[..., Server]
) -> None:
    server = server_factory(latency=0.3)
    work = tmp_path / "work"
    work.mkdir()
    cmd = command(server, goldens=GOLDENS)
    program = str(REPO / "synth" / "__main__.py")  # run as the synth command (synth._interrupt)
    stuck = [sys.executable, "-c", STUCK_UNWIND, program, *cmd[3:]]
    with started(stuck, work) as run:
        wait_for(lambda: len(server.chat()) >= 2, run, "two requests were answered")
        run.send_signal(signal.SIGINT)
        try:
            run.wait(timeout=GRACE + STOP_DEADLINE)
        except subprocess.TimeoutExpired:
            raise AssertionError("the forced end did not come") from None
        _, stderr = run.communicate()
    assert run.returncode == 130, stderr
    assert "still running: ended without waiting" in stderr, stderr
    check_interrupted_then_resumed(work, stderr, cmd)
