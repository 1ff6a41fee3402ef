"""The report family: one row of scores per item, the means with intervals, and how to store them.

Every evaluation (answers, retrieval, preference) returns a subclass of :class:`Evaluation`, all
defined here so that reading a report of any kind needs no module that makes one. Each is written
and read as JSON, JSON Lines (a header line, then one line per item), YAML or TOML, and a report
read back compares equal to the one written. ``compare`` pairs two reports item by item.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict  # pydantic needs this one on Python < 3.12

from synth._files import write_atomic
from synth.errors import ConfigError
from synth.evaluate import _io
from synth.evaluate._scores import Score, canonical
from synth.evaluate.compare import Comparison, compare_reports
from synth.evaluate.stats import bootstrap_interval, mean_score

if TYPE_CHECKING:
    import pandas as pd


class ItemResult(BaseModel):
    """The scores of one dataset item, with what the metrics saw and why any score is missing."""

    model_config = ConfigDict(extra="forbid")

    id: str
    question: str | None = None
    answer: str | None = None
    references: list[str] = Field(default_factory=list)
    retrieved: list[str] = Field(default_factory=list)  # ranked context ids (retrieval)
    relevant: list[str] = Field(default_factory=list)  # the item's context ids (retrieval)
    scores: dict[str, Score] = Field(default_factory=dict)
    # why a score is missing: failures by source ("system", "<metric>/<judge>"), and metrics not
    # scored for lack of an input ("no reference", "no contexts", ...), which cost no call
    errors: dict[str, str] = Field(default_factory=dict)
    skipped: dict[str, str] = Field(default_factory=dict)
    verdicts: dict[str, dict[str, Any]] = Field(default_factory=dict)  # with keep_verdicts=True


class Evaluation(BaseModel):
    """Scores per item and their summary; the base of every report."""

    model_config = ConfigDict(extra="forbid")

    kind: ClassVar[str] = "evaluation"

    #: mean of the defined item scores, with its bootstrap 95% interval and how many items had one
    metrics: dict[str, Score] = Field(default_factory=dict)
    intervals: dict[str, tuple[Score, Score]] = Field(default_factory=dict)
    coverage: dict[str, int] = Field(default_factory=dict)
    config: dict[str, Any] = Field(default_factory=dict)  # what was asked (metrics, k, seed, ...)
    items: list[ItemResult] = Field(default_factory=list)

    # ---- reading the scores ------------------------------------------------------------------
    @property
    def failed_items(self) -> int:
        """How many items failed: the system (or retriever) raised, or a judge failed on them
        (each item's ``errors`` says what happened; ``skipped`` metrics are not failures)."""
        return sum(1 for item in self.items if item.errors)

    def scores(self, metric: str) -> dict[str, float]:
        """Return ``{item id: score}`` for ``metric`` (NaN where undefined)."""
        if metric not in self.metrics:
            raise ConfigError(
                f"no metric {metric!r} in this report; it has {', '.join(self.metrics)}"
            )
        return {item.id: item.scores.get(metric, math.nan) for item in self.items}

    def to_pandas(self) -> pd.DataFrame:
        """Return one row per item: its id, question, answer and one column per metric."""
        import pandas as pd

        rows = [
            {"id": item.id, "question": item.question, "answer": item.answer, **item.scores}
            for item in self.items
        ]
        return pd.DataFrame(rows, columns=["id", "question", "answer", *self.metrics])

    def compare(
        self, other: Evaluation, *, seed: int = 0, n_resamples: int = 10000, exact_max: int = 20
    ) -> Comparison:
        """Return the paired comparison of ``other`` against this report (delta = other - this)."""
        return compare_reports(self, other, seed=seed, n_resamples=n_resamples, exact_max=exact_max)

    # ---- storage -----------------------------------------------------------------------------
    def to_document(self) -> dict[str, Any]:
        """Return the report as a JSON-like mapping, with its ``kind``."""
        return {"kind": self.kind, **self.model_dump(mode="python")}

    def write(self, path: str | Path, *, format: str | None = None) -> Path:
        """Write the report to ``path`` as JSON, JSON Lines, YAML or TOML (by suffix or ``format``)."""
        fmt = _io.format_of(path, format)
        document = self.to_document()
        if fmt == "jsonl":
            items = document.pop("items")
            return write_atomic(path, _io.dumps_lines(document, items))
        return write_atomic(path, _io.dumps(document, fmt))

    @classmethod
    def read(cls, path: str | Path, *, format: str | None = None) -> Evaluation:
        """Read a report written by :meth:`write`; on the base class, any kind of report."""
        fmt = _io.format_of(path, format)
        text = _io.read_text(path)
        if fmt == "jsonl":
            header, rows = _io.loads_lines(text, source=str(path))
            document = {**header, "items": rows}
        else:
            document = _io.loads(text, fmt, source=str(path))
        return cls.from_document(document, source=str(path))

    @classmethod
    def from_document(cls, document: dict[str, Any], *, source: str = "<document>") -> Evaluation:
        """Return the report held in ``document`` (as made by :meth:`to_document`)."""
        from pydantic import ValidationError

        data = dict(document)
        kind = data.pop("kind", None)
        target = _report_class(kind, source)
        if cls is not Evaluation and not issubclass(target, cls):
            raise ConfigError(f"{source}: holds a {kind!r} report, not a {cls.kind!r} one")
        try:
            return target.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"{source}: invalid report at {where}: {first['msg']}") from None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Evaluation) or type(other) is not type(self):
            return NotImplemented
        same: bool = canonical(self.model_dump()) == canonical(other.model_dump())
        return same

    __hash__ = None  # type: ignore[assignment]


