"""The offline model: a first run with no key, no server and no network delivers exactly the goldens
asked for, each answer quoted from its context, the model named in every golden and in the report.

The command-line run is a real ``synth generate`` process with every key and base URL taken out of
its environment and every TCP connection refused inside it (a ``sitecustomize`` that the process
and its workers load), so a run that reached for a server or a download would fail.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from synth import Synthesizer
from synth.data import Context
from synth.errors import ConfigError
from synth.generate import expected, inputs
from synth.generate import filter as input_filter
from synth.llm import make_llm
from synth.llm.offline import MODEL, NOTE, PROVIDER, WRITERS, OfflineModel, reply
from synth.llm.pricing import estimate_cost
from synth.run.models import ModelSettings, RunModels

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_docs"
KEYS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
)

# loaded by the run and by every worker process it starts: any TCP connection is refused and logged
NO_NETWORK = """
import os, socket
_connect = socket.socket.connect
def _refuse(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        with open(os.environ["NO_NETWORK_LOG"], "a") as log:
            log.write(repr(address) + "\\n")
        raise OSError("this run may not open a network connection")
    return _connect(self, address)
socket.socket.connect = _refuse
"""


def _context(texts: list[str]) -> Context:
    return Context(
        id="c", chunk_ids=[f"k{i}" for i in range(len(texts))], texts=texts, source_files=[]
    )


def _no_key_env(folder: Path) -> dict[str, str]:
    """The environment of a newcomer's shell: no key, no server, and (to prove it) no network."""
    guard = folder / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(NO_NETWORK, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    env["PYTHONPATH"] = os.pathsep.join([str(guard), str(REPO)])
    env["NO_NETWORK_LOG"] = str(folder / "connections.log")
    return env


def _check_goldens(goldens: list[dict], count: int) -> None:
    """Exactly ``count`` goldens, each naming the offline model, each answer and quote in its
    context."""
    assert len(goldens) == count
    for golden in goldens:
        meta = golden["metadata"]
        assert meta["models"]["generator"]["provider"] == PROVIDER
        assert meta["models"]["generator"]["model"] == MODEL
        assert meta["models"]["embedder"]["embedder"].startswith("hash")
        context = " ".join(" ".join(golden["context"]).split())
        citations = meta["citations"]
        assert citations and meta["grounding"]["all_found"] and meta["grounding"]["score"] == 1.0
        for citation in citations:
            assert " ".join(citation["quote"].split()) in context
        assert golden["expected_output"].rstrip(".") and golden["input"].endswith("?")
    assert len({g["input"] for g in goldens}) == count


@pytest.mark.slow
def test_a_first_run_with_no_key_and_no_network_delivers_exactly_the_goldens_and_a_report(
    tmp_path: Path,
) -> None:
    shutil.copytree(SAMPLE, tmp_path / "sample_docs")
    env = _no_key_env(tmp_path)
    command = [sys.executable, "-m", "synth", "generate", "sample_docs", "--model", "offline"]
    proc = subprocess.run(
        [*command, "--goldens", "10", "-o", "goldens.jsonl", "--report", "--quiet"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (tmp_path / "connections.log").exists()
    goldens = [json.loads(line) for line in (tmp_path / "goldens.jsonl").read_text().splitlines()]
    _check_goldens(goldens, 10)
    page = (tmp_path / "goldens.html").read_text(encoding="utf-8")
    assert "generator offline:extractive" in page and NOTE in page.replace("&#39;", "'")
    assert "wrote 10 of 10 goldens" in proc.stdout and "cost $0.0000" in proc.stdout
    assert "requests answered offline" in proc.stdout
    report = subprocess.run(
        [sys.executable, "-m", "synth", "report", "goldens.jsonl", "-o", "again.html"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert report.returncode == 0, report.stderr
    assert "offline:extractive" in (tmp_path / "again.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_python_api_runs_the_offline_model_with_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-set-but-never-used")  # the offline run ignores it
    shutil.copytree(SAMPLE, tmp_path / "sample_docs")
    monkeypatch.chdir(tmp_path)
    goldens = Synthesizer("offline").generate_goldens_from_docs("sample_docs", num_goldens=4)
    assert goldens.shortfall is None
    _check_goldens([g.model_dump() for g in goldens], 4)


def test_a_run_of_the_offline_model_embeds_with_the_hash_embedder_unless_one_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-set-but-never-used")

    def embedder_of(model: object, embedder: object = None) -> str:
        settings = ModelSettings(model, embedder=embedder, cache=None)
        made = RunModels(settings)
        try:
            return made.embedder().name
        finally:
            made.close()

    assert embedder_of("offline") == "hash:384"
    assert embedder_of("offline:extractive") == "hash:384"
    assert embedder_of(OfflineModel()) == "hash:384"
    assert embedder_of("offline", "hash:64") == "hash:64"
    # a key set and another model: the default stays the provider's embedder
    assert embedder_of("openai:gpt-4.1-mini").startswith("openai")


def test_the_offline_model_is_named_by_its_provider_alone_and_costs_nothing() -> None:
    model = make_llm("offline")
    assert (model.provider, model.model) == (PROVIDER, MODEL)
    assert model.identity()["provider"] == PROVIDER
    context = _context(["The gateway weighs 14 kg and is mounted on the wall beside the stack."])
    model.complete(inputs.build_prompt(context, 1), schema=inputs.InputsReply)
    cost = estimate_cost(model.usage)  # type: ignore[attr-defined]
    assert cost.by_model == {f"{PROVIDER}:{MODEL}": 0.0} and cost.complete  # priced, at zero
    with pytest.raises(ConfigError, match="one model"):
        make_llm("offline:gpt-4.1-mini")


def test_no_model_and_no_key_points_at_the_offline_model(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run(
        [sys.executable, "-m", "synth", "generate", str(tmp_path / "none"), "--goldens", "1"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert "--model offline" in proc.stderr


# ---- the replies ---------------------------------------------------------------------------------

PASSAGES = [
    "# Hearth battery\n\nEach module stores 10.2 kWh of usable energy using **LFP** cells.\n"
    "The gateway weighs 14 kg and is mounted on the wall beside the stack.\n\n"
    "## Grid events\n\nVeltrana tells you about each grid event at least 4 hours ahead.",
    "Owners who return a module through Second Life receive a credit of 150 euros.\n"
    "A <b>marked</b> line: the refund window is 30 days from the date of purchase.",
]


def _answers(questions: list[str]) -> list[expected.Answer]:
    context = _context(PASSAGES)
    prompt = expected.build_prompt(questions, context)
    return expected.parse(reply(prompt, expected.ExpectedReply), len(questions))


def test_an_answer_is_the_sentence_a_question_was_made_from_quoted_as_the_document_has_it() -> None:
    context = _context(PASSAGES)
    prompt = inputs.build_prompt(context, 3)
    questions = inputs.parse(reply(prompt, inputs.batch_schema(inputs.InputsReply, 3)), 3)
    assert len(questions) == 3 and len(set(questions)) == 3
    joined = " ".join(" ".join(p.split()) for p in PASSAGES)
    for question, answer in zip(questions, _answers(questions), strict=True):
        assert answer.quotes, question
        for quote in answer.quotes:
            assert " ".join(quote.split()) in joined  # word for word, markup included
        assert "**" not in answer.text


def test_an_answer_from_escaped_text_is_the_documents_own_text() -> None:
    (answer,) = _answers(["How long is the refund window from the date of purchase?"])
    sentence = "A <b>marked</b> line: the refund window is 30 days from the date of purchase."
    assert (answer.text, answer.quotes) == (sentence, (sentence,))


def test_the_same_prompt_gets_the_same_reply() -> None:
    prompt = inputs.build_prompt(_context(PASSAGES), 2)
    schema = inputs.batch_schema(inputs.InputsReply, 2)
    assert reply(prompt, schema) == reply(prompt, schema)


def test_the_critic_scores_prose_above_a_table_of_contents() -> None:
    from synth.contexts import critic

    contents = (
        "Contents\n1 Intro .... 3\n2 Setup .... 5\n3 Use .... 9\nIndex .... 12\nCopyright 2024"
    )
    prompt = critic.build_prompt([PASSAGES[0], contents])
    prose, toc = critic.parse(reply(prompt, critic.CriticReply), 2)
    assert prose.quality > 0.5 >= toc.quality


def test_what_the_offline_model_cannot_write_is_refused_in_one_line() -> None:
    class JudgeVerdict(BaseModel):
        score: float

    with pytest.raises(ConfigError, match="generation replies only"):
        reply("Rate this answer.", JudgeVerdict)
    with pytest.raises(ConfigError, match="no context"):
        reply(inputs.build_prompt(_context([]), 2), inputs.InputsReply)
    with pytest.raises(ConfigError, match="generation replies only"):
        asyncio.run(OfflineModel().arequest("Say hello."))


def _reply_schemas() -> set[str]:
    """The names of every reply schema the generation and context steps ask a model for."""
    import importlib
    import pkgutil

    import synth.contexts
    import synth.generate

    names = set()
    for package in (synth.generate, synth.contexts):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for value in vars(module).values():
                if (
                    isinstance(value, type)
                    and issubclass(value, BaseModel)
                    and value.__name__.endswith("Reply")
                    and value.__module__ == module.__name__
                ):
                    names.add(value.__name__)
    return names


def test_every_reply_a_generation_step_asks_for_has_an_offline_writer() -> None:
    asked = _reply_schemas()
    assert asked, "no reply schema found"
    assert asked <= set(WRITERS), f"no offline writer for {sorted(asked - set(WRITERS))}"


@pytest.mark.parametrize("language", ["de", "ja"])
def test_a_question_in_another_language_is_in_the_documents_own_words(language: str) -> None:
    from language_corpus import GERMAN, JAPANESE

    text = {"de": GERMAN, "ja": JAPANESE}[language]
    prompt = inputs.build_prompt(_context([text]), 2, language=language)
    questions = inputs.parse(reply(prompt, inputs.batch_schema(inputs.InputsReply, 2)), 2)
    assert len(questions) == 2
    flat = "".join(text.split())
    for question in questions:
        assert question[-1] in "?？" and question[-2] not in "?？"
        assert "".join(question[:-1].split()) in flat  # the sentence itself, asked
    scores = input_filter.parse(
        reply(input_filter.build_prompt(questions, None), input_filter.FilterReply), 2
    )
    assert all(score.rewrite is None and not score.feedback for score in scores), scores


def test_the_offline_model_is_refused_as_a_judge_before_any_answer_is_scored() -> None:
    from synth.evaluate._specs import judge_models

    with pytest.raises(ConfigError, match="cannot judge"):
        judge_models(["strict=offline"])
