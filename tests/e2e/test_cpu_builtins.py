"""Every built-in, dtype and collective of the language through the CPU backend against the
reference interpreter, at sizes that leave some ranks an empty block; dropout masks and
integer and boolean results compared exactly (tests/backend_compare.py)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from parafuse.ccn_compiler.frontend import CheckedModule, check_source
from parafuse.emitters.ccn.cpu.project import build_cpu_project
from tests.backend_compare import assert_backend_matches_reference
from tests.e2e.ccn_programs import BUILTINS, COLLECTIVES

SOURCES = {"tour": BUILTINS, "coll": COLLECTIVES}
# 3 rows or columns: at 4 ranks one block of a sliced value is empty
SIZES = {"B": 3, "H": 5}


@functools.cache
def _module(name: str) -> CheckedModule:
    return check_source(SOURCES[name], f"{name}.ccn")


@functools.cache
def _project(name: str) -> Path:
    return build_cpu_project(_module(name), name, ["default"], f"builtins test {name}")


@pytest.mark.parametrize(("name", "ranks", "sizes"), [
    ("tour", 1, SIZES), ("tour", 2, SIZES), ("tour", 3, SIZES), ("tour", 4, SIZES),
    ("coll", 2, SIZES), ("coll", 4, {"B": 3, "H": 3}),
])
def test_builtins_match_the_reference(name: str, ranks: int, sizes: dict[str, int],
                                      tmp_path: Path) -> None:
    program = _module(name).programs[name]
    assert_backend_matches_reference(_project(name), program, program, "default", ranks,
                                     sizes, tmp_path / "out")
