"""``synth gate`` through synth.cli.main: the verdict as an exit code, the baseline's checks, and
the CI outputs (JUnit XML validated against Jenkins' schema, the Markdown summary, JSON)."""

from __future__ import annotations

import json
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from lxml import etree

from synth import Dataset, Golden
from synth.cli import main
from synth.cli._exits import EXIT_ERROR, EXIT_OK, EXIT_PARTIAL, EXIT_WORSE
from synth.evaluate.gate import GateScores

SCHEMA = Path(__file__).parent / "data" / "junit-10.xsd"

USER_CODE = """
import json
from pathlib import Path

CALLS = Path("calls.txt")

def _n(question):
    with CALLS.open("a") as f:
        f.write("x")
    return int(question.split()[2])

def good(question):
    return str(2 * _n(question))

def worse(question):
    n = _n(question)
    return str(2 * n) if n % 3 else "no idea"

def slightly_worse(question):
    n = _n(question)
    return str(2 * n) if n != 4 else "no idea"

def flaky(question):
    n = _n(question)
    if n % 5 == 0:
        raise RuntimeError(f"backend down for {n}")
    return str(2 * n)

def worse_and_flaky(question):
    n = _n(question)
    if n == 5:
        raise RuntimeError("backend down for 5")
    return str(2 * n) if n % 3 else "no idea"

def leaky(question):
    n = _n(question)
    if n % 5 == 0:
        raise RuntimeError(
            "POST http://ci:hunter2pass@rag.internal/query failed, key sk-test-SECRETVALUE123"
        )
    return str(2 * n)

def judge(prompt, system):
    with Path("judge_calls.txt").open("a") as f:
        f.write("x")
    answer = prompt.split("<answer>\\n")[1].split("\\n</answer>")[0]
    return json.dumps({"reason": "", "score": 5 if any(c.isdigit() for c in answer) else 1})

def other_judge(prompt, system):
    return judge(prompt, system)
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A folder with a user module (a unique name) and 30 goldens; cwd is that folder."""
    module = f"gate_systems_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(USER_CODE), encoding="utf-8")
    goldens = [
        Golden(
            input=f"What is {n} + {n}?",
            expected_output=str(2 * n),
            context=[f"{n} + {n} = {2 * n}."],
        )
        for n in range(30)
    ]
    Dataset(goldens).save(tmp_path / "goldens.jsonl")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the command adds the cwd; undo it after
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return module


def gate(module: str, system: str, *extra: str) -> int:
    args = ["gate", "goldens.jsonl", "--system", f"{module}:{system}", "--baseline", "base.json"]
    judging = ["--judge", f"j={module}:judge", "--metric", "answer_relevance"]
    return main([*args, *judging, "--metric", "token_f1", *extra])


def validate(path: str | Path) -> etree._ElementTree:
    schema = etree.XMLSchema(etree.parse(str(SCHEMA)))
    document = etree.parse(str(path))
    assert schema.validate(document), schema.error_log
    return document


def test_the_same_system_passes_its_own_baseline(project, capsys) -> None:
    assert gate(project, "good", "--update-baseline") == EXIT_OK
    assert "wrote the baseline base.json: 30 items, token_f1, answer_relevance" in (
        capsys.readouterr().out
    )
    baseline = GateScores.read("base.json")
    assert baseline.metrics == ["token_f1", "answer_relevance"]
    assert baseline.judges["j"]["model"] == f"{project}.judge" and len(baseline.items) == 30
    assert gate(project, "good", "--json") == EXIT_OK
    result = json.loads(capsys.readouterr().out)
    assert result["passed"] is True and [m["delta"] for m in result["metrics"]] == [0.0, 0.0]


def test_a_worse_system_fails_with_exit_1_and_says_which_metric(project, capsys) -> None:
    assert gate(project, "good", "--update-baseline") == EXIT_OK
    capsys.readouterr()
    assert gate(project, "worse", "--junit", "gate.xml", "--summary", "gate.md") == EXIT_WORSE
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("synth: gate failed: token_f1 is worse by 0.333")
    assert "answer_relevance is worse by 0.333" in err[0] and err[0].endswith("(exit code 1)")
    assert "WORSE" in captured.out
    summary = Path("gate.md").read_text()
    assert "## synth gate: failed" in summary and "| token\\_f1 | 30 | 1.000 | 0.667 |" in summary


