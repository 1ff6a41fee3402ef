"""synth._interrupt on its own, in small child processes: the deadline ends a process that
swallows Ctrl-C, a second Ctrl-C ends it at once, and only the synth command is affected."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest
from synth_runs import STOP_DEADLINE, child_env

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

    class Thing:
        pass

    def pressed_here(_):
        os.kill(os.getpid(), signal.SIGINT)  # the handler raises in this callback

    async def run():
        thing = Thing()
        ref = weakref.ref(thing, pressed_here)
        del thing  # the callback runs now, in the loop's own task
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        await asyncio.sleep(30)

    with CtrlC(grace=60) as ctrl_c:
        try:
            asyncio.run(run())
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
