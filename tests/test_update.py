"""``synth update``: a dataset kept current as its documents change.

``sample_docs`` copied to a temporary folder, 30 goldens generated against the fake server (the
real openai SDK over HTTP; answering synth's prompts, or from the JSON schema alone); then one
file edited, one deleted, one added.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import fake_openai
import pytest
import synth_replies

from synth.cli import EXIT_STALE, main
from synth.data import Chunk, Golden
from synth.dataset import Dataset
from synth.dataset.review import decide, status_of
from synth.dataset.update import CHANGES_SUFFIX, RETIRED_SUFFIX, side_path, sort_goldens

REPO = Path(__file__).resolve().parent.parent
NEW_FILE = "\n\n".join(
    f"Section {i}. The balcony battery kit stores {i + 2} kWh and mounts on a rail of {i * 10 + 40} "
    f"cm; its inverter limits export to {i * 100 + 600} W and it restarts after a grid fault."
    for i in range(12)
)


@pytest.fixture(params=["smart", "generic"])
def server(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest):
    if request.param == "smart":
        fake = fake_openai.FakeOpenAI(reply=synth_replies.reply)
    else:
        fake = fake_openai.FakeOpenAI(mode="generic")
    with fake:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-update-not-a-real-key")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        yield fake


@pytest.fixture
def made(server) -> tuple[Dataset, list[str]]:
    """30 goldens from a copy of sample_docs (in ./docs); the dataset and its file's lines."""
    shutil.copytree(REPO / "sample_docs", "docs")
    args = ["generate", "docs", "--goldens", "30", "-o", "goldens.jsonl", "--embedder", "hash"]
    assert main([*args, "--grounding-threshold", "0", "--quiet"]) == 0
    return Dataset.load("goldens.jsonl"), Path("goldens.jsonl").read_text().splitlines()


def files_of(dataset: Dataset) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for index, golden in enumerate(dataset):
        out.setdefault(golden.source_files[0], []).append(index)
    return out


def change_the_corpus(dataset: Dataset) -> tuple[str, str]:
    """Edit one text file with goldens, delete another, add a new one; the two changed files."""
    texts = [f for f in files_of(dataset) if f.endswith((".md", ".txt"))]
    edited, deleted = texts[0], texts[1]
    Path(edited).write_text(Path(edited).read_text() + "\n\nA new paragraph about tariffs.\n")
    Path(deleted).unlink()
    Path("docs/balcony_kit.md").write_text(NEW_FILE, encoding="utf-8")
    return edited, deleted


