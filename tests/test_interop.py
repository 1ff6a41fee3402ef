"""synth's exports loaded by the real tools, each installed from PyPI in an environment of its own.

The environments are built once per machine and kept, keyed by the pinned versions and this
Python's version, under ``$SYNTH_INTEROP_DIR`` (default ``<tmp>/synth-interop``); a test that
finds its environment missing builds it (the first run takes a few minutes: they are built in
parallel). A test is skipped only when the package registry cannot be reached, with pip's reason.
Bump a version here to check a newer release: a new key builds a new environment.

promptfoo is an npm package: its environment is a folder ``npm install``ed from the npm registry
(node and npm needed; skipped, with the reason, without them), and the export is loaded by running
``promptfoo eval`` on it with promptfoo's offline ``echo`` provider.

Versions pinned: the releases current when this was written. judgeval 1.6.0 imports yaml without
declaring it; ragas 0.4.3 imports ``langchain_community.chat_models.vertexai``, which
langchain-community 0.4.2 removed: both are installed explicitly.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from synth import ConversationalGolden, Dataset, Golden, Turn
from synth.dataset._conversations import to_deepeval_any
from synth.dataset._platforms import to_langfuse, to_langsmith, to_promptfoo
from synth.dataset._records import JUDGEVAL_FIELDS, to_deepeval, to_judgeval, to_judgeval_legacy

pytestmark = [pytest.mark.interop, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
LOADER = HERE / "interop_load.py"

#: the pip requirements of each tool's environment
ENVIRONMENTS: dict[str, tuple[str, ...]] = {
    "judgeval": ("judgeval==1.6.0", "pyyaml==6.0.4"),
    "judgeval-legacy": ("judgeval==0.0.55",),
    "deepeval": ("deepeval==4.3.1", "pandas==3.1.1"),
    "ragas": ("ragas==0.4.3", "langchain-community==0.4.1"),
    "langsmith": ("langsmith==0.15.1",),
    "langfuse": ("langfuse==5.2.0",),
    "phoenix": ("arize-phoenix-client==3.5.0", "pandas==3.1.1"),
}
#: the environment each export format is loaded in
TOOL_ENV = {
    "judgeval": "judgeval",
    "judgeval-legacy": "judgeval-legacy",
    "deepeval": "deepeval",
    "deepeval-csv": "deepeval",
    "deepeval-conversations": "deepeval",
    "deepeval-tools": "deepeval",
    "ragas-tools": "ragas",
    "ragas": "ragas",
    "deepeval-save-as": "deepeval",
    "langsmith": "langsmith",
    "langfuse": "langfuse",
    "phoenix": "phoenix",
}
CHILD_ENV = {
    "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # judgeval 0.0.x imports litellm
    "JUDGMENT_API_KEY": "",
    "OPENAI_API_KEY": "sk-interop-not-used",
}
INSTALL_TIMEOUT = 1800


def goldens() -> list[Golden]:
    """Goldens with what each format has to carry: quotes, commas, newlines, ``|``, unicode, an
    empty context and no context ids, several source files, nested metadata."""
    return [
        Golden(
            input='Which pump, "P-3" | P-4, runs at night?\nAnswer briefly.',
            expected_output="P-4, from 22:00 to 06:00 | daily.",
            context=["Pump P-4 runs nightly, 22:00\u201306:00 | see table 3.", "P-3: standby."],
            context_ids=["manual.pdf:3", "manual.pdf:4"],
            source_files=["manuals/manual.pdf", "notes/\u00e9t\u00e9.md"],
            metadata={"evolutions": ["reasoning"], "quality": {"critic": 0.75}, "seed": 7},
        ),
        Golden(
            input="Bare question?",
            actual_output="An answer, with a comma.",
            context=[],
            retrieval_context=["r1 | r2", "r3"],
        ),
        Golden(
            input="Où se trouve la passerelle ?",
            expected_output="Au sous-sol.",
            context=["La passerelle est au sous-sol."],
            retrieval_context=[],
            context_ids=["c9"],
            source_files=["docs/fr.md"],
            metadata={
                "persona": "a night-shift technician",
                "query_style": "terse",
                "query_length": "short",
            },
        ),
    ]


# ---- the environments ------------------------------------------------------------------------------
def _root() -> Path:
    return Path(
        os.environ.get("SYNTH_INTEROP_DIR") or Path(tempfile.gettempdir()) / "synth-interop"
    )


def _env_dir(name: str) -> Path:
    key = json.dumps([ENVIRONMENTS[name], sys.version_info[:2]])
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return _root() / f"{name}-{digest}"


def _python(folder: Path) -> Path:
    return folder / "bin" / "python"


def _ready(folder: Path) -> bool:
    return (folder / "synth-interop-ok").is_file()


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test runs on one machine build it once
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _registry_unreachable() -> str | None:
    """pip's reason when the registry cannot be reached (None when it can)."""
    package = ENVIRONMENTS["judgeval"][0].split("==")[0]
    done = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", package],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode == 0:
        return None
    lines = (done.stderr or done.stdout).strip().splitlines()
    return lines[-1] if lines else f"pip exited {done.returncode}"


