"""The update's plan, merge and write (synth/dataset/update.py) without a run: goldens sorted against
chunks made here, new goldens given as a dataset. tests/test_update.py runs ``synth update``
through whole runs over the fake server."""

from __future__ import annotations

import json
from pathlib import Path

from synth.data import Chunk, Golden
from synth.dataset import Dataset
from synth.dataset.refill import REFILL_REVIEWER, refill_seed
from synth.dataset.review import decide, golden_key, status_of
from synth.dataset.update import (
    CHANGES_SUFFIX,
    RETIRED_SUFFIX,
    FileChange,
    known_files,
    merge_update,
    side_path,
    sort_goldens,
    update_seed,
    write_update,
)

#: update_seed(7, 1) and update_seed(0, 2), fixed for good: an update is as reproducible as its run
SEED_7_1 = 299139729489930525
SEED_0_2 = 324270683510703593


def chunk(source: str, index: int, text: str) -> Chunk:
    return Chunk(
        id=f"{source}#{index}:{text}", document_id=source, text=text, source=source, index=index,
        token_count=1,
    )  # fmt: skip


class Corpus:
    """Files a.md, b.md and c.md in ``folder`` (their display paths d/a.md, ...), one chunk each."""

    def __init__(self, folder: Path, names: tuple[str, ...] = ("a", "b", "c")) -> None:
        self.path = {n: str(folder / f"{n}.md") for n in names}
        for path in self.path.values():
            Path(path).write_text("x", encoding="utf-8")
        self.locations = {f"d/{n}.md": self.path[n] for n in names}
        self.chunks = [chunk(f"d/{n}.md", 0, f"{n} text") for n in names]

    def golden(self, name: str, file: str, chunk_ids: list[str], **metadata: object) -> Golden:
        source = self.path.get(file, f"/gone/{file}.md")
        return Golden(
            input=f"q {name}?", context_ids=chunk_ids, source_files=[source],
            metadata={"draft_id": name, **metadata},
        )  # fmt: skip


def test_update_seeds_follow_the_run_seed_and_the_round_apart_from_refills() -> None:
    assert update_seed(7, 1) == update_seed(7, 1)
    seeds = {update_seed(7, 1), update_seed(7, 2), update_seed(8, 1), refill_seed(7, 1), 7}
    assert len(seeds) == 5


def test_each_golden_has_its_reason_and_each_file_its_counts(tmp_path: Path) -> None:
    corpus = Corpus(tmp_path)
    goldens = [
        corpus.golden("k", "a", ["d/a.md#0:a text"]),
        corpus.golden("s", "b", ["d/b.md#0:b old", "d/b.md#1:b gone"]),
        corpus.golden("o", "z", ["d/z.md#0:z"]),
        corpus.golden("k2", "a", ["d/a.md#0:a text"]),
    ]
    plan = sort_goldens(Dataset(goldens), corpus.chunks, corpus.locations)
    assert plan.states == ["kept", "stale", "orphaned", "kept"]
    assert plan.reasons == [
        None,
        "2 of its chunks changed or vanished (first: d/b.md#0:b old)",
        "/gone/z.md is gone",
        None,
    ]
    # known_files not given: a file no golden came from (c.md) is new
    assert plan.files == {
        corpus.path["a"]: FileChange("unchanged", kept=2),
        corpus.path["b"]: FileChange("changed", retired=1),
        "/gone/z.md": FileChange("deleted", retired=1),
        corpus.path["c"]: FileChange("new"),
    }
    assert plan.counts() == {
        "kept": 2,
        "stale": 1,
        "orphaned": 1,
        "new_files": 1,
        "changed_files": 1,
        "deleted_files": 1,
        "files_without_golden": 0,
    }
    assert plan.avoid == {"d/a.md#0:a text"}  # only the unchanged file's chunks
    assert plan.notes == []  # goldens are retired: the new file gets its share


