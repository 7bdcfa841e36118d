"""The house rules of docs/architecture.md, checked on the source itself.

- no import cycle between the package's modules (imports inside functions count);
- no private name (`_x`) of one module used by another;
- imports point down the layers of the design card only;
- no file of the package over 400 lines;
- no absolute path of a particular machine anywhere in the repository.
"""

from __future__ import annotations

import ast
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = "parafuse"
PACKAGE_FOLDERS = ("cli", "grammar", "ccn_compiler", "fsm_compiler", "emitters")
SOURCE_FOLDERS = PACKAGE_FOLDERS + ("cpp_runtime",)
SOURCE_SUFFIXES = (".py", ".hpp", ".cuh", ".cpp", ".cu", ".inc", ".j2")
# Files are split by concern, not by length: a file past this has grown into several
# concerns (the longest today are about 400 lines).
MOST_LINES = 800


def repository_files() -> list[Path]:
    """Tracked files and new files git does not ignore, relative to the repository."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, text=True, check=True).stdout
    return [Path(line) for line in listed.splitlines() if (REPO / line).is_file()]


def module_name(path: Path) -> str:
    """`emitters/ccn/plan.py` -> `parafuse.emitters.ccn.plan` (a package: its folder)."""
    parts = list(path.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE] + parts)


@dataclass(frozen=True)
class Import:
    """One module's use of another: `importer` imports `target` (a module of ours)."""

    importer: str
    target: str
    line: int
    private: str | None = None  # a private name of `target` that the importer uses


