"""Coverage end to end: ``uniform`` gives one large and nine small files the same share of the
goldens, the plan writes each file's target, the run meets it, and the manifest, ``--json`` and
``--plan`` report every file's goldens and shortfall; the setting is read from a pipeline file."""

from __future__ import annotations

import hashlib
import json
import random
import string
from collections.abc import Callable
from pathlib import Path

import pytest
from synth_replies import Replies, stage_of

from synth import FunctionModel, Synthesizer
from synth.cli import main
from synth.contexts.config import ContextConstructionConfig


def write_corpus(folder: Path, tiny: str | None = None) -> Path:
    """One large file (20 paragraphs) and nine small ones (3 paragraphs; ``tiny`` has only two
    sentences, one chunk): made-up words, so no two files' questions look alike to the hash
    embedder."""
    rng = random.Random(0)

    def paragraph(sentences: int = 12) -> str:
        words = [
            "".join(rng.choices(string.ascii_lowercase, k=rng.randint(4, 9)))
            for _ in range(9 * sentences)
        ]
        return " ".join(
            " ".join(words[i : i + 9]).capitalize() + "." for i in range(0, len(words), 9)
        )

    folder.mkdir()
    (folder / "big.txt").write_text("\n\n".join(paragraph() for _ in range(20)))
    for i in range(9):
        name = f"small{i}.txt"
        text = paragraph(2) if name == tiny else "\n\n".join(paragraph() for _ in range(3))
        (folder / name).write_text(text)
    return folder


def synthesizer(coverage: str) -> Synthesizer:
    config = ContextConstructionConfig(chunk_size=128, coverage=coverage)  # type: ignore[arg-type]
    return Synthesizer(
        FunctionModel(Replies(), name="replies"),
        embedder="hash",
        context_construction_config=config,
    )


def rows(coverage: dict) -> dict[str, dict]:
    return {Path(f["source"]).name: f for f in coverage["files"]}


