"""What a score is in a report: a float that is NaN when undefined, and equality that sees NaN.

Kept apart from :mod:`synth.evaluate.report` so that modules the reports use (``compare``) can
read scores without importing the reports back.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import BeforeValidator


def _none_to_nan(value: Any) -> Any:
    return math.nan if value is None else value


#: a score: a float, NaN when undefined (JSON stores NaN as null, so null reads back as NaN)
Score = Annotated[float, BeforeValidator(_none_to_nan)]


def canonical(value: Any) -> Any:
    """Return ``value`` with NaN replaced by a marker, so that equal reports compare equal."""
    if isinstance(value, float) and math.isnan(value):
        return "<nan>"
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    return value


__all__ = ["Score", "canonical"]
