"""The oracles themselves, against direct single-process f64 formulas on the logical tensors.

At R = 1 the only differences are the rounding points of docs/ccn-language.md section 4, so the
oracle must
match at the tolerance of the values' own dtype; at R > 1 the blocks, partial sums
and per-rank masks must add up to the same logical result.
"""

from __future__ import annotations

import numpy as np
import pytest
import spec_random
from numpy_oracles import block_range, sum_over_ranks
from sample_cases import CASES, NUMPY_DTYPES, make_inputs

from parafuse.ccn_compiler.reference.philox import dropout_keep_mask, logical_indices, random_tensor
from parafuse.ccn_compiler.reference.tolerances import assert_close

SEED = 11


def f64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def adam_like_moments(inputs, params, defaults):
    p = {**defaults, **params}
    gsum = sum(f64(g) for g in inputs["g"])
    return p, gsum


def direct_adam(inputs, ranks, params, iters, lamb=False):
    defaults = {"lr": 0.01 if lamb else 0.001, "beta1": 0.9, "beta2": 0.999,
                "eps": 1e-6 if lamb else 1e-8, "wd": 0.01}
    p, gsum = adam_like_moments(inputs, params, defaults)
    p = {k: float(np.float32(v)) for k, v in p.items()}
    w, m, v = f64(inputs["w"]), f64(inputs["m"]), f64(inputs["v"])
    for _ in range(iters):
        m = p["beta1"] * m + (1 - p["beta1"]) * gsum
        v = p["beta2"] * v + (1 - p["beta2"]) * gsum**2
        step = m / (np.sqrt(v) + p["eps"])
        if lamb:
            step = step + p["wd"] * w
            step = np.linalg.norm(w) / np.linalg.norm(step) * step
        w = w - p["lr"] * step
    return {"w": w, "m": m, "v": v}


def direct_sgd(inputs, ranks, params, iters):
    p = {"lr": 0.01, "momentum": 0.9, "wd": 0.0001, **params}
    p = {k: float(np.float32(v)) for k, v in p.items()}
    gavg = sum(f64(g) for g in inputs["g"]) / ranks
    w, buf = f64(inputs["w"]), f64(inputs["buf"])
    for _ in range(iters):
        buf = p["momentum"] * buf + gavg + p["wd"] * w
        w = w - p["lr"] * buf
    return {"w": w, "buf": buf}


def direct_megatron(inputs, ranks, params, iters):
    p = params.get("p", 0.1)
    y = f64(inputs["x"]) @ f64(inputs["w"]) + f64(inputs["bias"])
    keep = dropout_keep_mask(p, logical_indices(y.shape), 0, 0, SEED + iters - 1)
    scale = float(np.float32(1) / (np.float32(1) - np.float32(p)))
    return {"out": f64(inputs["resid"]) + np.where(keep, y * scale, 0.0)}


def gelu64(a):
    return 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a**3)))