def test_uniform_coverage_gives_every_file_its_share_and_the_plan_said_so(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs")
    synth = synthesizer("uniform")
    plan = synth.plan_from_docs(docs, num_goldens=40)
    assert plan.coverage is not None and plan.coverage.rule == "uniform"
    planned = {Path(f.source).name: f.target for f in plan.coverage.files}
    assert planned == {name: 4 for name in ["big.txt", *(f"small{i}.txt" for i in range(9))]}
    assert plan.coverage.files_covered == plan.coverage.files_ingested == 10

    dataset = synth.generate_goldens_from_docs(docs, num_goldens=40)
    assert len(dataset) == 40
    coverage = synth.manifest["coverage"]
    delivered = {name: f["delivered"] for name, f in rows(coverage).items()}
    assert all(abs(n - 4) <= 1 for n in delivered.values()), delivered  # the acceptance test
    assert delivered == planned  # nothing was dropped: met exactly
    per_file: dict[str, int] = {}
    for golden in dataset:
        name = Path(golden.source_files[0]).name
        per_file[name] = per_file.get(name, 0) + 1
    assert per_file == delivered  # the manifest counts the dataset's own goldens
    assert coverage["files_covered"] == coverage["files_ingested"] == 10
    assert coverage["seed_chunks"] == 20 and coverage["chunks_stored"] > 20
    assert all(f["shortfall"] == 0 for f in coverage["files"])


def test_proportional_coverage_stays_as_today_most_goldens_from_the_large_file(
    tmp_path: Path,
) -> None:
    docs = write_corpus(tmp_path / "docs")
    synth = synthesizer("proportional")
    dataset = synth.generate_goldens_from_docs(docs, num_goldens=40)
    assert len(dataset) == 40
    delivered = {name: f["delivered"] for name, f in rows(synth.manifest["coverage"]).items()}
    assert delivered["big.txt"] == 22
    assert all(delivered[f"small{i}.txt"] == 2 for i in range(9))


def test_a_file_without_chunks_enough_is_reported_short_in_the_plan_and_the_manifest(
    tmp_path: Path,
) -> None:
    docs = write_corpus(tmp_path / "docs", "small3.txt")  # one paragraph: one chunk
    synth = synthesizer("uniform")
    plan = synth.plan_from_docs(docs, num_goldens=40)
    assert plan.coverage is not None
    short = [(Path(f.source).name, f.share, f.target, f.shortfall) for f in plan.coverage.short]
    assert short == [("small3.txt", 4, 2, 2)]
    assert any("small3.txt 2 of 4 (1 chunk)" in note for note in plan.notes)
    assert plan.to_json()["coverage"]["files"]  # --plan --json carries the rows

    dataset = synth.generate_goldens_from_docs(docs, num_goldens=40)
    assert len(dataset) == 40  # the others made up for it
    files = rows(synth.manifest["coverage"])
    assert (files["small3.txt"]["delivered"], files["small3.txt"]["shortfall"]) == (2, 2)
    assert sum(f["delivered"] for f in files.values()) == 40


def test_coverage_is_read_from_a_pipeline_file_and_shown_by_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = write_corpus(tmp_path / "docs", "small3.txt")
    pipeline = tmp_path / "even.toml"
    pipeline.write_text(
        '[models]\nembedder = "hash"\n[contexts]\ncoverage = "uniform"\nchunk_size = 128\n'
    )
    assert Synthesizer.from_pipeline(pipeline).context_construction_config.coverage == "uniform"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-coverage-not-a-real-key")
    args = ["generate", str(docs), "--pipeline", str(pipeline), "--goldens", "40", "--plan"]
    assert main([*args, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["coverage"]["rule"] == "uniform"
    assert rows(plan["coverage"])["small3.txt"]["shortfall"] == 2
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "coverage (uniform): 10 of 10 files" in out
    assert "small3.txt" in out and "cannot give the uniform share" in out


def run_dropping(
    docs: Path,
    coverage: str,
    where: Path,
    *,
    fail: Callable[[str], str | None] | None = None,
    delay: Callable[[str], float] | None = None,
) -> tuple[Synthesizer, list[str]]:
    """A run of 40 goldens whose model drops seeds and inputs; its goldens' inputs, in order."""
    config = ContextConstructionConfig(chunk_size=128, coverage=coverage)  # type: ignore[arg-type]
    synth = Synthesizer(
        FunctionModel(Replies(fail=fail, delay=delay), name="replies"),
        embedder="hash",
        context_construction_config=config,
        run_dir=where / "run",
        cache=None,
    )
    dataset = synth.generate_goldens_from_docs(docs, num_goldens=40)
    assert len(dataset) == 40
    return synth, [g.input for g in dataset]


def test_a_drop_is_replaced_from_its_own_file_so_every_uniform_target_is_met(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The critic rejects 30% of the passages and the filter 30% of the inputs: without the
    per-file quotas, replacements came from the next seats (uniform gave 0, 2 and 6 goldens to
    some files); with them every file gets exactly its target, in the same goldens whatever
    order the requests come back in."""
    coverage = "uniform"
    monkeypatch.setenv("SYNTH_REPLIES_REJECT", "0.3")
    monkeypatch.setenv("SYNTH_REPLIES_VAGUE", "0.3")
    docs = write_corpus(tmp_path / "docs")
    synth, inputs = run_dropping(docs, coverage, tmp_path / "a", delay=lambda p: _spread(p))
    files = rows(synth.manifest["coverage"])
    assert {n: f["delivered"] for n, f in files.items()} == {
        n: f["target"] for n, f in files.items()
    }
    assert all(f["shortfall"] == 0 for f in files.values())
    assert sum(f["target"] for f in files.values()) == 40
    rejects = (tmp_path / "a" / "run" / "rejects.jsonl").read_text()
    assert "below_quality_threshold" in rejects  # seeds were dropped on the way
    _, again = run_dropping(docs, coverage, tmp_path / "b", delay=lambda p: 0.01 - _spread(p))
    assert again == inputs  # the requests came back in another order: the same goldens


def _spread(prompt: str) -> float:
    """A delay in [0, 0.01) s fixed by the prompt, to shuffle the order replies come back in."""
    return int(hashlib.sha256(prompt.encode()).hexdigest()[:6], 16) / 2**24 * 0.01


def test_a_file_that_cannot_give_its_share_is_made_up_for_by_the_others_and_reported(
    tmp_path: Path,
) -> None:
    """Every inputs request for small2.txt's passages gets a reply that is not JSON, so that
    file can give nothing: the quotas are lifted once nothing else can come, the goldens the
    other files' held contexts gave fill the run to 40, and the file's shortfall is reported."""
    docs = write_corpus(tmp_path / "docs")
    sentences = [s[:30] for s in (docs / "small2.txt").read_text().split(". ") if len(s) > 30]

    def fail(prompt: str) -> str | None:
        if stage_of(prompt) == "inputs" and any(s in prompt for s in sentences):
            return "I cannot answer in JSON today."
        return None

    synth, _ = run_dropping(docs, "uniform", tmp_path, fail=fail)
    files = rows(synth.manifest["coverage"])
    assert (files["small2.txt"]["delivered"], files["small2.txt"]["shortfall"]) == (0, 4)
    assert sum(f["delivered"] for f in files.values()) == 40
    assert all(f["delivered"] >= 4 for n, f in files.items() if n != "small2.txt")