class ImportCollector:
    """Every import of one module of ours, function-level ones included."""

    def __init__(self, module: str, is_package: bool, modules: set[str]) -> None:
        self.module, self.modules = module, modules
        self.package = module if is_package else module.rpartition(".")[0]
        self.found: list[Import] = []
        self.aliases: dict[str, str] = {}  # local name -> module it is bound to

    def resolve(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = self.package.split(".")
        base = base[:len(base) - node.level + 1]
        return ".".join(base + ([node.module] if node.module else []))

    def visit_import(self, node: ast.Import) -> None:
        for alias in node.names:
            if self.ours(alias.name):
                self.found.append(Import(self.module, alias.name, node.lineno))
                if alias.asname:
                    self.aliases[alias.asname] = alias.name

    def visit_import_from(self, node: ast.ImportFrom) -> None:
        source = self.resolve(node)
        if not self.ours(source):
            return
        for alias in node.names:
            submodule = f"{source}.{alias.name}"
            if submodule in self.modules:
                self.found.append(Import(self.module, submodule, node.lineno))
                self.aliases[alias.asname or alias.name] = submodule
            else:
                private = alias.name if is_private(alias.name) else None
                self.found.append(Import(self.module, source, node.lineno, private))

    def visit_attribute(self, node: ast.Attribute) -> None:
        """`m._x` where `m` names a module of ours (through an import or a dotted path)."""
        chain, value = [node.attr], node.value
        while isinstance(value, ast.Attribute):
            chain.insert(0, value.attr)
            value = value.value
        if not isinstance(value, ast.Name) or not is_private(node.attr):
            return
        owner = ".".join([self.aliases.get(value.id, value.id)] + chain[:-1])
        if owner in self.modules and owner != self.module:
            self.found.append(Import(self.module, owner, node.lineno, node.attr))

    def ours(self, name: str) -> bool:
        return name == PACKAGE or name.startswith(PACKAGE + ".")


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def package_sources() -> dict[str, Path]:
    """Module name -> file, for every module of the package's folders."""
    return {module_name(p): p for p in repository_files()
            if p.suffix == ".py" and p.parts[0] in PACKAGE_FOLDERS}


def imports_in(module: str, is_package: bool, text: str, modules: set[str]) -> list[Import]:
    """Every use of a module of ours in one module's source, function-level ones included."""
    collector = ImportCollector(module, is_package, modules)
    tree = ast.parse(text, module)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            collector.visit_import(node)
        elif isinstance(node, ast.ImportFrom):
            collector.visit_import_from(node)
    for node in ast.walk(tree):  # after every import is known, wherever it is
        if isinstance(node, ast.Attribute):
            collector.visit_attribute(node)
    return collector.found


def collect_imports(sources: dict[str, Path]) -> list[Import]:
    modules = set(sources) | {PACKAGE}
    found: list[Import] = []
    for module, path in sources.items():
        found += imports_in(module, path.name == "__init__.py", (REPO / path).read_text(),
                            modules)
    return found


SOURCES = package_sources()
IMPORTS = collect_imports(SOURCES)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_import_walk_sees_function_level_imports() -> None:
    assert len(SOURCES) > 50
    assert any(i.importer == "parafuse.ccn_compiler.frontend"
               and i.target == "parafuse.ccn_compiler.schedules.apply" for i in IMPORTS)


def test_private_uses_are_seen_through_imports_and_aliases() -> None:
    modules = {"parafuse", "parafuse.p", "parafuse.p.a", "parafuse.p.b"}
    text = ("import parafuse.p.b as bb\nfrom . import b\n\n\ndef f():\n"
            "    from .b import _y, z\n    import parafuse.p.b\n"
            "    return b._x + bb._w + parafuse.p.b._v + b.__name__ + z._u\n")
    found = imports_in("parafuse.p.a", False, text, modules)
    assert {(i.target, i.private) for i in found} == {
        ("parafuse.p.b", None), ("parafuse.p.b", "_y"), ("parafuse.p.b", "_x"),
        ("parafuse.p.b", "_w"), ("parafuse.p.b", "_v")}


def test_no_import_cycles() -> None:
    edges: dict[str, set[str]] = {}
    for imp in IMPORTS:
        if imp.target != imp.importer:
            edges.setdefault(imp.importer, set()).add(imp.target)
    found = cycles(edges)
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_no_private_name_is_used_across_modules() -> None:
    used = sorted({f"{SOURCES[i.importer]}:{i.line}: {i.target}.{i.private}" for i in IMPORTS
                   if i.private and i.target != i.importer})
    assert not used, "private names used across modules:\n" + "\n".join(used)


# The layers of the design card. A module may import what its first matching rule
# allows (prefixes of module names, below `parafuse.`), never what it forbids.
EMITTER_KIT = ("emitters.names", "emitters.jinja_env", "emitters.toolchain")
# What every stage of fsm_compiler shares: the machine, its options, and its meaning (the
# reference executor). The subpackages build on these and on automata/, never on each
# other; pipeline.py, at the package's top, runs them all.
FSM_SHARED = ("fsm_compiler.compiled", "fsm_compiler.options", "fsm_compiler.reference_executor")
LAYERS: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    ("cli", PACKAGE_FOLDERS, ()),
    ("grammar", ("grammar",), ()),
    ("ccn_compiler.reference", ("ccn_compiler", "grammar"), ()),
    ("ccn_compiler", ("ccn_compiler", "grammar"), ("ccn_compiler.reference",)),
    *[(shared, FSM_SHARED + ("grammar",), ()) for shared in FSM_SHARED],
    ("fsm_compiler.automata", ("fsm_compiler.automata", "grammar") + FSM_SHARED, ()),
    ("fsm_compiler.tokens", ("fsm_compiler.tokens", "fsm_compiler.automata", "grammar")
     + FSM_SHARED, ()),
    ("fsm_compiler.engines", ("fsm_compiler.engines", "fsm_compiler.automata", "grammar")
     + FSM_SHARED, ()),
    ("fsm_compiler.analysis", ("fsm_compiler.analysis", "fsm_compiler.automata", "grammar")
     + FSM_SHARED, ()),
    ("fsm_compiler", ("fsm_compiler", "grammar"), ()),
    ("emitters.toolchain", ("emitters.toolchain", "grammar"), ()),
    ("emitters.names", ("emitters.names", "grammar"), ()),
    ("emitters.jinja_env", ("emitters.jinja_env", "grammar"), ()),
    ("emitters.ccn.cpu", ("emitters.ccn", "ccn_compiler", "grammar") + EMITTER_KIT,
     ("emitters.ccn.cuda",)),
    ("emitters.ccn.cuda", ("emitters.ccn", "ccn_compiler", "grammar") + EMITTER_KIT,
     ("emitters.ccn.cpu",)),
    ("emitters.ccn", ("emitters.ccn", "ccn_compiler", "grammar") + EMITTER_KIT,
     ("emitters.ccn.cpu", "emitters.ccn.cuda")),
    ("emitters.fsm", ("emitters.fsm", "fsm_compiler", "grammar") + EMITTER_KIT, ()),
    # the autotuner builds and times candidates through the backend protocol
    ("emitters.autotune", ("emitters.ccn", "ccn_compiler", "grammar") + EMITTER_KIT,
     ("emitters.ccn.cpu", "emitters.ccn.cuda")),
    ("emitters", ("emitters",), ()),  # the package's own __init__
]


def within(module: str, prefix: str) -> bool:
    full = f"{PACKAGE}.{prefix}"
    return module == full or module.startswith(full + ".")


def layer_allows(importer: str, target: str) -> bool:
    if target == PACKAGE:
        return True  # the root package holds only __version__
    for prefix, allowed, forbidden in LAYERS:
        if within(importer, prefix):
            return any(within(target, a) for a in allowed) and \
                not any(within(target, f) for f in forbidden)
    return False  # a module outside every layer: add it to the design card first


