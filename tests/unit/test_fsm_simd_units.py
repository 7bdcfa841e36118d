"""The SIMD kernel units of a machine's library compile the kernels of its plans alone
(emitters/fsm/simd_units.py): its class of state counts and its group count, the groups
being its reporting states' distinct reports as the runtime's plan forms them
(cpp_runtime/fsm/simd/plan.hpp make_simd_plan). tests/e2e/test_fsm_mpi.py reads the
symbols a library compiles; tests/e2e/test_fsm_cpp_project.py runs them. A pattern set
compiles each of its DFAs' fits, once (tests/e2e/test_fsm_engine_set_project.py runs them)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from parafuse.emitters.fsm.simd_units import (
    EVERY_PLAN,
    MOST_SET_FITS,
    SimdFit,
    kernel_units,
    machine_fit,
    set_fits,
)
from parafuse.fsm_compiler.compiled import CompiledMachine
from tests.property.fsm_cpp_driver import random_machine
from tests.unit.cpp_programs import assert_prints_ok


def with_reports(machine: CompiledMachine, tags: list[tuple[int, ...]],
                 delayed: list[tuple[int, ...]] | None = None) -> CompiledMachine:
    """`machine` with these per-state tags (and delayed tags)."""
    return dataclasses.replace(machine, state_tags=tuple(tags), delayed_tags=tuple(delayed or ()))


def test_the_fit_is_the_state_class_and_the_distinct_reports() -> None:
    rng = np.random.default_rng(7)
    small = random_machine(rng, 12, 3, "converging")
    tags = [()] * 9 + [(0,), (1,), (0,)]
    assert machine_fit(with_reports(small, tags)) == SimdFit(16, 2)
    # the same tags with and without a delayed report are two groups (the blob's tag lists
    # differ: emitters/fsm/blob.py), one delayed report alone a third
    delayed = [()] * 10 + [(1,), (1,)]
    assert machine_fit(with_reports(small, [()] * 9 + [(0,), (0,), ()], delayed)) == SimdFit(16, 3)
    assert machine_fit(with_reports(small, [()] * 12)) == SimdFit(16, 0)
    for states, most in ((17, 64), (64, 64), (65, 256), (256, 256), (300, 16)):
        machine = random_machine(rng, states, 3, "converging")
        fit = machine_fit(machine)
        assert fit.most == most, (states, fit)
        if states > 256:
            assert fit.groups == 0  # no plan takes it: the smallest set, never run


def test_units_instantiate_the_fit_and_the_vbmi_kernels_it_calls() -> None:
    units = kernel_units("m_", "banner", (SimdFit(16, 1),))
    assert "template void simd_summarize_fit<16, 1>(" in units["src/m_simd.cpp"]
    assert "extern template" not in units["src/m_simd.cpp"]
    assert "template void" not in units["src/m_simd_vbmi.cpp"]
    units = kernel_units("m_", "banner", (SimdFit(64, 3),))
    assert "extern template void simd_summarize_vbmi_counted<3>(" in units["src/m_simd.cpp"]
    assert "template void simd_summarize_vbmi_counted<3>(" in units["src/m_simd_vbmi.cpp"]
    assert "wide" not in units["src/m_simd_vbmi.cpp"].split("\n#include")[1]
    assert SimdFit(64, 1).vbmi_kernels() == []  # 0 or 1 group: vpermb's plain kernels
    assert SimdFit(256, 2).vbmi_kernels() == ["simd_summarize_wide<2>"]
    units = kernel_units("m_", "banner", (EVERY_PLAN,))
    assert "template void simd_summarize_fit<0, -1>(" in units["src/m_simd.cpp"]
    for kernel in ("simd_summarize_vbmi_counted<-1>", "simd_summarize_wide<-1>"):
        assert f"template void {kernel}(" in units["src/m_simd_vbmi.cpp"]


def test_a_pattern_set_compiles_each_fit_of_its_dfas_once() -> None:
    rng = np.random.default_rng(8)
    small = random_machine(rng, 12, 3, "converging")
    one, two = (with_reports(small, [()] * 11 + [(0,)]),
                with_reports(small, [()] * 10 + [(0,), (1,)]))
    middle = random_machine(rng, 40, 3, "converging")
    assert set_fits([one, two, one, middle]) == (SimdFit(16, 1), SimdFit(16, 2),
                                                  machine_fit(middle))
    assert set_fits([]) == (SimdFit(16, 0),)  # NFA engines alone: a fit that never runs
    many = [with_reports(small, [()] * (12 - g) + [(t,) for t in range(g)])
            for g in range(MOST_SET_FITS + 1)]
    assert set_fits(many) == (EVERY_PLAN,)  # past MOST_SET_FITS: every plan's kernels
    units = kernel_units("m_", "banner", set_fits([one, middle]))
    for fit in (SimdFit(16, 1), machine_fit(middle)):
        assert f"template void simd_summarize_fit<{fit.most}, {fit.groups}>(" in \
            units["src/m_simd.cpp"]


def test_the_runtime_runs_a_plan_with_the_kernels_of_its_class_and_group_count(
        tmp_path: Path) -> None:
    """The C++ side of a fit (cpp_runtime/fsm/simd/plan.hpp simd_kernels_why_not): its class
    of state counts, and its group count or none; and why not, where it does not fit."""
    assert_prints_ok("simd_fit", tmp_path, ["-O1", "-Wall", "-Werror"])