def test_update_replaces_exactly_the_goldens_of_changed_files(made, server, capsys) -> None:
    dataset, lines = made
    edited, deleted = change_the_corpus(dataset)
    by_file = files_of(dataset)
    replaced = sorted(by_file[edited] + by_file[deleted])
    before = server.request_count()
    capsys.readouterr()

    assert main(["update", "goldens.jsonl", "docs", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    made_requests = server.request_count() - before
    after = Dataset.load("goldens.jsonl")
    after_lines = Path("goldens.jsonl").read_text().splitlines()

    assert len(after) == 30
    assert summary["stale"] == len(by_file[edited]) and summary["orphaned"] == len(by_file[deleted])
    for index in range(30):  # every other golden is byte-identical, in its place
        if index not in replaced:
            assert after_lines[index] == lines[index]
    new = [after.goldens[i] for i in replaced]
    assert all(status_of(g) == "pending" and g.metadata["update"]["round"] == 1 for g in new)
    sources = {g.source_files[0] for g in new}
    assert sources <= {edited, "docs/balcony_kit.md"}  # only from the changed and the new file
    assert "docs/balcony_kit.md" in sources  # the new file gets its share
    assert made_requests <= 4.5 * len(replaced)  # the final check: about one more a golden
    retired = Dataset.load(side_path("goldens.jsonl", RETIRED_SUFFIX))
    assert sorted(g.input for g in retired) == sorted(dataset.goldens[i].input for i in replaced)
    assert {g.metadata["retired"]["state"] for g in retired} == {"stale", "orphaned"}
    changes = json.loads(side_path("goldens.jsonl", CHANGES_SUFFIX).read_text())
    assert changes["files"][deleted]["status"] == "deleted"
    assert changes["files"][edited]["status"] == "changed"
    assert changes["files"]["docs/balcony_kit.md"]["status"] == "new"
    assert changes["files"]["docs/balcony_kit.md"]["added"] >= 1
    assert len(changes["kept_goldens"]) == 30 - len(replaced)
    assert sum(f["added"] for f in changes["files"].values()) == len(replaced)


def test_check_says_stale_or_current_and_makes_no_request(made, server, capsys) -> None:
    dataset, lines = made
    before = server.request_count()
    assert main(["update", "goldens.jsonl", "docs", "--check"]) == 0
    assert "is current" in capsys.readouterr().out
    change_the_corpus(dataset)
    assert main(["update", "goldens.jsonl", "docs", "--check", "--json"]) == EXIT_STALE
    summary = json.loads(capsys.readouterr().out)
    assert summary["stale"] >= 1 and summary["orphaned"] >= 1 and summary["new_files"] == 1
    assert summary["planned_requests"] > 0
    assert server.request_count() == before  # no model request, not even an embedding
    assert Path("goldens.jsonl").read_text().splitlines() == lines  # nothing written
    assert not side_path("goldens.jsonl", RETIRED_SUFFIX).exists()


def test_check_says_what_is_stale_in_counts(made, server, capsys) -> None:
    dataset, _ = made
    edited, _ = change_the_corpus(dataset)
    capsys.readouterr()
    assert main(["update", "goldens.jsonl", "docs", "--check"]) == EXIT_STALE
    head = capsys.readouterr().out.splitlines()[0]
    stale = len(files_of(dataset)[edited])
    assert f" {stale} stale, " in head and "True" not in head and "False" not in head
    assert main(["update", "goldens.jsonl", "docs", "--check", "--json"]) == EXIT_STALE
    summary = json.loads(capsys.readouterr().out)
    assert summary["stale"] == stale and summary["current"] is False
    assert summary["changed_files"] == 1  # the edited file, no other


def test_check_passes_right_after_an_update_that_left_a_new_file_without_golden(
    made, server, capsys
) -> None:
    Path("docs/balcony_kit.md").write_text(NEW_FILE, encoding="utf-8")  # nothing retired
    assert main(["update", "goldens.jsonl", "docs", "--check"]) == EXIT_STALE
    assert main(["update", "goldens.jsonl", "docs"]) == 0
    capsys.readouterr()
    assert main(["update", "goldens.jsonl", "docs", "--check", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["current"] is True and summary["new_files"] == 0
    assert summary["files_without_golden"] == 1  # reported, not stale
    Path("docs/another.md").write_text(NEW_FILE.replace("balcony", "garage"), encoding="utf-8")
    assert main(["update", "goldens.jsonl", "docs", "--check"]) == EXIT_STALE  # changed since
    assert "1 new, 1 without a golden" in capsys.readouterr().out


def test_an_unchanged_corpus_updates_nothing(made, server, capsys) -> None:
    _, lines = made
    before = server.request_count("chat")
    assert main(["update", "goldens.jsonl", "docs"]) == 0
    assert "is current" in capsys.readouterr().out
    assert Path("goldens.jsonl").read_text().splitlines() == lines
    assert server.request_count("chat") == before


def test_accepted_goldens_of_unchanged_files_stay_accepted(made, server) -> None:
    dataset, _ = made
    dataset.goldens = [decide(g, "accepted", reviewer="ann") for g in dataset.goldens]
    dataset.save("goldens.jsonl")
    edited, deleted = change_the_corpus(dataset)
    assert main(["update", "goldens.jsonl", "docs"]) == 0
    after = Dataset.load("goldens.jsonl")
    for golden in after:
        expected = "pending" if "update" in golden.metadata else "accepted"
        assert status_of(golden) == expected
        if expected == "accepted":
            assert golden.source_files[0] not in (edited, deleted)


# ---- sorting, on constructed chunks ---------------------------------------------------------------


def chunk(source: str, index: int, text: str) -> Chunk:
    return Chunk(
        id=f"{source}#{index}:{text}",
        document_id=source,
        text=text,
        source=source,
        index=index,
        token_count=len(text.split()),
    )


def test_goldens_are_kept_stale_or_orphaned_by_their_chunks_and_files(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a")
    (tmp_path / "b.md").write_text("b")
    locations = {"d/a.md": str(tmp_path / "a.md"), "d/b.md": str(tmp_path / "b.md")}
    now = [chunk("d/a.md", 0, "alpha"), chunk("d/b.md", 0, "beta two")]
    goldens = [
        Golden(input="q0", context_ids=[now[0].id], source_files=[str(tmp_path / "a.md")]),
        Golden(input="q1", context_ids=["d/b.md#0:beta"], source_files=[str(tmp_path / "b.md")]),
        Golden(input="q2", context_ids=["d/c.md#0:gone"], source_files=[str(tmp_path / "c.md")]),
        Golden(input="q3", context=["beta two"]),  # made elsewhere: matched by text
    ]
    plan = sort_goldens(Dataset(goldens), now, locations, known_files={"d/a.md", "d/b.md"})
    assert plan.states == ["kept", "stale", "orphaned", "kept"]
    assert plan.files[str(tmp_path / "b.md")].status == "changed"
    assert plan.files[str(tmp_path / "c.md")].status == "deleted"
    assert plan.files[str(tmp_path / "a.md")].status == "unchanged"
    assert plan.avoid == {now[0].id}  # a's chunks are avoided, the changed file's are not
    assert plan.retired == [1, 2]


def test_a_file_the_run_never_saw_is_new_and_a_note_says_when_it_gets_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.md").write_text("a")
    (tmp_path / "n.md").write_text("n")
    locations = {"d/a.md": str(tmp_path / "a.md"), "d/n.md": str(tmp_path / "n.md")}
    now = [chunk("d/a.md", 0, "alpha"), chunk("d/n.md", 0, "new")]
    goldens = [Golden(input="q0", context_ids=[now[0].id], source_files=[str(tmp_path / "a.md")])]
    plan = sort_goldens(Dataset(goldens), now, locations, known_files={"d/a.md"})
    assert plan.files[str(tmp_path / "n.md")].status == "new"
    assert plan.stale and not plan.retired
    assert "get no golden" in plan.notes[0]
