"""Random well-typed programs under a random accepted schedule, through the CPU backend
and through the CUDA backend on the emulated device, against the reference interpreter.

PROGRAMS programs are chosen greedily, from the first DRAWN accepted ones, to cover every
directive, collective, operation and dtype that the generator writes
(tests/e2e/random_bundle.py lists them); each backend builds them (the emulated device
the first EMULATED of them, which already cover every feature) as one bundle. Each
program runs at one rank count and size from RUNS, in turn, so that every rank count
from 1 to 4 and sizes that leave a rank an empty block (N = 3 at R = 4, N = 1) or split
unevenly (N = 13) all occur. Dropout masks, integer and bool results compare exactly
(tests/backend_compare.py)."""

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

DRAWN = 300
PROGRAMS = 16
EMULATED = 12  # its builds cost about twice the CPU backend's
RUNS = [(1, 13), (2, 3), (3, 13), (4, 3), (2, 1), (3, 7), (4, 13), (1, 1)]  # (ranks, N)


def _cpu_files(module, name):
    return cpu_project.project_files(module, name, ["default", "random"], f"random {name}")


def _emulated_files(module, name):
    return emulated.emulated_files(module, name, ["default", "random"], f"random {name}")


BACKENDS = {  # files, CMake arguments, how many of the chosen programs
    "cpu": (_cpu_files, cpu_project.cmake_arguments, PROGRAMS),
    "cuda-emulated": (_emulated_files, emulated.cmake_arguments, EMULATED),
}


@pytest.fixture(scope="module")
def chosen() -> list[str]:
    return covering(accepted_sources(DRAWN), PROGRAMS)


def test_the_chosen_programs_cover_the_generator(chosen: list[str]) -> None:
    """Every feature the generator can write is among the chosen programs."""
    assert len(chosen) == PROGRAMS
    covered = set().union(*(features(s) for s in chosen))
    everything = set().union(*(features(s) for s in accepted_sources(DRAWN)))
    assert covered == everything, sorted(everything - covered)
    first = set().union(*(features(s) for s in chosen[:EMULATED]))
    assert first == everything, sorted(everything - first)
    for needed in ("fuse", "overlap", "reorder", "shard", "split", "tune", "broadcast", "send",
                   "matmul", "layernorm", "rmsnorm", "where", "cast", "i32", "i64", "f64"):
        assert needed in covered, needed


@pytest.mark.slow
@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_random_programs_match_the_reference(backend: str, chosen: list[str],
                                             tmp_path: Path) -> None:
    make_files, cmake_args, count = BACKENDS[backend]
    modules = [renamed(source, index) for index, source in enumerate(chosen[:count])]
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
