"""The evaluation, comparison and benchmark reports' data, without a browser: the item and failure
tables, the judges' verdicts as text, the items systems disagree on, which file is which, and the
commands that write the pages."""

from __future__ import annotations

import json
import math
from pathlib import Path

import eval_report_data as data
import pytest
import report_data

from synth import Comparison, Golden, ItemResult, read_report
from synth.cli import main
from synth.data import ToolCall
from synth.errors import ConfigError
from synth.evaluate.tools import evaluate_tool_calls
from synth.report import benchmark_report, comparison_report, evaluation_report
from synth.report._disagreement import paired_items, spread_items
from synth.report._evaluation_rows import failure_table, item_table, verdict_text
from synth.report._figures import intervals
from synth.report._kinds import kind_of


@pytest.fixture(scope="module")
def answers():
    return data.answers(30)


def test_the_item_table_has_a_row_per_item_and_a_column_per_summary_metric(answers) -> None:
    table = item_table(answers)
    keys = [c["key"] for c in table["columns"]]
    assert keys == [
        "index",
        "id",
        "input",
        "answer",
        "expected",
        "score:exact_match",
        "score:token_f1",
        "score:faithfulness",
        "score:answer_relevance",
        "status",
    ]
    assert len(table["rows"]) == len(table["details"]) == 30
    by_id = {row[1]: row for row in table["rows"]}
    assert by_id["item-013"][-1] == "failed" and by_id["item-013"][3] is None
    assert by_id["item-000"][-1] == "ok" and by_id["item-000"][5] == 1.0
    assert by_id["hostile"][3] == data.XSS_ANSWER
    # NaN is no JSON: a missing score is None
    assert all(v is None or not math.isnan(v) for row in table["rows"] for v in row[5:9])


def test_an_opened_row_says_what_each_judge_said_and_why_a_score_is_missing(answers) -> None:
    table = item_table(answers)
    details = dict(table["details"][2])
    assert details["answer_relevance/strict"] == "0.000\nreason: too vague\nscore: 1"
    assert (
        "index: 1, evidence: , reason: scripted, supported: False" in details["faithfulness/strict"]
    )
    failed = dict(table["details"][13])
    assert failed["failed: system"].startswith("RuntimeError: the retriever timed out")
    assert failed["token_f1"] == "\u2014\nnot scored: no answer"
    broken = dict(table["details"][4])
    assert "failed: invalid_output" in broken["faithfulness/strict"]


def test_the_failure_table_has_a_row_per_failure_with_its_reason(answers) -> None:
    rows = failure_table(answers)["rows"]
    assert [(r[1], r[3]) for r in rows] == [
        ("item-004", "faithfulness/strict"),
        ("item-004", "answer_relevance/strict"),
        ("item-013", "system"),
    ]
    assert all(r[4] for r in rows)


def test_a_verdict_reads_as_lines() -> None:
    verdict = {
        "a_first": {"winner": "answer_a", "reason": "<b>x</b>"},
        "b_first": {"winner": "tie", "reason": ""},
        "consistent": False,
    }
    assert verdict_text(verdict).splitlines() == [
        "a first:",
        "  winner: answer_a",
        "  reason: <b>x</b>",
        "b first:",
        "  winner: tie",
        "  reason: ",
        "consistent: False",
    ]


def test_retrieval_rows_show_the_ranked_and_the_relevant_ids() -> None:
    table = item_table(data.retrieval(10))
    labels = [c["label"] for c in table["columns"]]
    assert labels[3:5] == ["retrieved", "relevant"]
    assert table["rows"][1][3:5] == ["c1, c2", "c1"]


def test_items_are_ordered_by_how_much_the_systems_disagree() -> None:
    a = _report({"x": 0.5, "y": 1.0, "z": math.nan}, answer="A")
    b = _report({"x": 0.4, "y": 0.0, "z": 0.3}, answer="B")
    table = paired_items(a, b, ("old", "new"), ["m"])
    assert [row[1] for row in table["rows"]] == ["y", "x", "z"]
    assert table["rows"][0][3:] == [1.0, -1.0]
    assert table["rows"][1][3] == pytest.approx(0.1)
    assert table["rows"][2][3:] == [None, None]  # no score in A: no difference, last
    assert ["old: answer", "A"] in table["details"][0]
    spread = spread_items(
        {"old": a, "new": b, "third": _report({"x": 1.0, "y": 0.5, "z": 0.3})}, "m"
    )
    assert [row[1] for row in spread["rows"]] == ["y", "x", "z"]
    assert spread["rows"][1][3:] == [pytest.approx(0.6), 0.5, 0.4, 1.0]
    assert spread["rows"][2][3] == 0.0  # two systems scored it, alike


