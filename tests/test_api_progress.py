"""What the Python API shows while it runs (plain text on stderr, by default) and what a run from
documents without ``num_goldens`` aims for and says when it delivers nothing."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest
from synth_replies import Replies

from synth import FunctionModel, Synthesizer
from synth.errors import ShortfallWarning
from synth.run.progress import Snapshot, TextProgress

SAMPLE = Path(__file__).resolve().parent.parent / "sample_docs"
CONTEXTS = [["Solar panels lose a tenth of their output in winter, the report says."]]


def _synthesizer(model: object = None, **kw: object) -> Synthesizer:
    return Synthesizer(
        model or FunctionModel(Replies(), name="replies"), embedder="hash", cache=None, **kw
    )


def test_the_python_api_shows_progress_on_stderr_by_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with _synthesizer() as synth:
        assert len(synth.generate_goldens_from_contexts(CONTEXTS, num_goldens=1)) == 1
    out, err = capsys.readouterr()
    assert out == ""  # stdout is the user's
    last = err.strip().splitlines()[-1]
    assert last.startswith("synth run ") and "goldens 1/1" in last and "requests " in last


def test_progress_false_shows_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with _synthesizer(progress=False) as synth:
        assert len(synth.generate_goldens_from_contexts(CONTEXTS, num_goldens=1)) == 1
    assert capsys.readouterr() == ("", "")


class _Stream(io.StringIO):
    def __init__(self, terminal: bool) -> None:
        super().__init__()
        self.terminal = terminal

    def isatty(self) -> bool:
        return self.terminal


def _shown(terminal: bool) -> str:
    """What a TextProgress writes over a run whose goldens go 0, 1, 2, refreshed every update."""
    stream, counts = _Stream(terminal), iter([0, 1, 1, 2])
    state = {"goldens": 0}
    ticked = threading.Event()

    def snapshot() -> Snapshot:
        ticked.set()
        return Snapshot(title="run r1", stages=[("inputs", 1, 2)], goldens=state["goldens"])

    progress = TextProgress(stream=lambda: stream, interval=3600.0)  # no tick of its own
    progress.start(snapshot)
    progress.note("a note")
    for count in counts:  # the refresh, driven by hand
        state["goldens"] = count
        progress._write(progress._line())
    progress.stop()
    return stream.getvalue()


def test_off_a_terminal_progress_is_whole_lines_only_when_they_change() -> None:
    lines = _shown(terminal=False).splitlines()
    assert lines == [
        "synth: a note",
        "synth run r1: inputs 1/2   goldens 0   in flight 0   requests 0 (cached 0)   retries 0"
        "   cost $0.0000",
        *(
            f"synth run r1: inputs 1/2   goldens {n}   in flight 0   requests 0 (cached 0)"
            "   retries 0   cost $0.0000"
            for n in (1, 2, 2)  # 1 once though shown twice; the last line always
        ),
    ]
    assert "\r" not in "".join(lines)


def test_on_a_terminal_progress_redraws_one_line() -> None:
    shown = _shown(terminal=True)
    assert shown.count("\n") == 2  # the note and the last frame
    assert shown.endswith("goldens 2   in flight 0   requests 0 (cached 0)   retries 0   cost "
                          "$0.0000\x1b[K\n")  # fmt: skip
    assert shown.count("\r") == 6  # the note's, then each frame drawn over the last


def test_a_docs_run_without_num_goldens_says_what_it_aims_for(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with _synthesizer() as synth:
        dataset = synth.generate_goldens_from_docs(SAMPLE)
    err = capsys.readouterr().err
    assert len(dataset) > 0 and dataset.shortfall is None
    note = next(line for line in err.splitlines() if "no num_goldens" in line)
    assert note.startswith("synth: no num_goldens: up to 2 goldens from each of the ")
    assert note.endswith("; pass num_goldens=N for exactly N")


def test_a_run_without_num_goldens_that_delivers_nothing_says_why() -> None:
    def broken(prompt: str, system: str | None = None) -> str:
        return "not json"

    with _synthesizer(FunctionModel(broken, name="broken"), progress=False) as synth:
        with pytest.warns(ShortfallWarning, match="^delivered no goldens: model errors"):
            dataset = synth.generate_goldens_from_docs(SAMPLE)
        assert synth.manifest is not None and synth.manifest["status"] == "partial"
    assert len(dataset) == 0
    assert dataset.shortfall is not None and dataset.shortfall.asked is None
