"""``assert_answer``: one golden's answer scored in a test, failing with the metric, the score and
the reason.

It is the per-golden check of a pytest suite (the plugin in :mod:`synth.pytest_plugin` hands the
test one golden at a time): each metric is scored as :func:`~synth.evaluate.answers.evaluate_answers`
scores it, and every metric below its threshold is named in one :class:`AssertionError`, with
the judge's reason (its rating's reason, the claims it found unsupported, the statements missing)
or, for a text metric, the reference it was compared with.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from synth.errors import ConfigError

#: the score a metric must reach when no threshold is given
DEFAULT_THRESHOLD = 0.5
_SHOWN = 160


def _short(text: str, limit: int = _SHOWN) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _golden_record(golden: Any) -> Any:
    from synth.data import Golden

    if isinstance(golden, Golden):
        return golden
    if isinstance(golden, Mapping):
        return Golden.model_validate(dict(golden))
    raise ConfigError(f"golden must be a Golden or a golden's mapping, got {type(golden).__name__}")


def golden_label(golden: Any, index: int | None = None) -> str:
    """How a failure names a golden: its id when it has one, else its question, shortened."""
    name = golden.metadata.get("id") if hasattr(golden, "metadata") else None
    if name is None and index is not None:
        name = index
    question = _short(golden.input, 80)
    return f"golden {name} ({question!r})" if name is not None else f"golden {question!r}"


def verdict_reason(verdict: Mapping[str, Any] | None) -> str:
    """The judge's reason in one line: its own words, or what its verdict found wanting."""
    if not verdict:
        return ""
    if isinstance(verdict.get("reason"), str) and verdict["reason"].strip():
        return _short(verdict["reason"])
    wanting = []
    for key, label in (("false_positives", "not in the reference"), ("false_negatives", "missing")):
        if verdict.get(key):
            wanting.append(f"{label}: " + "; ".join(_short(s, 80) for s in verdict[key]))
    unsupported = _unsupported_claims(verdict)
    if unsupported:
        wanting.append("unsupported: " + "; ".join(unsupported))
    for key, flag, label in (
        ("claims", "supported", "unsupported"),
        ("statements", "attributable", "not in the contexts"),
        ("verdicts", "relevant", "irrelevant contexts"),
    ):
        entries = verdict.get(key) or []
        bad = [e for e in entries if isinstance(e, Mapping) and e.get(flag) is False]
        if bad:
            texts = [str(e.get("claim") or e.get("statement") or e.get("index")) for e in bad]
            wanting.append(f"{label}: " + "; ".join(_short(t, 80) for t in texts))
    return _short(" | ".join(wanting), 400)


def _unsupported_claims(verdict: Mapping[str, Any]) -> list[str]:
    """A faithfulness verdict's unsupported claims, each with the judge's reason: ``claim (why)``."""
    claims = verdict.get("claims")
    if not isinstance(claims, list) or not all(isinstance(c, str) for c in claims):
        return []
    found = []
    for entry in verdict.get("verdicts") or []:
        if not isinstance(entry, Mapping) or entry.get("supported") is not False:
            continue
        index = entry.get("index")
        claim = claims[index - 1] if isinstance(index, int) and 0 < index <= len(claims) else ""
        why = str(entry.get("reason") or "").strip()
        text = _short(claim or f"claim {index}", 80)
        found.append(f"{text} ({_short(why, 80)})" if why else text)
    return found


def assert_answer(
    golden: Any,
    answer: str,
    *,
    metrics: Sequence[str] = ("token_f1",),
    judges: Any = None,
    criteria: Mapping[str, str] | None = None,
    threshold: float | Mapping[str, float] = DEFAULT_THRESHOLD,
    contexts: Sequence[str] | None = None,
) -> dict[str, float]:
    """Score ``answer`` to ``golden`` on ``metrics``; raise :class:`AssertionError` naming every
    metric below its ``threshold`` (one number, or ``{metric: number}``) with its score and why.

    ``metrics`` mixes text metrics (``exact_match``, ``token_f1``) and judge metrics (those need
    ``judges``, as in :func:`~synth.evaluate.answers.evaluate_answers`); ``criteria`` adds rubric
    metrics. ``contexts`` are what the system retrieved (default: the golden's). A metric that
    cannot be scored (no reference, a judge that failed) fails too, saying why. Returns the
    scores when every metric passes.
    """
    # pytest shows the failure at the user's call, not inside this function
    __tracebackhide__ = True
    from synth.evaluate.answers import evaluate_answers
    from synth.evaluate.text import TEXT_METRICS

    record = _golden_record(golden)
    if not isinstance(answer, str):
        raise ConfigError(f"answer must be a string, got {type(answer).__name__}")
    names = list(metrics) + list(criteria or {})
    if not names:
        raise ConfigError("assert_answer needs at least one metric")
    update: dict[str, Any] = {"actual_output": answer}
    if contexts is not None:
        update["retrieval_context"] = list(contexts)
    scored = record.model_copy(update=update)
    report = evaluate_answers.__wrapped__(  # type: ignore[attr-defined]
        None,
        [scored],
        judges=judges,
        metrics=[m for m in metrics if m not in TEXT_METRICS],
        text_metrics=[m for m in metrics if m in TEXT_METRICS],
        criteria=criteria,
        keep_verdicts=True,
    )
    row = report.items[0]
    label = golden_label(record)
    failures = []
    for metric in names:
        score = row.scores.get(metric, math.nan)
        limit = (
            float(threshold.get(metric, DEFAULT_THRESHOLD))
            if isinstance(threshold, Mapping)
            else float(threshold)
        )
        if math.isnan(score):
            why = row.skipped.get(metric) or "; ".join(
                f"{source}: {error}"
                for source, error in row.errors.items()
                if source.startswith(metric)
            )
            failures.append(f"{metric} could not be scored: {why or 'no score'}")
            continue
        if score >= limit:
            continue
        if metric in TEXT_METRICS:
            reason = f"the answer {_short(answer, 80)!r} against the reference {_short(record.expected_output or '', 80)!r}"
        else:
            reasons = [
                verdict_reason(verdict)
                for key, verdict in row.verdicts.items()
                if key.split("/", 1)[0] == metric
            ]
            reason = " / ".join(r for r in reasons if r) or "the judge gave no reason"
        failures.append(f"{metric} {score:.2f} < {limit:g}: {reason}")
    if failures:
        raise AssertionError(f"{label}: " + "; ".join(failures))
    return {metric: row.scores[metric] for metric in names}


__all__ = ["DEFAULT_THRESHOLD", "assert_answer", "golden_label", "verdict_reason"]
