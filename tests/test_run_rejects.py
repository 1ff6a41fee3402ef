"""What a run writes of each drop (synth/run/rejects.py): the reject row, the raw reply kept once,
and the one line per reason that ``synth generate`` prints from ``rejects.jsonl``."""

from __future__ import annotations

import json

from synth._ids import text_hash
from synth._journal import Journal, reject_row
from synth.run.rejects import BAD_REPLIES, first_drops


def test_a_reject_row_adds_the_detail_and_points_at_the_raw_reply_kept_once(tmp_path) -> None:
    record = {"candidate": "c1", "stage": "filter", "reason": "model_error: invalid_output"}
    raw = "not the JSON asked for"
    key = text_hash(raw, 16)
    with Journal(tmp_path / f"{BAD_REPLIES}.jsonl") as bad:
        row = reject_row(record, "expected a score", raw, bad)
        again = reject_row({**record, "candidate": "c2"}, "expected a score", raw, bad)
        assert bad.records == {key: {"key": key, "reply": raw}}
    assert row == {
        **record,
        "detail": "expected a score",
        "raw_reply": {"file": "bad_replies.jsonl", "key": key},
    }
    assert again["raw_reply"] == row["raw_reply"] and again["candidate"] == "c2"
    assert record == {"candidate": "c1", "stage": "filter", "reason": "model_error: invalid_output"}
    # the same reply met twice is written once
    lines = (tmp_path / "bad_replies.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [{"key": key, "reply": raw}]


def test_a_reject_row_without_detail_or_raw_reply_is_the_record(tmp_path) -> None:
    record = {"stage": "dedup", "reason": "duplicate"}
    with Journal(tmp_path / "bad_replies.jsonl") as bad:
        assert reject_row(record, None, None, bad) == record
        assert reject_row(record, "", "", bad) == record
        assert len(bad) == 0
    # a raw reply with nowhere to keep it is left out
    assert reject_row(record, "why", "raw", None) == {**record, "detail": "why"}


def test_first_drops_gives_the_first_drop_of_each_reason_in_order(tmp_path) -> None:
    rows = [
        {"stage": "critic", "reason": "below_quality_threshold"},
        {
            "stage": "filter",
            "reason": "model_error: invalid_output",
            "detail": "filter scored items [3], expected 1..2",
            "raw_reply": {"file": "bad_replies.jsonl", "key": "abc"},
        },
        {"stage": "evolve", "reason": "below_quality_threshold", "detail": "later, not shown"},
        {"stage": "style", "reason": "cut_off", "raw_reply": {"file": "bad.jsonl", "key": "k2"}},
        {"stage": "expected", "reason": "refused", "detail": "no answer", "raw_reply": "odd"},
        {"stage": "dedup"},
    ]
    lines = [json.dumps(row) for row in rows]
    lines.insert(2, "{not json")
    (tmp_path / "rejects.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert first_drops(tmp_path) == [
        "first drop below_quality_threshold at critic",
        "first drop model_error: invalid_output at filter: filter scored items [3], expected 1..2"
        f" (raw reply: {tmp_path / 'bad_replies.jsonl'} key abc)",
        # without a detail, the raw reply's place is the second part
        f"first drop cut_off at style: raw reply: {tmp_path / 'bad.jsonl'} key k2",
        "first drop refused at expected: no answer",
        "first drop None at dedup",
    ]
    assert first_drops(str(tmp_path)) == first_drops(tmp_path)


def test_first_drops_of_a_run_without_rejects_is_empty(tmp_path) -> None:
    assert first_drops(tmp_path) == []
    (tmp_path / "rejects.jsonl").write_text("", encoding="utf-8")
    assert first_drops(tmp_path) == []
