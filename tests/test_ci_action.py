"""The GitHub Action (action.yml) run locally: a fresh ``git clone`` of this repository, the
action's own ``run:`` scripts executed by bash as the runner would (its inputs passed through
their environment variables), on a user's project; the ``uses:`` steps (setup-python, the
artifact upload) are the runner's and are stood in for: Python is this one, in a fresh venv that
sees the installed dependencies but not synth, which the action's install step puts there.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest
import yaml
from lxml import etree

from synth import Dataset, Golden

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
SCHEMA = Path(__file__).parent / "data" / "junit-10.xsd"
_EXPRESSION = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")
#: the steps the runner provides, stood in for by this test's set-up
RUNNER_ACTIONS = ("actions/setup-python@", "actions/upload-artifact@")

USER_CODE = """
import json

def good(question):
    return str(2 * int(question.split()[2]))

def worse(question):
    n = int(question.split()[2])
    return str(2 * n) if n % 3 else "no idea"

def judge(prompt, system):
    answer = prompt.split("<answer>\\n")[1].split("\\n</answer>")[0]
    return json.dumps({"reason": "", "score": 5 if any(c.isdigit() for c in answer) else 1})
"""


def action(clone: Path) -> dict:
    return yaml.safe_load((clone / "action.yml").read_text(encoding="utf-8"))


def scripts(clone: Path) -> list[dict]:
    """The action's ``run:`` steps (install, gate), after checking its other steps are the
    runner's own."""
    steps = action(clone)["runs"]["steps"]
    for step in steps:
        if "uses" in step:
            assert step["uses"].startswith(RUNNER_ACTIONS), step["uses"]
    return [step for step in steps if "run" in step]


def expand(text: str, inputs: dict[str, str], action_path: Path) -> str:
    """``text`` with its ``${{ inputs.X }}`` and ``${{ github.action_path }}`` filled in."""
    declared = action(action_path)["inputs"]

    def value(found: re.Match[str]) -> str:
        name = found.group(1)
        if name == "github.action_path":
            return str(action_path)
        assert name.startswith("inputs."), f"action.yml uses {name}, unknown to this test"
        key = name.removeprefix("inputs.")
        assert key in declared, f"action.yml reads an undeclared input {key}"
        return inputs.get(key, str(declared[key].get("default", "")))

    return _EXPRESSION.sub(value, text)


def run_step(step: dict, inputs: dict[str, str], clone: Path, env: dict[str, str], cwd: Path):
    """A ``run:`` step as a composite action runs it: bash -eo pipefail, its env expanded."""
    assert step["shell"] == "bash"
    assert "${{" not in step["run"], "inputs must reach a script through env, not be pasted in"
    step_env = {k: expand(str(v), inputs, clone) for k, v in step.get("env", {}).items()}
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=cwd,
        env={**env, **step_env},
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A fresh clone of this repository and the environment of a runner's job (PATH to a venv)."""
    root = tmp_path_factory.mktemp("runner")
    clone = root / "synth"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True, timeout=120)
    venv = root / "venv"
    base = Path(sys.base_prefix) / "bin" / "python3"
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    # the dependencies (and pip) from this environment, with no synth: the action installs it
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}",
        PIP_NO_INDEX="1",  # no network: every dependency is already there
        PIP_NO_BUILD_ISOLATION="0",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        COLUMNS="200",
    )
    assert action(clone)["runs"]["using"] == "composite"
    install = scripts(clone)[0]
    done = run_step(install, {}, clone, env, root)
    assert done.returncode == 0, done.stderr[-2000:]
    where = subprocess.run(
        ["python", "-c", "import synth; print(synth.__file__)"],
        env=env, capture_output=True, text=True, check=True, cwd=root,
    ).stdout  # fmt: skip
    assert where.startswith(str(venv)), where  # the clone's synth, installed by the action
    return clone, env


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "usr.py").write_text(textwrap.dedent(USER_CODE), encoding="utf-8")
    goldens = [
        Golden(input=f"What is {n} + {n}?", expected_output=str(2 * n), context=[f"{2 * n}"])
        for n in range(30)
    ]
    Dataset(goldens).save(tmp_path / "goldens.jsonl")
    return tmp_path


