"""Run mutmut on one module at a time, each against the fast tests that exercise it.

    python mutation/run.py                            every module in targets.toml, in order
    python mutation/run.py synth/evaluate/stats.py    one module (or several)
    python mutation/run.py --list                     the modules and their test files
    python mutation/run.py --targets my.toml MODULE   a module listed in another file

mutmut reads its settings from the ``pyproject.toml`` of the folder it runs in, so each module gets
a work folder of its own, ``mutation/work/<module>/``, holding links to ``synth`` and ``tests`` and a
``pyproject.toml`` written here: mutmut's settings for that module (only that file mutated, only its
test files run) plus the repository's own pytest settings, so warnings stay errors. The folder is
kept after the run: ``cd`` into it and use ``mutmut results``, ``mutmut show NAME`` or
``mutmut browse`` to read the surviving mutants. ``--resume`` keeps earlier results; by default a
module starts from scratch, so its score is the one of the code and tests as they are now.

Prints one line per module (killed / total, the other outcomes, minutes) and the surviving mutants;
exits 1 when a module's run fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import tomli_w

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WORK = HERE / "work"
TARGETS = HERE / "targets.toml"


def load_targets(path: Path = TARGETS) -> dict[str, list[str]]:
    """Return module path -> test files, in the order of targets.toml (or the file given)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return {module: list(entry["tests"]) for module, entry in data["modules"].items()}


def work_dir(module: str) -> Path:
    return WORK / module.removesuffix(".py").replace("/", ".")


#: mutmut stops a mutant's tests after this many times their measured time, plus a second
TIMEOUT_MULTIPLIER = 5.0


def prepare(
    module: str, tests: list[str], *, resume: bool, timeout_multiplier: float = TIMEOUT_MULTIPLIER
) -> Path:
    """Lay out the module's work folder and return it."""
    folder = work_dir(module)
    if folder.exists() and not resume:
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("synth", "tests"):
        link = folder / name
        if not link.exists():
            link.symlink_to(REPO / name, target_is_directory=True)
    # the tests run inside mutants/ and find these folders beside their own
    (folder / "mutants").mkdir(exist_ok=True)
    for name in ("sample_docs", "docs", "bench", "pipelines"):
        link = folder / "mutants" / name
        if not link.exists():
            link.symlink_to(REPO / name, target_is_directory=True)
    repo_config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    config = {
        "tool": {
            "pytest": repo_config["tool"]["pytest"],
            "mutmut": {
                "source_paths": ["synth"],
                "only_mutate": [module],
                "pytest_add_cli_args_test_selection": tests,
                # slow tests are left out: the one among the targets' files spawns interpreters
                # that import the mutated copy of synth outside mutmut's run, and fail there
                "pytest_add_cli_args": ["-p", "no:cacheprovider", "-m", "not slow"],
                "use_git_change_detection": False,
                # forked straight from the process that ran the stats, a mutant inherits a dead
                # thread state (the fake server, run_sync's threads) and hangs until timed out
                "process_isolation": "forkserver",
                # a mutant that makes a test wait forever (a slot never handed back) is stopped
                # after this many times its tests' measured time, plus a second; mutmut's 15
                # made each such limiter mutant cost 2.5 minutes. The times are measured in the
                # same run, under the same load, so 5 still leaves a slow survivor room to pass;
                # under `nice -n 19` beside busy processes it does not (see --timeout-multiplier)
                "timeout_multiplier": timeout_multiplier,
            },
        }
    }
    (folder / "pyproject.toml").write_text(tomli_w.dumps(config), encoding="utf-8")
    return folder


def mutmut(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # mutmut puts its mutated copy of synth first on sys.path
    command = [sys.executable, "-m", "mutmut", *args]
    return subprocess.run(command, cwd=folder, env=env, text=True, capture_output=True)


def run_module(
    module: str,
    tests: list[str],
    *,
    resume: bool,
    jobs: int,
    timeout_multiplier: float = TIMEOUT_MULTIPLIER,
) -> bool:
    folder = prepare(module, tests, resume=resume, timeout_multiplier=timeout_multiplier)
    started = time.monotonic()
    for _ in range(3):
        run = mutmut(folder, "run", "--max-children", str(jobs))
        # the stats run (every listed test once, traced) now and then fails on a test that runs
        # threads; mutmut keeps what it has, so a second run picks up where it stopped
        if run.returncode == 0 or "failed to collect stats" not in run.stdout:
            break
        print(f"{module}: mutmut's stats run failed, trying again")
    minutes = (time.monotonic() - started) / 60
    (folder / "run.log").write_text(run.stdout + run.stderr, encoding="utf-8")
    if run.returncode != 0:
        print(f"{module}: mutmut run failed (exit {run.returncode}), see {folder / 'run.log'}")
        return False
    mutmut(folder, "export-cicd-stats")
    stats = json.loads((folder / "mutants" / "mutmut-cicd-stats.json").read_text(encoding="utf-8"))
    others = {
        key: stats[key]
        for key in ("no_tests", "timeout", "suspicious", "skipped", "segfault")
        if stats[key]
    }
    score = 100 * stats["killed"] / stats["total"] if stats["total"] else 100.0
    extra = "".join(f", {key} {value}" for key, value in others.items())
    print(
        f"{module}: killed {stats['killed']} / {stats['total']} ({score:.0f}%), "
        f"survived {stats['survived']}{extra}, {minutes:.1f} min"
    )
    results = mutmut(folder, "results").stdout
    for line in results.splitlines():
        if line.strip():
            print(f"    {line.strip()}")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="module paths from targets.toml (default: all)")
    parser.add_argument("--list", action="store_true", help="print the modules and their tests")
    parser.add_argument("--resume", action="store_true", help="keep earlier results")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="mutants at once")
    parser.add_argument(
        "--timeout-multiplier",
        type=float,
        default=TIMEOUT_MULTIPLIER,
        help="stop a mutant's tests after this many times their measured time (default 5); "
        "raise it when the run is niced beside busy processes, whose turns a niced mutant "
        "waits for, so that a slow survivor is not called a timeout",
    )
    parser.add_argument(
        "--targets",
        type=Path,
        default=TARGETS,
        help="the modules and their tests (default mutation/targets.toml): a file of one's own "
        "tries a module's list before it is added there",
    )
    args = parser.parse_args(argv)
    targets = load_targets(args.targets)
    if args.list:
        for module, tests in targets.items():
            print(f"{module}: {' '.join(tests)}")
        return 0
    unknown = [module for module in args.modules if module not in targets]
    if unknown:
        print(f"not in {TARGETS.relative_to(REPO)}: {', '.join(unknown)}", file=sys.stderr)
        return 2
    ok = True
    for module in args.modules or list(targets):
        ok = (
            run_module(
                module,
                targets[module],
                resume=args.resume,
                jobs=args.jobs,
                timeout_multiplier=args.timeout_multiplier,
            )
            and ok
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