def test_a_drop_inside_the_noise_or_the_margin_passes(project, capsys) -> None:
    assert gate(project, "good", "--update-baseline") == EXIT_OK
    # one golden of 30 worse: its interval reaches zero
    assert gate(project, "slightly_worse") == EXIT_OK
    # a third worse, but within the margin given for each metric
    assert gate(project, "worse", "--margin", "0.4") == EXIT_OK
    assert gate(project, "worse", "--margin", "token_f1=0.4") == EXIT_WORSE  # relevance is not
    assert gate(project, "worse", "--margin", "0.4", "--margin", "answer_relevance=0.1") == (
        EXIT_WORSE
    )
    assert "answer_relevance is worse" in capsys.readouterr().err
    assert "token_f1 is worse" not in capsys.readouterr().err


def test_the_junit_report_validates_and_has_a_case_per_golden_and_metric(project) -> None:
    assert gate(project, "good", "--update-baseline") == EXIT_OK
    assert gate(project, "worse", "--junit", "gate.xml") == EXIT_WORSE
    document = validate("gate.xml")
    cases = document.findall(".//testcase")
    assert len(cases) == 1 + 30 * 2
    gate_case = cases[0]
    assert gate_case.get("name") == "gate" and gate_case.find("failure") is not None
    failing = {
        (c.get("classname"), c.get("name")) for c in cases[1:] if c.find("failure") is not None
    }
    assert ("synth.gate.token_f1", "3: What is 3 + 3?") in failing
    assert ("synth.gate.answer_relevance", "3: What is 3 + 3?") in failing
    assert len(failing) == 2 * 10  # the ten goldens that fell, under both metrics
    suite = document.find("testsuite")
    assert suite.get("tests") == "61" and suite.get("failures") == "21"


def test_a_passing_gate_writes_junit_with_no_failure(project) -> None:
    assert gate(project, "good", "--update-baseline") == EXIT_OK
    assert gate(project, "slightly_worse", "--junit", "gate.xml") == EXIT_OK
    document = validate("gate.xml")
    assert document.findall(".//failure") == []  # golden 4 fell, but the metric did not move


def test_failed_items_exit_3_and_are_errors_in_junit(project, capsys) -> None:
    assert gate(project, "good", "--update-baseline") == EXIT_OK
    capsys.readouterr()
    assert gate(project, "flaky", "--junit", "gate.xml") == EXIT_PARTIAL
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("synth: 6 of 30 items failed; the first, item 0: ")
    assert "backend down for 0" in err[0]
    document = validate("gate.xml")
    errors = [c for c in document.findall(".//testcase") if c.find("error") is not None]
    assert len(errors) == 6 * 2
    assert "backend down for 5" in errors[2].find("error").get("message")


def test_a_failing_systems_credentials_reach_no_gate_output(project, capsys) -> None:
    """The baseline is committed, the JUnit file and the summary are shown on the pull request, the
    error line is in a CI log: the system's error is in each, its credentials in none."""
    assert gate(project, "good", "--update-baseline") == EXIT_OK
    outputs = ["--junit", "gate.xml", "--summary", "summary.md"]
    assert gate(project, "leaky", *outputs) == EXIT_PARTIAL
    assert gate(project, "leaky", "--baseline", "leaky.json", "--update-baseline") == EXIT_PARTIAL
    err = capsys.readouterr().err
    for text in [
        err,
        *(Path(f).read_text("utf-8") for f in ("gate.xml", "summary.md", "leaky.json")),
    ]:
        assert "rag.internal/query failed" in text
        assert "hunter2pass" not in text and "SECRETVALUE123" not in text


def test_failed_items_while_making_a_baseline_exit_3_and_keep_the_baseline(project, capsys) -> None:
    assert gate(project, "flaky", "--update-baseline", "--json") == EXIT_PARTIAL
    captured = capsys.readouterr()
    assert "6 of 30 items failed" in captured.err
    assert json.loads(captured.out) == {
        "baseline": "base.json",
        "items": 30,
        "metrics": ["token_f1", "answer_relevance"],
        "failed_items": 6,
    }
    assert GateScores.read("base.json").failed_items == 6


