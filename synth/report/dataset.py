"""The dataset report: :func:`dataset_report`, one self-contained HTML page about a dataset.

What the run did (header and stage counts, from the run's manifest when there is one), what the
dataset holds (plots drawn from :func:`synth.inspect_dataset` and the goldens' measurements), and
every golden in a table that sorts, filters and pages, each row opening its context with the
cited spans marked.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from synth._manifest import find_manifest, load_manifest
from synth._words import words
from synth.data import Golden
from synth.dataset import Dataset
from synth.dataset._diversity import corpus_totals, diversity_rows
from synth.dataset._public import public_goldens, public_metadata, public_source
from synth.dataset.inspect import NONE, DatasetInspection, inspect_dataset
from synth.report import _figures
from synth.report._html import page_name, render
from synth.report._rows import mapping, number, table


def dataset_report(
    dataset: Dataset | str | os.PathLike[str] | Sequence[Golden],
    *,
    manifest: Mapping[str, Any] | str | os.PathLike[str] | None = None,
    title: str | None = None,
    source: str | os.PathLike[str] | None = None,
) -> str:
    """The HTML page reporting on ``dataset`` (a Dataset, a dataset file or a list of goldens).

    ``manifest`` is the run's manifest (a dict, or the path of a ``manifest.json`` or of its run
    directory); without one it is looked for from the dataset's ``run_id`` (see
    :func:`synth.report.find_manifest`), and the report leaves out what only a manifest knows.
    ``source`` names the dataset's file when ``dataset`` is already loaded (default: ``dataset``
    itself when it is a path); the manifest is looked for beside it too.
    Write the page with ``Path("dataset.html").write_text(html, encoding="utf-8")``. The page
    is made to be shared: it names no model server and no local path (files are named as the
    corpus names them).
    """
    if source is None and isinstance(dataset, str | os.PathLike):
        source = dataset
    data = Dataset.coerce(dataset)
    if manifest is None:
        run = find_manifest(data.metadata, source)
    else:
        run = dict(manifest) if isinstance(manifest, Mapping) else load_manifest(manifest)
    # a report is shared: its goldens, facts and title in their shareable form (files named as
    # the corpus names them, no model server), as every export is (synth.dataset._public)
    data = Dataset(public_goldens(data.goldens), public_metadata(data.metadata))
    run = public_metadata(run) if run is not None else None
    files_total, chunks_total = corpus_totals(run)
    inspection = inspect_dataset(data, files_total=files_total, chunks_total=chunks_total)
    name = page_name(source)
    plots = _plots(data, inspection, run)
    return render(
        "dataset.html.j2",
        title=title or f"synth dataset report{f': {name}' if name else ''}",
        facts=_facts(data, run, name),
        numbers=_numbers(inspection),
        stages=_stages(run),
        diversity=diversity_rows(inspection.diversity) if inspection.diversity else [],
        figures=list(plots),
        data={"figures": plots, "table": table(data.goldens)},
    )


# ---- the header --------------------------------------------------------------------------------
def _facts(
    data: Dataset, run: Mapping[str, Any] | None, source: str | None
) -> list[tuple[str, str]]:
    """(label, value) pairs: what run made the dataset, with which models, at what cost."""
    meta = {**data.metadata, **(run or {})}
    totals = mapping((run or {}).get("totals"))
    facts = [
        ("dataset", source),
        ("run id", meta.get("run_id")),
        ("status", meta.get("status")),
        ("models", _models(mapping(meta.get("models")))),
        ("model note", _notes(mapping(meta.get("models")))),
        ("seed", meta.get("seed")),
        ("date", meta.get("created_at")),
        ("goldens", _delivered(len(data), meta.get("num_goldens"))),
        ("cost", f"${cost:.4f}" if (cost := number(totals.get("cost_usd"))) is not None else None),
        ("requests", totals.get("requests")),
        ("manifest", "found" if run else "none (header and stages from the dataset alone)"),
    ]
    return [(label, str(value)) for label, value in facts if value not in (None, "")]


def _models(models: Mapping[str, Any]) -> str:
    names = []
    for role, spec in models.items():
        spec = mapping(spec)
        name = spec.get("embedder") or ":".join(
            str(spec[k]) for k in ("provider", "model") if k in spec
        )
        if name:
            names.append(f"{role} {name}")
    return "; ".join(names)


def _notes(models: Mapping[str, Any]) -> str:
    """What the models say of themselves (the offline model: that it is rule-based), once each."""
    notes = [str(mapping(spec).get("note") or "") for spec in models.values()]
    return "; ".join(dict.fromkeys(note for note in notes if note))


def _delivered(count: int, asked: object) -> str:
    return f"{count} of {asked} asked" if isinstance(asked, int) and asked != count else str(count)


def _numbers(inspection: DatasetInspection) -> list[tuple[str, str]]:
    summary = inspection.summary()
    rate = summary["grounding_rate"]
    cited = summary["citation_rate"]
    return [
        ("goldens", str(inspection.goldens)),
        ("grounded", f"{rate:.0%}" if rate is not None else "unmeasured"),
        ("cited", f"{cited:.0%}" if cited is not None else "unmeasured"),
        ("unanswerable", str(summary["unanswerable"])),
        ("leaking questions", str(summary["leaks"])),
        ("languages", _languages(inspection.per_language)),
    ]


def _languages(counts: Mapping[str, int]) -> str:
    """``de 3, en 2``: the goldens per language, most first ("unrecorded" when none is)."""
    known = {code: n for code, n in counts.items() if code != NONE}
    return ", ".join(f"{code} {n}" for code, n in known.items()) or "unrecorded"


def _stages(run: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    rows = []
    for stage in (run or {}).get("stages") or []:
        stage = mapping(stage)
        dropped = mapping(stage.get("dropped"))
        rows.append(
            {
                "stage": stage.get("stage"),
                "items_in": stage.get("items_in"),
                "items_out": stage.get("items_out"),
                "dropped": sum(v for v in dropped.values() if isinstance(v, int)),
                "reasons": ", ".join(f"{reason} {n}" for reason, n in dropped.items()),
                "requests": stage.get("requests"),
                "input_tokens": stage.get("input_tokens", ""),
                # of the input tokens, those the provider's prompt cache served (billed cheaper)
                "cached_input_tokens": stage.get("cached_input_tokens", ""),
            }
        )
    return rows


# ---- the plots ---------------------------------------------------------------------------------
def _plots(
    data: Dataset, inspection: DatasetInspection, run: Mapping[str, Any] | None
) -> dict[str, _figures.Figure]:
    goldens = data.goldens
    meta = [g.metadata for g in goldens]
    styles = Counter(
        p if isinstance(p := m.get("persona"), str) and p else "(no persona)" for m in meta
    )
    plots = {
        "files": _coverage(inspection, mapping((run or {}).get("coverage"))),
        "evolutions": _figures.bars("evolutions", {"goldens": inspection.per_evolution}),
        "styles": _figures.bars("styles (persona)", {"goldens": dict(styles.most_common())}),
        "difficulty": _figures.bars("difficulty", {"goldens": inspection.per_difficulty}),
        "languages": _figures.bars("languages", {"goldens": inspection.per_language}),
        "grounding": _figures.histogram(
            f"grounding score ({_rate(inspection.grounding_rate)} grounded)",
            {"grounding": _scores(meta, "grounding", "score")},
            x_title="score",
            unit_range=True,
        ),
        "lengths": _figures.histogram(
            "lengths",
            {
                "input": [len(words(g.input)) for g in goldens],
                "expected output": [
                    len(words(g.expected_output)) for g in goldens if g.expected_output is not None
                ],
            },
            x_title="words",
        ),
        "scores": _figures.histogram(
            "critic and filter scores",
            {
                "critic (context quality)": _values(meta, "context_quality"),
                "filter (input quality)": _values(meta, "input_quality"),
            },
            x_title="score",
            unit_range=True,
        ),
    }
    if any(m.get("question_type") for m in meta):  # a run that asked for question types
        parts = _type_parts(meta)
        plots["types"] = _figures.bars("question types (component tested)", {"goldens": parts})
    return plots


def _type_parts(meta: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Goldens per question type, each labelled with the component it tests."""
    counts = Counter(
        f"{m.get('question_type')} ({m.get('tests')})" if m.get("question_type") else "(untyped)"
        for m in meta
    )
    return dict(counts.most_common())


