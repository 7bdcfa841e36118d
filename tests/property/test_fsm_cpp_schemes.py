"""Every C++ scheme at 1, 2 and 3 threads and chunk counts 1, 2, 7, 64 and more than the
input's bytes (4,099 on inputs longer than that) gives the reference executor's result
(final state, counts, matches): for every sample on empty, one-byte, random and real
inputs, for random machines (few and many states, converging and permutation-like, fused
DFA complete or cut short) and for random pattern sets."""

from __future__ import annotations

import dataclasses
import re
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import CompileError, SourceFile
from tests.conftest import SAMPLES
from tests.property.fsm_cpp_driver import SCHEMES, assert_all_equal_reference, random_machine
from tests.property.fsm_regex_strategies import HAYSTACK_BYTES, compile_patterns, pattern_sets

sys.path.insert(0, str(SAMPLES))
import inputs  # noqa: E402

SAMPLE_NAMES = sorted(path.stem for path in SAMPLES.glob("*.fsm"))
SETTINGS = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


def sample_machine(name: str):
    path = SAMPLES / f"{name}.fsm"
    return compile_file(SourceFile(str(path), path.read_text(encoding="latin-1"))).machines[0]


def sample_inputs(name: str) -> dict[str, bytes]:
    real = inputs.GENERATORS[name](1 << 17)
    noise = np.random.default_rng(5).integers(0, 256, 3000, dtype=np.uint8).tobytes()
    return {"empty": b"", "one byte": real[:1], "random": noise, "real": real}


@pytest.mark.parametrize("matches", [True, False])
@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_sample_every_scheme_equals_reference(name: str, matches: bool, tmp_path) -> None:
    machine = sample_machine(name)
    for data in sample_inputs(name).values():
        assert_all_equal_reference(machine, data, tmp_path, matches=matches)


@pytest.mark.parametrize("kind", ["converging", "permutation"])
@pytest.mark.parametrize("states", [1, 3, 40, 300])
def test_random_machines_every_scheme_equals_reference(kind: str, states: int, tmp_path) -> None:
    rng = np.random.default_rng(states * 7 + len(kind))
    for bound in (4, 65536):  # a fused DFA cut short (chunks continue as enum), and a full one
        machine = random_machine(rng, states, int(rng.integers(1, 6)), kind, bound)
        data = rng.integers(0, 256, int(rng.integers(200, 5000)), dtype=np.uint8).tobytes()
        for piece in (b"", data[:1], data):
            assert_all_equal_reference(machine, piece, tmp_path)
            assert_all_equal_reference(machine, piece, tmp_path, matches=False)


# (states, reporting states, bytes): counts-only runs long enough (> 16 KiB per lane) for
# the counting kernels to switch modes: packed (<= 8 reporting states, frequent reports),
# dense (more reporting states, small table), sparse; table entries of 1, 2 and 4 bytes;
# more than 65535 states.
# The driver reports the modes some block was counted in (over every configuration) and
# the table's entry width, so that each case is checked to exercise what it is meant to.
@pytest.mark.parametrize("states, reporting, length, modes, entry_bytes", [
    (5, 1, 200_000, {"sparse", "packed"}, 1), (12, 8, 200_000, {"sparse", "packed"}, 1),
    (40, 30, 200_000, {"sparse", "dense"}, 2), (300, 120, 150_000, {"sparse", "dense"}, 2),
    (9000, 3000, 60_000, {"sparse"}, 4), (70_000, 20, 3000, {"sparse"}, 4)])
