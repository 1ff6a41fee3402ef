"""Goldens worth keeping against a model that writes the usual faults at known rates.

A fake model that answers from the JSON schema alone (tests/faulty_replies.py) points 15% of its
questions at "the passage", copies ten words of its context as 10% of them, hedges 15% of its
answers and leaks the answer into 10% of its evolved questions. A run of 40 goldens must still
deliver exactly 40, at most one of them with such a fault, found by the checker below (which
shares no code with synth's checks), for at most 35% more requests than the same run against the
same model writing no faults.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import fake_openai
import pytest
from faulty_replies import HEDGE, RATES, FaultyModel

from synth import Synthesizer

GOLDENS = 40
TOPICS = [
    ("battery", "The Veltrana battery stores ten kilowatt hours in lithium iron phosphate cells"),
    ("inverter", "The hybrid inverter converts direct current from the roof into household power"),
    ("warranty", "The limited warranty covers manufacturing defects for twelve years after setup"),
    ("app", "The companion app reports hourly solar yield and battery charge on the dashboard"),
    ("backup", "During a grid outage the backup gateway isolates the home within half a second"),
    ("installer", "Certified installers mount the cabinet on a wall rated for ninety kilograms"),
    ("winter", "In freezing weather the cabinet heater keeps the cells above five degrees"),
    ("tariff", "The tariff planner charges the battery overnight when electricity is cheapest"),
    ("recycling", "At end of life the dealer collects the modules for certified recycling"),
    ("noise", "The cooling fan stays below thirty decibels except during rapid charging"),
]


PARTS = (
    "seals gaskets hinges latches filters vents brackets fuses relays sensors displays cables "
    "valves pumps fans meters switches clamps"
).split()
PLACES = "garage cellar attic porch shed kitchen hallway loft barn terrace utility workshop".split()
TASKS = (
    "inspect clean tighten replace calibrate photograph label measure lubricate test reset log"
).split()


def corpus(root: Path) -> Path:
    """Ten markdown files, each with forty sections of distinct sentences about one subject."""
    folder = root / "docs"
    folder.mkdir()
    for n, (name, fact) in enumerate(TOPICS):
        sections = []
        for part in range(40):
            a, b = PARTS[(n + part) % len(PARTS)], PARTS[(n * 3 + part + 5) % len(PARTS)]
            place, task = PLACES[(n + 2 * part) % len(PLACES)], TASKS[(part + n) % len(TASKS)]
            sentences = [
                f"{fact} when mounted in the {place}.",
                f"Owners should {task} the {a} near the {name} every {part + 2} weeks and note "
                f"the result in the logbook kept beside the {b}.",
                f"A technician examines the {b} of the {place} installation during the annual "
                f"visit and swaps worn {a} at no charge for {part + 3} years.",
            ]
            sections.append(f"## {name.title()} {a} in the {place}\n\n" + " ".join(sentences))
        text = f"# Veltrana {name} guide\n\n" + "\n\n".join(sections) + "\n"
        (folder / f"{name}_guide.md").write_text(text, encoding="utf-8")
    return folder


# ---- the independent checker: its own rules, none of synth's ------------------------------------

_TOKEN = re.compile(r"[a-z0-9]+")
_POINTS = re.compile(
    r"\b(?:the|this)\s+(?:passage|context|excerpt)\b|\bdoes\s+this\s+say\b", re.IGNORECASE
)


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def faults_of(golden: dict[str, Any]) -> list[str]:
    """The faults this golden carries, by the checker's own reading."""
    question, answer = golden["input"], golden.get("expected_output") or ""
    found = []
    if _POINTS.search(question):
        found.append("passage")
    words = _tokens(question)
    context = [" ".join(_tokens(c)) for c in golden.get("context") or []]
    windows = {" ".join(words[i : i + 8]) for i in range(len(words) - 7)}
    if any(w in c for w in windows for c in context):
        found.append("copied")
    if HEDGE.lower()[:30] in answer.lower() or "does not say" in answer.lower():
        found.append("hedged")
    long_answer = {w for w in _tokens(answer) if len(w) >= 4}
    shared = long_answer & set(words)
    if len(shared) >= 5 and len(shared) >= 0.7 * len(long_answer):
        found.append("leaked")
    return found


def run(tmp_path: Path, name: str, rates: dict[str, float]) -> tuple[list[dict], int, FaultyModel]:
    model = FaultyModel(rates, seed=7)
    with fake_openai.FakeOpenAI(reply=model) as server:
        synth = Synthesizer(
            "openai:fake-model",
            base_url=server.url,
            embedder="hash",
            run_dir=tmp_path / "run",
            cache=str(tmp_path / "cache.sqlite"),  # its own: no reply of the other run replayed
        )
        with synth:
            goldens = synth.generate_goldens_from_docs(str(corpus(tmp_path)), num_goldens=GOLDENS)
        requests = server.request_count("chat")
    return [g.model_dump() for g in goldens], requests, model


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("quality")
    (root / "faulty").mkdir()
    (root / "clean").mkdir()
    faulty = run(root / "faulty", "faulty", RATES)
    clean = run(root / "clean", "clean", {})
    return {"faulty": faulty, "clean": clean}


def test_the_checker_finds_each_fault_the_model_plants() -> None:
    context = ["The hybrid inverter converts direct current from the roof into household power."]
    clean = {"input": "What should an owner know about the inverter?", "context": context}
    assert faults_of({**clean, "expected_output": context[0]}) == []
    assert faults_of({**clean, "input": "What does the passage say about the inverter?"}) == [
        "passage"
    ]
    copied = "Is it true that the hybrid inverter converts direct current from the roof?"
    assert faults_of({**clean, "input": copied}) == ["copied"]
    assert faults_of({**clean, "expected_output": HEDGE + "it converts power."}) == ["hedged"]
    leaked = (
        "What about the inverter, given that hybrid inverter converts direct current roof "
        "household power?"
    )
    assert "leaked" in faults_of({**clean, "input": leaked, "expected_output": context[0]})


def test_a_faulty_model_still_gives_exactly_n_goldens_with_at_most_one_fault(
    runs: dict[str, Any],
) -> None:
    goldens, _, model = runs["faulty"]
    assert len(goldens) == GOLDENS
    # the model did write its faults: the run had to catch them
    assert all(model.planted[kind] >= 2 for kind in RATES), model.planted
    faulty = [(g["input"], faults_of(g)) for g in goldens if faults_of(g)]
    print(f"planted {dict(model.planted)}; delivered {len(goldens)}, with a fault {len(faulty)}")
    assert len(faulty) <= 1, faulty
    clean_goldens, _, _ = runs["clean"]
    assert len(clean_goldens) == GOLDENS and not [g for g in clean_goldens if faults_of(g)]


def test_catching_the_faults_costs_at_most_35_percent_more_requests(runs: dict[str, Any]) -> None:
    _, faulty, _ = runs["faulty"]
    _, clean, _ = runs["clean"]
    print(f"requests: faulty {faulty}, clean {clean}, ratio {faulty / clean:.3f}")
    assert faulty <= 1.35 * clean
