"""The `--python` module of the CPU backend under the user's own mpirun with mpi4py
(imported after the module, without Open MPI's UCX errors): numpy blocks in, states
updated in place (and returned as the arrays passed; a strided state is refused), the
reference interpreter's results out."""

from __future__ import annotations

import pytest

from tests.python_module_compare import adam_python_project, assert_adam_module_matches_reference


@pytest.mark.parametrize("schedule", ["default", "zero", "fused"])
def test_python_module_matches_the_reference(schedule, tmp_path) -> None:
    project = adam_python_project()
    assert_adam_module_matches_reference(project / "build", schedule, tmp_path,
                                         users_mpirun=True)
