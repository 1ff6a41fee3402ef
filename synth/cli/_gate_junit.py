"""``synth gate --junit``: the verdict as JUnit XML, the test report every CI system reads.

One ``testcase`` per golden and metric (classname ``synth.gate.<metric>``), and the gate itself as
one more case (classname ``synth.gate``). A golden's case fails only when its metric failed the
gate and the golden is among those that fell by more than the margin: a golden scoring lower
than in the baseline is noise until the paired test says the metric moved. A golden whose score
is missing because the system or a judge failed is an ``error``; one the metric did not apply
to (no reference, no contexts) is ``skipped``. The structure is that of Jenkins' junit-10.xsd
(tests/data/junit-10.xsd, which the tests validate against).
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from synth._files import write_atomic
from synth.evaluate.gate import GateResult

#: characters XML 1.0 cannot hold, even escaped (a model's reply may carry them)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_NAME_CHARS = 80


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


def _score(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3f}"


def _case_name(item_id: str, question: str) -> str:
    short = " ".join(question.split())
    if len(short) > _NAME_CHARS:
        short = short[: _NAME_CHARS - 1] + "…"
    return _text(f"{item_id}: {short}" if short else item_id)


def junit_xml(result: GateResult, *, suite: str = "synth gate") -> str:
    """The JUnit XML document of ``result``, as text."""
    suite_el = ET.Element("testsuite", name=_text(suite))
    props = ET.SubElement(suite_el, "properties")
    for name, value in (
        ("dataset_fingerprint", result.dataset),
        ("items", str(result.n_items)),
        ("failed_items", str(result.failed_items)),
        ("seed", str(result.seed)),
        ("verdict", "passed" if result.passed else "failed"),
    ):
        ET.SubElement(props, "property", name=name, value=_text(value))
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}

    gate = ET.SubElement(suite_el, "testcase", name="gate", classname="synth.gate", time="0")
    counts["tests"] += 1
    table = "\n".join(
        f"{row.metric}: baseline {_score(row.baseline)}, current {_score(row.current)}, delta "
        f"{_score(row.delta)}, 95% CI [{_score(row.ci_low)}, {_score(row.ci_high)}], margin "
        f"{row.margin:g}, n {row.n}{' WORSE' if row.worse else ''}"
        for row in result.metrics
    )
    if not result.passed:
        failure = ET.SubElement(gate, "failure", message=_text(result.verdict()), type="regression")
        failure.text = _text(table)
        counts["failures"] += 1
    ET.SubElement(gate, "system-out").text = _text(result.verdict() + "\n" + table)

    for row in result.items:
        case = ET.SubElement(
            suite_el,
            "testcase",
            name=_case_name(row.id, row.question),
            classname=f"synth.gate.{row.metric}",
            time="0",
        )
        counts["tests"] += 1
        line = f"{row.metric}: baseline {_score(row.baseline)}, current {_score(row.current)}"
        if row.skipped is not None:
            ET.SubElement(case, "skipped", message=_text(f"{row.metric}: {row.skipped}"))
            counts["skipped"] += 1
        elif row.error is not None:
            error = ET.SubElement(case, "error", message=_text(row.error), type="failed item")
            error.text = _text(line)
            counts["errors"] += 1
        elif row.worse:
            failure = ET.SubElement(
                case,
                "failure",
                message=_text(f"{line} (the metric failed the gate)"),
                type="regression",
            )
            failure.text = _text(line)
            counts["failures"] += 1
        ET.SubElement(case, "system-out").text = _text(line)

    for key, count in counts.items():
        suite_el.set(key, str(count))
    suite_el.set("time", "0")
    root = ET.Element("testsuites", name=_text(suite))
    for key in ("tests", "failures", "errors"):
        root.set(key, str(counts[key]))
    root.set("time", "0")
    root.append(suite_el)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(path: str | Path, result: GateResult, *, suite: str = "synth gate") -> Path:
    """Write :func:`junit_xml` of ``result`` to ``path`` (atomically); the path."""
    target = Path(path)
    write_atomic(target, junit_xml(result, suite=suite))
    return target


__all__ = ["junit_xml", "write_junit"]