def _coverage(inspection: DatasetInspection, coverage: Mapping[str, Any]) -> _figures.Figure:
    files = [mapping(f) for f in coverage.get("files") or []]
    if not files:
        return _figures.bars("goldens per file", {"goldens": inspection.per_file}, horizontal=True)
    title = (
        f"goldens per file: {coverage.get('files_covered')} of {coverage.get('files_ingested')} "
        f"files covered ({coverage.get('rule')})"
    )
    # files named as the goldens' are: a source the run names by a local path (an imported
    # store's file_path, often absolute) by its file name
    series: dict[str, dict[str, int]] = {"target": {}, "delivered": {}}
    for f in files:
        name = public_source(str(f.get("source")))
        for key, counts in series.items():
            counts[name] = counts.get(name, 0) + (f.get(key) or 0)
    return _figures.bars(title, series, horizontal=True)


def _rate(rate: float | None) -> str:
    return f"{rate:.0%}" if rate is not None else "none"


def _values(meta: list[dict[str, Any]], key: str) -> list[float]:
    return [v for m in meta if (v := number(m.get(key))) is not None]


def _scores(meta: list[dict[str, Any]], key: str, field: str) -> list[float]:
    return [v for m in meta if (v := number(mapping(m.get(key)).get(field))) is not None]


__all__ = ["dataset_report"]
