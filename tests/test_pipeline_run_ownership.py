"""What a Synthesizer owns for its runs: the models made once, the ingest called with its store,
a run opened in its place, the last session's manifest and directory, and the models closed on
close and on leaving a ``with`` block. Recorded stand-ins for what it calls, no model, no store."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from synth import pipeline
from synth.pipeline import Synthesizer
from synth.run.setup import RunPlace


class Made:
    """Stands in for RunModels: records what it is asked for and whether it was closed."""

    def __init__(self, options: object) -> None:
        self.options = options
        self.asked: list[object] = []
        self.closed = 0

    def embedder(self, named: object) -> str:
        self.asked.append(named)
        return f"embedder for {named}"

    def close(self) -> None:
        self.closed += 1


def Owner(run_dir: Any = None, progress: Any = None) -> Synthesizer:  # noqa: N802 (a maker)
    """A Synthesizer whose run and store arguments the tests look for."""
    return Synthesizer(
        run_dir=run_dir,
        progress=progress,
        store_path="the/store",
        store_url="http://store.example",
        ray="auto",
    )


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[Made]:
    """Every RunModels the Synthesizer makes, in order."""
    every: list[Made] = []

    def of(options: object) -> Made:
        every.append(Made(options))
        return every[-1]

    monkeypatch.setattr(pipeline.RunModels, "of", of)
    return every


def test_the_models_are_made_once_from_the_owner_and_reused(made: list[Made]) -> None:
    owner = Owner()
    first = owner._models()
    assert owner._models() is first
    assert len(made) == 1
    assert made[0].options is owner
    assert owner._made is first


def test_ingest_takes_the_configs_embedder_and_the_owners_store(
    made: list[Made], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def ingest_for_run(*args: Any, **kw: Any) -> tuple[str, str, str]:
        calls.append((args, kw))
        return ("store", "pending", "chunks")

    monkeypatch.setattr(pipeline, "ingest_for_run", ingest_for_run)
    owner = Owner()
    config = SimpleNamespace(embedder="hash")
    assert owner._ingest(["a.md", "b.md"], config) == ("store", "pending", "chunks")  # type: ignore[arg-type]
    assert made[0].asked == ["hash"]
    assert calls == [
        (
            (["a.md", "b.md"], config, "embedder for hash"),
            dict(store_path="the/store", store_url="http://store.example", ray="auto", web=None),
        )
    ]


def open_recorded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    calls: list[tuple[Any, ...]] = []

    def open_session(*args: Any) -> SimpleNamespace:
        calls.append(args)
        return SimpleNamespace(manifest={"status": "running", "n": len(calls)}, path=Path("r"))

    monkeypatch.setattr(pipeline, "open_session", open_session)
    return calls


def test_a_run_is_opened_in_the_owners_place_and_kept_as_the_last(
    made: list[Made], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = open_recorded(monkeypatch)
    display = object()
    owner = Owner(run_dir="runs/one", progress=display)
    configs = SimpleNamespace(part=None)
    inputs = {"contexts": [["a"]]}
    session = owner._run("contexts", inputs, 4, configs)  # type: ignore[arg-type]
    assert owner._session is session
    assert calls == [
        ("contexts", inputs, 4, configs, made[0], RunPlace(run_dir="runs/one", progress=display))
    ]
    assert owner.manifest == {"status": "running", "n": 1}
    assert owner.last_run_dir == Path("r")


def test_a_named_part_of_a_call_runs_in_its_own_folder_of_the_run_directory(
    made: list[Made], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = open_recorded(monkeypatch)
    owner = Owner(run_dir="runs")
    owner._run("docs", {}, None, SimpleNamespace(part="reasoning"))  # type: ignore[arg-type]
    assert calls[0][2] is None
    assert calls[0][5] == RunPlace(run_dir=Path("runs") / "reasoning", progress=None)


def test_before_any_run_there_is_no_manifest_nor_run_directory() -> None:
    owner = Owner()
    assert owner.manifest is None
    assert owner.last_run_dir is None


def test_the_last_sessions_manifest_and_directory_are_shown_as_they_are_now() -> None:
    owner = Owner()
    owner._session = SimpleNamespace(manifest={"status": "complete"}, path=Path("runs/7"))  # type: ignore[assignment]
    assert owner.manifest == {"status": "complete"}
    assert owner.last_run_dir == Path("runs/7")


def test_close_closes_the_models_made_and_nothing_when_none_were(made: list[Made]) -> None:
    owner = Owner()
    owner.close()
    assert owner._made is None
    models = owner._models()
    owner.close()
    assert models.closed == 1


def test_a_with_block_gives_the_owner_and_closes_its_models_on_leaving(made: list[Made]) -> None:
    owner = Owner()
    with owner as entered:
        assert entered is owner
        models = owner._models()
        assert models.closed == 0
    assert models.closed == 1
    with pytest.raises(KeyError):
        with owner:
            raise KeyError("x")
    assert models.closed == 2