def direct_send_ring(inputs, ranks, params, iters):
    p, half = params.get("p", 0.25), ranks // 2
    hidden = gelu64(f64(inputs["x"]) @ f64(inputs["w"]))
    scale = float(np.float32(1) / (np.float32(1) - np.float32(p)))
    acc = [f64(a) for a in inputs["acc"]]
    idx = logical_indices(hidden.shape)
    for step in range(iters):
        parts = [np.where(dropout_keep_mask(p, idx, r, 0, SEED + step),
                          hidden * f64(inputs["u"][r]) * scale, 0.0) for r in range(ranks)]
        stage = [sum(parts[:half]), sum(parts[half:])]
        recv = [stage[1 - r // half] for r in range(ranks)]
        acc = [acc[r] + recv[r] for r in range(ranks)]
    return {"recv": recv, "acc": acc}


def direct_mlp_block(x, w_in, bias, w_out, gamma, eps):
    r = f64(x) + gelu64(f64(x) @ f64(w_in) + f64(bias)) @ f64(w_out)
    norm = (r - r.mean(-1, keepdims=True)) / np.sqrt(r.var(-1, keepdims=True) + eps)
    return norm * f64(gamma)


def direct_pipeline(inputs, ranks, params, iters):
    eps = params.get("eps", 1e-5)
    z = direct_mlp_block(*(inputs[n] for n in ("x", "w1", "b1", "w2", "g1")), eps)
    out = direct_mlp_block(z, *(inputs[n] for n in ("w3", "b3", "w4", "g2")), eps)
    return {"out": [None] * (ranks // 2) + [out] * (ranks // 2)}


DIRECT = {
    "adam": direct_adam,
    "lamb": lambda i, r, p, n: direct_adam(i, r, p, n, lamb=True),
    "sgd": direct_sgd,
    "megatron": direct_megatron,
    "send_ring": direct_send_ring,
    "pipeline": direct_pipeline,
}


@pytest.mark.parametrize("sample", sorted(CASES))
def test_oracle_matches_direct_formula(sample):
    case = CASES[sample]
    for ranks in case.rank_counts:
        inputs = make_inputs(case, ranks, np.random.default_rng(ranks))
        got = case.oracle(inputs, ranks, case.params, SEED, 2)
        want = DIRECT[sample](inputs, ranks, case.params, 2)
        for output in case.outputs:
            assert len(got[output.name]) == ranks
            exact_gradient = ranks == 1 and sample in ("adam", "lamb", "sgd")
            tolerance = "f32" if exact_gradient else output.tolerance
            for rank, held in enumerate(got[output.name]):
                expected = want[output.name]
                expected = expected[rank] if isinstance(expected, list) else expected
                if held is None or expected is None:  # a rank of another pipeline stage
                    assert held is None and expected is None, (sample, ranks, rank)
                    continue
                assert held.dtype == np.dtype(NUMPY_DTYPES[output.dtype])
                assert_close(held, expected, tolerance, f"{sample} R={ranks} {output.name}")


def test_block_split_rule():
    assert [block_range(5, 4, r) for r in range(4)] == [
        slice(0, 2), slice(2, 4), slice(4, 5), slice(5, 5)]
    assert [block_range(2, 4, r) for r in range(4)] == [
        slice(0, 1), slice(1, 2), slice(2, 2), slice(2, 2)]
    assert [block_range(1001, 3, r) for r in range(3)] == [
        slice(0, 334), slice(334, 668), slice(668, 1001)]


def test_sum_over_ranks_rounds_once():
    halves = [np.array([1.0], np.float16), np.array([2.0**-11], np.float16),
              np.array([2.0**-11], np.float16)]
    assert float(sum_over_ranks(halves, np.dtype(np.float16))[0]) == 1.0 + 2.0**-10


def test_megatron_oracle_with_an_empty_block_equals_one_rank():
    case = CASES["megatron"]
    inputs = make_inputs(case, 4, np.random.default_rng(0))
    assert block_range(case.sizes["K"], 4, 3) == slice(5, 5)
    four = case.oracle(inputs, 4, case.params, SEED, 1)["out"]
    one = case.oracle(inputs, 1, case.params, SEED, 1)["out"][0]
    for held in four:
        assert_close(held, one, "f16")


def test_spec_random_known_answers() -> None:
    """The oracles' own Philox against Random123's kat_vectors (first output word)."""
    word = 0xFFFFFFFF
    assert spec_random.philox_x0((0, 0, 0, 0), (0, 0)) == 0x6627E8D5
    assert spec_random.philox_x0((word,) * 4, (word, word)) == 0x408F276D
    assert spec_random.philox_x0((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
                                 (0xA4093822, 0x299F31D0)) == 0xD16CFE09


@pytest.mark.parametrize("shape, p, rank, site, key", [
    ((7, 5), 0.3, 0, 0, 11), ((13,), 0.5, 2, 1, (1 << 32) + 5), ((3, 4), 0.999, 1, 3, 2**64 - 1)])
def test_spec_random_agrees_with_the_package(shape, p, rank, site, key) -> None:
    """Two implementations written apart: masks bit for bit, random inputs exactly."""
    expected = dropout_keep_mask(p, logical_indices(shape), rank, site, key)
    assert np.array_equal(spec_random.keep_mask(shape, p, rank, site, key), expected)
    for dtype in ("f16", "bf16", "f32", "f64", "i32", "i64"):
        ours = spec_random.random_input(shape, dtype, key, site, rank)
        theirs = random_tensor(shape, dtype, key, site, rank)
        assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs), dtype
