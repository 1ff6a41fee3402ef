"""The review record: a reviewer's decision on a golden, kept in the golden itself.

A decision lives in ``golden.metadata["review"]``, so it travels with the dataset in every format
and needs no side file::

    {"status": "accepted" | "rejected" | "pending",
     "reason": str | None,               # why it was rejected; None otherwise
     "reviewer": str,                    # who decided (``--reviewer``, default the OS user)
     "time": "2026-12-01T23:41:03Z",     # when, ISO 8601 UTC to the second
     "original": {"input": ..., "expected_output": ...}}   # only after an edit

``original`` holds the text of each edited field before its *first* edit (a second edit keeps the
first original), so the generated text is never lost. A golden without ``review`` is pending.

An edit of a pending golden accepts it: the reviewer read it and wrote the text they vouch for.
An edit of a decided golden keeps its status (a rejected golden, edited, stays rejected until the
reviewer accepts it). These are pure functions over :class:`~synth.data.Golden`: they return new
goldens and never touch a file (the review server and ``synth refill`` do that).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Final, Literal, get_args

from synth.data import Golden
from synth.dataset import Dataset
from synth.dataset._keys import REVIEW_KEY, golden_key, review_keys
from synth.errors import ConfigError

Status = Literal["accepted", "rejected", "pending"]
StatusFilter = Literal["accepted", "rejected", "pending", "all"]

STATUSES: Final[tuple[Status, ...]] = get_args(Status)
STATUS_FILTERS: Final[tuple[StatusFilter, ...]] = get_args(StatusFilter)
#: the reasons the review page offers; any other non-blank text is accepted as well
REJECT_REASONS: Final[tuple[str, ...]] = (
    "wrong answer",
    "not answerable from context",
    "ambiguous",
    "trivial",
    "duplicate",
    "bad language",
)
EDITABLE_FIELDS: Final = ("input", "expected_output")


def status_of(golden: Golden) -> Status:
    """The golden's review status: ``"pending"`` when it has no (valid) review record."""
    status = _record(golden).get("status")
    return status if status in STATUSES else "pending"


def decide(
    golden: Golden,
    status: str,
    *,
    reason: str | None = None,
    reviewer: str,
    now: datetime | None = None,
) -> Golden:
    """A copy of ``golden`` with the reviewer's decision recorded (any earlier edit kept).

    ``reason`` is optional for ``"rejected"`` and refused for the other statuses, so a record
    never says "accepted, because: wrong answer". ``"pending"`` undoes a decision.
    """
    checked = _status(status)
    text = _reason(reason, checked)
    record = _record(golden)
    new = {"status": checked, "reason": text, "reviewer": _reviewer(reviewer), "time": stamp(now)}
    if "original" in record:
        new["original"] = record["original"]
    return _with_record(golden, new)


def edit(
    golden: Golden,
    *,
    input: str | None = None,
    expected_output: str | None = None,
    reviewer: str,
    now: datetime | None = None,
) -> Golden:
    """A copy of ``golden`` with the given fields replaced and their first originals kept.

    A pending golden becomes accepted; a decided one keeps its status and reason.
    """
    pairs = (("input", input), ("expected_output", expected_output))
    changes = {name: value for name, value in pairs if value is not None}
    if not changes:
        raise ConfigError("edit: give the new input, the new expected_output, or both")
    if "input" in changes and not changes["input"].strip():
        raise ConfigError("edit: the input must not be empty or blank")
    record = _record(golden)
    original = dict(record.get("original") or {})
    for name, value in changes.items():
        current = getattr(golden, name)
        if value != current and name not in original:
            original[name] = current
    status = status_of(golden)
    new: dict[str, Any] = {
        "status": "accepted" if status == "pending" else status,
        "reason": record.get("reason") if status == "rejected" else None,
        "reviewer": _reviewer(reviewer),
        "time": stamp(now),
    }
    if original:
        new["original"] = original
    return _with_record(golden.edited(**changes), new)


def select(goldens: Dataset | Iterable[Golden], status: str) -> Dataset:
    """A :class:`~synth.Dataset` of the goldens with ``status`` (``"all"``: every one), in order.

    Given a Dataset, the result keeps its metadata.
    """
    wanted = _filter(status)
    metadata = goldens.metadata if isinstance(goldens, Dataset) else None
    kept = [g for g in goldens if wanted == "all" or status_of(g) == wanted]
    return Dataset(kept, metadata)


def counts(goldens: Iterable[Golden]) -> dict[Status, int]:
    """How many goldens have each status (every status present, zero when none)."""
    result: dict[Status, int] = dict.fromkeys(STATUSES, 0)
    for golden in goldens:
        result[status_of(golden)] += 1
    return result


def stamp(now: datetime | None = None) -> str:
    """``now`` (default: the current time) as ISO 8601 UTC to the second: ``2026-12-01T23:41:03Z``."""
    moment = now if now is not None else datetime.now(UTC)
    if moment.tzinfo is None:
        raise ConfigError("review time must be timezone-aware (a naive time has no UTC)")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _record(golden: Golden) -> dict[str, Any]:
    record = golden.metadata.get(REVIEW_KEY)
    return record if isinstance(record, dict) else {}


def _with_record(golden: Golden, record: dict[str, Any]) -> Golden:
    metadata = copy.deepcopy(golden.metadata)
    metadata[REVIEW_KEY] = record
    return golden.model_copy(update={"metadata": metadata})


def _status(status: str) -> Status:
    if status not in STATUSES:
        raise ConfigError(f"review status must be one of {', '.join(STATUSES)}; got {status!r}")
    return status  # type: ignore[return-value]  # checked just above


def _filter(status: str) -> StatusFilter:
    if status not in STATUS_FILTERS:
        raise ConfigError(f"status must be one of {', '.join(STATUS_FILTERS)}; got {status!r}")
    return status  # type: ignore[return-value]  # checked just above


def _reason(reason: str | None, status: Status) -> str | None:
    if reason is None:
        return None
    if status != "rejected":
        raise ConfigError(f"a reason is only recorded for a rejection, not for {status!r}")
    text = reason.strip()
    if not text:
        raise ConfigError("a rejection reason must not be blank (leave it out instead)")
    return text


def _reviewer(name: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("the reviewer's name must not be empty")
    return name.strip()


__all__ = [
    "EDITABLE_FIELDS",
    "REJECT_REASONS",
    "REVIEW_KEY",
    "STATUSES",
    "STATUS_FILTERS",
    "Status",
    "StatusFilter",
    "counts",
    "decide",
    "edit",
    "golden_key",
    "review_keys",
    "select",
    "stamp",
    "status_of",
]