def test_the_actions_steps_gate_a_pull_request_from_a_fresh_clone(runner, project) -> None:
    clone, env = runner
    env = {**env, "GITHUB_STEP_SUMMARY": str(project / "summary.md")}
    gate = scripts(clone)[1]
    inputs = {
        "dataset": "goldens.jsonl",
        "baseline": "ci/baseline.json",
        "judges": "j=usr:judge",
        "metrics": "token_f1\nanswer_relevance",
        "margins": "token_f1=0.05",
    }
    (project / "ci").mkdir()

    made = run_step(
        gate, {**inputs, "system": "usr:good", "args": "--update-baseline"}, clone, env, project
    )
    assert made.returncode == 0, made.stderr
    assert "wrote the baseline ci/baseline.json: 30 items" in made.stdout

    passed = run_step(gate, {**inputs, "system": "usr:good"}, clone, env, project)
    assert passed.returncode == 0, passed.stderr
    assert "## synth gate: passed" in (project / "summary.md").read_text()

    failed = run_step(gate, {**inputs, "system": "usr:worse"}, clone, env, project)
    assert failed.returncode == 1, failed.stderr  # the job fails on the pull request
    assert failed.stderr.startswith("synth: gate failed: token_f1 is worse by 0.333")
    summary = (project / "summary.md").read_text()
    assert summary.count("## synth gate:") == 2 and "## synth gate: failed ❌" in summary
    schema = etree.XMLSchema(etree.parse(str(SCHEMA)))
    assert schema.validate(etree.parse(str(project / "synth-gate.xml"))), schema.error_log


def test_an_input_with_shell_characters_is_passed_as_data(runner, project) -> None:
    clone, env = runner
    gate = scripts(clone)[1]
    hostile = {"dataset": "goldens.jsonl; touch pwned", "baseline": "$(touch pwned2).json"}
    done = run_step(gate, {**hostile, "metrics": "*"}, clone, env, project)
    assert done.returncode == 2
    assert not (project / "pwned").exists() and not (project / "pwned2").exists()
    assert done.stderr.startswith("synth: error: no baseline at $(touch pwned2).json")


def test_the_installed_package_registers_the_pytest_plugin(runner, project) -> None:
    """``pytest --synth-dataset`` works in the environment the action installed synth into, with
    no ``-p``: the package's entry point loads the plugin."""
    _, env = runner
    (project / "test_usr.py").write_text(
        "import synth\nfrom usr import good\n\n\ndef test_good(golden):\n"
        "    synth.assert_answer(golden, good(golden.input), metrics=['exact_match'])\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        ["python", "-m", "pytest", "-p", "no:cacheprovider", "--synth-dataset", "goldens.jsonl"],
        cwd=project, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "30 passed" in done.stdout


def ci_page_yaml() -> dict[str, dict]:
    """docs/ci.md's YAML blocks (the GitHub workflow, the GitLab job), by their first comment."""
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)\n```", text, re.DOTALL)
    return {block.splitlines()[0].lstrip("# ").strip(): yaml.safe_load(block) for block in blocks}


def test_the_documented_workflow_gives_the_action_only_inputs_it_declares() -> None:
    workflow = ci_page_yaml()[".github/workflows/gate.yml"]
    steps = workflow["jobs"]["gate"]["steps"]
    gate = next(step for step in steps if str(step.get("uses", "")).endswith("/synth@main"))
    declared = action(REPO)["inputs"]
    assert set(gate["with"]) <= set(declared), set(gate["with"]) - set(declared)
    required = {name for name, spec in declared.items() if spec.get("required")}
    assert required <= set(gate["with"])
    cached = next(step for step in steps if str(step.get("uses", "")).startswith("actions/cache"))
    assert cached["with"]["path"] == gate["with"]["cache"]  # the judges' replies are kept


def test_the_documented_gitlab_job_runs_a_command_synth_accepts() -> None:
    from synth.cli import build_parser

    job = ci_page_yaml()[".gitlab-ci.yml"]["synth-gate"]
    commands = [
        " ".join(line.split()) for line in job["script"] if line.strip().startswith("synth")
    ]
    assert len(commands) == 1
    args = build_parser().parse_args(shlex.split(commands[0])[1:])  # exits 2 on an unknown flag
    assert args.junit == job["artifacts"]["reports"]["junit"]
    assert args.cache in job["cache"]["paths"] and args.summary in job["artifacts"]["paths"]
