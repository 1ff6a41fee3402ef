"""How ``synth inspect`` shows a :class:`~synth.dataset.inspect.DatasetInspection`: rich tables.

Everything that comes from the dataset (file names, labels, questions) goes in as
:class:`rich.text.Text`, which rich never reads as markup, so a question holding ``[bold]`` or
``[/]`` prints as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table
from rich.text import Text

from synth.dataset import Dataset
from synth.dataset._diversity import Diversity, diversity_rows
from synth.dataset.inspect import NONE, DatasetInspection, LengthStats

#: characters of a question shown in a row (the whole question is in the dataset)
EXCERPT = 80


def inspection_view(
    inspection: DatasetInspection, dataset: Dataset, *, source: str, show: int
) -> list[Any]:
    """The renderables of one inspection: counts, measurements, then leaks and near duplicates
    (at most ``show`` rows each); ``dataset`` is the one inspected, for its questions."""
    out: list[Any] = [Text(f"{source}: {inspection.goldens} goldens", style="bold")]
    for title, counts in (
        ("per source file", inspection.per_file),
        ("per evolution", inspection.per_evolution),
        ("per difficulty", inspection.per_difficulty),
        ("per question type", inspection.per_question_type),
        ("per language", inspection.per_language),
    ):
        if title in ("per question type", "per language") and set(counts) <= {NONE}:
            continue  # a dataset that records none: nothing to say
        out.append(_counts_table(title, counts))
    out.append(_measurements_table(inspection, show))
    if inspection.diversity is not None:
        out.append(diversity_table(inspection.diversity))
    out.extend(_leaks(inspection, dataset, show))
    out.extend(_near_duplicates(inspection, dataset, show))
    return out


def _table(title: str, *columns: tuple[str, str]) -> Table:
    # a Text title: an embedder spec or a label is never read as markup
    table = Table(title=Text(title), header_style="bold", title_justify="left")
    for name, justify in columns:
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    return table


def _counts_table(title: str, counts: dict[str, int]) -> Table:
    table = _table(title, (title.removeprefix("per "), "left"), ("goldens", "right"))
    for key, count in counts.items():
        table.add_row(Text(key), str(count))
    return table


def _measurements_table(inspection: DatasetInspection, show: int) -> Table:
    settings = inspection.settings
    table = _table("measurements", ("measure", "left"), ("value", "left"))
    if inspection.grounding_rate is None:
        grounding = "not measured"
    else:
        grounding = (
            f"{inspection.grounded} of {inspection.grounding_measured} measured "
            f"(score >= {settings.grounding_threshold:g}): {inspection.grounding_rate:.1%}, "
            f"mean score {inspection.mean_grounding:.3f}"
        )
    table.add_row("grounded", Text(grounding))
    citations = _indexes(inspection.without_citation, show)
    if not inspection.citations_checked:
        citations += " (this dataset records no citations)"
    table.add_row("answers without citation", citations)
    table.add_row("unanswerable", _indexes(inspection.unanswerable, show))
    table.add_row("input words", _lengths(inspection.input_words))
    table.add_row("expected output words", _lengths(inspection.expected_words))
    return table


def diversity_table(diversity: Diversity) -> Table:
    """The diversity numbers as a table of (measure, value) rows."""
    table = _table(
        f"diversity of {diversity.inputs} inputs", ("measure", "left"), ("value", "left")
    )
    for measure, value in diversity_rows(diversity):
        table.add_row(measure, Text(value))
    return table


def _leaks(inspection: DatasetInspection, dataset: Dataset, show: int) -> list[Any]:
    leaks = inspection.leaks
    title = (
        f"questions that leak (overlap with their context >= "
        f"{inspection.settings.leak_threshold:g}): {len(leaks)}"
    )
    if not leaks:
        return [Text(title)]
    table = _table(title, ("index", "right"), ("overlap", "right"), ("from", "left"))
    table.add_column("input", overflow="fold")
    for leak in leaks[:show]:
        row = (str(leak.index), f"{leak.overlap:.2f}", leak.measured)
        table.add_row(*row, _excerpt(dataset[leak.index].input))
    return [table, *_more(len(leaks), show)]


def _near_duplicates(inspection: DatasetInspection, dataset: Dataset, show: int) -> list[Any]:
    pairs = inspection.near_duplicates
    if pairs is None:
        return [Text("near duplicates: not measured (name an embedder: --embedder hash)")]
    settings = inspection.settings
    title = (
        f"near duplicates ({settings.embedder}, similarity >= "
        f"{settings.duplicate_threshold:g}): {len(pairs)} {'pair' if len(pairs) == 1 else 'pairs'}"
    )
    if not pairs:
        return [Text(title)]
    table = _table(title, ("i", "right"), ("j", "right"), ("similarity", "right"))
    table.add_column("input i", overflow="fold")
    table.add_column("input j", overflow="fold")
    for pair in pairs[:show]:
        inputs = (_excerpt(dataset[pair.i].input), _excerpt(dataset[pair.j].input))
        table.add_row(str(pair.i), str(pair.j), f"{pair.similarity:.3f}", *inputs)
    return [table, *_more(len(pairs), show)]


def _indexes(indexes: Sequence[int], show: int) -> str:
    """``3 (indexes 0, 4, 9)``: how many, and the first ``show`` of them."""
    if not indexes or not show:
        return str(len(indexes))
    listed = ", ".join(str(i) for i in indexes[:show])
    more = ", ..." if len(indexes) > show else ""
    return f"{len(indexes)} ({'index' if len(indexes) == 1 else 'indexes'} {listed}{more})"


def _lengths(stats: LengthStats | None) -> str:
    if stats is None:
        return "-"
    return f"mean {stats.mean:.1f}, median {stats.median:g}, max {stats.max} (of {stats.count})"


def _excerpt(text: str) -> Text:
    """``text`` on one line, cut to :data:`EXCERPT` characters."""
    line = " ".join(text.split())
    return Text(line if len(line) <= EXCERPT else line[: EXCERPT - 3] + "...")


def _more(total: int, show: int) -> list[Text]:
    if total <= show:
        return []
    return [Text(f"... and {total - show} more (--show N prints more, --json all)")]


__all__ = ["EXCERPT", "diversity_table", "inspection_view"]