def test_a_golden_names_its_file_as_the_corpus_does_now_and_counts_once_per_file(
    tmp_path: Path, monkeypatch
) -> None:
    corpus = Corpus(tmp_path, ("a", "b"))
    monkeypatch.chdir(tmp_path)
    both = Golden(
        input="q?",
        context_ids=["d/a.md#0:a text", "d/b.md#0:b text"],
        source_files=["a.md", "a.md", corpus.path["b"]],  # relative, twice
    )
    plan = sort_goldens(Dataset([both]), corpus.chunks, corpus.locations)
    assert plan.files == {
        corpus.path["a"]: FileChange("unchanged", kept=1),
        corpus.path["b"]: FileChange("unchanged", kept=1),
    }
    assert plan.states == ["kept"] and not plan.stale
    assert plan.avoid == {c.id for c in corpus.chunks}


def test_a_golden_is_orphaned_only_when_none_of_its_files_is_left(tmp_path: Path) -> None:
    corpus = Corpus(tmp_path, ("a",))
    half = Golden(
        input="q?", context_ids=["d/a.md#0:old"], source_files=["/gone/z.md", corpus.path["a"]]
    )
    nowhere = Golden(input="q2?", context_ids=["x#0:old"])  # no file named: stale, not orphaned
    empty = Golden(input="q3?")  # no chunk nor text: nothing changed under it
    plan = sort_goldens(Dataset([half, nowhere, empty]), corpus.chunks, corpus.locations)
    assert plan.states == ["stale", "stale", "kept"]
    assert plan.reasons[1] == "1 of its chunks changed or vanished (first: x#0:old)"
    text = "t" * 50
    elsewhere = Golden(input="q?", context=[text])  # made elsewhere: matched by text, cut at 40
    assert sort_goldens(Dataset([elsewhere]), corpus.chunks, corpus.locations).reasons == [
        f"1 of its chunks changed or vanished (first: {'t' * 40})"
    ]


def test_the_files_the_run_ingested_decide_which_are_new(tmp_path: Path) -> None:
    corpus = Corpus(tmp_path, ("a", "n", "m"))
    goldens = [corpus.golden("k", "a", ["d/a.md#0:a text"])]
    plan = sort_goldens(
        Dataset(goldens), corpus.chunks, corpus.locations, known_files={"d/a.md", "d/m.md"}
    )
    # m.md was ingested by the run (no golden came from it): not new, and its chunks avoided
    assert plan.files == {
        corpus.path["a"]: FileChange("unchanged", kept=1),
        corpus.path["n"]: FileChange("new"),
    }
    assert plan.avoid == {"d/a.md#0:a text", "d/m.md#0:m text"}
    assert plan.stale and plan.retired == []
    assert plan.notes == [
        f"1 new file(s) get no golden: nothing was retired to make room, and the dataset keeps "
        f"its 1 goldens (first: {corpus.path['n']})"
    ]


def test_the_round_seed_and_run_come_from_the_dataset(tmp_path: Path) -> None:
    corpus = Corpus(tmp_path, ("a",))
    made = corpus.golden("k", "a", ["d/a.md#0:a text"], seed=5)
    earlier = [{"round": 1}, {"round": 2}]
    dataset = Dataset([made], {"run_id": "r9", "updates": earlier})
    plan = sort_goldens(dataset, corpus.chunks, corpus.locations, seed=1)
    assert (plan.round, plan.seed, plan.run_id) == (3, update_seed(5, 3), "r9")
    alone = sort_goldens(Dataset([], {"run_id": 4}), corpus.chunks, corpus.locations, seed=1)
    assert (alone.round, alone.seed, alone.run_id) == (1, update_seed(1, 1), None)


def test_the_summary_lists_counts_files_in_order_and_notes(tmp_path: Path) -> None:
    corpus = Corpus(tmp_path, ("b", "a"))
    goldens = [corpus.golden("s", "b", ["d/b.md#0:old"])]
    plan = sort_goldens(Dataset(goldens), corpus.chunks, corpus.locations)
    plan.added = 1
    plan.notes.append("a note")
    summary = plan.summary()
    assert summary == {
        "round": 1,
        **plan.counts(),
        "retired": 1,
        "added": 1,
        "files": {
            corpus.path["a"]: {"status": "new", "kept": 0, "retired": 0, "added": 0},
            corpus.path["b"]: {"status": "changed", "kept": 0, "retired": 1, "added": 0},
        },
        "notes": ["a note"],
    }
    assert list(summary["files"]) == sorted(summary["files"])
    summary["notes"].append("x")
    assert plan.notes == ["a note"]  # a copy


