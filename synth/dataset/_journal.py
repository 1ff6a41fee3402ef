"""The review journal: decisions saved at once, next to the dataset, and read as part of it.

Rewriting a 5,000-golden dataset (13 MB) with an fsync takes 50 to 250 ms, too slow to do for
every decision. So ``synth review`` appends each decision to ``<file name>.review-journal`` (one
JSON line, flushed to disk before the decision is answered: a few milliseconds) and folds the
journal into the dataset file in the background, atomically, a moment later and when it stops.

The journal is part of the dataset: :meth:`Dataset.load` applies it (each line sets one golden's
review record and its input and expected output), so every reader sees every decision the moment
it is answered, even after the review server was killed. :meth:`Dataset.save` removes the journal
of the file it replaces (the saved goldens supersede it). Each line is a whole decision, so
applying a line twice changes nothing; a last line cut off by a crash is a decision that was never
answered, and is skipped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from synth.data import Golden
from synth.dataset._io import dumps
from synth.dataset._keys import review_keys
from synth.errors import DatasetError

SUFFIX = ".review-journal"
FIELDS = ("input", "expected_output")


def journal_path(path: Path) -> Path:
    """Where the review journal of the dataset ``path`` lives."""
    return path.with_name(path.name + SUFFIX)


def entry(key: str, golden: Golden) -> dict[str, Any]:
    """The journal line of one decision: the golden's key, texts and review record."""
    return {
        "key": key,
        "input": golden.input,
        "expected_output": golden.expected_output,
        "review": golden.metadata.get("review"),
    }


def append(path: Path, line: Mapping[str, Any]) -> None:
    """Append one decision to ``path``'s journal and flush it to disk before returning."""
    data = dumps(dict(line)).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029") + "\n"
    fd = os.open(journal_path(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def rewrite(path: Path, lines: Sequence[Mapping[str, Any]]) -> None:
    """Leave only ``lines`` in the journal (none: remove it), after the dataset took the rest."""
    from synth._files import write_atomic

    if lines:
        write_atomic(journal_path(path), "".join(dumps(dict(line)) + "\n" for line in lines))
    else:
        discard(path)


def discard(path: Path) -> None:
    """Remove ``path``'s journal, if there is one (the dataset file now holds everything)."""
    journal_path(path).unlink(missing_ok=True)


def apply(path: Path, goldens: list[Golden]) -> list[Golden]:
    """``goldens`` (read from ``path``) with the decisions of ``path``'s journal applied."""
    journal = journal_path(path)
    if not journal.is_file():
        return goldens
    positions = {key: i for i, key in enumerate(review_keys(goldens))}
    result = list(goldens)
    lines = journal.read_text(encoding="utf-8").split("\n")
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError:
            if number >= len(lines) - 1:  # the last line, cut off: never answered, never saved
                break
            raise DatasetError(f"{journal}: line {number}: not a JSON decision") from None
        where = f"{journal}: line {number}"
        key = line.get("key") if isinstance(line, dict) else None
        position = positions.get(key) if isinstance(key, str) else None
        if position is None:
            raise DatasetError(
                f"{where}: names a golden that {path.name} does not hold (the file was replaced "
                "during a review?); remove the journal to keep the file as it is"
            )
        result[position] = _applied(result[position], line, where)
    return result


def _applied(golden: Golden, line: Mapping[str, Any], where: str) -> Golden:
    review = line.get("review")
    if not isinstance(review, dict):
        raise DatasetError(f"{where}: field 'review': expected an object")
    changes: dict[str, Any] = {"metadata": {**golden.metadata, "review": review}}
    for name in FIELDS:
        if name in line:
            value = line[name]
            if not (isinstance(value, str) or (value is None and name == "expected_output")):
                raise DatasetError(f"{where}: field '{name}': expected a string")
            changes[name] = value
    metadata = changes.pop("metadata")
    return golden.edited(**changes).model_copy(update={"metadata": metadata})


__all__ = ["SUFFIX", "append", "apply", "discard", "entry", "journal_path", "rewrite"]
