"""Each drop reason of the checks that keep goldens worth keeping has its row in docs/pipeline.md.

The reasons are read from the modules that drop (the prose filter's rules, the critic's
disqualifiers, the final input's checks and the expected output's), so a reason added there
without its row fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synth.contexts import critic, prose
from synth.generate import final_check, input_checks

PIPELINE = Path(__file__).parent.parent / "docs" / "pipeline.md"


def reasons() -> list[str]:
    """The drop reasons of the prose filter, the critic, the final check and the answer's checks."""
    checks = [
        value
        for name, value in vars(input_checks).items()
        if name.isupper() and isinstance(value, str) and value == name.lower()
    ]
    return [
        *prose.RULES,
        *critic.DISQUALIFIERS,
        critic.NOT_PROSE,
        critic.BELOW_THRESHOLD,
        *checks,
        final_check.NOT_STANDALONE,
    ]


def test_the_reasons_are_read_from_every_check() -> None:
    found = set(reasons())
    assert {"dotted_leaders", "table_of_contents", "meta_reference", "answer_leaked"} <= found
    assert {"not_standalone", "unanswerable", "copied_span", "too_long"} <= found


@pytest.mark.parametrize("reason", sorted(set(reasons())))
def test_each_drop_reason_has_its_row_in_the_pipeline_docs(reason: str) -> None:
    rows = re.findall(r"^\| `([a-z_]+)` \|", PIPELINE.read_text(encoding="utf-8"), re.MULTILINE)
    assert reason in rows


@pytest.mark.parametrize("reason", sorted(set(reasons())))
def test_the_quality_docs_explain_each_drop_reason(reason: str) -> None:
    quality = PIPELINE.with_name("quality.md").read_text(encoding="utf-8")
    assert f"`{reason}`" in quality
