"""``synth update --check`` as a CI job uses it: 0 right after ``synth update``, whatever the update
had to do (a file edited, one deleted, one added), and 4 again only once the documents change
since. The corpus and its 30 goldens are those of tests/test_update.py."""

from __future__ import annotations

import json
from pathlib import Path

from test_update import change_the_corpus, made, server  # noqa: F401 (fixtures)

from synth.cli import EXIT_STALE, main


def test_check_passes_right_after_an_update_of_edited_deleted_and_new_files(
    made,  # noqa: F811
    capsys,
) -> None:
    dataset, _ = made
    edited, _ = change_the_corpus(dataset)
    assert main(["update", "goldens.jsonl", "docs", "--check"]) == EXIT_STALE
    assert main(["update", "goldens.jsonl", "docs"]) == 0
    capsys.readouterr()
    assert main(["update", "goldens.jsonl", "docs", "--check", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["current"] is True
    assert (summary["stale"], summary["orphaned"], summary["new_files"]) == (0, 0, 0)
    assert summary["changed_files"] == 0 and summary["deleted_files"] == 0
    # an edit since the update makes it stale again, said in counts
    Path(edited).write_text(Path(edited).read_text() + "\n\nOne more paragraph on tariffs.\n")
    assert main(["update", "goldens.jsonl", "docs", "--check"]) == EXIT_STALE
    head = capsys.readouterr().out.splitlines()[0]
    assert "files: 1 changed, 0 deleted, 0 new" in head
    assert "True" not in head and "False" not in head
