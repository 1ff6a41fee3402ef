"""load_documents / iter_load: walking, skipping, naming, ids, custom loaders, streaming."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ingest_files import make_docx, make_pdf

from synth import (
    ConfigError,
    Document,
    FileStatus,
    IngestError,
    LoadReport,
    Page,
    iter_load,
    load_documents,
    register_loader,
)
from synth.ingest import registered_loaders, unregister_loader


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    write(root / "b.md", "# B\n\nbee")
    write(root / "a.txt", "aye")
    write(root / "sub" / "c.txt", "see")
    write(root / "sub" / "deeper" / "d.md", "dee")
    write(root / ".hidden.txt", "secret")
    write(root / ".git" / "config", "[core]")
    write(root / ".git" / "objects" / "x.txt", "object")
    write(root / "notes.rtf", "{\\rtf1}")
    write(root / "Makefile", "all:")
    write(root / "~$draft.docx", "lock")
    return root


def test_walks_recursively_in_sorted_order_and_lists_what_it_skips(tree):
    report = load_documents(tree)

    assert [(f.path, f.status, f.reason) for f in report.files] == [
        ("corpus/.git/", "skipped", "hidden folder"),
        ("corpus/.hidden.txt", "skipped", "hidden file"),
        ("corpus/Makefile", "skipped", "unsupported type (no extension)"),
        ("corpus/a.txt", "ok", ""),
        ("corpus/b.md", "ok", ""),
        ("corpus/notes.rtf", "skipped", "unsupported type .rtf"),
        ("corpus/sub/c.txt", "ok", ""),
        ("corpus/sub/deeper/d.md", "ok", ""),
        ("corpus/~$draft.docx", "skipped", "Office lock file"),
    ]
    assert report.counts() == {"ok": 4, "error": 0, "skipped": 5}
    assert report.summary() == "9 files: 4 ok, 0 errors, 5 skipped"
    assert [d.text for d in report.documents] == ["aye", "# B\n\nbee", "see", "dee"]


def test_iter_load_streams_one_file_at_a_time(tree):
    calls: list[str] = []

    def loader(path: Path) -> str:
        calls.append(path.name)
        return path.read_text()

    results = iter_load(tree, loaders={".txt": loader, ".md": loader})
    first_ok = next(item for item in results if item.status.status == "ok")
    assert calls == ["a.txt"]  # later files are not read yet
    status, document = first_ok
    assert isinstance(status, FileStatus) and document is not None and document.text == "aye"
    rest = list(results)
    assert calls == ["a.txt", "b.md", "c.txt", "d.md"]
    assert len(rest) == 5  # 9 entries, 4 consumed up to and including a.txt


def test_display_paths_ignore_how_the_folder_was_spelled(tree, monkeypatch):
    absolute = load_documents(tree)
    monkeypatch.chdir(tree.parent)
    relative = load_documents("./corpus/")
    monkeypatch.chdir(tree / "sub")
    dotted = load_documents(os.path.join("..", "..", "corpus"))

    for report in (relative, dotted):
        assert [d.path for d in report.documents] == [d.path for d in absolute.documents]
        assert [d.id for d in report.documents] == [d.id for d in absolute.documents]


def test_a_file_given_directly_is_named_by_its_file_name(tree):
    report = load_documents([tree / "sub" / "c.txt"])
    assert [d.path for d in report.documents] == ["c.txt"]


def test_same_name_in_different_folders_gets_distinct_paths_and_ids(tmp_path):
    root = tmp_path / "docs"
    write(root / "2023" / "report.txt", "identical content")
    write(root / "2024" / "report.txt", "identical content")

    documents = load_documents(root).documents

    assert [d.path for d in documents] == ["docs/2023/report.txt", "docs/2024/report.txt"]
    assert len({d.id for d in documents}) == 2


def test_clashing_names_from_separate_arguments_stay_distinct(tmp_path):
    one = write(tmp_path / "one" / "faq.md", "same")
    two = write(tmp_path / "two" / "faq.md", "same")

    report = load_documents([one, two])

    paths = [d.path for d in report.documents]
    assert paths[0] == "faq.md" and paths[1] != "faq.md" and paths[1].endswith("two/faq.md")
    assert len({d.id for d in report.documents}) == 2


def test_the_same_file_reached_twice_is_loaded_once(tree):
    report = load_documents([tree, tree / "a.txt"])
    assert report.files[-1].status == "skipped"
    assert report.files[-1].reason == "already loaded as corpus/a.txt"
    assert [d.path for d in report.documents].count("corpus/a.txt") == 1


def test_spaces_unicode_and_long_names(tmp_path):
    root = tmp_path / "naïve docs"
    long_name = ("x" * 196) + ".txt"
    names = ["with space.txt", "résumé – 日本語.md", "emoji 🙂.txt", long_name]
    for index, name in enumerate(names):
        write(root / name, f"content {index}")
    write(root / "sub dir" / "with space.txt", "content 0")

    report = load_documents(root)

    assert report.counts()["ok"] == 5
    paths = {d.path for d in report.documents}
    assert f"naïve docs/{long_name}" in paths
    assert "naïve docs/sub dir/with space.txt" in paths
    assert len({d.id for d in report.documents}) == 5


def test_document_ids_are_stable_and_follow_path_and_content(tmp_path):
    path = write(tmp_path / "docs" / "a.txt", "version one")
    first = load_documents(tmp_path / "docs").documents[0]
    again = load_documents(tmp_path / "docs").documents[0]
    path.write_text("version two")
    edited = load_documents(tmp_path / "docs").documents[0]
    path.rename(tmp_path / "docs" / "b.txt")
    moved = load_documents(tmp_path / "docs").documents[0]

    assert first.id == again.id
    assert len({first.id, edited.id, moved.id}) == 3


def test_missing_path_is_an_error_entry(tmp_path):
    report = load_documents([tmp_path / "nowhere", tmp_path / "gone.txt"])
    assert [f.status for f in report.files] == ["error", "error"]
    assert {f.reason for f in report.files} == {"no such file or folder"}
    assert report.documents == []


def test_an_empty_folder_gives_an_empty_report(tmp_path):
    (tmp_path / "empty").mkdir()
    report = load_documents(tmp_path / "empty")
    assert report == LoadReport()
    assert report.summary() == "0 files: 0 ok, 0 errors, 0 skipped"


def test_mixed_formats_with_metadata(tmp_path):
    root = tmp_path / "mixed"
    make_pdf(root / "manual.pdf", ["one", "two"])
    make_docx(root / "policy.docx", [("p", "Policy text")])
    write(root / "notes.md", "Notes")

    report = load_documents(root)

    pdf, markdown, word = report.files
    assert (pdf.suffix, pdf.pages, word.suffix, word.pages, markdown.suffix) == (
        ".pdf",
        2,
        ".docx",
        None,
        ".md",
    )
    assert all(f.document_id and f.file.startswith(os.sep) for f in report.files)
    assert report.documents[0].metadata["suffix"] == ".pdf"
    assert report.documents[0].metadata["size_bytes"] == (root / "manual.pdf").stat().st_size


class TestCustomLoaders:
    @pytest.fixture(autouse=True)
    def _restore_registry(self):
        before = registered_loaders()
        yield
        # a loader added, or one put over a built-in reader (.html is one): unregistering it
        # brings the built-in back, so later tests in this process read as before
        for suffix, loader in registered_loaders().items():
            if before.get(suffix) is not loader:
                unregister_loader(suffix)

    def test_register_a_loader_for_a_new_suffix(self, tmp_path):
        write(tmp_path / "d" / "page.html", "<p>Hello <b>world</b></p>")
        write(tmp_path / "d" / "notes.txt", "plain")

        register_loader(
            "HTML", lambda path: path.read_text().replace("<p>", "").replace("</p>", "")
        )
        report = load_documents(tmp_path / "d")

        assert [(f.path, f.status, f.suffix) for f in report.files] == [
            ("d/notes.txt", "ok", ".txt"),
            ("d/page.html", "ok", ".html"),
        ]
        assert report.documents[1].text == "Hello <b>world</b>"

    def test_a_loader_can_return_a_document_with_pages(self, tmp_path):
        def slides(path: Path) -> Document:
            parts = path.read_text().split("---")
            starts, text = [], ""
            for part in parts:
                starts.append(len(text))
                text += part
            pages = [Page(number=i + 1, start=s) for i, s in enumerate(starts)]
            return Document(id="ignored", path="ignored", text=text, pages=pages, metadata={"n": 2})

        write(tmp_path / "deck.slides", "first slide---second slide")
        report = load_documents(tmp_path / "deck.slides", loaders={".slides": slides})

        document = report.documents[0]
        assert document.path == "deck.slides" and document.id != "ignored"
        assert [p.number for p in document.pages] == [1, 2]
        assert report.files[0].pages == 2 and document.metadata["n"] == 2

    def test_longest_suffix_wins_and_per_call_loaders_do_not_register(self, tmp_path):
        write(tmp_path / "x" / "data.tar.gz", "archive")
        write(tmp_path / "x" / "other.gz", "gzip")
        loaders = {".gz": lambda p: "gz", ".tar.gz": lambda p: "tar.gz"}

        report = load_documents(tmp_path / "x", loaders=loaders)

        assert [d.text for d in report.documents] == ["tar.gz", "gz"]
        assert ".gz" not in registered_loaders()

    def test_loader_errors_become_statuses(self, tmp_path):
        def broken(path: Path) -> str:
            raise IngestError("cannot parse this\nsecond line")

        write(tmp_path / "y" / "a.bad", "x")
        report = load_documents(tmp_path / "y", loaders={".bad": broken})
        assert report.files[0].status == "error"
        assert report.files[0].reason == "cannot parse this second line"

    def test_a_loader_returning_the_wrong_type_is_a_bug(self, tmp_path):
        write(tmp_path / "z" / "a.odd", "x")
        with pytest.raises(ConfigError, match="returned int"):
            load_documents(tmp_path / "z", loaders={".odd": lambda p: 42})

    def test_invalid_registrations(self):
        with pytest.raises(ConfigError):
            register_loader(".", lambda p: "")
        with pytest.raises(ConfigError):
            register_loader(".x", "not callable")  # type: ignore[arg-type]

    def test_unregistering_a_builtin_restores_it(self, tmp_path):
        write(tmp_path / "w" / "a.txt", "real text")
        register_loader(".txt", lambda p: "replaced")
        assert load_documents(tmp_path / "w").documents[0].text == "replaced"
        unregister_loader(".txt")
        assert load_documents(tmp_path / "w").documents[0].text == "real text"
