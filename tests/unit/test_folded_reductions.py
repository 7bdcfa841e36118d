"""Norms and sums folded into a fused phase's kernel on CUDA (emitters/ccn/cuda/
folded_reductions.py): which reductions fold (a member's, a replicated value the phase
reads), which keep a kernel of their own (`amax`, an expression's sum, a value the phase
does not read, a value the phase writes), and the CUDA printer's code for each."""

from __future__ import annotations

import itertools

from parafuse.ccn_compiler.frontend import check_source
from parafuse.emitters.ccn.cuda.folded_reductions import phase_sums
from parafuse.emitters.ccn.cuda.program import lower_schedule
from parafuse.emitters.ccn.cuda.project import CUDA_CHUNKS
from parafuse.emitters.ccn.plan import make_plan

PROGRAM = """
program p(N) {{
    input g: f32[N] local
    state w: f32[N] replicated
    state m: f32[N] replicated
    input x: f32[N] replicated
    gsum = allreduce(sum, g)
    m1 = update(m, 0.9 * m + gsum)
    u = m1 + w
    s = {reduction}
    w1 = update(w, w - 0.1 * s * u)
    output s
}}

schedule fused for p {{
    rs, ag = split(gsum)
    agm, agw = reorder(ag, m1, u, w1)
    fuse(rs, m1, u, s, w1, agw)
}}
"""


def _plan(reduction: str):
    module = check_source(PROGRAM.format(reduction=reduction), "p.ccn")
    return make_plan(module.scheduled_program("p", "fused"), "fused", CUDA_CHUNKS)


def _folds(reduction: str) -> list[tuple[str, str, bool]]:
    plan = _plan(reduction)
    [group] = plan.fused.values()
    counter = itertools.count()
    found = phase_sums(group, plan.buffers, lambda prefix: f"{prefix}{next(counter)}")
    return [(fold.node.kind, fold.node.operand.name, fold.combined)
            for sums in found.values() for fold in sums.sums]


def test_a_members_norm_folds_and_is_combined_across_the_slices() -> None:
    assert _folds("norm(u)") == [("norm", "u", True)]
    assert _folds("sum(m1)") == [("sum", "m1", True)]


def test_a_replicated_value_the_phase_reads_folds_over_its_slice() -> None:
    """w is whole at every rank; the phase's ranks each sum their slice of it, so the
    partial sums are combined across them."""
    assert _folds("norm(w)") == [("norm", "w", True)]
    assert _folds("norm(w) + sum(u)") == [("norm", "w", True), ("sum", "u", True)]


def test_other_reductions_keep_a_kernel_of_their_own() -> None:
    assert _folds("amax(u)") == []  # not a sum
    assert _folds("sum(w * 2.0)") == []  # an expression
    assert _folds("norm(x)") == []  # not read by the phase


def test_the_cuda_printer_sums_in_the_phase_and_reduces_nothing_again() -> None:
    code = "\n".join(lower_schedule(_plan("norm(w) + norm(u)")).step)
    assert "pf::launch_vectorized_summing<4, 2>" in code
    assert "sums[0] += v * v;" in code and "sums[1] += v * v;" in code
    assert "pf::reduce<" not in code  # no kernel of its own for either norm
    assert code.count("ncclAllReduce(") == 2  # each combined across the slices
