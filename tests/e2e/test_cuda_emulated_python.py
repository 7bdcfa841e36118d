"""The CUDA backend's Python module on the emulated device, with numpy (host) tensors: its
copies in and out must be ordered with the step. The emulated device lets a copy from
pageable host memory land late unless something orders it, as CUDA allows: the module
once copied host inputs with cudaMemcpy on the legacy stream, which the compute stream
does not wait for, and that mutant gives wrong states here (issue 17, defect 2)."""

from __future__ import annotations

from tests.backend_compare import sample_module
from tests.cuda_emulation.emulated_project import build_emulated_python
from tests.python_module_compare import assert_adam_module_matches_reference


def test_host_tensors_through_the_python_module_match_the_reference(tmp_path) -> None:
    """The fused schedule, with the communication streams run late."""
    module = sample_module("adam")
    project = build_emulated_python(module, "adam", ["fused"])
    assert_adam_module_matches_reference(project / "build", "fused", tmp_path,
                                         {"PF_EMU_LAZY": "odd"})
