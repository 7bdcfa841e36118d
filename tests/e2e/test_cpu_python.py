"""The `--python` module of the CPU backend under mpirun with mpi4py: numpy blocks in,
states updated in place (and returned as the arrays passed; a strided state is refused),
the reference interpreter's results out."""

from __future__ import annotations

import pytest

from parafuse.emitters.ccn.cpu.project import build_cpu_project
from tests.backend_compare import sample_module
from tests.python_module_compare import assert_adam_module_matches_reference


@pytest.mark.parametrize("schedule", ["default", "zero", "fused"])
def test_python_module_matches_the_reference(schedule, tmp_path) -> None:
    module = sample_module("adam")
    project = build_cpu_project(module, "adam", ["default", "zero", "fused"],
                                "coconetc build samples/adam.ccn --python", python=True)
    assert_adam_module_matches_reference(project / "build", schedule, tmp_path)
