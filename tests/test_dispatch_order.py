"""The order the parallel workers are handed the suite's units in (tests/conftest.py): the longest
units first, so none of them starts last and leaves the other worker idle at the end."""

from __future__ import annotations

from conftest import LONGEST_FIRST, dispatch_order


def test_the_longest_units_go_first_in_their_listed_order_and_the_rest_keep_theirs() -> None:
    collected = [
        "tests/test_a.py::test_one",
        "tests/test_docs.py::test_every_page_has_runnable_blocks_or_none_at_all",
        "tests/test_docs.py::test_doc_blocks[README.md]",
        "tests/test_docs.py::test_doc_blocks[docs/large-corpora.md]",
        "tests/test_interrupt.py::test_ctrl_c_while_starting",
        "tests/test_b.py::test_two",
        "tests/test_bench_ingest.py::test_header_says_when_and_with_what",
        "tests/test_interrupt.py::test_ctrl_c_while_ingesting",
        "tests/test_bench_ingest.py::test_ratios_follow_from_the_times",
    ]
    assert dispatch_order(collected) == [
        "tests/test_bench_ingest.py::test_header_says_when_and_with_what",
        "tests/test_bench_ingest.py::test_ratios_follow_from_the_times",
        "tests/test_interrupt.py::test_ctrl_c_while_starting",
        "tests/test_interrupt.py::test_ctrl_c_while_ingesting",
        "tests/test_docs.py::test_doc_blocks[docs/large-corpora.md]",
        "tests/test_a.py::test_one",
        "tests/test_docs.py::test_every_page_has_runnable_blocks_or_none_at_all",
        "tests/test_docs.py::test_doc_blocks[README.md]",
        "tests/test_b.py::test_two",
    ]


def test_every_listed_unit_is_a_test_file_of_the_suite() -> None:
    from pathlib import Path

    tests = Path(__file__).resolve().parent
    for prefix in LONGEST_FIRST:
        assert (tests.parent / prefix.split("::")[0]).is_file(), prefix
