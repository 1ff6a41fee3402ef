"""synth's pytest plugin: ``pytest --synth-dataset goldens.jsonl`` runs a test once per golden.

A test that takes a ``golden`` argument is parametrized over the dataset's goldens, each its own
test with a readable id (its position and its question's first words, ``07-what-does-the-gateway-
weigh``); ``synth.assert_answer(golden, answer, metrics=...)`` then fails it naming the golden,
the metric, the score and the reason::

    import synth

    def test_my_rag(golden):
        synth.assert_answer(golden, my_rag(golden.input), metrics=["token_f1"])

The package registers the plugin (the ``pytest11`` entry point), so it loads in every pytest
session where synth is installed: until ``--synth-dataset`` is given it imports nothing of synth
and changes nothing (a test asking for ``golden`` without it is skipped, saying why).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

_DATASET_KEY = pytest.StashKey[tuple[list[Any], list[str]]]()
_SLUG_WORDS = re.compile(r"[^\W_]+")
_SLUG_LENGTH = 48


def pytest_addoption(parser: pytest.Parser) -> None:
    """Declare ``--synth-dataset``."""
    group = parser.getgroup("synth", "synth goldens")
    group.addoption(
        "--synth-dataset",
        metavar="PATH",
        default=None,
        help="run every test that takes a 'golden' argument once per golden of this dataset "
        "(.jsonl, .json, .csv, .parquet)",
    )


def golden_id(index: int, golden: Any) -> str:
    """A golden's test id: its position, then its id or its question's first words."""
    name = golden.metadata.get("id")
    text = str(name) if name is not None else golden.input
    slug = "-".join(_SLUG_WORDS.findall(text.lower()))
    if len(slug) > _SLUG_LENGTH:
        slug = slug[:_SLUG_LENGTH].rsplit("-", 1)[0]
    return f"{index:02d}-{slug}" if slug else f"{index:02d}"


def _goldens(config: pytest.Config, path: str) -> tuple[list[Any], list[str]]:
    """The dataset's goldens and their ids, read once per session."""
    if _DATASET_KEY not in config.stash:
        from synth.dataset import Dataset
        from synth.errors import SynthError

        try:
            goldens = list(Dataset.load(path))
        except (SynthError, OSError) as exc:
            raise pytest.UsageError(f"--synth-dataset: {exc}") from None
        if not goldens:
            raise pytest.UsageError(f"--synth-dataset {path}: the dataset has no golden")
        config.stash[_DATASET_KEY] = (goldens, [golden_id(i, g) for i, g in enumerate(goldens)])
    return config.stash[_DATASET_KEY]


def pytest_configure(config: pytest.Config) -> None:
    """Read ``--synth-dataset`` when given: a dataset that cannot be read is a usage error, said
    once before any test is collected."""
    path = config.getoption("synth_dataset")
    if path:
        _goldens(config, path)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize a test that takes ``golden`` over the goldens of ``--synth-dataset``."""
    if "golden" not in metafunc.fixturenames:
        return
    path = metafunc.config.getoption("synth_dataset")
    if not path:
        return
    goldens, ids = _goldens(metafunc.config, path)
    metafunc.parametrize("golden", goldens, ids=ids)


@pytest.fixture
def golden() -> Any:
    """One golden of ``--synth-dataset`` (the test runs once per golden); skipped without it."""
    pytest.skip("no dataset: run pytest with --synth-dataset PATH to test each golden")


__all__ = [
    "golden",
    "golden_id",
    "pytest_addoption",
    "pytest_configure",
    "pytest_generate_tests",
]
