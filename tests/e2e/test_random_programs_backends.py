"""Random well-typed programs under a random accepted schedule, through the CPU backend
and through the CUDA backend on the emulated device, against the reference interpreter.

PROGRAMS programs are chosen greedily, from the first DRAWN accepted ones, to cover every
directive, collective, operation and dtype that the generator writes
(tests/e2e/random_bundle.py lists them): PROGRAMS is as many as the greedy choice takes
to cover them all, each chosen program adding at least one (checked below), so that no
program is built that covers nothing new. Each backend builds them as one bundle. Each
program runs at one rank count and size from RUNS, in turn (there are more programs
than RUNS), so that every rank count from 1 to 4 and sizes that leave a rank an empty
block (N = 3 at R = 4, N = 1) or split unevenly (N = 13) all occur on both backends.
Dropout masks, integer and bool results compare exactly (tests/backend_compare.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from parafuse.emitters.ccn.cpu import project as cpu_project
from parafuse.emitters.ccn.cuda import emulated
from tests.backend_compare import assert_backend_matches_reference, optimisation_levels
from tests.e2e.random_bundle import (
    accepted_sources,
    build_bundle,
    covering,
    features,
    renamed,
)
from tests.property.ccn_random_programs import ranks_for

DRAWN = 500
PROGRAMS = 9  # the greedy choice's count to cover every feature of the DRAWN programs
RUNS = [(1, 13), (2, 3), (3, 13), (4, 3), (2, 1), (3, 7), (4, 13), (1, 1)]  # (ranks, N)


def _cpu_files(module, name):
    return cpu_project.project_files(module, name, ["default", "random"], f"random {name}")


def _emulated_files(module, name):
    return emulated.emulated_files(module, name, ["default", "random"], f"random {name}")


BACKENDS = {  # files, CMake arguments
    "cpu": (_cpu_files, cpu_project.cmake_arguments),
    "cuda-emulated": (_emulated_files, emulated.cmake_arguments),
}


@pytest.fixture(scope="module")
def chosen() -> list[str]:
    return covering(accepted_sources(DRAWN), PROGRAMS)


def test_the_chosen_programs_cover_the_generator(chosen: list[str]) -> None:
    """Every feature the generator can write is among the chosen programs, each of which
    adds one the programs chosen before it lack, and every entry of RUNS is run."""
    assert len(chosen) == PROGRAMS >= len(RUNS)
    covered = set().union(*(features(s) for s in chosen))
    everything = set().union(*(features(s) for s in accepted_sources(DRAWN)))
    assert covered == everything, sorted(everything - covered)
    for index, source in enumerate(chosen):
        before = set().union(*(features(s) for s in chosen[:index]))
        assert features(source) - before, f"program {index} adds no feature: lower PROGRAMS"
    for needed in ("fuse", "overlap", "reorder", "shard", "split", "tune", "broadcast", "send",
                   "matmul", "layernorm", "rmsnorm", "reshape", "mean", "where", "cast", "i32",
                   "i64", "f64"):
        assert needed in covered, needed


@pytest.mark.slow
@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_random_programs_match_the_reference(backend: str, chosen: list[str],
                                             tmp_path: Path) -> None:
    make_files, cmake_args = BACKENDS[backend]
    modules = [renamed(source, index) for index, source in enumerate(chosen)]
    bundle = build_bundle(f"random-{backend}", modules, make_files, cmake_args())
    if backend == "cpu":  # PARAFUSE_OPTIMIZE (tests/conftest.py) names every target's level
        assert set(optimisation_levels(bundle).values()) == {"-O1"}, optimisation_levels(bundle)
    for index, (name, module) in enumerate(modules):
        ranks, n = RUNS[index % len(RUNS)]
        ranks = ranks_for(chosen[index], ranks)
        default = module.programs[name]
        scheduled = module.scheduled_program(name, "random")
        try:
            assert_backend_matches_reference(bundle, default, scheduled, "random", ranks,
                                             {"N": n}, tmp_path / name, iters=2)
        except AssertionError as error:
            raise AssertionError(f"{backend}, R={ranks}, N={n}:\n{chosen[index]}\n{error}") \
                from None
