"""Many programs (random ones, tests/property/ccn_random_programs.py, or every sample's)
built as one CMake project per backend, so that a test run pays one configure step, not
one per program.

Each program `randI` is its own generated project in folder `pI/` of a bundle whose
CMakeLists adds every folder; runners land in the bundle's `build/`, where `run_ranks`
finds them as it finds any project's. The one change: the runners share one object of
the runtime's `runner_main.cpp` (the same source in every project), compiled once with the
flags of the first runner, where each project would compile its own copy (which a
compiler cache cannot share: the copies' paths differ).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from parafuse.ccn_compiler.frontend import CheckedModule, check_source
from parafuse.emitters.toolchain.cmake import cached_build
from parafuse.grammar.diagnostics import CompileError
from tests.property.ccn_random_programs import programs, schedules

# What a chosen set of programs should cover between them: directives, collectives,
# operations and dtypes (the greedy choice below maximises the count of these seen).
FEATURES = re.compile(
    r"\b(split|reorder|shard|fuse|overlap|tune|allreduce|reducescatter|allgather|broadcast|send|"
    r"dropout|update|norm|sum|amax|max|min|prod|avg|sqrt|rsqrt|tanh|exp|log|sigmoid|pow|"
    r"gelu|relu|abs|cast|where|matmul|layernorm|rmsnorm|reshape|mean|f16|bf16|f64|i32|i64|"
    r"sliced\(-1\)|"
    r"sliced\(0\)|local|output)\b|(<=|>=|==|!=)")

ProjectFiles = Callable[[CheckedModule, str], dict[str, str | bytes]]


def accepted_sources(count: int) -> list[str]:
    """Programs with a non-empty random schedule that the compiler accepts, in draw order."""
    found: list[str] = []

    @settings(max_examples=count, deadline=None, database=None, derandomize=True,
              phases=(Phase.generate,))
    @given(programs().flatmap(lambda drawn: st.tuples(st.just(drawn[0]), schedules(drawn[1]))))
    def collect(case) -> None:
        text, schedule = case
        if "(" not in schedule:
            return
        try:
            check_source(text + schedule, "rand.ccn")
        except CompileError:
            return
        found.append(text + schedule)

    collect()
    return found


def features(source: str) -> set[str]:
    return {a or b for a, b in FEATURES.findall(source)}


def covering(sources: list[str], count: int) -> list[str]:
    """Greedily, the sources that add the most features not yet covered."""
    chosen: list[str] = []
    covered: set[str] = set()
    pool = list(sources)
    for _ in range(min(count, len(pool))):
        best = max(pool, key=lambda s: (len(features(s) - covered), len(s)))
        pool.remove(best)
        chosen.append(best)
        covered |= features(best)
    return chosen


def renamed(source: str, index: int) -> tuple[str, CheckedModule]:
    """The source with its program called `rand{index}`, and its checked module."""
    name = f"rand{index}"
    text = source.replace("program rand(", f"program {name}(").replace(
        "schedule random for rand ", f"schedule random for {name} ")
    return name, check_source(text, f"{name}.ccn")


RUNNER_MAIN = "src/ccn/sources/runner_main.cpp"
SHARED_MAIN = "pf_bundle_runner_main"


def _sharing_runner_main(cmake: str, name: str, first: bool) -> str:
    """A project's CMakeLists whose runner links the bundle's one runner_main object (the
    first project defines it, with its runner's flags and its library's requirements)."""
    own = f"add_executable({name}_run src/{name}_run.cpp {RUNNER_MAIN})"
    assert own in cmake, f"{name}: the runner's sources moved; update random_bundle.py"
    cmake = cmake.replace(own, f"add_executable({name}_run src/{name}_run.cpp "
                               f"$<TARGET_OBJECTS:{SHARED_MAIN}>)")
    if first:
        cmake += "\n".join([
            f"add_library({SHARED_MAIN} OBJECT {RUNNER_MAIN})",
            f"target_link_libraries({SHARED_MAIN} PRIVATE {name})",
            f"target_compile_definitions({SHARED_MAIN} PRIVATE "
            f"$<TARGET_PROPERTY:{name}_run,COMPILE_DEFINITIONS>)",
            f"target_compile_options({SHARED_MAIN} PRIVATE "
            f"$<TARGET_PROPERTY:{name}_run,COMPILE_OPTIONS>)", ""])
    return cmake


def build_bundle(label: str, modules: list[tuple[str, CheckedModule]],
                 project_files: ProjectFiles, cmake_args: list[str]) -> Path:
    """One built project holding every program's project in a folder of its own."""
    top = ["cmake_minimum_required(VERSION 3.18)", f"project({label} LANGUAGES C CXX)"]
    files: dict[str, str | bytes] = {}
    for index, (name, module) in enumerate(modules):
        for path, content in project_files(module, name).items():
            if path == "CMakeLists.txt":
                content = _sharing_runner_main(str(content), name, index == 0)
            files[f"p{index}/{path}"] = content
        top.append(f"add_subdirectory(p{index})")
    files["CMakeLists.txt"] = "\n".join(top) + "\n"
    return cached_build(label, files, cmake_args)
