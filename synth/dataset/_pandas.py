"""Goldens to and from a pandas DataFrame.

``to_frame`` gives one row per golden and one column per field, with ``object`` dtype so that null,
the empty string and the empty list stay distinct (pandas would otherwise turn null text into NaN);
list fields hold Python lists and ``metadata`` holds dicts (a conversation's ``turns``: a list of
dicts, beside its ``scenario``, ``expected_outcome`` and ``user_description`` columns). The dataset's metadata is in
``df.attrs["synth_metadata"]``.

``goldens_from_frame`` is forgiving about how a frame was made: NaN, ``pd.NA`` and ``None`` are null;
numpy arrays and tuples are lists; JSON text in a list or ``metadata`` column (a frame read from
synth's CSV) is parsed; other tools' column names are read as in files. Errors name the row label.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from synth.data import Golden
from synth.dataset._records import (
    LIST_FIELDS,
    TOOL_FIELDS,
    columns_of,
    golden_from_record,
    to_synth,
)

if TYPE_CHECKING:
    import pandas as pd

ATTRS_KEY = "synth_metadata"
_JSON_COLUMNS = frozenset(LIST_FIELDS) | {"metadata", "turns", *TOOL_FIELDS}


def to_frame(goldens: Sequence[Golden], metadata: Mapping[str, Any]) -> pd.DataFrame:
    import copy

    import pandas as pd

    frame = pd.DataFrame(
        [to_synth(golden) for golden in goldens], columns=list(columns_of(goldens)), dtype=object
    )
    frame.attrs[ATTRS_KEY] = copy.deepcopy(dict(metadata))
    return frame


def goldens_from_frame(frame: pd.DataFrame) -> list[Golden]:
    columns = [str(column) for column in frame.columns]
    goldens = []
    for label, values in zip(frame.index, frame.itertuples(index=False, name=None), strict=True):
        record = {
            column: _clean(value, column in _JSON_COLUMNS)
            for column, value in zip(columns, values, strict=True)
        }
        goldens.append(golden_from_record(record, f"DataFrame row {label!r}"))
    return goldens


def _clean(value: Any, json_column: bool) -> Any:
    if _is_missing(value):
        return None
    if json_column and isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value  # validation names the field and what it expected
    if isinstance(value, str | dict):
        return value
    if isinstance(value, list | tuple) or type(value).__name__ == "ndarray":
        return [_clean(item, False) for item in value]
    if hasattr(value, "item") and type(value).__module__ == "numpy":
        return value.item()  # a numpy scalar
    return value


def _is_missing(value: Any) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        return False
    return value is pd.NA or value is pd.NaT


__all__ = ["ATTRS_KEY", "goldens_from_frame", "to_frame"]
