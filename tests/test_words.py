"""The one tokenizer of the trust measurements: words, content words, overlap."""

from synth._words import content_words, overlap, words


def test_words_are_casefolded_unicode_runs():
    assert words("Straße, ÉTÉ und 30 Tage!") == ["strasse", "été", "und", "30", "tage"]


def test_content_words_leave_out_stopwords_and_single_characters():
    assert content_words("What is the refund window, a 30-day one?") == [
        "refund",
        "window",
        "30",
        "day",
        "one",
    ]


def test_overlap_is_the_share_of_distinct_content_words_found():
    assert overlap("refund window refund policy", ["The refund window is 30 days."]) == 2 / 3
    assert overlap("refund window", ["refund", "WINDOW"]) == 1.0
    assert overlap("what is it", ["anything"]) == 0.0
    assert overlap("tariffs", []) == 0.0
