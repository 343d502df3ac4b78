"""Mutation testing of the pure cores: mutmut over ``compiler/`` and ``memory/engine/``.

    python -m perf.mutation [MODULE ...] [--survivors] [--no-run]

MODULE is a path such as ``compiler/segment.py`` or a folder such as ``memory/engine``; with
none, every module of both packages. mutmut (configured in ``pyproject.toml``) mutates each
function and runs the tests that reach that function; a mutant the tests still pass is a
survivor. Each module is tested by its own test files (``GROUPS``: the unit's modules and the
tests written for them), not by every test that happens to call it, so a score says how well a
unit's own tests pin it down, and a run stays short. mutmut writes its ``mutants/`` tree into
the directory it runs in, so each group runs in a copy of the checkout under
``var/mutation/GROUP/`` (ignored by git), with the group's tests as mutmut's test selection;
the modules asked for are always tested afresh.

A survivor that no test could kill (the mutant behaves exactly as the original) is listed with
its one-line reason in ``perf/mutation_equivalents.txt`` and left out of the score; an
entry that names no surviving mutant is reported, since the code under it changed. Prints one
row per module, then, as its last line, the JSON of ``bench-results/mutation.json``:
``{"modules": {"compiler/segment.py": {"score": …, "survived": …, …}, …}, "score_min": …}``,
the score being the percentage of non-equivalent mutants killed.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

from perf.harness import ROOT, finish

WORK = ROOT / "var" / "mutation"
EQUIVALENTS = ROOT / "perf" / "mutation_equivalents.txt"
PACKAGES = ("compiler", "memory/engine")
# The routine compiler (ARCHITECTURE.md): recorded actions, their patterns, routines, replay, cost.
ROUTINE_UNITS = ("actions", "routines", "replay", "cost", "patterns")
# Each unit and its own tests: (name, its modules as globs, test files). A module belongs to
# the first group whose glob matches it; each group runs in its own copy.
GROUPS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "segment",
        ("compiler/segment.py",),
        (
            "tests/test_compiler_segment.py",
            "tests/test_compiler_core.py",
            "tests/test_compiler_properties.py",
        ),
    ),
    (
        "entities",
        ("compiler/entities/*",),
        (
            "tests/test_compiler_entities.py",
            "tests/test_compiler_entities_families.py",
            "tests/test_compiler_entities_url.py",
        ),
    ),
    ("sources", ("compiler/sources/*",), ("tests/test_compiler_sources.py",)),
    (
        "routines",
        tuple(f"compiler/{unit}.py" for unit in ROUTINE_UNITS),
        tuple(f"tests/test_compiler_{unit}.py" for unit in ROUTINE_UNITS),
    ),
    (
        "cli",
        ("compiler/__main__.py",),
        (
            "tests/test_compiler_cli.py",
            "tests/test_compiler_cli_routines.py",
            "tests/test_compiler_cli_output.py",
        ),
    ),
    (
        "compiler",
        ("compiler/*",),
        (
            "tests/test_compiler_core.py",
            "tests/test_compiler_capture.py",
            "tests/test_compiler_document.py",
            "tests/test_compiler_segment.py",
            "tests/test_compiler_properties.py",
            "tests/test_compiler_records_incremental.py",
            "tests/test_compiler_emit.py",
            "tests/test_compiler_enrich.py",
            "tests/test_compiler_views.py",
        ),
    ),
    (
        "memory",
        ("memory/engine/*",),
        tuple(
            f"tests/test_memory_{unit}.py"
            for unit in (
                "catalogue",
                "control",
                "day",
                "decide",
                "extract",
                "llm_extract",
                "mine",
                "recent",
                "regularities",
                "retrieve",
                "stream",
                "validate",
                "words",
            )
        ),
    ),
)
# What the tests import or read: the mutated packages and the Django project conftest.py sets up.
COPIED = (
    "compiler",
    "memory",
    "aframes_web",
    "benchmark",
    "aframes_sync",
    "perf",
    "tests",
    "templates",
    "static",
    "manage.py",
    "pyproject.toml",
)
# mutmut's exit codes (mutmut.stats.status_by_exit_code): a timeout is a kill, as mutmut
# counts it; "no tests" (33) and anything else a test run did not fail on is not.
KILLED = {1, 3, 36, 24, -24, 152, 255}
NO_TESTS = {5, 33}
SURVIVED = {0}


@dataclass
class Tally:
    mutants: int = 0
    killed: int = 0
    survived: int = 0
    no_tests: int = 0
    other: int = 0  # not checked, suspicious, segfault: never counted as killed
    equivalent: int = 0

    @property
    def not_killed(self) -> int:
        return self.survived + self.no_tests + self.other

    @property
    def score(self) -> float:
        scored = self.mutants - self.equivalent
        return round(100.0 * self.killed / scored, 1) if scored else 100.0


def load_equivalents(path: Path = EQUIVALENTS) -> dict[str, str]:
    """``mutant name  # reason`` per line; a name without a reason is refused."""
    equivalents: dict[str, str] = {}
    if not path.exists():
        return equivalents
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, _, reason = line.partition("#")
        if not reason.strip():
            raise SystemExit(f"{path.name}:{number}: {name.strip()} needs a reason after '#'")
        equivalents[name.strip()] = reason.strip()
    return equivalents