def new_goldens(corpus: Corpus, *names: str, short: bool = False) -> Dataset:
    goldens = [corpus.golden(n, "a", ["d/a.md#0:a text"]) for n in names]
    metadata: dict[str, object] = {"run_id": "r-new"}
    if short:
        metadata.update(num_goldens=len(names) + 1, delivered=len(names), shortfall=["dry"])
    return Dataset(goldens, metadata)


def test_the_merge_puts_new_goldens_in_the_retired_ones_places(tmp_path: Path) -> None:
    corpus = Corpus(tmp_path, ("a", "b"))
    kept = decide(corpus.golden("k", "a", ["d/a.md#0:a text"]), "accepted", reviewer="ann")
    goldens = [corpus.golden("s", "b", ["d/b.md#0:old"]), kept, corpus.golden("o", "z", ["z"])]
    dataset = Dataset(goldens, {"run_id": "r1", "seed": 3})
    plan = sort_goldens(dataset, corpus.chunks, corpus.locations)
    merged, retired = merge_update(plan, new_goldens(corpus, "n1", "k"))
    assert [g.input for g in merged] == ["q n1?", "q k?", "q k?"]
    assert merged.goldens[1] is kept  # a kept golden as it was, review included
    fresh = [merged.goldens[0], merged.goldens[2]]
    assert [status_of(g) for g in fresh] == ["pending", "pending"]
    assert fresh[0].metadata["review"]["reviewer"] == REFILL_REVIEWER
    assert [g.metadata["update"] for g in fresh] == [{"round": 1, "of_run": "r1"}] * 2
    # a new golden whose draft id a golden of the dataset has gets its own key
    assert [golden_key(g) for g in merged] == ["n1", "k", "k-u1"]
    assert [g.metadata["retired"] for g in retired] == [
        {"state": "stale", "reason": plan.reasons[0], "round": 1},
        {"state": "orphaned", "reason": "/gone/z.md is gone", "round": 1},
    ]
    assert "retired" not in goldens[0].metadata  # the dataset's own goldens untouched
    assert plan.added == 2 and plan.files[corpus.path["a"]].added == 2
    assert merged.metadata["updates"] == [
        {
            "round": 1,
            "seed": plan.seed,
            **plan.counts(),
            "added": 2,
            "run_id": "r-new",
            "seen_files": ["d/a.md", "d/b.md"],
        }
    ]
    assert (merged.metadata["num_goldens"], merged.metadata["delivered"]) == (3, 3)
    assert merged.metadata["shortfall"] == [] and merged.metadata["seed"] == 3


def test_places_the_new_goldens_cannot_fill_are_closed_up_and_said(tmp_path: Path) -> None:
    corpus = Corpus(tmp_path, ("a", "b"))
    goldens = [corpus.golden("s", "b", ["old1"]), corpus.golden("t", "b", ["old2"])]
    earlier = {"round": 1, "added": 0}
    plan = sort_goldens(Dataset(goldens, {"updates": [earlier]}), corpus.chunks, corpus.locations)
    merged, retired = merge_update(plan, new_goldens(corpus, "n1", short=True))
    assert [g.input for g in merged] == ["q n1?"] and len(retired) == 2
    assert merged.metadata["updates"][0] == earlier and len(merged.metadata["updates"]) == 2
    assert (merged.metadata["num_goldens"], merged.metadata["delivered"]) == (2, 1)
    assert merged.metadata["shortfall"] == ["update round 2 replaced 1 of 2 goldens", "dry"]
    assert merged.shortfall is not None and merged.shortfall.reason.startswith("update round 2")


