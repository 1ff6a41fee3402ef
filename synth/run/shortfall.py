"""Why a run delivered fewer goldens than asked: the cause that stopped it first, then the drops."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from synth.contexts.feed import Feed, seed_drop_stage
from synth.generate.dedup import DUPLICATE
from synth.generate.dedup import LABEL as DEDUP
from synth.generate.draft import Draft
from synth.run.slots import NOT_NEEDED

#: why a run ended when each wanted context had been tried as often as allowed
TOP_UP_LIMIT = (
    "the top-up limit was reached: each wanted context may be tried 1 + max_retries times"
)
NEAR_DUPLICATES = "dedup: near-duplicate"
#: what a model failure kind means for the user, in the shortfall's first line
_MODEL_ERROR_HINTS = {
    "invalid_output": "the model's replies did not fit the requested format",
    "incomplete": "the model's replies were cut off or filtered",
    "rate_limit": "the server kept answering 429 after every retry",
    "server": "the server kept failing (5xx) after every retry",
    "timeout": "the model's requests kept timing out",
    "connection": "the server could not be reached",
    "bad_request": "the server refused the requests as invalid",
    "auth": "the server refused the API key",
}


def _is_model_error(reason: str) -> bool:
    return reason.split(": ")[-1].startswith("model_error")


def explain_shortfall(ending: str | None, drops: Counter[str]) -> list[str]:
    """Why fewer goldens than asked: the cause that stopped the run first, then what was dropped
    where (``drops``: ``"<stage>: <reason>" -> count``), most first.

    The top-up limit only ends a run because items kept being dropped, so when it ended the run
    the most frequent drop leads; model failures lead whenever they are at least half the drops
    (a model that fails is the thing to fix, whatever else happened); otherwise what ended the
    run (the corpus or the given contexts ran out) leads.
    """
    total = sum(drops.values())
    details = [
        f"{n} dropped as near-duplicates" if where == NEAR_DUPLICATES else f"{n} dropped at {where}"
        for where, n in drops.most_common()
    ]
    failures = Counter({w: n for w, n in drops.items() if _is_model_error(w)})
    lead: str | None = None
    if failures and 2 * sum(failures.values()) >= total:
        where, n = failures.most_common(1)[0]
        hint = _MODEL_ERROR_HINTS.get(where.rsplit("model_error:", 1)[-1])
        failed = sum(failures.values())
        every = "every item" if failed == total else f"{failed} of {total} dropped items"
        lead = (
            f"model errors: {every} failed, {n} at {where}"
            + (f" ({hint})" if hint else "")
            + "; see rejects.jsonl in the run directory"
        )
    elif drops and ending == TOP_UP_LIMIT:
        where, n = drops.most_common(1)[0]
        lead = f"{n} of {total} dropped items were dropped at {where}, and the top-up limit ended the run"
    reasons = [lead] if lead else []
    if ending is not None:
        reasons.append(ending)
    if not reasons:
        reasons.append("nothing more could be drawn")
    return reasons + details


def shortfall_of(feed: Feed, drafts: Iterable[Draft], near_duplicates: int) -> list[str]:
    """Why a run from ``feed`` ended short: how the feed ended, the seeds that made no context,
    the committed ``drafts`` dropped (near-duplicates counted once, as ``near_duplicates``: a
    loser may sit in an earlier slot; drafts not needed are no drop)."""
    ending = None
    if feed.budget_reached:
        ending = TOP_UP_LIMIT
    elif feed.exhausted:
        ending = feed.exhausted_reason
    drops: Counter[str] = Counter()
    for reason, n in feed.seed_outcomes(None).items():  # seeds that made no context
        if reason != "ok":
            drops[f"{seed_drop_stage(reason)}: {reason}"] += n
    for draft in drafts:
        near_duplicate = draft.dropped_at == DEDUP and draft.drop_reason == DUPLICATE
        if not draft.kept and draft.drop_reason != NOT_NEEDED and not near_duplicate:
            drops[f"{draft.dropped_at}: {draft.drop_reason}"] += 1
    if near_duplicates:
        drops[NEAR_DUPLICATES] += near_duplicates
    return explain_shortfall(ending, drops)


__all__ = ["NEAR_DUPLICATES", "TOP_UP_LIMIT", "explain_shortfall", "shortfall_of"]