def group_of(path: str) -> str:
    return next(name for name, globs, _ in GROUPS if any(fnmatch(path, g) for g in globs))


def module_paths(asked: Sequence[str]) -> list[str]:
    """The .py files of the pure cores named by ``asked`` (all of them when empty)."""
    everything = sorted(
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "__pycache__" not in path.parts
    )
    if not asked:
        return everything
    chosen = [
        path
        for path in everything
        if any(path == a or path.startswith(a.rstrip("/") + "/") for a in asked)
    ]
    if not chosen:
        raise SystemExit(f"no module of {', '.join(PACKAGES)} matches {' '.join(asked)}")
    return chosen


def mutant_glob(path: str) -> str:
    """mutmut names a mutant ``<dotted module>.<mangled function>__mutmut_<n>``, where a
    package's ``__init__`` is named as the package and every mangled name starts with ``x``
    (``x_function``, ``xǁClassǁmethod``); so the glob of a package's own functions leaves its
    submodules' mutants out."""
    module = path.removesuffix(".py").replace("/", ".")
    if module.endswith(".__init__"):
        return f"{module.removesuffix('.__init__')}.x*"
    return f"{module}.*"


def refresh_copy(work: Path, modules: Sequence[str], tests: Sequence[str]) -> None:
    """Copy the checkout's code into ``work`` (keeping mutmut's ``mutants/`` and its cache),
    with ``[tool.mutmut]`` narrowed to these modules and tests. mtimes are kept, which is how
    mutmut tells a changed source file from an unchanged one."""
    work.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in COPIED:
        source, target = ROOT / name, work / name
        if target.is_dir():
            shutil.rmtree(target)
        if source.is_dir():
            shutil.copytree(source, target, ignore=ignore)
        elif source.exists():
            shutil.copy2(source, target)
    config = work / "pyproject.toml"
    text = config.read_text(encoding="utf-8")
    narrowed = (
        f"only_mutate = {json.dumps(list(modules))}\n"
        f"pytest_add_cli_args_test_selection = {json.dumps(list(tests))}\n"
    )
    text, found = re.subn(
        r"^only_mutate = .*?\]\n(pytest_add_cli_args_test_selection = \[.*?\]\n)",
        lambda _: narrowed,
        text,
        count=1,
        flags=re.MULTILINE | re.DOTALL,
    )
    if not found:
        raise SystemExit("pyproject.toml: [tool.mutmut] must set only_mutate, then the tests")
    config.write_text(text, encoding="utf-8")
    shutil.copystat(ROOT / "pyproject.toml", config)
    # A module an earlier run of this group left unmutated has a plain copy in mutants/ that
    # mutmut takes for an up-to-date mutated file, and no test is mapped to its functions
    # (mutmut maps tests again only for new tests). A run narrowed to other modules rewrites
    # the ones it leaves out as plain copies too, keeping their .meta. So the group starts
    # afresh unless the last run of this copy mutated exactly these modules.
    last = work / "mutated.json"
    wanted = json.dumps(sorted(modules))
    if (
        not last.exists()
        or last.read_text(encoding="utf-8") != wanted
        or any(not (work / "mutants" / f"{path}.meta").exists() for path in modules)
    ):
        shutil.rmtree(work / "mutants", ignore_errors=True)
    last.write_text(wanted, encoding="utf-8")


