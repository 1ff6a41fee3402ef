"""mutation/targets.toml names modules and test files that exist, so `make mutation` does not rot."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_every_target_module_and_test_file_exists() -> None:
    targets = tomllib.loads((REPO / "mutation" / "targets.toml").read_text(encoding="utf-8"))
    modules = targets["modules"]
    assert modules
    missing = [
        path
        for module, entry in modules.items()
        for path in [module, *entry["tests"]]
        if not _exists(path)
    ]
    assert missing == []
    assert all(entry["tests"] for entry in modules.values())


def _exists(target: str) -> bool:
    """A file, or ``file::test`` (``[params]`` allowed): the file holds that test function."""
    path, _, test = target.partition("::")
    test = test.partition("[")[0]
    if not (REPO / path).is_file():
        return False
    return not test or f"def {test}(" in (REPO / path).read_text(encoding="utf-8")