def _report(scores: dict[str, float], answer: str = "an answer"):
    from synth import AnswerEvaluation

    items = [
        ItemResult(id=key, question=f"q {key}", answer=answer, scores={"m": value})
        for key, value in scores.items()
    ]
    return AnswerEvaluation(items=items, metrics={"m": 0.5})


def test_names_from_the_data_reach_plotly_as_text_not_as_its_markup() -> None:
    figure = intervals("<b>t</b>", [("<i>echo</i> & co", 0.5, 0.4, 0.6)], x_title="a<b")
    assert figure["data"][0]["y"] == ["&lt;i&gt;echo&lt;/i&gt; &amp; co"]
    assert figure["layout"]["title"]["text"] == "&lt;b&gt;t&lt;/b&gt;"
    assert figure["data"][0]["error_x"]["array"] == [pytest.approx(0.1)]


def test_the_pages_hold_no_markup_from_the_data(answers) -> None:
    comparison, a, b = data.comparison(20)
    pages = [
        evaluation_report(answers),
        comparison_report(comparison, reports=(a, b)),
        benchmark_report(data.board(20)),
    ]
    for html in pages:
        assert html.startswith("<!doctype html>")
        # in the page's JSON as \u003c...\u003e, in its HTML as entities: never as a tag
        assert "<img" not in html and "<i>echo" not in html and "<script>alert" not in html


def test_a_page_names_its_file_without_the_path_to_it(tmp_path: Path, answers) -> None:
    """A page is shared: the file it is about is named in its title and facts by its file name,
    never by the path from the local disk that reached it."""
    private = tmp_path / "home-alice-private"
    private.mkdir()
    comparison, a, b = data.comparison(10)
    files = [
        answers.write(private / "eval.json"),
        comparison.write(private / "cmp.json"),
        data.board(10).write(private / "board.json"),
        private / "calls.json",
    ]
    agent = [Golden(input="Hours?", expected_tools=[ToolCall(name="hours", input_parameters={})])]
    calls = evaluate_tool_calls(agent, lambda question: [], match="exact")
    files[-1].write_text(calls.model_dump_json(), encoding="utf-8")
    for file in files:
        assert main(["report", str(file), "-o", str(tmp_path / f"{file.stem}.html")]) == 0
        html = (tmp_path / f"{file.stem}.html").read_text(encoding="utf-8")
        title = html.split("<title>", 1)[1].split("</title>", 1)[0]
        assert file.name in title, title
        assert "home-alice-private" not in html and str(tmp_path) not in html
    # pages made in Python: from a report already read, named by the path it came from, and
    # from the path of a tool call evaluation
    for html in (
        evaluation_report(answers, source=private / "eval.json"),
        evaluation_report(private / "calls.json"),
    ):
        assert "home-alice-private" not in html and ".json" in html


# ---- which file is which -----------------------------------------------------------------------
def test_every_kind_of_file_is_told_apart_by_its_contents(tmp_path: Path, answers) -> None:
    comparison, a, b = data.comparison(10)
    files = {
        "goldens.jsonl": "dataset",
        "goldens.json": "dataset",
        "goldens.csv": "dataset",
        "eval.json": "evaluation",
        "eval.jsonl": "evaluation",
        "eval.yaml": "evaluation",
        "eval.toml": "evaluation",
        "comparison.yaml": "comparison",
        "comparison.json": "comparison",
        "board.json": "benchmark",
    }
    for name, kind in files.items():
        path = tmp_path / name
        if kind == "dataset":
            report_data.dataset(2).save(path)
        elif kind == "evaluation":
            (a if name != "eval.toml" else answers).write(path)
        elif kind == "comparison":
            comparison.write(path)
        else:
            data.board(10).write(path)
        assert kind_of(path) == kind, name
    (tmp_path / "list.json").write_text(json.dumps([{"input": "q"}]), encoding="utf-8")
    assert kind_of(tmp_path / "list.json") == "dataset"


@pytest.mark.parametrize(
    ("name", "text", "says"),
    [
        ("other.json", '{"hello": 1}', "a mapping with the keys hello"),
        ("other.yaml", "- 1\n- 2\n", "it holds a list"),
        ("broken.json", "{", "not valid json"),
        ("notes.txt", "x", "unknown suffix '.txt'"),
        ("lines.jsonl", "not json\n", "its first line is not JSON"),
    ],
)
def test_a_file_of_no_known_kind_is_refused_in_one_line(
    tmp_path: Path, name: str, text: str, says: str
) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        kind_of(tmp_path / name)
    message = str(caught.value)
    assert "not a dataset, evaluation report, comparison or benchmark" in message
    assert says in message and "\n" not in message