def test_a_changed_dataset_is_one_line_before_the_system_is_called(project, capsys) -> None:
    assert gate(project, "good", "--update-baseline") == EXIT_OK
    calls = Path("calls.txt").stat().st_size
    dataset = Dataset.load("goldens.jsonl")
    dataset.goldens[3].expected_output = "7"
    dataset.save("goldens.jsonl")
    capsys.readouterr()
    assert gate(project, "good") == EXIT_ERROR
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "synth: error: the dataset changed since base.json was made (30 items then, 30 now"
    )
    assert err[0].endswith("make a new baseline with --update-baseline")
    assert Path("calls.txt").stat().st_size == calls  # nothing paid for a comparison refused


def paid() -> tuple[int, int]:
    """How many times the system and the judge were called so far."""
    return tuple(Path(f).stat().st_size if Path(f).exists() else 0 for f in ("calls.txt", "judge_calls.txt"))  # fmt: skip


def test_a_changed_judge_is_one_line_before_anything_is_paid(project, capsys) -> None:
    assert gate(project, "good", "--update-baseline") == EXIT_OK
    before = paid()
    capsys.readouterr()
    args = ["gate", "goldens.jsonl", "--system", f"{project}:good", "--baseline", "base.json"]
    code = main(
        [
            *args,
            "--judge",
            f"j={project}:other_judge",
            "--metric",
            "answer_relevance",
            "--metric",
            "token_f1",
        ]
    )
    assert code == EXIT_ERROR
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"synth: error: judge 'j' changed since base.json was made (model: model='{project}.judge' "
        f"then, model='{project}.other_judge' now); if that is meant, make a new baseline with "
        "--update-baseline"
    ]
    code = main(
        [
            *args,
            "--judge",
            f"k={project}:judge",
            "--metric",
            "answer_relevance",
            "--metric",
            "token_f1",
        ]
    )
    assert code == EXIT_ERROR
    assert "the judges changed since base.json was made (judges j then, k now)" in (
        capsys.readouterr().err
    )
    assert paid() == before  # neither the system nor a judge was called for a refused run


def test_a_metric_the_baseline_lacks_is_one_line(project, capsys) -> None:
    assert main(["gate", "goldens.jsonl", "--system", f"{project}:good", "--baseline", "base.json",
                 "--metric", "token_f1", "--update-baseline"]) == EXIT_OK  # fmt: skip
    capsys.readouterr()
    before = paid()
    assert gate(project, "good") == EXIT_ERROR
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "base.json has no scores for answer_relevance (it scored token_f1)" in err[0]
    assert paid() == before


@pytest.mark.parametrize(
    ("write", "args", "line"),
    [
        (None, [], "synth: error: no baseline at base.json: make one with --update-baseline"),
        (
            '{"kind": "answers"}',
            [],
            "synth: error: base.json: not a synth gate baseline (written by --update-baseline)",
        ),
        (
            '{"kind": "synth-gate-scores", "format": 1, "dataset": "x"}',
            [],
            "synth: error: base.json: invalid gate baseline at n_items: Field required",
        ),
        (
            "{}",
            ["--margin", "lots"],
            "synth: error: --margin takes X or METRIC=X with X a number >= 0, got 'lots'",
        ),
        (
            "{}",
            ["--margin", "-0.1"],
            "synth: error: --margin takes X or METRIC=X with X a number >= 0, got '-0.1'",
        ),
    ],
)
def test_bad_input_is_one_line(project, capsys, write, args, line) -> None:
    if write is not None:
        Path("base.json").write_text(write)
    assert gate(project, "good", *args) == EXIT_ERROR
    assert capsys.readouterr().err.strip().splitlines() == [line]


def test_a_margin_for_a_metric_not_gated_is_one_line(project, capsys) -> None:
    assert gate(project, "good", "--update-baseline") == EXIT_OK
    capsys.readouterr()
    assert gate(project, "good", "--margin", "faithfulness=0.1") == EXIT_ERROR
    assert capsys.readouterr().err.strip().splitlines() == [
        "synth: error: --margin names faithfulness, not a gated metric (token_f1, answer_relevance)"
    ]


def test_stored_answers_are_gated_without_a_system(project, capsys) -> None:
    dataset = Dataset.load("goldens.jsonl")
    for n, golden in enumerate(dataset):
        golden.actual_output = str(2 * n)
    dataset.save("answered.jsonl")
    for n, golden in enumerate(dataset):
        golden.actual_output = str(2 * n) if n % 2 else "?"
    dataset.save("answered_worse.jsonl")
    base = ["--baseline", "base.json", "--metric", "exact_match"]
    assert main(["gate", "answered.jsonl", *base, "--update-baseline"]) == EXIT_OK
    assert main(["gate", "answered.jsonl", *base]) == EXIT_OK
    assert main(["gate", "answered_worse.jsonl", *base]) == EXIT_WORSE  # same goldens, new answers