def test_a_merge_with_nothing_retired_leaves_the_count_alone(tmp_path: Path) -> None:
    corpus = Corpus(tmp_path, ("a",))
    plan = sort_goldens(
        Dataset([corpus.golden("k", "a", ["d/a.md#0:a text"])], {"num_goldens": 9}),
        corpus.chunks,
        corpus.locations,
    )
    merged, retired = merge_update(plan, Dataset())
    assert retired == [] and merged.metadata["num_goldens"] == 9
    assert "delivered" not in merged.metadata and "shortfall" not in merged.metadata
    assert merged.metadata["updates"][0]["run_id"] is None


def test_a_new_golden_of_a_file_the_plan_did_not_list_counts_for_it(tmp_path: Path) -> None:
    corpus = Corpus(tmp_path, ("a", "b"))
    plan = sort_goldens(Dataset([corpus.golden("s", "b", ["old"])]), corpus.chunks, {})
    other = Golden(input="q x?", source_files=["/else/x.md", "/else/y.md"])
    merge_update(plan, Dataset([other]))
    # not listed: there, seen, with no golden; its chunks are taken once the others have none
    # left, so it was not touched
    assert plan.files["/else/x.md"] == FileChange("unchanged", added=1)
    assert "/else/y.md" not in plan.files  # the first source file only


def test_only_the_edited_file_of_a_golden_of_two_files_counts_as_changed(tmp_path: Path) -> None:
    corpus = Corpus(tmp_path, ("a", "b"))
    # one chunk of a.md (edited since: its ids are all new) and b.md's chunk, still there
    both = Golden(
        input="q?",
        context_ids=["d/a.md#0:a old", "d/b.md#0:b text"],
        source_files=[corpus.path["a"], corpus.path["b"]],
    )
    plan = sort_goldens(Dataset([both]), corpus.chunks, corpus.locations)
    assert plan.states == ["stale"]
    assert plan.files == {
        corpus.path["a"]: FileChange("changed", retired=1),
        corpus.path["b"]: FileChange("unchanged", retired=1),
    }
    assert plan.counts()["changed_files"] == 1


def test_a_file_an_update_saw_is_not_new_again_but_counted_without_a_golden(
    tmp_path: Path,
) -> None:
    corpus = Corpus(tmp_path, ("a", "n", "m"))
    dataset = Dataset([corpus.golden("k", "a", ["d/a.md#0:a text"])])
    plan = sort_goldens(dataset, corpus.chunks, corpus.locations, known_files={"d/a.md"})
    assert plan.counts()["new_files"] == 2 and plan.stale
    recorded, _ = merge_update(plan, Dataset())  # nothing retired: only what it saw is recorded
    assert recorded.metadata["updates"][0]["seen_files"] == ["d/a.md", "d/m.md", "d/n.md"]
    again = sort_goldens(recorded, corpus.chunks, corpus.locations, known_files={"d/a.md"})
    assert not again.stale
    assert again.counts()["new_files"] == 0 and again.counts()["files_without_golden"] == 2
    later = Corpus(tmp_path, ("a", "n", "m", "z"))  # a file none of them saw: new, stale
    after = sort_goldens(recorded, later.chunks, later.locations, known_files={"d/a.md"})
    assert after.files == {
        corpus.path["a"]: FileChange("unchanged", kept=1),
        later.path["z"]: FileChange("new"),
    }
    assert after.stale and after.counts()["files_without_golden"] == 2


def test_the_written_update_keeps_each_retired_golden_once_and_lists_the_changes(
    tmp_path: Path,
) -> None:
    corpus = Corpus(tmp_path, ("a", "b"))
    path = tmp_path / "set.jsonl"
    goldens = [corpus.golden("k", "a", ["d/a.md#0:a text"]), corpus.golden("s", "b", ["old"])]
    plan = sort_goldens(Dataset(goldens), corpus.chunks, corpus.locations)
    merged, retired = merge_update(plan, new_goldens(corpus, "n1"))
    write_update(path, merged, retired, plan)
    write_update(path, merged, retired, plan)  # again, as after a write cut short
    assert side_path(path, RETIRED_SUFFIX) == tmp_path / "set.jsonl.retired.jsonl"
    assert [g.input for g in Dataset.load(side_path(path, RETIRED_SUFFIX))] == ["q s?"]
    assert Dataset.load(path) == merged
    changes = json.loads(side_path(path, CHANGES_SUFFIX).read_text(encoding="utf-8"))
    assert changes == {
        **json.loads(json.dumps(plan.summary())),
        "kept_goldens": ["k"],
        "retired_goldens": ["s"],
        "added_goldens": ["n1"],
    }
    assert CHANGES_SUFFIX == ".changes.json"


