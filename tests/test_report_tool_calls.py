"""The reports of agent goldens, read from the written HTML: the evaluation page sets each golden's
expected calls beside the calls the system made (name and arguments, what differs marked), the
dataset page holds each golden's expected calls; a request, a tool name or an argument holding
markup is text on both, never a tag."""

from __future__ import annotations

import json
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from synth import Dataset, Golden
from synth.cli import main
from synth.data import ToolCall
from synth.evaluate.tools import evaluate_tool_calls
from synth.report import dataset_report, evaluation_report
from synth.report._tool_calls import (
    ARGUMENTS,
    EXTRA,
    MISSING,
    OTHER_TOOL,
    SAME,
    paired_calls,
)

HOSTILE = "<script>alert(1)</script>"

AGENT = f"""
def run(question):
    if "refund" in question:  # the wrong amount
        return [{{"name": "find_order", "arguments": {{"number": "A-1"}}}},
                {{"name": "refund_order", "arguments": {{"order_id": 7, "amount": 99}}}}]
    if "hours" in question:  # a call too many, and markup in an argument
        return [{{"name": "store_hours", "arguments": {{"city": {HOSTILE!r}}}}},
                {{"name": "find_order", "arguments": {{"number": "B-2"}}}}]
    return []
"""


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, input_parameters=arguments)


def goldens() -> Dataset:
    """Three agent goldens: a sequence, a single call (with markup in its request and expected
    argument), and one expecting no call."""
    return Dataset(
        [
            Golden(
                input="Please refund 20 of order A-1",
                expected_tools=[
                    call("find_order", number="A-1"),
                    call("refund_order", order_id=7, amount=20),
                ],
                metadata={"tool_kind": "sequence"},
            ),
            Golden(
                input=f"Opening hours in {HOSTILE}?",
                expected_tools=[call("store_hours", city=HOSTILE)],
                metadata={"tool_kind": "single_call"},
            ),
            Golden(
                input="What is your favourite colour?",
                expected_tools=[],
                metadata={"tool_kind": "no_tool"},
            ),
        ]
    )


class Calls(HTMLParser):
    """The side-by-side tables of a tool call page: per golden, its rows' class and cell texts,
    and the text of its summary."""

    def __init__(self) -> None:
        super().__init__()
        self.goldens: dict[str, dict[str, Any]] = {}
        self._golden: dict[str, Any] | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._summary: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "details" and "data-golden" in found:
            self._golden = {"class": found.get("class"), "rows": [], "summary": ""}
            self.goldens[str(found["data-golden"])] = self._golden
        elif tag == "summary" and self._golden is not None:
            self._summary = []
        elif tag == "tr" and self._golden is not None and found.get("class"):
            self._row = [str(found["class"])]
            self._golden["rows"].append(self._row)
        elif tag == "td" and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr":
            self._row = None
        elif tag == "summary" and self._golden is not None and self._summary is not None:
            self._golden["summary"] = "".join(self._summary)
            self._summary = None
        elif tag == "details":
            self._golden = None

    def handle_data(self, data: str) -> None:
        for collecting in (self._cell, self._summary):
            if collecting is not None:
                collecting.append(data)


def read_calls(html: str) -> dict[str, dict[str, Any]]:
    parser = Calls()
    parser.feed(html)
    return parser.goldens


def report_data(html: str) -> Any:
    tag = '<script type="application/json" id="report-data">'
    start = html.index(tag) + len(tag)
    return json.loads(html[start : html.index("</script>", start)])


def test_a_call_made_stands_beside_the_expected_call_of_its_tool() -> None:
    expected = [call("a", x=1), call("b", y=2), call("c")]
    made = [call("b", y=3), call("a", x=1), call("d"), call("e")]
    rows = paired_calls(expected, made)
    assert [(r.expected and r.expected.name, r.made and r.made.name, r.verdict) for r in rows] == [
        ("a", "a", SAME),
        ("b", "b", ARGUMENTS),
        ("c", "d", OTHER_TOOL),
        (None, "e", EXTRA),
    ]
    assert rows[1].differing == ("y",)
    assert [r.verdict for r in paired_calls([call("a")], [])] == [MISSING]
    assert paired_calls([], []) == []


