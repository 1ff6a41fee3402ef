"""Why a run delivered fewer goldens than asked: the cause that stopped it, then the drops."""

from __future__ import annotations

from collections import Counter

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


__all__ = ["NEAR_DUPLICATES", "TOP_UP_LIMIT", "explain_shortfall"]
