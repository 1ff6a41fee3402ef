"""Query style and length: how a styled input is written, drawn per input from a distribution.

``StylingConfig.query_styles`` and ``query_lengths`` map a style (``formal``, ``casual``,
``terse``, ``misspelled``) or a length (``short``, ``medium``, ``long``) to a weight; each input
draws one of each with the run's seed and its draft id (so the same run draws the same), the
styling step tells the model what they mean, and the golden records them (``query_style``,
``query_length``). A misspelled input keeps its answer in the context: the filter scored the
input before styling, on its unstyled form, and the expected output answers what it means.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping

#: each style and what the styling prompt asks of it
QUERY_STYLES = {
    "formal": "formal and complete, as in a written request to a company",
    "casual": "casual and conversational, as in a chat message to a friend",
    "terse": "terse, like a search-engine query: key words only, no full sentence",
    "misspelled": "as typed in a hurry: two or three spelling mistakes or typos, the meaning "
    "still clear",
}
#: each length and what the styling prompt asks of it
QUERY_LENGTHS = {
    "short": "short: at most 8 words",
    "medium": "of medium length: 9 to 20 words",
    "long": "long: more than 20 words, with some background before the question",
}


def check_distribution(value: Mapping[str, float], known: Mapping[str, str], what: str) -> None:
    """Raise ValueError unless ``value`` weighs known names with finite non-negative weights, one
    of them positive (an empty mapping is allowed: the feature is off)."""
    unknown = sorted(set(value) - set(known))
    if unknown:
        raise ValueError(f"unknown {what} {unknown[0]!r}; use one of {', '.join(known)}")
    for name, weight in value.items():
        if not isinstance(weight, int | float) or not math.isfinite(weight) or weight < 0:
            raise ValueError(f"{what} {name!r} needs a weight >= 0, got {weight!r}")
    if value and not any(w > 0 for w in value.values()):
        raise ValueError(f"at least one {what} needs a weight above 0")


def draw(distribution: Mapping[str, float], rng: random.Random) -> str | None:
    """One name drawn by weight (None for an empty distribution)."""
    names = [name for name, weight in distribution.items() if weight > 0]
    if not names:
        return None
    return rng.choices(names, weights=[distribution[n] for n in names])[0]


def query_lines(style: str | None, length: str | None) -> str:
    """The styling prompt's lines for a drawn style and length ('' when neither is drawn)."""
    lines = []
    if style is not None:
        lines.append(f"Write the input {QUERY_STYLES[style]}.")
    if length is not None:
        lines.append(f"Make it {QUERY_LENGTHS[length]}.")
    return "\n".join(lines)


__all__ = ["QUERY_LENGTHS", "QUERY_STYLES", "check_distribution", "draw", "query_lines"]