def test_counting_modes_and_entry_widths(states: int, reporting: int, length: int,
                                         modes: set[str], entry_bytes: int,
                                         tmp_path) -> None:
    rng = np.random.default_rng(states + reporting)
    machine = random_machine(rng, states, 3, "converging")
    tags = tuple((int(rng.integers(0, len(machine.tag_names))),) if s < reporting else ()
                 for s in range(states))
    machine = dataclasses.replace(machine, state_tags=tags)
    noise = rng.integers(0, 256, length // 2, dtype=np.uint8).tobytes()
    data = noise + bytes([int(machine.byte_class.argmax())]) * (length // 4) + noise[:length // 4]
    configs = [f"{scheme}:{threads}:{chunks}" for scheme in SCHEMES
               for threads, chunks in ((1, 1), (1, 4), (2, 7), (3, 64))]
    counted = assert_all_equal_reference(machine, data, tmp_path, configs, matches=False)
    assert {mode for result in counted for mode in result["counting"]} == modes
    assert {result["entry_bytes"] for result in counted} == {entry_bytes}
    assert_all_equal_reference(machine, data[:5000], tmp_path, configs)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), states=st.integers(1, 60),
       kind=st.sampled_from(["converging", "permutation"]), length=st.integers(0, 700))
def test_hypothesis_machines(seed: int, states: int, kind: str, length: int, tmp_path) -> None:
    rng = np.random.default_rng(seed)
    bound = int(rng.choice([2, 50, 65536]))
    machine = random_machine(rng, states, int(rng.integers(1, 5)), kind, bound)
    data = rng.integers(0, 256, length, dtype=np.uint8).tobytes()
    assert_all_equal_reference(machine, data, tmp_path)


@settings(SETTINGS, max_examples=60)  # assertions, flags, classes: more to cover
@given(patterns=pattern_sets, haystack=st.lists(st.sampled_from(HAYSTACK_BYTES), max_size=400))
def test_hypothesis_pattern_sets(patterns, haystack, tmp_path) -> None:
    try:
        machine = compile_patterns(patterns)
    except CompileError:  # a regex Hyperscan refuses too (tests/property/test_regex_hyperscan.py)
        machine = None
    assume(machine is not None)
    assert_all_equal_reference(machine, bytes(haystack), tmp_path)


ASSERTION_SET = [("^", ""), ("$", ""), (r"\b", ""), (r"\B", ""), (r"\bab\b", "i"),
                 (r"a\Z", ""), (r"(?m)^\w+$", ""), (r"x*\b", ""), (r"c\z", ""), ("$", "m"),
                 (r"(?:^|\b)b", "")]


@pytest.mark.parametrize("data", [b"", b"\n", b"a", b"ab c\n", b"ab\nAB-abc\n\nb c x\n",
                                  b"xx ab\n" * 40 + b"c"])
def test_assertions_every_scheme_equals_reference(data: bytes, tmp_path) -> None:
    """Delayed reports (offset - 1) and end-of-data reports, with chunk boundaries at
    every byte (more chunks than bytes) and between."""
    machine = compile_patterns(ASSERTION_SET)
    assert machine.delayed_tags and machine.end_reports
    assert_all_equal_reference(machine, data, tmp_path)
    assert_all_equal_reference(machine, data, tmp_path, matches=False)


def test_speculation_that_keeps_failing_stays_exact(tmp_path) -> None:
    """Parity of the 1-bytes: paths never merge, so lookback predicts a tie (the smallest
    state) and about half the chunks misspeculate; none of them ever converges."""
    rng = np.random.default_rng(3)
    machine = random_machine(rng, 2, 2, "converging")
    machine.transitions[:] = np.array([[0, 1], [1, 0]], dtype=np.int32)
    machine.byte_class[:] = 0
    machine.byte_class[1] = 1
    data = bytes(rng.integers(0, 2, 20000, dtype=np.uint8))
    configs = [f"{s}:{t}:{c}" for s in ("spec", "hspec") for t in (1, 2, 3) for c in (7, 64, 500)]
    results = assert_all_equal_reference(machine, data, tmp_path, configs=configs)
    for config, result in zip(configs, results, strict=True):
        chunks = int(config.split(":")[2])
        missed = int(re.search(r"; (\d+) misspeculated", result["reason"]).group(1))
        rerun = int(re.search(r"re-ran (\d+) bytes", result["reason"]).group(1))
        assert (chunks - 1) // 4 <= missed <= chunks - 1 and rerun >= missed, (config, result)
