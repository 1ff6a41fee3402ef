"""The evaluate, compare and benchmark commands, through synth.cli.main, with a user module."""

from __future__ import annotations

import json
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from synth import (
    AnswerEvaluation,
    BenchmarkResult,
    Comparison,
    Dataset,
    Golden,
    RetrievalEvaluation,
)
from synth.cli import main

USER_CODE = """
import json

def good(question):
    n = int(question.split()[2])
    return str(2 * n)

def sloppy(question):
    n = int(question.split()[2])
    return str(2 * n) if n % 2 else "no idea"

def guess(question):
    n = int(question.split()[2])
    return f"about {2 * n + 1}"

def broken(question):
    n = int(question.split()[2])
    if n % 3 == 0:
        raise RuntimeError(f"backend down for {n}")
    return str(2 * n)

def retriever(question):
    n = int(question.split()[2])
    return [f"chunk-{n}", "chunk-x"] if n % 2 else ["chunk-x", f"chunk-{n}"]

def judge(prompt, system):
    if '"claims"' in prompt:
        quote = prompt.split('<context index="1">\\n')[1].split('\\n</context>')[0]
        verdict = {"index": 1, "evidence": quote, "supported": True}
        return json.dumps({"claims": ["c"], "verdicts": [verdict]})
    answer = prompt.split("<answer>\\n")[1].split("\\n</answer>")[0]
    return json.dumps({"score": 5 if any(c.isdigit() for c in answer) else 1, "reason": ""})
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A folder with a user module (a unique name) and a saved dataset; cwd is that folder."""
    module = f"user_systems_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(USER_CODE), encoding="utf-8")
    goldens = [
        Golden(
            input=f"What is {n} + {n}?",
            expected_output=str(2 * n),
            context=[f"{n} + {n} = {2 * n}."],
            context_ids=[f"chunk-{n}"],
        )
        for n in range(6)
    ]
    Dataset(goldens).save(tmp_path / "goldens.jsonl")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the command adds the cwd; undo it after
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path, module


def test_evaluate_writes_a_report_and_prints_tables(project, capsys) -> None:
    folder, module = project
    code = main([
        "evaluate", "goldens.jsonl", "--system", f"{module}:sloppy", "--judge", f"j={module}:judge",
        "-o", "sloppy.json",
    ])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    report = AnswerEvaluation.read(folder / "sloppy.json")
    assert report.metrics["exact_match"] == 0.5
    assert report.metrics["answer_relevance"] == 0.5
    assert report.metrics["faithfulness"] == 1.0
    assert report.config["system"] == f"{module}.sloppy"
    assert set(report.judges) == {"j"} and report.usage["j"]["responses"] == 12
    assert "answer_relevance/j" not in out  # one judge: one row per metric, named in "judges"
    for text in (
        "exact_match",
        "95% CI",
        "6/6",
        "judges",
        "wrote sloppy.json",
    ):
        assert text in out


def test_one_judge_shows_one_row_per_metric_in_evaluate_and_compare(project, capsys) -> None:
    folder, module = project
    for name in ("good", "sloppy"):
        args = ["evaluate", "goldens.jsonl", "--system", f"{module}:{name}"]
        assert main([*args, "--judge", f"{module}:judge", "-o", f"{name}.json"]) == 0
        out = capsys.readouterr().out
        rows = [line.split()[1] for line in out.splitlines() if line.startswith("│ ")]
        assert rows.count("faithfulness") == 1 and not [r for r in rows if "/" in r], out
        assert f"faithfulness/{module}" not in out and f"│ {module}:judge" not in out
        assert "judges" in out and "judge " in out  # the judges table names it once
    assert main(["compare", "sloppy.json", "good.json"]) == 0
    rows = [
        line.split()[1] for line in capsys.readouterr().out.splitlines() if line.startswith("│ ")
    ]
    assert rows == ["exact_match", "token_f1", "faithfulness", "answer_relevance"]