def test_a_folder_and_a_missing_file_are_each_said_as_such(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r": a folder; name a dataset or a report file in it$"):
        kind_of(tmp_path)
    with pytest.raises(ConfigError, match=r"nope\.json: no such file$"):
        kind_of(tmp_path / "nope.json")


# ---- the commands --------------------------------------------------------------------------------
def test_synth_report_writes_each_kind_and_refuses_what_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], answers
) -> None:
    comparison, a, b = data.comparison(10)
    a.write(tmp_path / "a.json")
    b.write(tmp_path / "b.jsonl")
    comparison.write(tmp_path / "c.yaml")
    assert main(["report", str(tmp_path / "b.jsonl")]) == 0
    assert (tmp_path / "b.html").read_text(encoding="utf-8").startswith("<!doctype html>")
    args = ["report", str(tmp_path / "c.yaml"), "--reports", str(tmp_path / "a.json")]
    assert main([*args, str(tmp_path / "b.jsonl"), "-o", str(tmp_path / "c.html")]) == 0
    assert '"items":{"columns"' in (tmp_path / "c.html").read_text(encoding="utf-8")
    out = capsys.readouterr().out
    assert "an evaluation of 10 items (answers)" in out and "with its two reports" in out
    (tmp_path / "other.json").write_text('{"hello": 1}', encoding="utf-8")
    assert main(["report", str(tmp_path / "other.json")]) == 2
    assert main(["report", str(tmp_path / "a.json"), "--reports", "x.json", "y.json"]) == 2
    assert main(["report", str(tmp_path / "a.json"), "--manifest", "run"]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 3 and all(line.startswith("synth: error: ") for line in errors)
    assert "holds an evaluation report" in errors[1]
    assert not (tmp_path / "other.html").exists()


def test_evaluate_compare_and_benchmark_write_their_page_beside_their_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    goldens = str(report_data.dataset(3).save(tmp_path / "goldens.jsonl"))
    judge = [
        "--judge",
        "lenient=eval_report_data:lenient",
        "--judge",
        "strict=eval_report_data:strict",
    ]
    one = str(tmp_path / "one.json")
    assert (
        main(
            [
                "evaluate",
                goldens,
                "--system",
                "eval_report_data:echo",
                *judge,
                "-o",
                one,
                "--report",
            ]
        )
        == 0
    )
    assert "report: " + str(tmp_path / "one.html") in capsys.readouterr().out
    page = (tmp_path / "one.html").read_text(encoding="utf-8")
    assert "judge agreement" in page and read_report(one).kind == "answers"
    two = str(tmp_path / "two.json")
    assert main(["evaluate", goldens, "--system", "eval_report_data:echo", "-o", two]) == 0
    cmp = str(tmp_path / "cmp.yaml")
    assert main(["compare", one, two, "-o", cmp, "--report"]) == 0
    assert "one" in (tmp_path / "cmp.html").read_text(encoding="utf-8")
    assert Comparison.read(cmp).n_paired == 5
    assert "report: " + str(tmp_path / "cmp.html") in capsys.readouterr().out
    systems = ["--system", "a=eval_report_data:echo", "--system", "b=eval_report_data:sloppy"]
    board = str(tmp_path / "board.json")
    assert main(["benchmark", goldens, *systems, "-o", board, "--report", "--json"]) == 3
    assert json.loads(capsys.readouterr().out)["rank_by"] == "token_f1"  # no "report:" line
    assert (tmp_path / "board.html").read_text(encoding="utf-8").startswith("<!doctype html>")


def test_report_without_an_output_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    goldens = str(report_data.dataset(3).save(tmp_path / "goldens.jsonl"))
    # the system would fail every item: refused first, it is never asked
    assert main(["evaluate", goldens, "--system", "eval_report_data:sloppy", "--report"]) == 2
    assert main(["benchmark", goldens, "--system", "a=eval_report_data:sloppy", "--report"]) == 2
    assert main(["compare", "a.json", "b.json", "--report"]) == 2
    errors = capsys.readouterr().err.splitlines()
    assert errors == ["synth: error: --report writes the HTML beside the -o file: give -o too"] * 3
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "goldens.jsonl",
        "goldens.jsonl.meta.json",
    ]
