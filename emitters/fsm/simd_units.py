"""The SIMD kernel units of a machine's library (src/runtime/simd.cpp, simd_vbmi.cpp): the
kernels of the plans the runtime makes for its tables alone (cpp_runtime/fsm/simd/plan.hpp
SimdKernels). A plan has the machine's state count and counts its groups of reporting
states (states with the same reports, cpp_runtime/fsm/simd/plan.hpp make_simd_plan) or
none, so the library compiles one class of state counts and one group count. A pattern
set compiles the fit of each of its DFAs (its DFA engines and its prefilters' literal DFAs),
up to MOST_SET_FITS of them; the test drivers, whose tables vary, every plan's kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

from parafuse.emitters.jinja_env import render
from parafuse.fsm_compiler.analysis.simd_fit import LANES
from parafuse.fsm_compiler.compiled import CompiledMachine

STATE_CLASSES = ((16, 1), (64, 17), (256, 65))  # (most, least): fsm/simd/plan.hpp simd_class_*


@dataclass(frozen=True)
class SimdFit:
    """simd_summarize_fit<most, groups>: most 16, 64, 256 (0: any), groups -1 (any)."""

    most: int = 0
    groups: int = -1

    def has_states(self, least: int, most: int) -> bool:
        top = self.most or LANES
        bottom = next((low for high, low in STATE_CLASSES if high == self.most), 1)
        return least <= top and most >= bottom

    def words(self) -> str:
        if self.most == 0:
            return "every plan"
        bottom = next(low for high, low in STATE_CLASSES if high == self.most)
        if self.groups == 0:
            return f"plans of {bottom} to {self.most} states counting no groups"
        counted = "1 group" if self.groups == 1 else f"{self.groups} groups"
        return f"plans of {bottom} to {self.most} states counting {counted} or none"

    def vbmi_kernels(self) -> list[str]:
        """The AVX-512 VBMI kernels simd_summarize_fit calls (fsm/simd/kernels.hpp)."""
        kernels = []
        if self.has_states(17, 64) and self.groups not in (0, 1):
            kernels.append(f"simd_summarize_vbmi_counted<{self.groups}>")
        if self.has_states(65, LANES):
            kernels.append(f"simd_summarize_wide<{self.groups}>")
        return kernels


EVERY_PLAN = SimdFit()
# A pattern set with more distinct fits compiles EVERY_PLAN: a fit costs 5-8 s of CPU
# (kernels of up to 16 states, one group count), every plan's kernels 40-55 s.
MOST_SET_FITS = 4


def machine_fit(machine: CompiledMachine) -> SimdFit:
    """The kernels of `machine`'s plans. Past 256 states it has none (no plan takes it):
    the smallest class, which never runs."""
    states = machine.state_count
    most = next((high for high, _ in STATE_CLASSES if states <= high), 16)
    reporting = machine.reporting_mask()
    groups = len({machine.reports(state) for state in range(states) if reporting[state]})
    return SimdFit(most, groups if states <= LANES else 0)


def set_fits(machines: list[CompiledMachine]) -> tuple[SimdFit, ...]:
    """The kernels of the plans of a pattern set whose DFAs are `machines`: each one's fit,
    once, in order (none: the smallest fit, which never runs); past MOST_SET_FITS of them,
    every plan's kernels."""
    fits = tuple(dict.fromkeys(machine_fit(machine) for machine in machines))
    if len(fits) > MOST_SET_FITS:
        return (EVERY_PLAN,)
    return fits or (SimdFit(16, 0),)


def simd_context(fits: tuple[SimdFit, ...]) -> dict[str, object]:
    """What the templates of the kernels' units and their callers are rendered with."""
    return {"simd_fits": [(fit.most, fit.groups) for fit in fits],
            "simd_kernel_list": ", ".join(
                f"parafuse::fsm::simd_kernels_of<{fit.most}, {fit.groups}>()" for fit in fits),
            "simd_fit_words": "; ".join(fit.words() for fit in fits),
            "vbmi_kernels": list(dict.fromkeys(k for fit in fits for k in fit.vbmi_kernels()))}


def kernel_units(prefix: str, banner: str, fits: tuple[SimdFit, ...] = (EVERY_PLAN,),
                 driver_list: bool = False) -> dict[str, str]:
    """src/PREFIXsimd.cpp and src/PREFIXsimd_vbmi.cpp: the SIMD kernels of `fits`, compiled
    apart from the unit that runs them (which declares them extern); with `driver_list`,
    also the list of them the drivers give their tables (driver_simd_kernels). Their
    text names no machine: the same fits make the same units in every project."""
    context = {"prefix": prefix, "banner": banner, **simd_context(fits),
               "driver_list": driver_list}
    return {f"src/{prefix}{unit}.cpp": render(f"fsm/{unit}.cpp.j2", **context)
            for unit in ("simd", "simd_vbmi")}