def test_the_evaluation_page_sets_the_calls_side_by_side_with_mismatches_marked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "shop_agent.py").write_text(AGENT, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("shop_agent", None)
    from shop_agent import run  # type: ignore[import-not-found]

    scores = evaluate_tool_calls(goldens(), run, match="in_order")
    html = evaluation_report(scores, source="scores.json")
    assert html.startswith("<!doctype html>") and "<script>alert" not in html
    shown = read_calls(html)
    refund, hours, colour = shown["0"], shown["1"], shown["2"]
    assert refund["class"] == "golden mismatch" and hours["class"] == "golden mismatch"
    assert colour["class"] == "golden" and colour["rows"] == []
    assert refund["rows"] == [
        ["same", 'find_order {"number": "A-1"}', 'find_order {"number": "A-1"}', SAME],
        [
            "differs",
            'refund_order {"amount": 20, "order_id": 7}',
            'refund_order {"amount": 99, "order_id": 7}',
            f"{ARGUMENTS}: amount",
        ],
    ]
    # the markup is read back as text: the city, the request, the extra call
    city = json.dumps({"city": HOSTILE})
    assert hours["rows"][0] == ["same", f"store_hours {city}", f"store_hours {city}", SAME]
    assert hours["rows"][1] == ["differs", "\u2014", 'find_order {"number": "B-2"}', EXTRA]
    assert HOSTILE in hours["summary"] and "single_call, score 0.500" in hours["summary"]
    assert "0.500" in refund["summary"]
    figures = report_data(html)["figures"]
    assert set(figures) == {"kinds", "tools"}


def test_evaluate_tool_calls_writes_its_page_and_synth_report_reads_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "shop_agent.py").write_text(AGENT, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("shop_agent", None)
    goldens().save(tmp_path / "agent.jsonl")
    argv = ["evaluate", "agent.jsonl", "--system", "shop_agent:run", "--tool-calls", "any_order"]
    assert main([*argv, "-o", "scores.json", "--report"]) == 0
    assert "report: scores.html" in capsys.readouterr().out
    page = read_calls((tmp_path / "scores.html").read_text(encoding="utf-8"))
    assert [g["class"] for g in page.values()] == ["golden mismatch", "golden mismatch", "golden"]
    assert main(["report", "scores.json", "-o", "again.html"]) == 0
    assert "a tool call evaluation of 3 goldens" in capsys.readouterr().out
    assert read_calls((tmp_path / "again.html").read_text(encoding="utf-8")) == page
    # a report that cannot be written as asked is refused before the agent is asked
    assert main([*argv, "-o", "scores.yaml", "--report"]) == 2
    assert "written as .json" in capsys.readouterr().err


def test_the_dataset_page_holds_each_golden_s_expected_calls() -> None:
    dataset = goldens()
    dataset.goldens[0].expected_tools[0].output = {"order_id": 7}  # type: ignore[index]
    dataset.goldens.append(Golden(input="about the warranty", context=["Two years."]))
    html = dataset_report(dataset)
    assert "<script>alert" not in html
    table = report_data(html)["table"]
    assert table["columns"][-1]["key"] == "calls"
    assert [row[-1] for row in table["rows"]] == [
        "find_order \u2192 refund_order",
        "store_hours",
        "none",
        None,  # a golden about no tools
    ]
    first, hosted = table["calls"][0], table["calls"][1]
    assert first[0][0] == "find_order" and json.loads(first[0][1]) == {"number": "A-1"}
    assert json.loads(first[0][2]) == {"order_id": 7} and first[1][2] is None
    assert json.loads(hosted[0][1]) == {"city": HOSTILE}
    assert table["calls"][2] == [] and table["calls"][3] is None


def test_a_dataset_without_tool_goldens_has_no_calls_column() -> None:
    table = report_data(dataset_report(Dataset([Golden(input="q", context=["c"])])))["table"]
    assert "calls" not in table and all(c["key"] != "calls" for c in table["columns"])
