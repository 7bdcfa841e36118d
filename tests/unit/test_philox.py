"""Philox4x32-10 against Random123's known answers, and the dropout / --random helpers."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from parafuse.ccn_compiler.reference.philox import (
    dropout,
    dropout_keep_mask,
    element_uniforms,
    logical_indices,
    philox4x32_10,
    random_tensor,
    random_uniform_pm1,
    uniform_from_bits,
)

# Random123 `examples/kat_vectors`, the three "philox4x32 10" lines:
# counter (4 words), key (2 words), expected output (4 words).
KNOWN_ANSWERS = [
    ((0x00000000, 0x00000000, 0x00000000, 0x00000000), (0x00000000, 0x00000000),
     (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF),
     (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def scalar_philox(counter: tuple[int, ...], key: tuple[int, int]) -> tuple[int, ...]:
    """Philox4x32-10 on Python ints, written independently of the numpy version."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0, p1 & 0xFFFFFFFF,
                          (p0 >> 32) ^ c3 ^ k1, p0 & 0xFFFFFFFF)
        k0, k1 = (k0 + 0x9E3779B9) & 0xFFFFFFFF, (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return c0, c1, c2, c3


@pytest.mark.parametrize("counter, key, expected", KNOWN_ANSWERS)
def test_known_answers(counter, key, expected):
    words = philox4x32_10(*counter, *key)
    assert tuple(int(w) for w in words) == expected
    assert all(w.dtype == np.uint32 for w in words)
    assert scalar_philox(counter, key) == expected


def test_broadcasts_and_matches_scalar_version():
    rng = np.random.default_rng(1)
    counters = rng.integers(0, 2**32, size=(4, 257), dtype=np.uint64).astype(np.uint32)
    words = philox4x32_10(counters[0], counters[1], 7, counters[3], 0xDEADBEEF, 12345)
    for j in range(0, 257, 16):
        counter = (int(counters[0, j]), int(counters[1, j]), 7, int(counters[3, j]))
        assert tuple(int(w[j]) for w in words) == scalar_philox(counter, (0xDEADBEEF, 12345))


def test_uniform_from_bits_range_and_exactness():
    bits = np.array([0, 0xFF, 0x100, 0xFFFFFFFF], dtype=np.uint32)
    u = uniform_from_bits(bits)
    assert u.dtype == np.float32
    assert u.tolist() == [0.0, 0.0, 2.0**-24, 1.0 - 2.0**-24]


def test_element_uniforms_use_the_spec_counter_and_key():
    idx = np.array([0, 5, 2**32 + 3], dtype=np.uint64)
    key64 = (0x12345678 << 32) | 0x9ABCDEF0
    u = element_uniforms(idx, 2, 9, key64)
    for i, index in enumerate(idx.tolist()):
        x0 = scalar_philox((index & 0xFFFFFFFF, index >> 32, 2, 9), (0x9ABCDEF0, 0x12345678))[0]
        assert u[i] == np.float32((x0 >> 8) * 2.0**-24)


def test_logical_indices_of_a_block():
    whole = logical_indices((3, 5))
    assert whole.tolist() == np.arange(15).reshape(3, 5).tolist()
    block = logical_indices((3, 5), (slice(0, 3), slice(2, 4)))
    assert block.tolist() == whole[:, 2:4].tolist()
    assert logical_indices(()).tolist() == 0
    assert logical_indices((4,), (slice(4, 4),)).shape == (0,)


def test_dropout_p0_keeps_everything_unscaled():
    x = np.linspace(-1, 1, 1000, dtype=np.float32)
    y = dropout(x, 0.0, logical_indices(x.shape), 0, 0, 3)
    np.testing.assert_array_equal(y, x)


def test_dropout_p1_gives_zeros():
    x = np.linspace(-1, 1, 1000, dtype=np.float32)
    y = dropout(x, 1.0, logical_indices(x.shape), 0, 0, 3)
    assert y.dtype == np.float32
    assert not np.any(y)


def test_dropout_keep_rate_and_scaling():
    n, p = 1_000_000, 0.3
    x = np.ones(n, dtype=np.float32)
    y = dropout(x, p, logical_indices((n,)), 0, 1, 42)
    kept = y != 0
    assert abs(kept.mean() - (1 - p)) < 5 * np.sqrt(p * (1 - p) / n)
    scale = np.float32(1) / (np.float32(1) - np.float32(p))
    assert np.all(y[kept] == scale)


def test_dropout_is_deterministic_and_depends_on_every_counter_word():
    idx = logical_indices((64, 64))
    base = dropout_keep_mask(0.5, idx, 0, 0, 10)
    np.testing.assert_array_equal(base, dropout_keep_mask(0.5, idx, 0, 0, 10))
    for other in [(1, 0, 10), (0, 1, 10), (0, 0, 11), (0, 0, 10 + 2**32)]:
        assert not np.array_equal(base, dropout_keep_mask(0.5, idx, *other))


def test_dropout_of_a_block_is_the_block_of_the_whole():
    x = np.arange(6 * 7, dtype=np.float32).reshape(6, 7) + 1
    whole = dropout(x, 0.4, logical_indices(x.shape), 0, 2, 5)
    region = (slice(2, 4), slice(0, 7))
    block = dropout(x[region], 0.4, logical_indices(x.shape, region), 0, 2, 5)
    np.testing.assert_array_equal(block, whole[region])


def test_dropout_rounds_to_the_input_dtype():
    x = np.full(1000, 0.7, dtype=np.float16)
    y = dropout(x, 0.1, logical_indices(x.shape), 0, 0, 0)
    assert y.dtype == np.float16
    expected = np.float16(np.float32(np.float16(0.7)) * (np.float32(1) / np.float32(0.9)))
    assert set(y.tolist()) <= {0.0, float(expected)}


def test_dropout_vectorised_equals_scalar():
    idx = logical_indices((50,))
    keep = dropout_keep_mask(0.25, idx, 3, 1, 77)
    for i in range(50):
        x0 = scalar_philox((i, 0, 3, 1), (77, 0))[0]
        assert keep[i] == (np.float32((x0 >> 8) * 2.0**-24) >= np.float32(0.25))


def test_random_inputs_are_uniform_in_minus_one_one():
    v = random_uniform_pm1((1000, 1000), seed=5, ordinal=0, rank_or_0=0)
    assert v.dtype == np.float32
    assert v.min() >= -1.0 and v.max() < 1.0
    assert abs(float(v.mean())) < 0.01
    assert abs(float((v < 0).mean()) - 0.5) < 0.01


def test_random_inputs_follow_the_spec_counter():
    v = random_uniform_pm1((3, 4), seed=(9 << 32) | 8, ordinal=2, rank_or_0=1)
    for i in range(12):
        x0 = scalar_philox((i, 0, 1, 0x80000002), (8, 9))[0]
        assert v.reshape(-1)[i] == np.float32(2 * ((x0 >> 8) * 2.0**-24) - 1)


def test_random_inputs_differ_by_ordinal_rank_and_seed():
    base = random_uniform_pm1((100,), 0, 0, 0)
    for seed, ordinal, rank in [(1, 0, 0), (0, 1, 0), (0, 0, 1)]:
        assert not np.array_equal(base, random_uniform_pm1((100,), seed, ordinal, rank))
    np.testing.assert_array_equal(base, random_uniform_pm1((100,), 0, 0, 0))


@pytest.mark.parametrize("dtype, numpy_dtype", [
    ("f16", np.float16), ("bf16", ml_dtypes.bfloat16), ("f32", np.float32),
    ("f64", np.float64), ("i32", np.int32), ("i64", np.int64),
])
def test_random_tensor_dtypes(dtype, numpy_dtype):
    t = random_tensor((10, 10), dtype, seed=3, ordinal=1, rank_or_0=0)
    assert t.dtype == np.dtype(numpy_dtype) and t.shape == (10, 10)
    v = random_uniform_pm1((10, 10), 3, 1, 0)
    if dtype in ("i32", "i64"):
        np.testing.assert_array_equal(t, np.floor(v.astype(np.float64) * 100).astype(numpy_dtype))
        assert t.min() >= -100 and t.max() <= 99
    else:
        np.testing.assert_array_equal(t, v.astype(numpy_dtype))


def test_random_scalar():
    t = random_tensor((), "f32", seed=0, ordinal=0, rank_or_0=0)
    assert t.shape == () and -1.0 <= float(t) < 1.0
