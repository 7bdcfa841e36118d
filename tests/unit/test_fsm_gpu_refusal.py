"""What the GPU does not run is refused at the machine's definition, with a hint: a pattern
set with an NFA of more patterns than a device thread's tag bitmap holds (cuda/nfa.cuh
kNfaTags, emitters/fsm/cuda_project.py GPU_NFA_TAGS; lowered here to 1 to make one)."""

from __future__ import annotations

import pytest

from parafuse.cli.fsm_gpu import check_gpu_kind
from parafuse.emitters.fsm import cuda_project
from parafuse.fsm_compiler.engines.engines import engine_kind
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import CompileError, SourceFile
from tests.conftest import REPO

SOURCE = """options { max_states 3 }
patterns wide {
    a /a.{3,9}b/
    c /c[^x]{4,7}d/
}
"""


def test_the_bound_matches_the_device_code() -> None:
    header = (REPO / "cpp_runtime" / "fsm" / "cuda" / "nfa.cuh").read_text()
    assert f"constexpr uint32_t kNfaTags = {cuda_project.GPU_NFA_TAGS};" in header


def test_an_nfa_of_too_many_patterns_is_refused_where_the_set_is_defined(monkeypatch) -> None:
    machine = compile_file(SourceFile("wide.fsm", SOURCE)).machines[0]
    assert [engine_kind(engine) for engine in machine.engines] == ["nfa"]
    check_gpu_kind(machine)  # two patterns: within the bound
    monkeypatch.setattr(cuda_project, "GPU_NFA_TAGS", 1)
    with pytest.raises(CompileError) as refused:
        check_gpu_kind(machine)
    assert str(refused.value) == (
        "wide.fsm:2:1: error: 'wide' has an NFA of 2 patterns: the GPU runs NFAs of at most 1 "
        "(docs/fsm.md, 'On GPUs')\n    patterns wide {\n    ^^^^^^^^^^^^^^^\n"
        "hint: --backend cpp runs it on the CPU's cores")