def test_the_summary_goes_to_the_github_step_summary(project, monkeypatch) -> None:
    step = Path("step_summary.md")
    step.write_text("# earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    assert gate(project, "good", "--update-baseline") == EXIT_OK
    assert gate(project, "worse") == EXIT_WORSE
    text = step.read_text()
    assert text.startswith("# earlier step\n## synth gate: failed ❌")  # appended, as GitHub asks
    assert "**Verdict:** gate failed: token\\_f1 is worse by 0.333" in text


def test_a_judge_reply_cache_makes_a_rerun_cost_no_judge_call(project) -> None:
    assert gate(project, "good", "--update-baseline", "--cache", "judge.sqlite") == EXIT_OK
    calls = Path("judge_calls.txt").stat().st_size
    assert calls == 30
    assert gate(project, "good", "--cache", "judge.sqlite", "--json") == EXIT_OK
    assert Path("judge_calls.txt").stat().st_size == calls  # every reply came from the file


def test_a_metric_that_does_not_apply_is_a_skipped_case(project) -> None:
    dataset = Dataset.load("goldens.jsonl")
    dataset.goldens[7].expected_output = None  # token_f1 needs a reference
    dataset.save("goldens.jsonl")
    assert gate(project, "good", "--update-baseline") == EXIT_OK
    assert gate(project, "good", "--junit", "gate.xml") == EXIT_OK
    document = validate("gate.xml")
    skipped = [c for c in document.findall(".//testcase") if c.find("skipped") is not None]
    assert [(c.get("name"), c.find("skipped").get("message")) for c in skipped] == [
        ("7: What is 7 + 7?", "token_f1: no reference")
    ]
    assert document.find("testsuite").get("skipped") == "1"


def test_an_output_in_a_missing_folder_is_refused_before_anything_is_scored(
    project, capsys
) -> None:
    assert gate(project, "good", "--update-baseline") == EXIT_OK
    calls = Path("calls.txt").stat().st_size
    capsys.readouterr()
    assert gate(project, "good", "--junit", "reports/gate.xml") == EXIT_ERROR
    assert capsys.readouterr().err.strip().splitlines() == [
        "synth: error: --junit reports/gate.xml: the folder reports does not exist"
    ]
    Path("reports").write_text("")  # a file where the folder should be
    assert gate(project, "good", "--summary", "reports/gate.md") == EXIT_ERROR
    assert capsys.readouterr().err.strip().splitlines() == [
        "synth: error: --summary reports/gate.md: the folder reports is a file, not a folder"
    ]
    assert Path("calls.txt").stat().st_size == calls


def test_a_new_baseline_makes_its_folder(project) -> None:
    assert gate(project, "good", "--baseline", "ci/base.json", "--update-baseline") == EXIT_OK
    assert Path("ci/base.json").is_file()
    assert gate(project, "good", "--baseline", "ci/base.json") == EXIT_OK


def test_a_changed_rubric_is_one_line(project, capsys) -> None:
    args = ["gate", "goldens.jsonl", "--system", f"{project}:good", "--baseline", "base.json"]
    args += ["--judge", f"j={project}:judge", "--text-metric", "none"]
    assert main([*args, "--criteria", "numeric=The answer is a number.", "--update-baseline"]) == 0
    capsys.readouterr()
    assert main([*args, "--criteria", "numeric=The answer is a number."]) == EXIT_OK
    before = paid()
    assert main([*args, "--criteria", "numeric=The answer is short."]) == EXIT_ERROR
    assert paid() == before
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "synth: error: the rubric of 'numeric' changed since base.json was made; if that is "
        "meant, make a new baseline with --update-baseline"
    )


def test_text_metrics_are_gated_without_the_baselines_judges(project, capsys) -> None:
    assert gate(project, "good", "--update-baseline") == EXIT_OK
    args = ["gate", "goldens.jsonl", "--baseline", "base.json", "--metric", "token_f1"]
    assert main([*args, "--system", f"{project}:good"]) == EXIT_OK  # no judge: no judge changed
    assert main([*args, "--system", f"{project}:worse"]) == EXIT_WORSE


