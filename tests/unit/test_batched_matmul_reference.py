"""The reference interpreter's batched matmul: a rank's blocks, gathered by their layouts,
give the one-rank result at every rank count (the backends are checked against it in
tests/e2e), and the one-rank result is numpy's matmul of the whole inputs."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from parafuse.ccn_compiler.frontend import check_source
from parafuse.ccn_compiler.reference.runner_io import load_tensors
from tests.e2e.ccn_programs import MULTIHEAD, MULTIHEAD_SIZES
from tests.schedule_compare import logical_values, run_schedule

PROGRAM = check_source(MULTIHEAD, "multihead.ccn").programs["multihead"]
OWN_BLOCKS = {"own", "ol", "lt"}  # as_sliced of a local input: each rank's value differs


def whole_results(ranks: int) -> dict[str, np.ndarray]:
    world, results = run_schedule(PROGRAM, ranks, MULTIHEAD_SIZES, iters=1)
    values = logical_values(PROGRAM, world, results)
    return {name: (sum(v.astype(np.float64) for v in per_rank) if len(per_rank) > 1
                   else per_rank[0].astype(np.float64)) for name, per_rank in values.items()}


@pytest.mark.parametrize("ranks", [2, 3])
def test_blocks_gather_to_the_one_rank_result(ranks: int) -> None:
    one, many = whole_results(1), whole_results(ranks)
    assert set(one) == set(many)
    for name, value in one.items():
        if name in OWN_BLOCKS:
            continue
        np.testing.assert_allclose(many[name], value, rtol=1e-5, atol=1e-5, err_msg=name)


def test_one_rank_is_numpys_matmul() -> None:
    world, results = run_schedule(PROGRAM, 1, MULTIHEAD_SIZES, iters=1)
    inputs = {name: v[0] for name, v in load_tensors(PROGRAM, world, None, random=True).items()}
    bf16 = ml_dtypes.bfloat16
    x, wq = (inputs[n].astype(bf16).astype(np.float32) for n in ("x", "wq"))
    expected_q = np.matmul(x, wq).astype(bf16)  # [T, D] x [H, D, E]: every head
    assert np.count_nonzero(expected_q.astype(np.float32)) > expected_q.size // 2
    assert np.array_equal(results["q"][0].view(bf16), expected_q)
    big, full = inputs["big"], inputs["full"].astype(np.float64)
    np.testing.assert_array_equal(results["m4"][0], np.matmul(big, full))  # [2, H, ...] x [H, ...]
    one, rows = inputs["one"].astype(np.float64), inputs["rows"].astype(np.float64)
    for name, expected in (("b1", np.matmul(one, full)),  # [1, T, E] x [H, E, T]: repeated
                           ("b2", np.matmul(rows, one.reshape(1, -1, one.shape[1])))):
        assert results[name][0].shape == expected.shape, name
        np.testing.assert_allclose(results[name][0], expected, rtol=1e-5, atol=1e-5, err_msg=name)
