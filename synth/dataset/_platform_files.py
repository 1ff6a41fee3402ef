"""The evaluation platforms' files (see ``synth/dataset/_platforms.py`` for the records): promptfoo's
YAML or JSON list of tests, and Phoenix's table as a CSV and as a DataFrame.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth._files import write_atomic
from synth.data import Golden
from synth.dataset._conversations import single_turn_only
from synth.dataset._csv import _cell
from synth.dataset._io import dumps_records, read_text
from synth.dataset._platforms import PHOENIX_COLUMNS, to_phoenix
from synth.dataset._public import public_goldens
from synth.dataset._records import golden_from_record, kind
from synth.errors import DatasetError

if TYPE_CHECKING:
    import pandas as pd

#: the suffixes of promptfoo's YAML tests, which Dataset.load reads
YAML_SUFFIXES = (".yaml", ".yml")


def write_promptfoo(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """The test cases as a YAML list (``.yaml``, ``.yml``) or a JSON list (``.json``)."""
    import json

    dumps_records(records, path)  # a value JSON cannot hold is reported by golden and field
    if path.suffix.lower() == ".json":
        write_atomic(path, json.dumps(list(records), ensure_ascii=False, indent=2) + "\n")
        return
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(str, _yaml_text)
    text = yaml.dump(list(records), Dumper=Dumper, allow_unicode=True, sort_keys=False, width=100)
    write_atomic(path, text)


#: characters YAML reads as line breaks: a text holding one is written double-quoted, where
#: they are escaped (plain or single-quoted, a reader folds them into a space)
_YAML_BREAKS = frozenset("\x85\u2028\u2029")


def _yaml_text(dumper: Any, text: str) -> Any:
    style = '"' if _YAML_BREAKS & set(text) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


def write_phoenix(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """The rows as a CSV with synth's cells (no metadata sidecar: the dataset's metadata is not
    part of an export)."""
    import csv
    import io

    dumps_records(records, path)
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow(PHOENIX_COLUMNS)
    for index, record in enumerate(records):
        where = f"{path}: index {index}"
        writer.writerow([_cell(record, column, where) for column in PHOENIX_COLUMNS])
    write_atomic(path, buffer.getvalue())


def phoenix_frame(goldens: Sequence[Golden]) -> pd.DataFrame:
    """The phoenix export as a DataFrame (text cells, None where the CSV cell is empty), for
    Phoenix's ``create_dataset(dataframe=..., **PHOENIX_KEYS)``: an upload, so of the goldens'
    shareable form (no model server, no local path) as the export is."""
    import pandas as pd

    convert = single_turn_only(to_phoenix, "phoenix")
    rows = []
    for index, golden in enumerate(public_goldens(goldens)):
        where = f"cannot make a Phoenix frame: index {index}"
        record = convert(golden, where)
        rows.append([_cell(record, column, where) or None for column in PHOENIX_COLUMNS])
    return pd.DataFrame(rows, columns=list(PHOENIX_COLUMNS), dtype=object)


# ---- reading them back ---------------------------------------------------------------------------
def read_yaml(path: Path) -> list[Golden]:
    """The goldens of a promptfoo YAML test file (a list of test cases)."""
    import yaml

    try:
        document = yaml.safe_load(read_text(path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"line {mark.line + 1}: " if mark is not None else ""
        raise DatasetError(f"{path}: {at}invalid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(document, list):
        raise DatasetError(f"{path}: expected a list of promptfoo test cases, got {kind(document)}")
    return [golden_from_record(test, f"{path}: index {i}") for i, test in enumerate(document)]


__all__ = ["YAML_SUFFIXES", "phoenix_frame", "read_yaml", "write_phoenix", "write_promptfoo"]
