"""Whether a machine fits SIMD enumeration counted in one pass on a CPU: the path the
runtime takes for it (cpp_runtime/fsm/simd/plan.hpp make_simd_plan) and whether that path
counts its groups of reporting states per lane (SimdPlan::counts). `auto`'s first rule
(cpp_runtime/fsm/auto/rates.hpp) applies only to such machines; the analysis mirrors it.
"""

from __future__ import annotations

from pathlib import Path

LANES = 256  # fsm/simd/plan.hpp kSimdLanes: one byte per lane
MAX_GROUPS = 4  # fsm/simd/plan.hpp kSimdMaxGroups
# fsm/simd/plan.hpp kSimdPairedMaxGroups: the paired kernels (AVX2, AVX-512VL)
PAIRED_MAX_GROUPS = 8
PSHUFB_STATES = 16
COMPOSED_AVX2_STATES = 32  # composed vpshufb pays up to this many states
PATH_FLAGS = {"avx512vbmi": {"avx512f", "avx512bw", "avx512vbmi"},
              "avx512vl": {"avx2", "avx512f", "avx512bw", "avx512vl"}, "avx2": {"avx2"},
              "ssse3": {"ssse3"}}


def cpu_simd_paths(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The vector paths this CPU runs (none where /proc/cpuinfo is missing)."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return frozenset()
    flags: set[str] = set()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    return frozenset(path for path, needs in PATH_FLAGS.items() if needs <= flags)


def simd_path(states: int, paths: frozenset[str]) -> str | None:
    """The path the runtime's plan takes for `states` states on a CPU with `paths`
    (fsm/simd/plan.hpp simd_auto_path): up to 16 states the paired kernels, built for
    AVX-512VL where the CPU has it; past 16, a CPU whose best is AVX-512VL runs AVX2's."""
    best = next((p for p in ("avx512vbmi", "avx512vl", "avx2", "ssse3") if p in paths), None)
    if best is None or states > LANES:
        return None
    if states <= PSHUFB_STATES:
        if "avx512vl" in paths:
            return "avx512vl"
        return "avx2" if best == "avx512vbmi" else best
    if best == "avx512vl":
        best = "avx2"
    if best == "avx512vbmi" or (best == "avx2" and states <= COMPOSED_AVX2_STATES):
        return best
    return None


def counts_in_one_pass(states: int, groups: int, paths: frozenset[str]) -> str | None:
    """The path, where it counts `groups` groups per lane in one pass; else None."""
    path = simd_path(states, paths)
    if path is None:
        return None
    paired = path in ("avx2", "avx512vl") and states <= PSHUFB_STATES
    return path if groups <= MAX_GROUPS or (paired and groups <= PAIRED_MAX_GROUPS) else None
