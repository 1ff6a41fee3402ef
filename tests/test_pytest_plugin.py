"""synth's pytest plugin, run by pytester as a user's suite: ``--synth-dataset`` makes a test per
golden with a readable id, ``synth.assert_answer`` fails naming the golden, the metric, the score
and the reason, and without the option nothing changes (and nothing of synth is imported)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from synth import Dataset, Golden, assert_answer

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parent.parent

USER_TESTS = """
import json

import synth


def my_system(question):
    n = int(question.split()[2])
    return str(2 * n) if n % 7 else "I do not know"


def test_answers(golden):
    synth.assert_answer(golden, my_system(golden.input), metrics=["exact_match", "token_f1"])


def judge(prompt, system):
    answer = prompt.split("<answer>\\n")[1].split("\\n</answer>")[0]
    if any(c.isdigit() for c in answer):
        return json.dumps({"reason": "it gives a number", "score": 5})
    return json.dumps({"reason": "it does not say how much", "score": 1})


def test_judged(golden):
    synth.assert_answer(
        golden, my_system(golden.input), metrics=["answer_relevance"], judges={"j": judge}
    )


def test_without_goldens():
    assert True
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A user's project: 30 goldens and a test file; the plugin loaded as its entry point does."""
    # the plugin loaded by name, not from this environment's entry points (which name the
    # checkout installed, maybe not this one)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    goldens = [Golden(input=f"What is {n} + {n}?", expected_output=str(2 * n)) for n in range(30)]
    Dataset(goldens).save(pytester.path / "goldens.jsonl")
    pytester.makepyfile(test_user=USER_TESTS)
    return pytester


def run(suite: pytest.Pytester, *args: str) -> pytest.RunResult:
    # a process of its own: an in-process run would unload the numpy it imported, which cannot
    # be loaded twice in one process
    return suite.runpytest_subprocess("-p", "synth.pytest_plugin", "-p", "no:cacheprovider", *args)


def test_each_golden_is_its_own_test_with_a_readable_id(suite: pytest.Pytester) -> None:
    result = run(suite, "--synth-dataset", "goldens.jsonl", "-k", "test_answers", "-v")
    result.assert_outcomes(passed=25, failed=5)
    lines = result.stdout.lines
    assert any("test_answers[00-what-is-0-0] FAILED" in line for line in lines)
    assert any("test_answers[29-what-is-29-29] PASSED" in line for line in lines)
    ids = [line.split("[", 1)[1].split("]")[0] for line in lines if "::test_answers[" in line]
    assert len(set(ids)) == 30


def test_a_failure_names_the_golden_the_metric_the_score_and_why(suite: pytest.Pytester) -> None:
    result = run(suite, "--synth-dataset", "goldens.jsonl", "-k", "test_answers")
    result.stdout.fnmatch_lines([
        "*AssertionError: golden 'What is 7 + 7?': exact_match 0.00 < 0.5: the answer "
        "'I do not know' against the reference '14'; token_f1 0.00 < 0.5: *",
    ])  # fmt: skip
    failed = [line.split()[1] for line in result.stdout.lines if line.startswith("FAILED")]
    # the failure is shown at the user's call; synth's own code stays out of the traceback
    assert not [line for line in result.stdout.lines if "assertions.py" in line]
    result.stdout.fnmatch_lines(["test_user.py:12: AssertionError"])
    assert failed == [
        f"test_user.py::test_answers[{n:02d}-what-is-{n}-{n}]" for n in range(0, 30, 7)
    ]


def test_a_judged_failure_gives_the_judges_reason(suite: pytest.Pytester) -> None:
    result = run(suite, "--synth-dataset", "goldens.jsonl", "-k", "test_judged")
    result.assert_outcomes(passed=25, failed=5)
    result.stdout.fnmatch_lines(
        ["*golden 'What is 14 + 14?': answer_relevance 0.00 < 0.5: it does not say how much*"]
    )


def test_without_the_option_a_golden_test_is_skipped_and_the_rest_runs(
    suite: pytest.Pytester,
) -> None:
    result = run(suite, "-rs")
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(["*run pytest with --synth-dataset PATH to test each golden*"])


def test_a_dataset_that_cannot_be_read_is_one_usage_error(suite: pytest.Pytester) -> None:
    result = run(suite, "--synth-dataset", "missing.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if "missing.jsonl" in line]
    assert errors == ["ERROR: --synth-dataset: missing.jsonl: no such file"]


def test_the_package_registers_the_plugin() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["pytest11"] == {"synth": "synth.pytest_plugin"}


def test_loading_the_plugin_imports_nothing_of_synth_but_itself() -> None:
    """It loads in every pytest session of an environment with synth: it must cost nothing."""
    code = (
        "import json, sys, synth.pytest_plugin; "
        "print(json.dumps([m for m in sys.modules if m.startswith(('synth', 'pydantic', 'numpy'))]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout
    loaded = json.loads(out)
    assert not [m for m in loaded if m.startswith(("pydantic", "numpy"))], loaded
    assert set(loaded) <= {
        "synth",
        "synth._interrupt",
        "synth._lazy",
        "synth._version",
        "synth.pytest_plugin",
    }


def test_assert_answer_returns_the_scores_when_they_pass() -> None:
    golden = Golden(input="What is 2 + 2?", expected_output="4")
    assert assert_answer(golden, "4", metrics=["exact_match"]) == {"exact_match": 1.0}
    scores = assert_answer(
        {"input": "Why?", "expected_output": "the sky"}, "the sky is", threshold=0.5
    )
    assert scores["token_f1"] == pytest.approx(2 / 3)  # "the" is not a word token_f1 counts
    with pytest.raises(AssertionError, match=r"token_f1 could not be scored: no reference"):
        assert_answer(Golden(input="Why?"), "because")
    with pytest.raises(AssertionError, match=r"token_f1 0.67 < 0.9: the answer 'the sky is'"):
        assert_answer(
            {"input": "Why?", "expected_output": "the sky"},
            "the sky is",
            threshold={"token_f1": 0.9},
        )
