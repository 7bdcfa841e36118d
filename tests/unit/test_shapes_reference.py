"""The reference interpreter's shapes around attention heads (tests/e2e/ccn_programs.py,
MULTIHEAD): extents written as products, reshapes, reductions along any dim, a sliced one
included, ranges of a dim, and as_sliced, against numpy on the whole inputs at one rank (as_sliced
at several; the backends and other rank counts are checked against the interpreter elsewhere)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from parafuse.ccn_compiler.frontend import check_source
from parafuse.ccn_compiler.ranks import block_range
from parafuse.ccn_compiler.reference.runner_io import load_tensors
from tests.e2e.ccn_programs import MULTIHEAD, MULTIHEAD_SIZES
from tests.schedule_compare import logical_values, run_schedule

PROGRAM = check_source(MULTIHEAD, "multihead.ccn").programs["multihead"]
T, D, H, E = (MULTIHEAD_SIZES[n] for n in "TDHE")


def test_reshapes_and_reductions_along_dims_are_numpys() -> None:
    world, results = run_schedule(PROGRAM, 1, MULTIHEAD_SIZES, iters=1)
    inputs = {name: v[0] for name, v in load_tensors(PROGRAM, world, None, random=True).items()}
    got = {name: results[name][0].astype(np.float64) for name in
           ("hx", "zsum", "zmax", "zmean", "heads", "flat", "y", "half")}
    assert inputs["xh"].shape == (T, H * E) and inputs["z"].shape == (2 * T, E, H)
    xs = inputs["xh"].reshape(T, H, E).astype(np.float64)
    expected_hx = xs.max(1, keepdims=True) + xs.sum(-1, keepdims=True) * 0.5
    zs = inputs["z"].reshape(T, 2, E, H).astype(np.float64)
    expected = {
        "hx": expected_hx,
        "zsum": zs.sum(2, keepdims=True),
        "zmax": zs.max(2, keepdims=True),
        "zmean": zs.mean(1, keepdims=True) - zs.mean(3, keepdims=True),
        "heads": got["y"].sum(0),  # the heads' projections summed: [T, D]
        "flat": np.swapaxes(inputs["rep"], 0, 1).reshape(T, H * E).astype(np.float64) * 2,
        "half": inputs["cube"][:, E:2 * E].astype(np.float64) * 2 + inputs["cube"][:, :1],
    }
    for name, value in expected.items():
        assert got[name].shape == value.shape, (name, got[name].shape, value.shape)
        assert np.count_nonzero(value) > value.size // 2, name
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-5, err_msg=name)


def test_slices_of_a_fused_projection_are_its_parts() -> None:
    """qs and ks, the first two thirds of qkv = matmul(x, wqkv), give sq = qs ks^T."""
    import ml_dtypes

    world, results = run_schedule(PROGRAM, 1, MULTIHEAD_SIZES, iters=1)
    qkv = results["qkv"][0].view(ml_dtypes.bfloat16).astype(np.float64)
    assert qkv.shape == (H, T, 3 * E) and np.count_nonzero(qkv) > qkv.size // 2
    expected = np.matmul(qkv[..., :E], np.swapaxes(qkv[..., E:2 * E], 1, 2))
    sq = results["sq"][0].view(ml_dtypes.bfloat16).astype(np.float64)
    np.testing.assert_allclose(sq, expected, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("ranks", [2, 3])
def test_as_sliced_keeps_each_ranks_block_of_its_own_value(ranks: int) -> None:
    """own = as_sliced(lq, 0) * q + as_sliced(rep * 2, 0) and lt = as_sliced(lq - 1, 1) + rows:
    block r (H = 5 and T = 7, uneven over the ranks) comes from rank r's own lq."""
    world, results = run_schedule(PROGRAM, ranks, MULTIHEAD_SIZES, iters=1)
    inputs = load_tensors(PROGRAM, world, None, random=True)
    lq = [v.astype(np.float64) for v in inputs["lq"]]
    assert not np.array_equal(lq[0], lq[1])  # local: the ranks' values differ
    rep = inputs["rep"][0].astype(np.float64)
    got = logical_values(PROGRAM, world, results)
    q = got["q"][0].view(ml_dtypes.bfloat16).astype(np.float64)
    rows = np.concatenate([v.astype(np.float64) for v in inputs["rows"]], axis=1)
    cut = [block_range(H, ranks, r) for r in range(ranks)], [block_range(T, ranks, r)
                                                              for r in range(ranks)]
    own = np.concatenate([lq[r][a:b] for r, (a, b) in enumerate(cut[0])]) * q + rep * 2
    lt = np.concatenate([lq[r][:, a:b] - 1 for r, (a, b) in enumerate(cut[1])], axis=1) + rows
    np.testing.assert_allclose(got["own"][0], own, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["lt"][0], lt, rtol=1e-5, atol=1e-5)
