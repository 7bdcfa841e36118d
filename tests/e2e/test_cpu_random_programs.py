"""Random well-typed programs (tests/property/ccn_random_programs.py) under a random
schedule through the CPU backend at R = 1..4, against the reference interpreter. One
project per program (a build each), so a few: of 200 drawn (derandomized) whose schedule
is accepted, those that together cover the most directives and operations. N = 3 leaves
a rank an empty block at R = 4; N = 13 splits unevenly into blocks and chunks."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from parafuse.ccn_compiler.frontend import check_source
from parafuse.emitters.ccn.cpu.project import build_cpu_project
from parafuse.grammar.diagnostics import CompileError
from tests.backend_compare import assert_backend_matches_reference
from tests.property.ccn_random_programs import programs, schedules

PROGRAMS = 3  # each costs a C++ build
RUNS = [(1, 3), (2, 3), (3, 3), (4, 3), (1, 13), (3, 13)]  # (ranks, N)
FEATURES = re.compile(r"\b(split|reorder|shard|fuse|overlap|tune|allreduce|reducescatter|"
                      r"allgather|dropout|update|norm|sum|amax|output|max|min|sqrt|tanh)\(?")


def accepted_sources(count: int = 200) -> list[str]:
    """Programs with a non-empty random schedule that the compiler accepts."""
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


def covering(sources: list[str], count: int) -> list[str]:
    """Greedily, the sources that add the most features not yet covered."""
    chosen: list[str] = []
    covered: set[str] = set()
    for _ in range(count):
        best = max(sources, key=lambda s: (len(set(FEATURES.findall(s)) - covered), len(s)))
        chosen.append(best)
        covered |= set(FEATURES.findall(best))
    return chosen


def test_random_programs_match_the_reference(tmp_path: Path) -> None:
    sources = covering(accepted_sources(), PROGRAMS)
    for index, source in enumerate(sources):
        module = check_source(source, "rand.ccn")
        default = module.programs["rand"]
        project = build_cpu_project(module, "rand", ["default", "random"],
                                    f"random program {index}")
        for name in ("default", "random"):
            scheduled = module.scheduled_program("rand", name)
            for ranks, n in RUNS:
                out = tmp_path / f"p{index}-{name}-{ranks}-{n}"
                assert_backend_matches_reference(project, default, scheduled, name, ranks,
                                                 {"N": n}, out, iters=2)
