"""``iter_load``'s skip hook: it sees each file just before it would be read, and can answer for it."""

from __future__ import annotations

from pathlib import Path

from synth.ingest import FileStatus, FileToLoad, iter_load
from synth.ingest.text import read_text


def test_the_hook_sees_each_readable_file_and_its_answer_replaces_reading(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("alpha")
    (root / "sub" / "b.md").write_text("beta")
    (root / ".hidden.txt").write_text("hidden")
    (root / "c.png").write_bytes(b"\x89PNG")
    read: list[str] = []

    def reader(path: Path) -> str:
        read.append(path.name)
        return read_text(path).text

    seen: list[FileToLoad] = []

    def skip(pending: FileToLoad) -> FileStatus | None:
        seen.append(pending)
        if pending.path.endswith("a.txt"):
            return FileStatus(path=pending.path, status="ok", reason="kept", document_id="doc-a")
        return None

    results = list(iter_load(root, loaders={".txt": reader, ".md": reader}, skip=skip))

    assert [(p.path, p.suffix, p.file.name) for p in seen] == [
        ("notes/a.txt", ".txt", "a.txt"),
        ("notes/sub/b.md", ".md", "b.md"),
    ]
    assert all(p.loader is reader for p in seen)
    assert read == ["b.md"]  # a.txt was answered for, never opened
    by_path = {status.path: (status, document) for status, document in results}
    status, document = by_path["notes/a.txt"]
    assert (status.status, status.reason, status.document_id, document) == (
        "ok",
        "kept",
        "doc-a",
        None,
    )
    status, document = by_path["notes/sub/b.md"]
    assert status.status == "ok" and document is not None and document.text == "beta"
    # files flagged on the walk are reported as before and never reach the hook
    assert by_path["notes/.hidden.txt"][0].status == "skipped"
    assert by_path["notes/c.png"][0].status == "skipped"


def test_without_a_hook_every_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha")
    ((status, document),) = list(iter_load(tmp_path / "a.txt"))
    assert status.status == "ok" and document is not None and document.text == "alpha"