def test_evaluate_json_output_and_stored_answers(project, capsys) -> None:
    folder, module = project
    Dataset([Golden(input="What is 1 + 1?", expected_output="2", actual_output="2")]).save(
        folder / "answered.json"
    )
    assert main(["evaluate", "answered.json", "--json", "--text-metric", "exact_match"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["kind"] == "answers" and document["metrics"] == {"exact_match": 1.0}
    assert document["config"]["system"] == "stored answers"


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_goldens_without_answers_and_no_system_are_refused_not_scored_as_a_pass(
    project, capsys, json_flag
) -> None:
    """Every metric would score nothing: exit 0 and a table of dashes read as a pass in CI."""
    folder, module = project
    code = main(["evaluate", "goldens.jsonl", "-o", "nothing.json", *json_flag])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and not (folder / "nothing.json").exists()
    assert captured.err == (
        "synth: error: nothing was scored: none of the 6 goldens has a stored answer "
        "(actual_output) to score: pass --system module:function to ask your system, or a file "
        "of answered goldens\n"
    )


EVALUATE = ["evaluate", "{data}", "--system", "{module}:good", "-o", "out.json"]
RETRIEVE = ["evaluate", "{data}", "--retriever", "{module}:retriever", "-o", "out.json"]
BENCHMARK = ["benchmark", "{data}", "--system", "a={module}:good", "--system", "b={module}:guess"]
BASELINE = ["gate", "{data}", "--system", "{module}:good", "--baseline", "out.json"]
BASELINE += ["--update-baseline"]
NO_GOLDENS = "nothing to score: empty.jsonl holds no goldens"
NONE_ACCEPTED = "nothing to score: no golden of goldens.jsonl is accepted (6 pending); review"


@pytest.mark.parametrize(
    ("command", "data", "status", "says"),
    [
        (EVALUATE, "empty.jsonl", "all", NO_GOLDENS),
        (RETRIEVE, "empty.jsonl", "all", NO_GOLDENS),
        (BENCHMARK, "empty.jsonl", None, NO_GOLDENS),
        (BASELINE, "empty.jsonl", "all", NO_GOLDENS),
        (EVALUATE, "goldens.jsonl", "accepted", NONE_ACCEPTED),
        (RETRIEVE, "goldens.jsonl", "accepted", NONE_ACCEPTED),
        (BASELINE, "goldens.jsonl", "accepted", NONE_ACCEPTED),
    ],
    ids=lambda v: v[0] if isinstance(v, list) else None,
)
def test_nothing_to_score_is_refused_not_scored_as_a_pass(
    project, capsys, command, data, status, says
) -> None:
    """An empty dataset, or a review filter nothing passes (CI's --status accepted before anyone
    reviewed), printed a table of dashes (or wrote a baseline of no item) with exit 0."""
    folder, module = project
    (folder / "empty.jsonl").write_text("")
    argv = [part.format(data=data, module=module) for part in command]
    code = main([*argv, *(["--status", status] if status else [])])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and not (folder / "out.json").exists()
    assert captured.err.startswith(f"synth: error: {says}"), captured.err
    assert len(captured.err.splitlines()) == 1


@pytest.mark.parametrize(
    ("command", "output", "says"),
    [
        (["evaluate"], "scores.txt", "scores.txt: unknown report suffix '.txt'"),
        # the suffixes a benchmark takes, not a report's (.jsonl is refused for it)
        (
            ["benchmark"],
            "board.txt",
            "board.txt: unknown suffix '.txt'; a benchmark is one document: write it as .json, "
            ".yaml or .toml",
        ),
        (["benchmark"], "board.jsonl", "a benchmark is one document"),
        (["evaluate"], "goldens.jsonl/s.json", "goldens.jsonl/s.json: goldens.jsonl is a file,"),
        (["benchmark"], "goldens.jsonl/b.json", "goldens.jsonl/b.json: goldens.jsonl is a file,"),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_any_system_is_asked(
    project, capsys, command, output, says
) -> None:
    folder, _ = project
    asked = folder / "asked.txt"
    module = f"counted_{uuid.uuid4().hex[:8]}"
    (folder / f"{module}.py").write_text(
        "import pathlib\n"
        f"def answer(question):\n    pathlib.Path({str(asked)!r}).touch()\n    return '0'\n"
    )
    systems = ["--system", f"{module}:answer"]
    if command == ["benchmark"]:
        systems = ["--system", f"a={module}:answer", "--system", f"b={module}:answer"]
    code = main([*command, "goldens.jsonl", *systems, "-o", output])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"synth: error: {says}"), err
    assert not asked.exists()  # no answer asked for, nothing paid to be lost


def test_compare_refuses_an_output_that_cannot_hold_the_comparison_before_reading(
    project, capsys
) -> None:
    code = main(["compare", "missing-a.json", "missing-b.json", "-o", "c.jsonl"])
    err = capsys.readouterr().err
    assert code == 2 and err == (
        "synth: error: a comparison is one document: write it as .json, .yaml or .toml\n"
    )
    code = main(["compare", "missing-a.json", "missing-b.json", "-o", "goldens.jsonl/c.json"])
    err = capsys.readouterr().err
    assert code == 2 and err == (
        "synth: error: goldens.jsonl/c.json: goldens.jsonl is a file, not a folder\n"
    )


def test_evaluate_a_retriever(project, capsys) -> None:
    folder, module = project
    code = main(["evaluate", "goldens.jsonl", "--retriever", f"{module}:retriever", "-k", "1", "-k", "2",
                 "-o", "retrieval.toml"])  # fmt: skip
    assert code == 0
    report = RetrievalEvaluation.read(folder / "retrieval.toml")
    assert report.metrics["hit_rate@1"] == 0.5 and report.metrics["hit_rate@2"] == 1.0
    assert report.metrics["mrr"] == pytest.approx(0.75)
    assert "hit_rate@1" in capsys.readouterr().out


def test_compare_two_reports(project, capsys) -> None:
    folder, module = project
    for name in ("good", "sloppy"):
        assert (
            main(
                ["evaluate", "goldens.jsonl", "--system", f"{module}:{name}", "-o", f"{name}.jsonl"]
            )
            == 0
        )
    capsys.readouterr()
    assert main(["compare", "sloppy.jsonl", "good.jsonl", "-o", "comparison.yaml"]) == 0
    out = capsys.readouterr().out
    assert "good vs sloppy" in out and "exact_match" in out and "0.500" in out
    comparison = Comparison.read(folder / "comparison.yaml")
    assert comparison["exact_match"].delta == 0.5 and comparison[
        "exact_match"
    ].p_value == pytest.approx(0.25)
    assert main(["compare", "sloppy.jsonl", "good.jsonl", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"][0]["metric"] == "exact_match"


def test_compare_with_no_item_scored_in_both_reports_is_refused_not_shown_as_no_change(
    project, capsys
) -> None:
    folder, module = project
    Dataset([Golden(input=f"What is {n} + {n}?", expected_output=str(2 * n)) for n in (0, 3)]).save(
        folder / "multiples.jsonl"
    )
    evaluate = ["evaluate", "multiples.jsonl", "--system"]
    assert main([*evaluate, f"{module}:good", "-o", "good.json"]) == 0
    assert main([*evaluate, f"{module}:broken", "-o", "down.json"]) == 3  # every item failed
    assert (
        main(["evaluate", "goldens.jsonl", "--retriever", f"{module}:retriever", "-o", "r.json"])
        == 0
    )
    capsys.readouterr()
    code = main(["compare", "good.json", "down.json", "-o", "comparison.json"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and not (folder / "comparison.json").exists()
    assert captured.err == (
        "synth: error: nothing to compare: no item has a score in both good.json and down.json "
        "(2 item ids in both, of 2 and 2; items that failed have no score)\n"
    )
    assert main(["compare", "good.json", "r.json"]) == 2
    assert "have no metric in common" in capsys.readouterr().err


def test_benchmark_two_systems(project, capsys) -> None:
    folder, module = project
    code = main([
        "benchmark", "goldens.jsonl", "--system", f"sloppy={module}:sloppy", "--system", f"good={module}:good",
        "--judge", f"{module}:judge", "--metric", "answer_relevance", "-o", "bench.json",
    ])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    result = BenchmarkResult.read(folder / "bench.json")
    assert [row.system for row in result.leaderboard] == ["good", "sloppy"]
    assert result.usage["judge"]["cached_responses"] == 3  # sloppy's right answers were judged once
    assert result.rank_by == "answer_relevance"
    assert "leaderboard (ranked by answer_relevance; ties by token_f1, exact_match)" in out
    assert "pairwise comparisons" in out
    assert "delta (b - a)" in out and "95% CI" in out
    assert "judge replies over all systems: judge 12 (3 cached)" in out


def test_benchmark_with_judges_ranks_by_their_metrics(project, capsys) -> None:
    """sloppy matches the references more often; the judge prefers guess: the judge ranks."""
    folder, module = project
    code = main([
        "benchmark", "goldens.jsonl", "--system", f"sloppy={module}:sloppy",
        "--system", f"guess={module}:guess", "--judge", f"{module}:judge", "-o", "bench.json",
    ])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    result = BenchmarkResult.read(folder / "bench.json")
    assert result.rank_by == "faithfulness"  # the first judge metric; a tie here
    assert result.tie_breakers == ["answer_relevance", "token_f1", "exact_match"]
    assert [row.system for row in result.leaderboard] == ["guess", "sloppy"]
    board = result.leaderboard
    assert board[0].metrics["exact_match"] == 0.0 < board[1].metrics["exact_match"]
    title = "leaderboard (ranked by faithfulness; ties by answer_relevance, token_f1, exact_match)"
    assert title in out


def test_benchmark_without_judges_ranks_by_token_f1_and_keeps_ties_in_order(
    project, capsys
) -> None:
    folder, module = project
    specs = [f"{name}={module}:{fn}" for name, fn in (("z", "guess"), ("b", "good"), ("a", "good"))]
    args = ["benchmark", "goldens.jsonl", *(f"--system={s}" for s in specs), "-o", "bench.json"]
    assert main(args) == 0
    result = BenchmarkResult.read(folder / "bench.json")
    assert result.rank_by == "token_f1" and result.tie_breakers == ["exact_match"]
    assert [row.system for row in result.leaderboard] == ["b", "a", "z"]  # b and a tie: as given
    assert "leaderboard (ranked by token_f1; ties by exact_match)" in capsys.readouterr().out


def test_compare_reports_of_the_same_file_name(project, capsys) -> None:
    folder, module = project
    for name in ("good", "sloppy"):
        (folder / name).mkdir()
        assert main(["evaluate", "goldens.jsonl", "--system", f"{module}:{name}",
                     "-o", f"{name}/report.json"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["compare", "sloppy/report.json", "good/report.json"]) == 0
    out = capsys.readouterr().out
    assert "A (report)" in out and "B (report)" in out


@pytest.mark.parametrize("command", ["evaluate", "compare", "benchmark"])
def test_help_works(command: str, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    assert command in capsys.readouterr().out


def test_user_errors_are_one_line(project, capsys) -> None:
    folder, module = project
    assert main(["evaluate", "goldens.jsonl", "--system", "no_such_module_xyz:fn"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("synth: error: cannot import 'no_such_module_xyz'") and err.count("\n") == 1
    )
    assert main(["evaluate", "goldens.jsonl", "--system", f"{module}:good", "--metric", "faithfullness",
                 "--judge", f"{module}:judge"]) == 2  # fmt: skip
    assert "did you mean 'faithfulness'" in capsys.readouterr().err
    assert main(["compare", "missing.json", "missing.json"]) == 2
    assert "no such report file" in capsys.readouterr().err
    assert (
        main(
            [
                "evaluate",
                "goldens.jsonl",
                "--retriever",
                f"{module}:retriever",
                "--system",
                f"{module}:good",
            ]
        )
        == 2
    )


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_evaluate_with_failed_items_exits_3_and_says_so_on_stderr(
    project, capsys, json_flag: list[str]
) -> None:
    folder, module = project
    code = main([
        "evaluate", "goldens.jsonl", "--system", f"{module}:broken", "-o", "broken.json",
        *json_flag,
    ])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 3
    assert err.splitlines() == [
        "synth: 2 of 6 items failed (system 2); the first, item "
        f"{AnswerEvaluation.read(folder / 'broken.json').items[0].id}: system: "
        "RuntimeError: backend down for 0 (exit code 3)"
    ]
    assert AnswerEvaluation.read(folder / "broken.json").errors == {"system": 2}
    if json_flag:
        assert json.loads(out)["errors"] == {"system": 2}


def test_evaluate_without_failures_exits_0_and_says_nothing_on_stderr(project, capsys) -> None:
    _, module = project
    assert main(["evaluate", "goldens.jsonl", "--system", f"{module}:good"]) == 0
    assert capsys.readouterr().err == ""


def test_benchmark_with_a_failing_system_exits_3_naming_it(project, capsys) -> None:
    _, module = project
    code = main([
        "benchmark", "goldens.jsonl", "--system", f"ok={module}:good",
        "--system", f"bad={module}:broken",
    ])  # fmt: skip
    _, err = capsys.readouterr()
    assert code == 3
    [line] = err.splitlines()
    assert line.startswith("synth: system bad: 2 of 6 items failed (system 2)")
    assert line.endswith("(exit code 3)")


def test_criteria_alone_runs_only_the_rubric_one_call_per_item(project, capsys) -> None:
    folder, module = project
    rubric = ["--criteria", "short=The answer is short."]
    judge = ["--judge", f"j={module}:judge", "--text-metric", "none"]
    assert main(["evaluate", "goldens.jsonl", "--system", f"{module}:good", *judge, *rubric,
                 "-o", "rubric.json"]) == 0  # fmt: skip
    report = AnswerEvaluation.read(folder / "rubric.json")
    assert report.config["metrics"] == ["short"]
    assert report.usage["j"]["responses"] == 6  # one per item, not three
    both = ["--metric", "faithfulness", "--metric", "answer_relevance"]
    assert main(["evaluate", "goldens.jsonl", "--system", f"{module}:good", *judge, *rubric,
                 *both, "-o", "all.json"]) == 0  # fmt: skip
    again = AnswerEvaluation.read(folder / "all.json")
    assert again.config["metrics"] == ["faithfulness", "answer_relevance", "short"]
    capsys.readouterr()
