"""Norms and sums of a fused group's values folded into the kernel of the phase that
computes or reads them (CUDA).

Before: in `fuse(rs, m1, v1, u, wnorm, unorm, ratio, w1, agw)` (samples/lamb.ccn),
`wnorm = norm(w)` and `unorm = norm(u)` were kernels of their own after the chunked phase
that computes `u` from `w`, each reading its operand from device memory again.
After: that phase's kernel adds `u[i]^2` and `w[i]^2` of each of its elements into two
accumulators (pf::launch_summing, ccn/cuda/summing.cuh) while it computes `u`; the scalar
stages only combine the accumulators across ranks and take the root. LAMB's fused step at
one rank moves 38 bytes an element instead of 46.

A `norm` or `sum` of a value X folds into the last chunked phase of the group before the
scalar stage when that phase
- computes X (a member): the phase's elements are X's block, so the partial sums add up
  to X's block's sum, combined across ranks where X is sliced, as the reduction did; or
- reads X, a replicated value of the phase's shape that no member of the phase writes:
  the phase's elements cover this rank's part of X, so the partial sums are combined
  across the ranks the phase's block is sliced over (at one rank, or in a phase that is
  not sliced, they are the whole sum).
Other reductions (`amax`, an expression's sum, a value the phase does not touch) keep
their own kernel. Sums of a kernel share one accumulator type (the first one's).
"""

from __future__ import annotations

from dataclasses import dataclass

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.ir_edit import names_read
from parafuse.emitters.ccn.plan import FusedGroup, PhaseKind
from parafuse.emitters.ccn.stage_writer import accumulator_type

FOLDED_KINDS = ("norm", "sum")


@dataclass(frozen=True)
class FoldedSum:
    """One reduction summed by a phase's kernel into sums[slot]."""

    node: ir.Reduce
    slot: int
    combine_group: str | None  # the group whose ranks' sums add up
    combined: bool  # whether they are combined at all


@dataclass(frozen=True)
class PhaseSums:
    """The sums one chunked phase's kernel adds up, into `var` (`acc` typed)."""

    var: str
    acc: str
    sums: tuple[FoldedSum, ...]


def _computed(stage: ir.SimpleStage) -> bool:
    return isinstance(stage, (ir.ElementwiseStage, ir.UpdateStage))


def _reductions(stage: ir.SimpleStage):
    for expr in ir.stage_exprs(stage):
        for node in ir.walk(expr):
            if isinstance(node, ir.Reduce) and node.kind in FOLDED_KINDS and \
                    isinstance(node.operand, ir.Ref):
                yield node


def _fold(node: ir.Reduce, computed: list[ir.SimpleStage],
          buffers) -> tuple[str | None, bool] | None:
    """(combine group, combined) where `node` may fold into the phase of `computed`."""
    name = node.operand.name
    space = computed[0].type
    if name in {s.name for s in computed}:
        layout = node.operand.type.layout
        return layout.group, node.cross_rank
    read = set().union(*(names_read(s) for s in computed))
    written = {buffers[s.name].var for s in computed}
    operand = node.operand.type
    if name not in read or buffers[name].is_param or buffers[name].var in written or \
            operand.layout.kind != "replicated" or operand.shape != space.shape or \
            operand.layout.group != space.layout.group or node.cross_rank:
        return None
    sliced = space.layout.kind == "sliced" and space.layout.dim == 0
    if space.layout.kind not in ("replicated", "sliced") or (space.layout.kind == "sliced"
                                                             and not sliced):
        return None
    return space.layout.group, sliced


def phase_sums(group: FusedGroup, buffers, fresh) -> dict[int, PhaseSums]:
    """Per index of a chunked phase of `group`, the reductions of later scalar stages its
    kernel sums (see above); `fresh(prefix)` names the accumulator array."""
    found: dict[int, list[tuple[ir.Reduce, str | None, bool]]] = {}
    last = None  # the latest chunked phase with element-wise members
    for index, phase in enumerate(group.phases):
        computed = [s for s in phase.stages if _computed(s)]
        if phase.kind is PhaseKind.CHUNKED and computed:
            last = (index, computed)
            continue
        if phase.kind is not PhaseKind.WHOLE or last is None:
            continue
        for stage in phase.stages:
            if stage.type.shape:  # a gather: no scalar reduction of the phase's values
                continue
            for node in _reductions(stage):
                fold = _fold(node, last[1], buffers)
                if fold is not None and all(n is not node for n, _, _ in found.get(last[0], [])):
                    found.setdefault(last[0], []).append((node, *fold))
    out = {}
    for index, nodes in found.items():
        acc = accumulator_type(nodes[0][0].operand.type.dtype)
        kept = [entry for entry in nodes if accumulator_type(entry[0].operand.type.dtype) == acc]
        out[index] = PhaseSums(fresh("sums"), acc, tuple(
            FoldedSum(node, slot, group_name, combined)
            for slot, (node, group_name, combined) in enumerate(kept)))
    return out
