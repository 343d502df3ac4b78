"""The mutation harness (``make mutation``): which mutants a module's run asks mutmut for."""

from __future__ import annotations

from fnmatch import fnmatch

from perf.mutation import GROUPS, group_of, mutant_glob


def test_a_module_asks_for_its_own_mutants():
    glob = mutant_glob("memory/engine/words.py")
    assert fnmatch("memory.engine.words.x_phrase__mutmut_4", glob)
    assert not fnmatch("memory.engine.wordsmith.x_phrase__mutmut_4", glob)


def test_a_package_init_asks_for_its_functions_by_the_package_name_not_its_submodules():
    glob = mutant_glob("memory/engine/extract/__init__.py")
    # mutmut names the mutants of a package's __init__ after the package itself.
    assert fnmatch("memory.engine.extract.x_extract_day__mutmut_1", glob)
    assert fnmatch("memory.engine.extract.xǁOpenDayǁsegments__mutmut_2", glob)
    assert not fnmatch("memory.engine.extract.__init__.x_extract_day__mutmut_1", glob)
    assert not fnmatch("memory.engine.extract.code.x_segments__mutmut_1", glob)


def test_the_routine_modules_are_mutated_against_their_own_tests_not_the_compiler_group():
    # A module belongs to the first group whose glob matches it, so "routines" must come
    # before the catch-all "compiler/*".
    units = ("actions", "routines", "replay", "cost", "patterns")
    for unit in units:
        assert group_of(f"compiler/{unit}.py") == "routines"
    tests = next(tests for name, _, tests in GROUPS if name == "routines")
    assert set(tests) == {f"tests/test_compiler_{unit}.py" for unit in units}
    assert group_of("compiler/document.py") == "compiler"


def test_the_command_line_is_mutated_against_its_own_tests():
    # compiler/__main__.py would match the compiler group's glob; its tests are the CLI's.
    assert group_of("compiler/__main__.py") == "cli"
    assert group_of("compiler/views.py") == "compiler"
    assert group_of("compiler/sources/jsonl.py") == "sources"
    tests = next(tests for name, _, tests in GROUPS if name == "cli")
    assert set(tests) == {
        "tests/test_compiler_cli.py",
        "tests/test_compiler_cli_routines.py",
        "tests/test_compiler_cli_output.py",
    }