# ---- the kinds of report ---------------------------------------------------------------------
class AnswerEvaluation(Evaluation):
    """Scores of a system's answers: text metrics, ``<metric>/<judge>`` and the panel's ``<metric>``.

    ``judges`` records each judge's identity, ``usage`` its responses, cached responses and tokens,
    ``errors`` the failures by source (``"system"`` and each judge), and ``agreement`` Krippendorff's
    alpha (interval level) between the judges for each judge metric when there are several.
    """

    kind: ClassVar[str] = "answers"

    judges: dict[str, dict[str, Any]] = Field(default_factory=dict)
    usage: dict[str, dict[str, int]] = Field(default_factory=dict)
    errors: dict[str, int] = Field(default_factory=dict)
    agreement: dict[str, Score] = Field(default_factory=dict)


class RetrievalEvaluation(Evaluation):
    """Retrieval scores per item (``retrieved`` and ``relevant`` ids kept) and their means."""

    kind: ClassVar[str] = "retrieval"

    k: list[int] = Field(default_factory=list)
    errors: dict[str, int] = Field(default_factory=dict)


class PreferenceSummary(TypedDict):
    """One judge's verdicts over the dataset."""

    n: int  # items the judge gave a verdict on
    wins: dict[str, int]  # by answer name, verdicts that held in both orders
    ties: int  # ties, including verdicts that flipped with the order
    position_consistency: Score  # share of items whose verdict did not change with the order
    win_rate: Score  # mean score of answer a (a tie counts half)
    errors: int


class PreferenceEvaluation(Evaluation):
    """Preference scores for answer a per item and judge, with each judge's summary."""

    kind: ClassVar[str] = "preference"

    names: tuple[str, str] = ("a", "b")
    summary: dict[str, PreferenceSummary] = Field(default_factory=dict)
    judges: dict[str, dict[str, Any]] = Field(default_factory=dict)
    usage: dict[str, dict[str, int]] = Field(default_factory=dict)
    errors: dict[str, int] = Field(default_factory=dict)
    agreement: dict[str, Score] = Field(default_factory=dict)


#: every kind of report, by which :meth:`Evaluation.read` tells them apart
REPORT_CLASSES: tuple[type[Evaluation], ...] = (
    AnswerEvaluation,
    RetrievalEvaluation,
    PreferenceEvaluation,
)


def summarize(
    report: Evaluation, metric_order: Sequence[str], seed: int, n_resamples: int = 2000
) -> None:
    """Fill ``metrics``, ``intervals`` and ``coverage`` of ``report`` from its items' scores."""
    for metric in metric_order:
        values = [item.scores.get(metric, math.nan) for item in report.items]
        report.metrics[metric] = mean_score(values)
        report.intervals[metric] = bootstrap_interval(values, seed=seed, n_resamples=n_resamples)
        report.coverage[metric] = sum(not math.isnan(v) for v in values)


def _report_class(kind: Any, source: str) -> type[Evaluation]:
    classes: dict[str, type[Evaluation]] = {c.kind: c for c in REPORT_CLASSES}
    if kind not in classes:
        raise ConfigError(
            f"{source}: not a synth report (kind {kind!r}; expected one of {sorted(classes)})"
        )
    return classes[kind]


def read_report(path: str | Path, *, format: str | None = None) -> Evaluation:
    """Read any report written by ``write``: answers, retrieval or preference."""
    return Evaluation.read(path, format=format)


__all__ = [
    "REPORT_CLASSES",
    "AnswerEvaluation",
    "Evaluation",
    "ItemResult",
    "PreferenceEvaluation",
    "PreferenceSummary",
    "RetrievalEvaluation",
    "Score",
    "read_report",
    "summarize",
]