def _start_build(name: str, log: IO[str]) -> subprocess.Popen[str]:
    folder = _env_dir(name)
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, timeout=300)
    return subprocess.Popen(
        [str(_python(folder)), "-m", "pip", "install", *ENVIRONMENTS[name]],
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.fixture(scope="module")
def environments() -> dict[str, Path]:
    """Each tool's Python, its environment built (all missing ones at once) or reused."""
    folders = {name: _env_dir(name) for name in ENVIRONMENTS}
    missing = [name for name, folder in folders.items() if not _ready(folder)]
    if missing:
        reason = _registry_unreachable()
        if reason is not None:
            message = f"the package registry cannot be reached to install {missing}: {reason}"
            print(message, file=sys.stderr)
            pytest.skip(message)
        with contextlib.ExitStack() as stack:
            for name in missing:
                stack.enter_context(_locked(folders[name]))
            building = {}
            for name in missing:
                if _ready(folders[name]):  # another run built it while this one waited
                    continue
                shutil.rmtree(folders[name], ignore_errors=True)  # a build that was cut short
                folders[name].mkdir(parents=True)
                log = stack.enter_context(open(folders[name].with_suffix(".log"), "w"))
                building[name] = _start_build(name, log)
            for name, process in building.items():
                code = process.wait(timeout=INSTALL_TIMEOUT)
                tail = folders[name].with_suffix(".log").read_text(errors="replace")[-3000:]
                assert code == 0, f"pip install {' '.join(ENVIRONMENTS[name])} failed:\n{tail}"
                (folders[name] / "synth-interop-ok").write_text(" ".join(ENVIRONMENTS[name]))
    return {name: _python(folder) for name, folder in folders.items()}


def load_with(tool: str, path: Path, environments: dict[str, Path], cwd: Path) -> Any:
    """What the real library ``tool`` reads from ``path``."""
    out = cwd / f"{tool}.read.json"
    done = subprocess.run(
        [str(environments[TOOL_ENV[tool]]), str(LOADER), tool, str(path), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(cwd), **CHILD_ENV},
    )
    assert done.returncode == 0, f"{tool} could not load {path}:\n{done.stderr[-3000:]}"
    return json.loads(out.read_text(encoding="utf-8"))


# ---- the checks ------------------------------------------------------------------------------------
def test_judgeval_current_release_loads_the_judgeval_export(
    environments: dict[str, Path], tmp_path: Path
) -> None:
    path = Dataset(goldens()).export(tmp_path / "goldens.judgeval.json", format="judgeval")
    read = load_with("judgeval", path, environments, tmp_path)
    expected = [to_judgeval(g, "") for g in goldens()]
    assert read["uploaded"] == expected  # Dataset.add_from_json, as it would upload them
    assert read["created"] == expected  # Example.create(**row)
    assert read["uploaded"][1]["context"] == [] and read["uploaded"][1]["context_ids"] == []
    # every field survives, in one order, null where the golden has none
    for row in (*read["uploaded"], *read["created"]):
        assert list(row) == list(JUDGEVAL_FIELDS)
    assert read["uploaded"][1]["expected_output"] is None


def test_judgeval_infers_one_schema_with_every_field_a_generated_set_fills(
    environments: dict[str, Path], tmp_path: Path
) -> None:
    """A generated set (each golden with a question, an answer, its context and provenance, none
    with a system's answer yet) is one shape: judgeval infers its dataset schema from it."""
    made = [g.model_copy(update={"retrieval_context": None}) for g in goldens() if g.context]
    made = [g.model_copy(update={"actual_output": None}) for g in made]
    path = Dataset(made).export(tmp_path / "made.judgeval.json", format="judgeval")
    read = load_with("judgeval", path, environments, tmp_path)
    assert read["schema"] == {
        "type": "object",
        "properties": {
            "input": {"type": "string"},
            "expected_output": {"type": "string"},
            "context": {"type": "array"},
            "context_ids": {"type": "array"},
            "source_files": {"type": "array"},
            "metadata": {"type": "object"},
        },
    }


def test_judgeval_legacy_loads_the_legacy_export(
    environments: dict[str, Path], tmp_path: Path
) -> None:
    path = Dataset(goldens()).export(tmp_path / "legacy.json", format="judgeval-legacy")
    read = load_with("judgeval-legacy", path, environments, tmp_path)
    expected = [to_judgeval_legacy(g, "") for g in goldens()]
    assert read == expected


@pytest.mark.parametrize(("tool", "name"), [("deepeval-csv", "g.csv"), ("deepeval", "g.json")])
def test_deepeval_loads_the_deepeval_exports(
    tool: str, name: str, environments: dict[str, Path], tmp_path: Path
) -> None:
    # deepeval's CSV cannot hold a null list beside lists (the export refuses it): give the
    # first golden a retrieval context
    items = goldens()
    items[0] = items[0].model_copy(update={"retrieval_context": ["r0"]})
    path = Dataset(items).export(tmp_path / name, format=tool)  # type: ignore[arg-type]
    read = load_with(tool, path, environments, tmp_path)
    assert read == [to_deepeval(g, "") for g in items]
    assert read[0]["context"][0] == "Pump P-4 runs nightly, 22:00\u201306:00 | see table 3."
    assert read[0]["source_file"] == "manuals/manual.pdf"
    assert read[0]["additional_metadata"]["_synth"]["source_files"][1] == "notes/\u00e9t\u00e9.md"


def test_ragas_loads_the_ragas_export_with_empty_context_ids(
    environments: dict[str, Path], tmp_path: Path
) -> None:
    path = Dataset(goldens()).export(tmp_path / "g.jsonl", format="ragas")
    read = load_with("ragas", path, environments, tmp_path)
    samples = read["samples"]
    for sample, golden in zip(samples, goldens(), strict=True):
        assert sample["user_input"] == golden.input
        assert sample["response"] == golden.actual_output
        assert sample["reference"] == golden.expected_output
        assert sample["reference_contexts"] == golden.context
        assert sample["retrieved_contexts"] == golden.retrieval_context
        assert sample["reference_context_ids"] == golden.context_ids
    assert samples[1]["reference_context_ids"] == []  # not None
    # Testset.from_list needs each row's synthesizer_name; persona and query style ride along
    testset = read["testset"]
    assert [row["synthesizer_name"] for row in testset] == [
        "synth:reasoning",
        "synth",
        "synth",
    ]
    assert [row["eval_sample"] for row in testset] == samples
    assert samples[2]["persona_name"] == "a night-shift technician"
    assert (samples[2]["query_style"], samples[2]["query_length"]) == ("terse", "short")


def test_deepeval_loads_the_conversations_export(
    environments: dict[str, Path], tmp_path: Path
) -> None:
    talks = [
        ConversationalGolden(
            scenario="A technician checks when the pumps run.",
            expected_outcome="They know P-4 runs 22:00\u201306:00.",
            user_description="a night-shift technician",
            turns=[
                Turn(role="user", content="Which pump runs at night?"),
                Turn(
                    role="assistant",
                    content="P-4.",
                    metadata={"citations": [{"chunk_id": "m:3", "quote": "P-4 runs nightly"}]},
                ),
                Turn(role="user", content="From when to when?"),
                Turn(role="assistant", content="22:00 to 06:00."),
            ],
            context=["Pump P-4 runs nightly, 22:00\u201306:00."],
            context_ids=["m:3"],
            source_files=["manual.pdf"],
            metadata={"seed": 7},
        )
    ]
    path = Dataset(talks).export(tmp_path / "talks.json", format="deepeval")
    read = load_with("deepeval-conversations", path, environments, tmp_path)
    assert read == [to_deepeval_any(g, "") for g in talks]
    assert read[0]["turns"][1]["metadata"]["citations"][0]["chunk_id"] == "m:3"


# ---- deepeval's own files ------------------------------------------------------------------------
def test_synth_reads_the_files_deepevals_own_save_as_writes(
    environments: dict[str, Path], tmp_path: Path
) -> None:
    # no "|" inside a context item: deepeval's JSONL and CSV join the items with it
    spec = {
        "single": [
            {
                "input": 'Which pump, "P-3", runs at night?\nAnswer briefly.',
                "expected_output": "P-4, 22:00\u201306:00.",
                "context": ["Pump P-4 runs nightly.", "P-3: standby."],
                "source_file": "manual.pdf",
                "additional_metadata": {"seed": 7},
            },
            {"input": "Bare?", "actual_output": "yes", "retrieval_context": ["r1", "r2"]},
        ],
        "conversational": [
            {
                "scenario": "A technician asks when the pumps run.",
                "expected_outcome": "They learn that P-4 runs at night.",
                "user_description": "a night-shift technician",
                "context": ["Pump P-4 runs nightly."],
                "turns": [],
            },
            {
                "scenario": "A follow-up.",
                "turns": [
                    {"role": "user", "content": "Which pump?"},
                    {"role": "assistant", "content": "P-4."},
                ],
                "additional_metadata": {"k": 1},
            },
        ],
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    written = load_with("deepeval-save-as", tmp_path / "spec.json", environments, tmp_path)
    assert sorted(written) == sorted(
        f"{kind}.{t}" for kind in ("single", "talks") for t in ("jsonl", "json", "csv")
    )
    pump = Golden(
        input=spec["single"][0]["input"],
        expected_output="P-4, 22:00\u201306:00.",
        context=["Pump P-4 runs nightly.", "P-3: standby."],
        source_files=["manual.pdf"],
        metadata={"seed": 7},
    )
    scenario = ConversationalGolden(
        scenario="A technician asks when the pumps run.",
        expected_outcome="They learn that P-4 runs at night.",
        user_description="a night-shift technician",
        context=["Pump P-4 runs nightly."],
        turns=[],
    )
    for file_type in ("jsonl", "json", "csv"):
        first, bare = Dataset.load(written[f"single.{file_type}"])
        # deepeval's CSV reads an empty list cell as [] where its JSON files keep null
        assert first.model_copy(update={"retrieval_context": None}) == pump, file_type
        assert (bare.input, bare.actual_output, bare.retrieval_context) == (
            "Bare?",
            "yes",
            ["r1", "r2"],
        )
        talk, played = Dataset.load(written[f"talks.{file_type}"])
        assert talk == scenario, file_type
        assert isinstance(played, ConversationalGolden)
        assert [(t.role, t.content) for t in played.turns] == [
            ("user", "Which pump?"),
            ("assistant", "P-4."),
        ]
        assert (played.scenario, played.metadata) == ("A follow-up.", {"k": 1})


# ---- the evaluation platforms --------------------------------------------------------------------
def test_langsmiths_example_schema_takes_the_langsmith_export(
    environments: dict[str, Path], tmp_path: Path
) -> None:
    path = Dataset(goldens()).export(tmp_path / "g.jsonl", format="langsmith")
    read = load_with("langsmith", path, environments, tmp_path)
    assert read == [to_langsmith(g, "") for g in goldens()]
    assert (
        read[0]["outputs"]["context"][0] == "Pump P-4 runs nightly, 22:00\u201306:00 | see table 3."
    )


def test_langfuses_dataset_item_request_takes_the_langfuse_export(
    environments: dict[str, Path], tmp_path: Path
) -> None:
    path = Dataset(goldens()).export(tmp_path / "g.jsonl", format="langfuse")
    read = load_with("langfuse", path, environments, tmp_path)
    for body, golden in zip(read, goldens(), strict=True):
        item = to_langfuse(golden, "")
        assert body["datasetName"] == "synth"
        assert body["input"] == item["input"]
        assert body["expectedOutput"] == item["expected_output"]
        assert body["metadata"] == item["metadata"]
        assert {k for k, v in body.items() if v is not None} <= {
            "datasetName",
            "input",
            "expectedOutput",
            "metadata",
        }


def test_phoenixs_client_uploads_the_phoenix_export_under_the_documented_keys(
    environments: dict[str, Path], tmp_path: Path
) -> None:
    from synth.dataset import PHOENIX_KEYS

    path = Dataset(goldens()).export(tmp_path / "g.csv", format="phoenix")
    read = load_with("phoenix", path, environments, tmp_path)
    assert read["csv"] == read["dataframe"]
    frame = Dataset(goldens()).to_phoenix()
    for example, (_, row) in zip(read["csv"], frame.iterrows(), strict=True):
        cells = {k: (v if isinstance(v, str) else "") for k, v in row.items()}  # null: empty
        assert example["input"] == {k: cells[k] for k in PHOENIX_KEYS["input_keys"]}
        assert example["output"] == {k: cells[k] for k in PHOENIX_KEYS["output_keys"]}
        assert example["metadata"] == {k: cells[k] for k in PHOENIX_KEYS["metadata_keys"]}
    assert json.loads(read["csv"][0]["metadata"]["context_ids"]) == ["manual.pdf:3", "manual.pdf:4"]


#: the npm packages of promptfoo's environment
PROMPTFOO = ("promptfoo@0.123.1",)


@pytest.fixture(scope="module")
def promptfoo() -> Path:
    """promptfoo's command line (``node .../promptfoo/dist/src/main.js``), installed once."""
    key = json.dumps([PROMPTFOO, "npm"])
    folder = _root() / f"promptfoo-{hashlib.sha256(key.encode()).hexdigest()[:12]}"
    main = folder / "node_modules" / "promptfoo" / "dist" / "src" / "main.js"
    if not _ready(folder):
        npm, node = shutil.which("npm"), shutil.which("node")
        if npm is None or node is None:
            pytest.skip("promptfoo needs node and npm, which are not installed")
        with _locked(folder):
            if not _ready(folder):
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir(parents=True)
                with open(folder.with_suffix(".log"), "w") as log:
                    done = subprocess.run(
                        [npm, "install", "--no-audit", "--no-fund", *PROMPTFOO],
                        cwd=folder,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        timeout=INSTALL_TIMEOUT,
                    )
                tail = folder.with_suffix(".log").read_text(errors="replace")[-3000:]
                unreachable = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT")
                if done.returncode != 0 and any(code in tail for code in unreachable):
                    pytest.skip(f"the npm registry cannot be reached to install promptfoo:\n{tail}")
                assert done.returncode == 0, f"npm install {' '.join(PROMPTFOO)} failed:\n{tail}"
                (folder / "synth-interop-ok").write_text(" ".join(PROMPTFOO))
    return main


@pytest.mark.parametrize("name", ["tests.yaml", "tests.json"])
def test_promptfoo_runs_the_promptfoo_export(name: str, promptfoo: Path, tmp_path: Path) -> None:
    path = Dataset(goldens()).export(tmp_path / name, format="promptfoo")
    config = tmp_path / "promptfooconfig.yaml"
    # echo answers with the prompt: offline, and it shows the vars promptfoo put in it
    config.write_text(
        'prompts: ["{{input}} || {{context}}"]\nproviders: [echo]\n'
        f"tests: file://{path.name}\n",
        encoding="utf-8",
    )
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    env |= {"PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1"}
    subprocess.run(  # the factuality checks fail (no grader offline): the tests are what counts
        ["node", str(promptfoo), "eval", "-c", str(config), "-o", "out.json", "--no-cache"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=env,
    )
    results = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    ran = sorted(results["results"]["results"], key=lambda r: r["testIdx"])
    expected = [to_promptfoo(g, "") for g in goldens()]
    assert [r["testCase"]["vars"] for r in ran] == [t["vars"] for t in expected]
    # promptfoo gives a test without checks an empty list
    assert [r["testCase"].get("assert") or None for r in ran] == [t.get("assert") for t in expected]
    assert [r["testCase"]["metadata"] for r in ran] == [t["metadata"] for t in expected]
    prompt = ran[0]["prompt"]["raw"]
    assert prompt == f"{goldens()[0].input} || {expected[0]['vars']['context']}"
