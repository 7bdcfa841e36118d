"""The CLIs hold no switch on a backend or a machine kind: coconetc's backends are records
in cli/ccn_backends.py, boostfsm's machine kinds in cli/fsm_kinds.py, and nothing else in
cli/ compares a backend's name or asks a compiled machine or its analysis for its type."""

from __future__ import annotations

import ast

from tests.conftest import REPO

REGISTRIES = {"ccn_backends.py", "fsm_kinds.py"}
KINDS = {"CompiledMachine", "EngineSet", "CompiledTokenSet", "MachineAnalysis",
         "EngineSetAnalysis", "TokenSetAnalysis"}


def switches(text: str) -> list[str]:
    """`isinstance(x, KIND)` and `backend == "..."` (or !=, in) of one module's source."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
            named = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
            if named & KINDS:
                found.append(f"{node.lineno}: isinstance on {', '.join(sorted(named & KINDS))}")
        if isinstance(node, ast.Compare):
            names = [n.id for n in (node.left, *node.comparators) if isinstance(n, ast.Name)]
            if "backend" in names:
                found.append(f"{node.lineno}: compares backend")
    return found


def test_the_check_sees_both_kinds_of_switch() -> None:
    text = ('if backend == "cuda":\n    pass\n'
            'if isinstance(m, CompiledTokenSet | EngineSet):\n    pass\n')
    assert switches(text) == ["1: compares backend",
                              "3: isinstance on CompiledTokenSet, EngineSet"]


def test_no_backend_or_kind_switch_outside_the_registries() -> None:
    found = [f"cli/{path.name}:{line}" for path in sorted((REPO / "cli").glob("*.py"))
             if path.name not in REGISTRIES for line in switches(path.read_text())]
    assert not found, "switches outside the registries:\n" + "\n".join(found)