def test_the_files_a_run_ingested_are_its_manifests_coverage_rows(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    dataset = Dataset([], {"run_id": "r1"})
    assert known_files(dataset, path) is None  # no manifest
    rows = [{"source": "d/a.md"}, {"target": 1}, "junk", {"source": 3}]
    manifest = {"run_id": "r1", "coverage": {"files": rows}}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert known_files(dataset, path) == {"d/a.md", "3"}
    manifest["coverage"] = {"files": {"d/a.md": 1}}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert known_files(dataset, path) is None  # not a list of rows
    manifest.pop("coverage")
    (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert known_files(dataset, path) is None


def test_an_updates_seed_is_the_same_in_every_version_and_fits_in_60_bits(tmp_path: Path) -> None:
    assert update_seed(7, 1) == SEED_7_1 and update_seed(0, 2) == SEED_0_2
    assert all(update_seed(s, r) < 2**60 for s in range(20) for r in range(1, 4))
    corpus = Corpus(tmp_path, ("a",))
    # no seed given and none on the goldens: the lineage of seed 0
    assert sort_goldens(Dataset([]), corpus.chunks, corpus.locations).seed == update_seed(0, 1)


def test_every_retired_golden_of_a_file_counts_and_a_golden_of_two_gone_files_names_both(
    tmp_path: Path,
) -> None:
    corpus = Corpus(tmp_path, ("a", "b"))
    goldens = [corpus.golden(n, "b", [f"d/b.md#0:{n}"]) for n in ("s1", "s2", "s3")]
    two = Golden(input="q?", context_ids=["z#0"], source_files=["/gone/y.md", "/gone/z.md"])
    plan = sort_goldens(Dataset([*goldens, two]), corpus.chunks, corpus.locations)
    assert plan.files[corpus.path["b"]] == FileChange("changed", retired=3)
    assert plan.reasons[3] == "/gone/y.md, /gone/z.md is gone"


def test_a_second_update_adds_its_retired_goldens_to_the_first_ones(tmp_path: Path) -> None:
    corpus = Corpus(tmp_path, ("a", "b"))
    path = tmp_path / "set.jsonl"
    first = [corpus.golden("s", "b", ["old"]), corpus.golden("t", "b", ["d/b.md#0:b text"])]
    plan = sort_goldens(Dataset(first), corpus.chunks, corpus.locations)
    merged, retired = merge_update(plan, new_goldens(corpus, "n1"))
    write_update(path, merged, retired, plan)
    Path(corpus.path["b"]).unlink()  # b.md is gone: t goes too
    later = sort_goldens(Dataset.load(path), corpus.chunks[:1], {"d/a.md": corpus.path["a"]})
    merged, retired = merge_update(later, new_goldens(corpus, "n2"))
    write_update(path, merged, retired, later)
    assert [g.input for g in Dataset.load(side_path(path, RETIRED_SUFFIX))] == ["q s?", "q t?"]


def test_the_changelog_is_indented_json_with_its_text_as_written(tmp_path: Path) -> None:
    corpus = Corpus(tmp_path, ("é",))
    path = tmp_path / "set.jsonl"
    plan = sort_goldens(
        Dataset([corpus.golden("s", "é", ["old"])]), corpus.chunks, corpus.locations
    )
    merged, retired = merge_update(plan, Dataset())
    write_update(path, merged, retired, plan)
    text = side_path(path, CHANGES_SUFFIX).read_text(encoding="utf-8")
    assert text.startswith('{\n  "round": 1,\n') and text.endswith("\n}\n")
    assert corpus.path["é"] in text  # not escaped
