"""Layout rules of docs/ccn-language.md sections 6-7: element-wise joins, the matmul table,
collectives.

Each rule returns the resulting layout or raises a `LayoutConflict` whose text
names the layouts involved and the collective that would fix the program; the
checker attaches the location of the offending expression.
"""

from __future__ import annotations

from . import dims
from .types import LOCAL, REPLICATED, Dim, Layout, ValueType, sliced


class LayoutConflict(Exception):
    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def aligned_dim(layout: Layout, operand_rank: int, result_rank: int) -> Layout:
    """Express a sliced operand's dim in the coordinates of the result (shapes align right)."""
    if layout.kind != "sliced":
        return layout
    return Layout("sliced", layout.dim + (result_rank - operand_rank), layout.group)


def _conflict_sliced_local(s: Layout, local: Layout) -> LayoutConflict:
    return LayoutConflict(
        f"cannot combine a {s} value with a {local} value",
        "reducescatter the local value so that it is sliced the same way (as_sliced(x, d) "
        "if each rank's block of it is its own), or allgather the sliced value first",
    )


def join_layouts(a: Layout, b: Layout) -> Layout:
    """Layout of an element-wise result from two operand layouts (already aligned)."""
    if a == b:
        return a
    if a.is_world_replicated:
        return b
    if b.is_world_replicated:
        return a
    kinds = {a.kind, b.kind}
    if kinds == {"sliced"}:
        if a.group != b.group:
            raise LayoutConflict(f"cannot combine {a} with {b}: they are split over "
                                 "different groups", "allgather one of them first")
        raise LayoutConflict(
            f"cannot combine values sliced along different dims ({a} and {b})",
            "allgather one of them first so that only one operand is sliced")
    if kinds == {"sliced", "local"}:
        s, loc = (a, b) if a.kind == "sliced" else (b, a)
        raise _conflict_sliced_local(s, loc)
    if kinds == {"replicated", "local"}:
        return LOCAL
    if kinds == {"replicated", "sliced"}:
        r, s = (a, b) if a.kind == "replicated" else (b, a)
        if r.group == s.group:
            return s
        raise LayoutConflict(f"cannot combine a {r} value with a {s} value",
                             "gather or broadcast so that both live in the same group")
    raise LayoutConflict(f"cannot combine a {a} value with a {b} value",
                         "values replicated in different groups need a collective first")


def join_all(types: list[ValueType], result_shape: tuple) -> Layout:
    """The layout of an element-wise result of `result_shape` from its operands' types; an
    operand sliced along a dim of extent 1 that broadcasts has no block to read there."""
    layout = REPLICATED
    rank = len(result_shape)
    for vt in types:
        lay = aligned_dim(vt.layout, len(vt.shape), rank)
        if lay.kind == "sliced" and vt.shape[vt.layout.dim] == 1 and result_shape[lay.dim] != 1:
            raise LayoutConflict(f"a value {vt.layout} along a dim of extent 1 cannot broadcast",
                                 "allgather it first (or slice another dim)")
        layout = join_layouts(layout, lay)
    return layout


def transposed_layout(layout: Layout, dims: tuple[int, int]) -> Layout:
    """A sliced dim of a transposed value moves with its dim; other layouts stay."""
    if layout.kind != "sliced" or layout.dim not in dims:
        return layout
    other = dims[1] if layout.dim == dims[0] else dims[0]
    return Layout("sliced", other, layout.group)


def row_function_layout(kind: str, layout: Layout, dim: int) -> Layout:
    """A function of each row along `dim`: the operand's layout where `dim` is whole; along a
    sliced dim `sum` and `amax` reduce each rank's block to its partial result (local)."""
    if layout.kind != "sliced" or layout.dim != dim:
        return layout
    if kind in ("sum", "amax"):
        return LOCAL
    if kind == "mean":
        raise LayoutConflict(f"mean() along dim {dim}, which is {layout}",
                             "sum() it instead (each rank's partial sum), allreduce, and divide "
                             "by the extent")
    raise LayoutConflict(f"{kind}() works on each row of the last dim, but it is {layout}",
                         "allgather the value first (or slice another dim)")


def sliced_range_layout(layout: Layout, dim: int) -> Layout:
    """A range of indices along `dim` keeps the layout, where `dim` is whole on each rank."""
    if layout.kind == "sliced" and layout.dim == dim:
        raise LayoutConflict(f"slice() along dim {dim}, which is {layout}",
                             "allgather the value first (or take the range along another dim)")
    return layout


def as_sliced_layout(layout: Layout, dim: int, block_group: str | None) -> Layout:
    """`as_sliced(x, dim)`: a local value splits over the world, or over the ranks of the
    `on` block it is in (`block_group`); a replicated one over the ranks that share it."""
    if layout.kind == "sliced":
        if layout.dim == dim:
            raise LayoutConflict(f"as_sliced() of a value that is already {layout}",
                                 "drop the as_sliced(): each rank holds its block already")
        raise LayoutConflict(f"as_sliced() along dim {dim} of a value that is {layout}",
                             "allgather the value first")
    group = layout.group if layout.kind == "replicated" and layout.group else block_group
    return sliced(dim, group)


def reshaped_layout(layout: Layout, old: tuple[Dim, ...], new: tuple[Dim, ...]) -> Layout:
    """A reshape keeps a sliced dim where it stays one dim of the same extent with the same
    number of elements before it (so each rank's block is the same run of elements)."""
    if layout.kind != "sliced":
        return layout
    d = layout.dim
    before, after = dims.product(old[:d]), dims.product(old[d + 1:])
    for j, extent in enumerate(new):
        if extent == old[d] and dims.product(new[:j]) == before and \
                dims.product(new[j + 1:]) == after:
            return sliced(j, layout.group)
    raise LayoutConflict(f"reshape() would split or merge dim {d}, which is {layout}",
                         "reshape only the dims before or after the sliced one (or allgather "
                         "first)")


def _group_of(a: Layout, b: Layout) -> str | None:
    groups = {x.group for x in (a, b) if x.group is not None}
    if len(groups) > 1:
        raise LayoutConflict(f"matmul operands live in different groups ({a} and {b})")
    return groups.pop() if groups else None


def matmul_layout(a: ValueType, b: ValueType) -> Layout:
    """The layout of matmul(a, b): batched where b has batch dims."""
    return _batched_matmul_layout(a, b) if len(b.shape) > 2 else _plain_matmul_layout(a, b)


def _plain_matmul_layout(a: ValueType, b: ValueType) -> Layout:
    """The matmul table: a[..., K] x b[K, N]."""
    la, lb = a.layout, b.layout
    last_a = len(a.shape) - 1
    group = _group_of(la, lb)
    if la.kind == "replicated" and lb.kind == "replicated":
        return Layout("replicated", None, group)
    if la.kind == "local" and lb.kind == "replicated":
        return LOCAL
    if la.kind == "sliced" and lb.kind == "replicated" and la.dim == 0 and last_a > 0:
        return sliced(0, group)
    if la.kind == "replicated" and lb.kind == "sliced" and lb.dim == 1:
        return sliced(last_a, group)
    if la.kind == "sliced" and la.dim == last_a and lb.kind == "sliced" and lb.dim == 0:
        return LOCAL
    hint = None
    if la.kind == "local" and lb.kind == "sliced":
        hint = "allreduce the left operand first (a local value times sliced weights)"
    elif la.kind == "sliced" and lb.kind == "sliced":
        hint = "row parallel needs a sliced(-1) and b sliced(0); allgather one of them otherwise"
    raise LayoutConflict(f"matmul does not support the layout pair {la} x {lb}", hint or
                         "supported pairs: replicated x replicated, local x replicated, "
                         "sliced(0) x replicated, replicated x sliced(-1), sliced(-1) x sliced(0)")


def _batched_role(layout: Layout, rank: int, batch: int, is_left: bool) -> int | str | None:
    """A batched matmul operand's sliced dim as the result dim it becomes ("K" for the inner
    dim it is summed over), None where the operand is not sliced."""
    if layout.kind != "sliced":
        return None
    if layout.dim < rank - 2:
        return layout.dim + batch - (rank - 2)
    if (layout.dim == rank - 1) == is_left:
        return "K"
    return batch if is_left else batch + 1


def _broadcast_batch(operand: ValueType, other: ValueType) -> bool:
    """Is the operand sliced along a batch dim of extent 1 that the other's batch repeats?"""
    lay, rank = operand.layout, len(operand.shape)
    if lay.kind != "sliced" or lay.dim >= rank - 2 or operand.shape[lay.dim] != 1:
        return False
    at = lay.dim - rank + len(other.shape)  # the same batch dim in the other operand
    return 0 <= at < len(other.shape) - 2 and other.shape[at] != 1


def _batched_matmul_layout(a: ValueType, b: ValueType) -> Layout:
    """The batched matmul table: a[..., M, K] x b[..., K, N] (batch dims aligned right)."""
    if _broadcast_batch(a, b) or _broadcast_batch(b, a):
        raise LayoutConflict("a batch dim of extent 1 that is sliced cannot be repeated along "
                             "the other operand's", "allgather it first (or slice another dim)")
    la, lb = a.layout, b.layout
    group = _group_of(la, lb)
    batch = max(len(a.shape), len(b.shape)) - 2
    if la.kind == "replicated" and lb.kind == "replicated":
        return Layout("replicated", None, group)
    if {la.kind, lb.kind} == {"local", "replicated"}:
        return LOCAL
    role_a = _batched_role(la, len(a.shape), batch, True)
    role_b = _batched_role(lb, len(b.shape), batch, False)
    if role_a == role_b == "K":
        return LOCAL
    one_sliced = (la.kind, lb.kind) in (("sliced", "replicated"), ("replicated", "sliced"))
    role = role_a if role_a is not None else role_b
    if (one_sliced or role_a == role_b) and role not in (None, "K"):
        return sliced(role, group)
    raise LayoutConflict(
        f"a batched matmul does not support the layout pair {la} x {lb}",
        "supported: both replicated; a local operand with a replicated one; one operand "
        "sliced along a batch dim (or both along the same one), a along M or b along N with "
        "the other replicated; a sliced along K with b sliced along K (a local result)")