def test_no_system_and_no_stored_answers_is_one_line_before_anything_is_written(
    project, capsys
) -> None:
    args = ["gate", "goldens.jsonl", "--baseline", "base.json", "--metric", "token_f1"]
    assert main([*args, "--update-baseline"]) == EXIT_ERROR
    assert capsys.readouterr().err.strip().splitlines() == [
        "synth: error: goldens.jsonl: no golden has a stored answer (actual_output) to score; "
        "name the system with --system MODULE:FUNCTION"
    ]
    assert not Path("base.json").exists()


def test_a_gate_that_compares_no_golden_is_an_error_not_a_pass(project, capsys) -> None:
    assert gate(project, "good", "--update-baseline") == EXIT_OK
    baseline = json.loads(Path("base.json").read_text())
    for item in baseline["items"]:  # a baseline that scored nothing (made by hand, or old)
        item["scores"] = {metric: None for metric in item["scores"]}
    Path("base.json").write_text(json.dumps(baseline))
    capsys.readouterr()
    assert gate(project, "good", "--junit", "gate.xml") == EXIT_ERROR
    assert capsys.readouterr().err.strip().splitlines() == [
        "synth: error: nothing to compare: no golden has a score both in base.json and in this "
        "run (0 of 30 scored then, 30 of 30 now)"
    ]
    assert not Path("gate.xml").exists()  # no report says "passed"


@pytest.mark.parametrize(
    ("flags", "named"),
    [(["--metric", "faithfulness"], "faithfulness"), (["--criteria", "x=Short."], "--criteria")],
)
def test_a_judged_metric_without_a_judge_is_one_line(project, capsys, flags, named) -> None:
    args = ["gate", "goldens.jsonl", "--system", f"{project}:good", "--baseline", "base.json"]
    assert main([*args, *flags, "--update-baseline"]) == EXIT_ERROR
    assert capsys.readouterr().err.strip().splitlines() == [
        f"synth: error: {named} needs a judge: name one with --judge [NAME=]provider:model (or "
        "MODULE:FUNCTION)"
    ]
    assert not Path("calls.txt").exists()  # refused before the system was called


@pytest.mark.parametrize(
    ("metric", "hint"),
    [("token_f", "did you mean 'token_f1'"), ("faithfulnes", "did you mean 'faithfulness'")],
)
def test_a_metric_typo_is_said_as_one_not_as_a_metric_that_needs_a_judge(
    project, capsys, metric, hint
) -> None:
    args = ["gate", "goldens.jsonl", "--system", f"{project}:good", "--baseline", "base.json"]
    assert main([*args, "--metric", metric, "--update-baseline"]) == EXIT_ERROR
    assert capsys.readouterr().err.strip().splitlines() == [
        f"synth: error: --metric {metric}: unknown metric ({hint})"
    ]
    assert not Path("calls.txt").exists()


def test_a_worse_metric_exits_1_even_when_items_failed_too(project, capsys) -> None:
    assert gate(project, "good", "--update-baseline") == EXIT_OK
    capsys.readouterr()
    assert gate(project, "worse_and_flaky", "--junit", "gate.xml") == EXIT_WORSE
    assert capsys.readouterr().err.startswith("synth: gate failed: token_f1 is worse by")
    errors = [c for c in validate("gate.xml").findall(".//testcase") if c.find("error") is not None]
    assert len(errors) == 2  # golden 5, under both metrics


@pytest.mark.parametrize("name", ["base.jsonl", "goldens.jsonl", "base.csv"])
def test_a_baseline_that_cannot_be_one_document_is_refused_before_anything_is_scored(
    project, capsys, name
) -> None:
    for extra in (["--update-baseline"], []):
        assert gate(project, "good", "--baseline", name, *extra) == EXIT_ERROR
        assert capsys.readouterr().err.strip().splitlines() == [
            f"synth: error: --baseline {name}: a gate baseline is one document, .json, .yaml "
            "or .toml"
        ]
    assert not Path("calls.txt").exists()


def test_the_verdict_counts_one_item_and_one_metric_in_the_singular() -> None:
    from synth.evaluate.gate import GateResult

    assert GateResult(passed=True, n_items=1).verdict().endswith("(0 metrics, 1 item)")
    assert GateResult(passed=True, n_items=30).verdict().endswith("(0 metrics, 30 items)")
