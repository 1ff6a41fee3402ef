"""The language check's full models in a worker process (synth/_full_models.py): the same verdicts
as in this process, the doubtful text judged there and not here, and every way the worker can
fail leaving the judging here, nothing lost. The real worker runs lingua; the failing ones are
small scripts standing in for it."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from synth import _full_models, _language
from synth._full_models import ENV, FullModels
from synth._language import COMMON, check_language, prepare_checks
from synth.generate.base import Source

#: a doubtful text (the trigrams leave it to the full models), a mismatch they settle, a match
TEXTS = [
    ("whileixix Stormenen Watchanet is activeanan.", "en"),
    ("Hi, quick question: Wie lange dauert die Garantie?", "en"),
    ("Wie lange dauert die Garantie für das Gerät?", "en"),
    ("How long does the warranty last for this device?", "de"),
    ("Kuinka kauan laitteen takuu kestää?", "fi"),
]


def script(body: str) -> list[str]:
    """A worker command running ``body`` (a stand-in for the real worker)."""
    return [sys.executable, "-c", body]


@pytest.fixture(autouse=True)
def worker_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "1")  # mutation/run.py turns it off for mutmut's children
    _language._full_confidences.cache_clear()  # each test's texts judged afresh
    _language._quick_confidences.cache_clear()


@pytest.fixture(scope="module")
def worker() -> Iterator[FullModels]:
    models = FullModels()
    models.start()
    yield models
    models.close()


def verdicts(models: FullModels, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    monkeypatch.setattr(_language, "FULL_MODELS", models)
    return [check_language(text, target) for text, target in TEXTS]


def test_the_worker_gives_the_verdicts_this_process_gives(
    worker: FullModels, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = FullModels(script("pass"))
    here.close()  # closed: never started, every text judged in this process
    expected = verdicts(here, monkeypatch)
    assert [v.status for v in expected] == ["unsure", "unsure", "mismatch", "mismatch", "match"]
    assert verdicts(worker, monkeypatch) == expected
    assert worker.available


def test_a_doubtful_text_is_judged_in_the_worker_and_not_here(
    worker: FullModels, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = _language._check_detector

    def quick_only(codes: frozenset[str], quick: bool = False) -> object:
        assert quick, "the full models were asked in this process"
        return real(codes, quick=True)

    monkeypatch.setattr(_language, "_check_detector", quick_only)
    monkeypatch.setattr(_language, "FULL_MODELS", worker)
    verdict = check_language("Hi, quick question: Wie lange dauert die Garantie?", "en")
    assert verdict.status == "unsure"
    found = worker.confidences(COMMON, "Wie lange dauert die Garantie für das Gerät?")
    assert found is not None and max(found, key=lambda c: found[c]) == "de"


def test_the_worker_keeps_answering_through_the_parents_ctrl_c(worker: FullModels) -> None:
    assert worker._process is not None
    worker._process.send_signal(signal.SIGINT)  # a terminal's Ctrl-C reaches the whole group
    assert worker.confidences(["de", "en"], "Wie lange dauert die Garantie?") is not None
    assert worker.available


def test_a_worker_that_cannot_start_leaves_the_judging_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    missing = FullModels(["/nonexistent/python"])
    missing.start()
    assert not missing.available and missing.confidences(["en"], "some text") is None
    assert [v.status for v in verdicts(missing, monkeypatch)][2:4] == ["mismatch", "mismatch"]


@pytest.mark.parametrize(
    "body",
    [
        "pass",  # gone before the first request
        "import sys; sys.stdin.readline(); print('not json', flush=True)",
        "import sys; sys.stdin.readline(); print('{\"values\": 3}', flush=True)",
        "import sys; sys.stdin.readline()",  # reads, then ends without a word
    ],
    ids=["exited", "garbled", "wrong-shape", "silent-exit"],
)
def test_a_worker_that_dies_or_garbles_is_stopped_and_never_asked_again(body: str) -> None:
    models = FullModels(script(body))
    models.start()
    assert models.available
    assert models.confidences(["en", "de"], "some text") is None
    assert not models.available and models._process is None
    models.start()  # not started again
    assert models._process is None and models.confidences(["en"], "text") is None


def test_a_worker_that_does_not_answer_in_time_is_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_full_models, "REPLY_TIMEOUT", 0.2)
    models = FullModels(script("import sys, time; sys.stdin.readline(); time.sleep(60)"))
    models.start()
    process = models._process
    assert models.confidences(["en"], "some text") is None
    assert not models.available and process is not None and process.returncode is not None


def test_an_error_reply_is_judged_here_and_the_worker_kept() -> None:
    replies = [{"error": "ValueError: no such language"}, {"values": [["de", 0.75], ["en", 0.25]]}]
    body = (
        "import sys\n"
        f"for reply in {json.dumps([json.dumps(r) for r in replies])}:\n"
        "    sys.stdin.readline(); print(reply, flush=True)\n"
        "sys.stdin.readline()\n"
    )
    models = FullModels(script(body))
    models.start()
    assert models.confidences(["xx"], "text") is None and models.available
    assert models.confidences(["de", "en"], "text") == {"de": 0.75, "en": 0.25}
    models.close()
    assert not models.available


def test_the_worker_is_off_when_the_environment_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "0")
    models = FullModels(script("import sys; sys.stdin.read()"))
    models.start()
    assert models._process is None and not models.available


def test_a_forked_child_forgets_its_parents_worker() -> None:
    models = FullModels(script("import sys; sys.stdin.read()"))
    models.start()
    parents = models._process
    models.forget()  # what register_at_fork runs in the child
    assert models._process is None and not models.available
    assert parents is not None and parents.poll() is None  # the parent's is left running
    models.start()
    assert models._process is not None and models._process is not parents
    models.close()
    _full_models._end(parents)


def test_a_runs_stages_start_the_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    from synth.run import stages

    started: list[bool] = []
    recorder = type("Recorder", (), {"start": lambda self: started.append(True)})()
    monkeypatch.setattr(stages, "FULL_MODELS", recorder)
    monkeypatch.setattr(stages, "build_steps", lambda settings: [])
    stages.CandidateRunner(object(), run=None, on_stage=lambda *a: None)  # type: ignore[arg-type]
    assert started == [True]


def test_the_command_starts_its_helpers_before_importing_the_library(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``synth generate`` starts its file reader, Chroma writer and the full models first thing;
    the modules that start them import no part of the library's heavy side (pydantic, numpy,
    chromadb, the SDKs), so the helpers' own imports run beside the command's."""
    from synth.run import workers
    from synth.store import _worker_reads, _worker_writes

    started: list[str] = []

    def recorder(name: str) -> object:
        return type("Recorder", (), {"start": lambda self: started.append(name)})()

    monkeypatch.setattr(_worker_reads, "READ_WORKER", recorder("read"))
    monkeypatch.setattr(_worker_writes, "WRITE_WORKER", recorder("write"))
    monkeypatch.setattr(_full_models, "FULL_MODELS", recorder("full"))
    workers.start_workers()
    assert started == ["read", "write", "full"]
    code = (
        "import sys; import synth.run.workers, synth.store._worker_reads, "
        "synth.store._worker_writes, synth._full_models; "
        "print(sorted({'pydantic', 'numpy', 'chromadb', 'openai', 'synth.ingest'} & "
        "set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---- the trigram models load while the first wave of requests is out (warm_checks_soon) --------
def test_the_trigram_models_load_once_the_loop_has_sent_its_wave(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from synth.generate import language

    loaded: list[tuple[str, list[str]]] = []
    monkeypatch.setattr(language, "warm_checks", lambda t, also: loaded.append((t, also)))
    monkeypatch.setattr(language, "_warmed", set())
    monkeypatch.setattr(language, "WARM_DELAY", 0)

    async def main() -> None:
        language.warm_checks_soon("en", ["", "cs"])
        language.warm_checks_soon("en", ["cs"])  # the same languages: loaded once
        language.warm_checks_soon(None, ["de"])  # no target: nothing is checked
        assert loaded == []  # not while the caller runs: after it, on the loop
        for _ in range(3):
            await asyncio.sleep(0)
        assert loaded == [("en", ["cs"])]
        language.warm_checks_soon("ja", [])  # other languages: their own load
        for _ in range(3):
            await asyncio.sleep(0)

    asyncio.run(main())
    assert loaded == [("en", ["cs"]), ("ja", [])]


def test_the_warm_up_loads_what_a_check_of_an_english_text_needs() -> None:
    _language._check_detector.cache_clear()
    _language._quick_confidences.cache_clear()
    _language.warm_checks("en")
    before = _language._check_detector.cache_info()
    check_language(SETTLED, "en")  # its detector is the one the warm-up built
    after = _language._check_detector.cache_info()
    assert after.misses == before.misses and after.hits > before.hits


def test_an_input_asked_ahead_warms_the_checks_of_its_language(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from synth.data import Context
    from synth.generate import inputs
    from synth.generate.config import GenerationConfig, StylingConfig
    from synth.generate.templates import default_prompts
    from synth.llm.base import FunctionModel

    warmed: list[tuple[str | None, list[str]]] = []
    monkeypatch.setattr(inputs, "warm_checks_soon", lambda t, also: warmed.append((t, also)))
    context = Context(
        id="c", chunk_ids=["k"], texts=["Ein Text."], source_files=["a.txt"],
        metadata={"language": "de"},
    )  # fmt: skip
    model = FunctionModel(lambda prompt, system=None: "{}")
    for language in ("auto", "fr"):
        step = inputs.InputsStep(
            model, GenerationConfig(language=language), StylingConfig(), default_prompts()
        )
        asyncio.run(step.warm(context))
    assert warmed == [("de", ["de"]), ("fr", ["de"])]


# ---- judged off the event loop: the steps prepare their checks (prepare_checks) -----------------

DOUBT = TEXTS[0][0]  # the trigrams leave it to the full models
SETTLED = "How long does the warranty of the home battery last?"


class Recorder:
    """Stands in for the worker: answers ``values`` and notes each text and whether it was asked
    on the main thread (where the tests' event loops run)."""

    def __init__(self, values: dict[str, float]) -> None:
        self.values = values
        self.asked: list[tuple[str, bool]] = []

    def start(self) -> None:
        pass

    def confidences(self, codes: object, text: str) -> dict[str, float]:
        self.asked.append((text, threading.current_thread() is threading.main_thread()))
        return dict(self.values)


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    found = Recorder({"de": 0.9, "en": 0.05})
    monkeypatch.setattr(_language, "FULL_MODELS", found)
    return found


def test_prepared_checks_judge_only_the_doubtful_texts_on_another_thread(
    recorder: Recorder,
) -> None:
    asyncio.run(prepare_checks([DOUBT, SETTLED, "Refund?"], "en", ["", "de"]))
    assert recorder.asked == [(DOUBT, False)]
    # the check that follows, on the loop, finds the verdict ready
    verdict = check_language(DOUBT, "en", ["de"])
    assert verdict.mismatch and verdict.found == "de" and len(recorder.asked) == 1
    asyncio.run(prepare_checks([DOUBT + " again"], None))  # no target: nothing checked
    assert len(recorder.asked) == 1


def test_an_input_step_judges_a_doubtful_input_off_the_loop(recorder: Recorder) -> None:
    from test_generate_language import Rewriter, Writer

    from synth.generate.draft import Draft
    from synth.generate.language import LanguageChecked
    from synth.generate.templates import default_prompts

    draft = Draft(id="d0", input="before", metadata={"language": "en"})
    step = LanguageChecked(Writer({"d0": DOUBT}), Rewriter(SETTLED), default_prompts())
    asyncio.run(step.run([draft], Source("k")))
    assert recorder.asked == [(DOUBT, False)]
    assert draft.kept and draft.input == SETTLED  # judged German, asked again


def test_a_conversation_turn_is_judged_off_the_loop(recorder: Recorder) -> None:
    from test_generate_turn_language import Rewriter, Writer, conversation_draft, turns

    from synth.generate.templates import default_prompts
    from synth.generate.turn_language import TurnsChecked

    draft = conversation_draft(0, ("user", SETTLED), language="en")
    writer = Writer({"d0": turns(("user", SETTLED), ("assistant", DOUBT))})
    step = TurnsChecked(writer, Rewriter({DOUBT: SETTLED}), default_prompts())
    asyncio.run(step.run([draft], Source("k")))
    assert recorder.asked == [(DOUBT, False)]
    assert draft.kept and draft.conversation["turns"][1]["content"] == SETTLED


def test_an_expected_output_is_judged_off_the_loop(recorder: Recorder) -> None:
    from synth.data import Context
    from synth.generate import expected
    from synth.generate.draft import Draft
    from synth.llm.base import FunctionModel

    def answer(prompt: str, system: str | None = None) -> str:
        return json.dumps({"outputs": [{"index": 1, "expected_output": DOUBT, "quotes": []}]})

    context = Context(id="c", chunk_ids=["k"], texts=["Any text."], source_files=["a.txt"])
    draft = Draft(id="d0", input="A question?", context=context, metadata={"language": "en"})
    asyncio.run(expected.run([draft], FunctionModel(answer), grounding_threshold=0))
    # the answer and its re-ask (judged German both times), each judged on another thread
    assert recorder.asked and all(not on_main for _, on_main in recorder.asked)
    assert {text for text, _ in recorder.asked} == {DOUBT}
    assert not draft.kept and draft.drop_reason == "wrong_language"