def run_mutmut(work: Path, paths: Sequence[str]) -> None:
    """Test every mutant of these modules afresh; mutmut's own output goes to mutmut.log."""
    mutmut = Path(sys.executable).with_name("mutmut")
    log = work / "mutmut.log"
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run(
            [str(mutmut), "run", *sorted({mutant_glob(p) for p in paths})],
            cwd=work,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if done.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise SystemExit(f"{tail}\nmutmut run failed with exit status {done.returncode}; see {log}")


def tally(work: Path, path: str, equivalents: dict[str, str]) -> tuple[Tally, list[str], set[str]]:
    """One module's counts, its surviving mutants' names and the equivalents it used."""
    counts, survivors, used = Tally(), [], set()
    meta = work / "mutants" / f"{path}.meta"
    if not meta.exists():
        return counts, survivors, used
    codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
    for name, code in sorted(codes.items()):
        counts.mutants += 1
        if code in KILLED:
            counts.killed += 1
        elif name in equivalents:
            counts.equivalent += 1
            used.add(name)
        else:
            if code in SURVIVED:
                counts.survived += 1
            elif code in NO_TESTS:
                counts.no_tests += 1
            else:
                counts.other += 1
            survivors.append(name)
    return counts, survivors, used


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="compiler/segment.py, memory/engine, …")
    parser.add_argument("--survivors", action="store_true", help="list every surviving mutant")
    parser.add_argument(
        "--no-run",
        action="store_true",
        help="report the last run's verdicts (with the equivalents list as it is now)",
    )
    args = parser.parse_args(argv)

    paths = module_paths(args.modules)
    equivalents = load_equivalents()
    tallies: dict[str, Tally] = {}
    survivors: dict[str, list[str]] = {}
    used: set[str] = set()
    started = time.time()  # wall clock: the run shares the machine
    for name, _, tests in GROUPS:
        mine = [p for p in paths if group_of(p) == name]
        if not mine:
            continue
        work = WORK / name
        if not args.no_run:
            refresh_copy(work, mine, tests)
            run_mutmut(work, mine)
        for path in mine:
            counts, names, equivalents_used = tally(work, path, equivalents)
            if counts.mutants:
                tallies[path], survivors[path] = counts, names
                used |= equivalents_used
    run_s = time.time() - started

    print(f"{'module':<40} {'mutants':>7} {'killed':>7} {'survived':>8} {'equiv':>6} {'score':>6}")
    for path, t in tallies.items():
        print(
            f"{path:<40} {t.mutants:>7} {t.killed:>7} {t.not_killed:>8} {t.equivalent:>6} "
            f"{t.score:>5.1f}%"
        )
        if args.survivors:
            for mutant in survivors[path]:
                print(f"    survived: {mutant}")
    if not tallies:
        # Nothing was ever mutated here: no verdict to check the equivalents list against.
        raise SystemExit(
            "no mutation results under var/mutation/ for these modules; run make mutation "
            "(or python -m perf.mutation MODULE) first"
        )
    prefixes = tuple(mutant_glob(p)[:-1] for p in tallies)
    for mutant in sorted(n for n in equivalents if n.startswith(prefixes) and n not in used):
        print(f"stale equivalent (no such survivor): {mutant}")
    modules = {
        path: {
            "score": t.score,
            "survived": t.not_killed,
            "mutants": t.mutants,
            "killed": t.killed,
            "no_tests": t.no_tests,
            "equivalent": t.equivalent,
        }
        for path, t in tallies.items()
    }
    scores = [m["score"] for m in modules.values()]
    figures = {"modules": modules, "score_min": min(scores) if scores else None}
    if args.no_run:
        print(json.dumps(figures))  # a report of an earlier run: bench-results/ keeps that run's
    else:
        finish("mutation", {**figures, "run_s": round(run_s)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
