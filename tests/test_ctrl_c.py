"""synth._interrupt on its own, in small child processes: the deadline ends a process that
swallows Ctrl-C, a second Ctrl-C ends it at once, Ctrl-C under an event loop unwinds the run from
its own task, and only the synth command is affected."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import textwrap

import pytest
from synth_runs import REPO, STOP_DEADLINE, child_env

from synth._interrupt import run_as_program

# a command that catches every KeyboardInterrupt and carries on: what a library swallowing the
# interrupt (or a native call the handler cannot reach) looks like from outside
STUBBORN = textwrap.dedent(
    """
    import sys, time
    from synth._interrupt import CtrlC

    ready = False
    with CtrlC(lambda: "the-run-dir", grace=float(sys.argv[1])) as ctrl_c:
        while True:
            try:
                if not ready:  # said inside the try: Ctrl-C may come as soon as it is read
                    print("ready", flush=True)
                    ready = True
                time.sleep(0.05)
            except KeyboardInterrupt:
                print("swallowed", flush=True)
    """
)


def stubborn(grace: float) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", STUBBORN, str(grace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def ended(proc: subprocess.Popen) -> str:
    try:
        proc.wait(timeout=STOP_DEADLINE)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError(f"still running {STOP_DEADLINE} s after Ctrl-C") from None
    _, stderr = proc.communicate()
    return stderr


def test_a_swallowed_ctrl_c_still_ends_the_process_by_the_deadline() -> None:
    proc = stubborn(grace=0.5)
    proc.send_signal(signal.SIGINT)
    stderr = ended(proc)
    assert proc.returncode == 130
    assert "still running" in stderr and "kept in the-run-dir" in stderr


def test_a_second_ctrl_c_ends_the_process_at_once() -> None:
    proc = stubborn(grace=600)  # the deadline alone would not end it during the test
    proc.send_signal(signal.SIGINT)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "swallowed"
    proc.send_signal(signal.SIGINT)
    stderr = ended(proc)
    assert proc.returncode == 130 and "pressed again" in stderr


@pytest.mark.parametrize(
    ("argv", "orig", "expected"),
    [
        (["-m"], ["python", "-m", "synth", "generate"], True),
        (["-m"], ["python", "-m", "pytest"], False),
        (["/venv/bin/synth", "generate"], [], True),
        (["/repo/synth/__main__.py"], [], True),
        (["/venv/bin/pytest"], [], False),
        (["-c"], ["python", "-c", "import synth"], False),
        ([""], [], False),
    ],
)
def test_only_the_synth_command_is_run_as_the_program(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], orig: list[str], expected: bool
) -> None:
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(sys, "orig_argv", orig)
    assert run_as_program() is expected


# Ctrl-C that a library turns into its own error on the way out (numpy, pressed while its C parts
# load, raises ImportError "PyCapsule_Import could not import module datetime")
TURNED = textwrap.dedent(
    """
    import argparse, os, signal, time
    from synth._interrupt import CtrlC
    from synth.cli import _run_command

    def command(args):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:
            raise ImportError("could not import module datetime") from None

    with CtrlC(grace=60) as ctrl_c:
        print(_run_command(argparse.Namespace(func=command, debug=False, ctrl_c=ctrl_c)))
    """
)


def test_ctrl_c_turned_into_another_error_is_still_an_interrupt() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", TURNED], capture_output=True, text=True, env=child_env(), timeout=60
    )
    assert proc.stdout.strip() == "130", proc.stderr
    assert proc.stderr.strip() == "synth: interrupted"


# Ctrl-C that lands in a weakref callback (asyncio's and threading's WeakSets run them all the
# time), where Python can only print it: here the callback sends the signal itself
IN_A_CALLBACK = textwrap.dedent(
    """
    import asyncio, os, signal, weakref
    from synth._interrupt import CtrlC
    from synth.llm.base import run_sync  # how the command runs its loop

    class Thing:
        pass

    def pressed_here(_):
        os.kill(os.getpid(), signal.SIGINT)  # the handler raises in this callback

    async def run():
        thing = Thing()
        ref = weakref.ref(thing, pressed_here)
        del thing  # the callback runs now, in the loop's main task
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        await asyncio.sleep(10)

    with CtrlC(grace=60) as ctrl_c:
        try:
            run_sync(run())
            print("ran to the end")
        except KeyboardInterrupt:
            print("interrupted", ctrl_c.interrupted)

    def other(_):
        raise ValueError("not an interrupt")

    thing = Thing()
    ref = weakref.ref(thing, other)
    del thing  # any other error there is printed as before
    """
)


def test_ctrl_c_in_a_weakref_callback_is_raised_again_and_not_printed() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", IN_A_CALLBACK],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=60,
    )
    assert proc.stdout.strip() == "interrupted True", proc.stderr
    assert "KeyboardInterrupt" not in proc.stderr
    assert "ValueError: not an interrupt" in proc.stderr


# Ctrl-C while the loop runs one of its tasks: in the run's own task (the one the loop runs to its
# end) it is raised at once, whatever the task is doing; in any other task it is raised by the
# loop between two steps, which cancels the run's task so that it unwinds
IN_A_TASK = textwrap.dedent(
    """
    import asyncio, signal, sys
    from synth._interrupt import CtrlC
    from synth.llm.base import run_sync  # how the command runs its loop

    def pressed_during_a_step(task):
        try:
            signal.raise_signal(signal.SIGINT)
            print(task, "finished its step", flush=True)
        except KeyboardInterrupt:
            print(task, "raised the interrupt", flush=True)
            raise

    async def side():
        pressed_during_a_step("side task")
        await asyncio.sleep(10)

    async def run():
        try:
            if sys.argv[1] == "main":
                pressed_during_a_step("main task")
                await asyncio.sleep(10)
            else:
                await asyncio.gather(side(), asyncio.sleep(10))
        except BaseException as exc:
            print("main task unwound by", type(exc).__name__, flush=True)
            raise

    with CtrlC(grace=60) as ctrl_c:
        try:
            run_sync(run())
        except KeyboardInterrupt:
            print("interrupted", ctrl_c.interrupted)
    """
)


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("main", ["main task raised the interrupt", "main task unwound by KeyboardInterrupt"]),
        ("side", ["side task finished its step", "main task unwound by CancelledError"]),
    ],
)
def test_ctrl_c_in_a_task_unwinds_the_run_from_its_own_task(task: str, expected: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", IN_A_TASK, task],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=60,
    )
    assert proc.stdout.splitlines() == [*expected, "interrupted True"], proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr


def test_synth_uses_no_private_part_of_asyncio() -> None:
    """Only asyncio's public functions: its private ones change between Python versions."""
    private = re.compile(
        r"(?<![\w.])(?:asyncio|aio|events|base_events|tasks|futures)\.(?:\w+\.)*_[a-z]"
        r"|from asyncio[\w.]* import [^\n]*\b_[a-z]|\._callbacks\b"
    )
    found = [
        f"{path.relative_to(REPO)}: {match.group()}"
        for path in sorted((REPO / "synth").rglob("*.py"))
        for match in private.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == []
