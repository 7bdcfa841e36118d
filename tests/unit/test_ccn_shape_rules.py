"""The layout rules of the shape operations (ccn_compiler/layout_rules.py): which sliced dim a
reshape keeps, what a reduction along a sliced dim gives, ranges of a dim, a batch dim
of extent 1 that a batched matmul repeats, and the blocks as_sliced keeps."""

from __future__ import annotations

import pytest

from parafuse.ccn_compiler import dims
from parafuse.ccn_compiler.layout_rules import (
    LayoutConflict,
    as_sliced_layout,
    matmul_layout,
    reshaped_layout,
    row_function_layout,
    sliced_range_layout,
)
from parafuse.ccn_compiler.types import LOCAL, REPLICATED, Layout, ValueType, sliced

HE = dims.multiply("H", "E")


@pytest.mark.parametrize(("old", "dim", "new", "kept"), [
    (("T", HE), 0, ("T", "H", "E"), 0),                # the dims after the sliced one split
    ((2, "T", "E"), 1, (2, "T", "E", 1), 1),             # a 1 appended
    (("B", "S", "D"), 2, (dims.multiply("B", "S"), "D"), 1),  # the dims before it merge
    ((1, "T", "D"), 1, ("T", "D"), 0),                 # a leading 1 dropped
    ((dims.multiply(2, "T"), "E"), 1, ("T", 2, "E"), 2),
])
def test_reshape_keeps_a_sliced_dim_that_stays_whole(old, dim, new, kept) -> None:
    assert reshaped_layout(sliced(dim), old, new) == sliced(kept)
    assert reshaped_layout(REPLICATED, old, new) == REPLICATED
    assert reshaped_layout(LOCAL, old, new) == LOCAL


@pytest.mark.parametrize(("old", "dim", "new"), [
    (("T", "H", "E"), 1, ("T", HE)),        # the sliced dim merged with the next
    (("T", HE), 1, ("T", "H", "E")),        # the sliced dim split
    (("T", "H", "E"), 0, (dims.multiply("T", "H"), "E")),
])
def test_reshape_that_splits_or_merges_the_sliced_dim_is_refused(old, dim, new) -> None:
    with pytest.raises(LayoutConflict, match=f"would split or merge dim {dim}"):
        reshaped_layout(sliced(dim), old, new)


def test_reductions_along_a_sliced_dim_are_partial() -> None:
    assert row_function_layout("sum", sliced(0), 0) == LOCAL
    assert row_function_layout("amax", sliced(2), 2) == LOCAL
    assert row_function_layout("sum", sliced(0), 1) == sliced(0)  # along another dim
    with pytest.raises(LayoutConflict, match="mean"):
        row_function_layout("mean", sliced(1), 1)
    with pytest.raises(LayoutConflict, match="layernorm"):
        row_function_layout("layernorm", sliced(1), 1)


def test_a_range_needs_its_dim_whole() -> None:
    assert sliced_range_layout(sliced(0), 1) == sliced(0)
    assert sliced_range_layout(LOCAL, 0) == LOCAL
    with pytest.raises(LayoutConflict, match="along dim 1"):
        sliced_range_layout(sliced(1), 1)


def test_a_repeated_batch_dim_of_extent_1_must_not_be_sliced() -> None:
    full = ValueType("f32", ("H", "E", "T"), REPLICATED)
    assert matmul_layout(ValueType("f32", (1, "T", "E"), sliced(1)), full) == sliced(1)
    with pytest.raises(LayoutConflict, match="extent 1"):
        matmul_layout(ValueType("f32", (1, "T", "E"), sliced(0)), full)


def test_extents_never_negative_by_their_least_value() -> None:
    two_e = dims.multiply(2, "E")
    assert dims.never_negative(dims.subtract(two_e, 1))           # 2E - 1 >= 1
    assert not dims.never_negative(dims.subtract("E", 2))         # E - 2 < 0 at E = 1
    assert not dims.never_negative(dims.subtract(dims.multiply("T", "T"), "T"))  # refused


@pytest.mark.parametrize(("layout", "block_group", "result"), [
    (LOCAL, None, sliced(1)),                                  # over the world
    (LOCAL, "stage", sliced(1, "stage")),                      # inside `on stage[k]`
    (REPLICATED, None, sliced(1)),
    (REPLICATED, "stage", sliced(1, "stage")),
    (Layout("replicated", None, "tp"), None, sliced(1, "tp")),  # among the ranks sharing it
])
def test_as_sliced_splits_over_the_ranks_that_hold_the_value(layout, block_group,
                                                              result) -> None:
    assert as_sliced_layout(layout, 1, block_group) == result


def test_as_sliced_inside_a_stage_splits_over_the_stages_ranks() -> None:
    """STAGED's `own = as_sliced(g, 0) * 3.0` inside `on stage[0]`: sliced among that
    stage's ranks, not the world's."""
    from parafuse.ccn_compiler.frontend import check_source
    from tests.e2e.ccn_programs import STAGED

    program = check_source(STAGED, "staged.ccn").programs["staged"]
    assert program.value_type("own").layout == sliced(0, "stage")


@pytest.mark.parametrize("layout", [sliced(1), sliced(0)])
def test_as_sliced_of_a_sliced_value_is_refused(layout) -> None:
    with pytest.raises(LayoutConflict):
        as_sliced_layout(layout, 1, None)


SHARDED = """
program zero(N) {
    param lr: f32 = 0.5
    input g: f32[N] local
    state w: f32[N] replicated
    gsum = allreduce(sum, g)
    w1 = update(w, w - lr * gsum)
    sw = as_sliced(w, 0) * 2.0
    output w1, sw
}
schedule zero for zero {
    rs, ag = split(gsum)
    agw = reorder(ag, w1)
    shard(w)
}
"""


def test_as_sliced_of_a_state_the_schedule_shards_is_dropped_and_agrees() -> None:
    """Once `shard` stores w sliced(0), as_sliced(w, 0) has nothing to do: the scheduled
    program reads w's block as it is, and equals the default at R = 1..3 (N uneven)."""
    from parafuse.ccn_compiler import ir
    from parafuse.ccn_compiler.frontend import check_source
    from tests.schedule_compare import assert_same_results

    module = check_source(SHARDED, "zero.ccn")
    default, sharded = module.programs["zero"], module.scheduled_program("zero", "zero")
    nodes = [n for s in sharded.flat_stages() for e in ir.stage_exprs(s) for n in ir.walk(e)]
    assert not any(isinstance(n, ir.AsSliced) for n in nodes)
    assert sharded.tensor("w").type.layout == sliced(0)
    for ranks in (1, 2, 3):
        assert_same_results(default, sharded, ranks, {"N": 7}, what=f"R={ranks}")