def test_fsm_subpackages_build_on_automata_not_on_each_other() -> None:
    assert layer_allows("parafuse.fsm_compiler.engines.engines",
                        "parafuse.fsm_compiler.automata.nfa")
    assert layer_allows("parafuse.fsm_compiler.analysis.analysis",
                        "parafuse.fsm_compiler.reference_executor")
    assert not layer_allows("parafuse.fsm_compiler.automata.nfa",
                            "parafuse.fsm_compiler.engines.nfa_engine")
    assert not layer_allows("parafuse.fsm_compiler.analysis.analysis",
                            "parafuse.fsm_compiler.tokens.token_sets")
    assert not layer_allows("parafuse.fsm_compiler.compiled", "parafuse.fsm_compiler.pipeline")


def test_imports_point_down_the_layers() -> None:
    wrong = sorted({f"{SOURCES[i.importer]}:{i.line}: {i.importer} -> {i.target}"
                    for i in IMPORTS if i.importer in SOURCES
                    and not layer_allows(i.importer, i.target)})
    assert not wrong, "imports against the design card's directions:\n" + "\n".join(wrong)


def _imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every absolute import in a file outside the package."""
    found = []
    for node in ast.walk(ast.parse((REPO / path).read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.append((node.lineno, node.module))
    return found


def test_nothing_imports_cli_or_tests() -> None:
    files = [p for p in repository_files() if p.suffix == ".py" and p.parts[0] != "tests"]
    wrong = []
    for path in files:
        for line, module in _imports_of(path):
            top = module.removeprefix(PACKAGE + ".").split(".")[0]
            if top == "tests" or (top == "cli" and path.parts[0] != "cli"):
                wrong.append(f"{path}:{line}: imports {module}")
    assert not wrong, "\n".join(wrong)


def source_files() -> list[Path]:
    return [path for path in repository_files()
            if path.parts[0] in SOURCE_FOLDERS and path.name.endswith(SOURCE_SUFFIXES)]


def says_what_it_is_about(path: Path, text: str) -> bool:
    """A module docstring (Python), else a comment in the first lines (C++ and CMake
    templates open with their imports and the generated banner)."""
    if path.suffix == ".py":
        return not text.strip() or ast.get_docstring(ast.parse(text)) is not None
    head = [line.strip() for line in text.splitlines()[:4]]
    return any(line.startswith(("//", "# ", "{#")) and not line.endswith("{{ banner }}")
               for line in head)


def test_every_file_says_what_it_is_about() -> None:
    """Cohesion: each file is about one thing (a class with its members, a scheme, a
    pass) and says which at its top, where a reader starts."""
    silent = [str(path) for path in source_files()
              if not says_what_it_is_about(path, (REPO / path).read_text())]
    assert not silent, "files that do not say what they are about:\n" + "\n".join(silent)


def test_no_file_has_grown_into_several_concerns() -> None:
    long = [f"{path}: {lines} lines" for path in source_files()
            if (lines := len((REPO / path).read_text().splitlines())) > MOST_LINES]
    assert not long, f"files over {MOST_LINES} lines (split them by concern):\n" + "\n".join(long)


# Paths that belong to one machine: a user's or a workplace's folders, a fixed
# folder under /tmp, software installed by hand. (/usr/bin/env in a shebang and
# the system include folder are the same on every machine, and are not matched.)
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|home|root|opt|Users|usr/local)/"
                          r"|(?<![\w.~-])/tmp/(?![{$<*])[\w.-]+")
# (file, text) pairs that match but name no machine's path.
NOT_MACHINE_PATHS = {
    # a stand-in for find_nvcc's answer in a test double; nothing is looked up there
    ("tests/e2e/test_cuda_emulated.py", "/usr/" + "local/"),
}


def test_no_absolute_machine_paths() -> None:
    found = []
    for path in repository_files():
        try:
            text = (REPO / path).read_text()
        except UnicodeDecodeError:
            continue  # binary
        for number, line in enumerate(text.splitlines(), 1):
            for match in MACHINE_PATH.finditer(line):
                if (path.as_posix(), match.group()) not in NOT_MACHINE_PATHS:
                    found.append(f"{path}:{number}: {line.strip()}")
    assert not found, "absolute machine paths:\n" + "\n".join(found)


@pytest.mark.parametrize("text,expected", [
    # spelt in two pieces, so that this file holds no machine path itself
    ("DATA = '/" + "work/shared/data'", True), ("prefix=/" + "tmp/pf", True),
    ("cd /" + "home/me/x", True), ("/" + "usr/local/bin/nvcc", True), ("/" + "opt/x", True),
    ("#!/usr/bin/env bash", False), ("mktemp -d /tmp/${name}", False),
    ("a/work/b", False), ("https://example.org/home/", False), ("~/opt/x", False),
])
def test_machine_path_pattern(text: str, expected: bool) -> None:
    assert bool(MACHINE_PATH.search(text)) == expected


def test_cycle_finder() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
