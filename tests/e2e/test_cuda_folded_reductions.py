"""Norms and sums folded into a fused phase's kernel (emitters/ccn/cuda/folded_reductions.py)
against the reference on the emulated device, with the sums themselves as the output so
that a partial sum left uncombined (one rank's slice of a replicated value) or counted
twice shows: a member's norm, a replicated value's norm over the phase's slices and a
member's sum, at R = 1..3 with a size no rank count divides, every schedule."""

from __future__ import annotations

import pytest

from parafuse.ccn_compiler.frontend import check_source
from tests.backend_compare import assert_backend_matches_reference
from tests.cuda_emulation.emulated_project import build_emulated
from tests.unit.test_folded_reductions import PROGRAM


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_folded_norms_and_sums_match_the_reference(ranks: int, tmp_path, monkeypatch) -> None:
    module = check_source(PROGRAM.format(reduction="norm(w) + 3.0 * norm(u) + sum(m1)"), "p.ccn")
    project = build_emulated(module, "p", ["default", "fused"])
    monkeypatch.setenv("PF_EMU_LAZY", "odd")
    default = module.programs["p"]
    for schedule in ("default", "fused"):
        assert_backend_matches_reference(project, default, module.scheduled_program("p", schedule),
                                         schedule, ranks, {"N": 1021}, tmp_path / schedule)
