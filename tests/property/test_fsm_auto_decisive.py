"""`auto`'s choices that need no probes (cpp_runtime/fsm/auto/choice.hpp): lookback right at
99% or more of the sampled positions decides `spec` whatever the machine's size, a partial
fused DFA whose walks stay inside its stored states keeps `fused`, every choice made
without probes is remembered for a later run in the same process like a probed one, and
lookback sampling stops after 16 positions where none was right and no wrong guess met
the true path within 1 KiB (it measures 64 otherwise). Each
result is checked against the reference executor; the decisions are deterministic (no
timing): the machines make the measured facts certain."""

from __future__ import annotations

import dataclasses
import os
import re

import numpy as np
import pytest

from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import SourceFile
from tests.property.fsm_cpp_driver import assert_all_equal_reference, random_machine
from tests.property.test_fsm_auto_rates import INPUT_BYTES, permutation
from tests.required_tools import require_cxx

PROBES_ON = dict(os.environ, PARAFUSE_FSM_PROBE_MIN_BYTES="1")  # probes on small inputs
CONFIGS = ["auto:1:0", "auto:2:0", "auto:2:7"]


@pytest.fixture(scope="module", autouse=True)
def compiler() -> None:
    require_cxx()


def reset_machine(rng: np.random.Generator, states: int):
    """A converging machine past SIMD enumeration's lanes whose class of byte 0 sends every
    state to state 0: 8 bytes of lookback that hold a 0 predict the state exactly."""
    machine = random_machine(rng, states, 4, "converging")
    transitions = machine.transitions.copy()
    transitions[:, machine.byte_class[0]] = 0
    return dataclasses.replace(machine, transitions=transitions)


def test_lookback_rule_decides_spec_without_probes(tmp_path) -> None:
    """Three bytes in four reset the machine, so lookback is right at every sampled
    position: `spec` with no probes even where they are on, remembered by the same run
    again; a permutation machine (lookback hopeless) is still probed."""
    rng = np.random.default_rng(51)
    machine = reset_machine(rng, 300)
    reset_byte, other = 0, int(np.flatnonzero(machine.byte_class != machine.byte_class[0])[0])
    data = rng.choice(np.array([reset_byte] * 3 + [other], dtype=np.uint8), INPUT_BYTES).tobytes()
    for matches in (False, True):
        results = assert_all_equal_reference(machine, data, tmp_path, CONFIGS + CONFIGS[-1:],
                                             matches=matches, env=PROBES_ON)
        again = results.pop()
        for result in results:
            assert result["scheme"] == "spec", result["reason"]
            assert result["reason"].startswith("by the lookback rule: speculation from 8 bytes"), \
                result["reason"]
            assert "measured: every scheme" not in result["reason"]
        assert again["reason"].startswith("as measured by an earlier run"), again["reason"]
        assert "by the lookback rule" in again["reason"] and again["scheme"] == "spec"
    hopeless = random_machine(rng, 90, 4, "permutation")
    data = rng.choice(np.frombuffer(b"abcXYZ0123 .,\n", dtype=np.uint8), INPUT_BYTES).tobytes()
    for result in assert_all_equal_reference(hopeless, data, tmp_path, CONFIGS, env=PROBES_ON):
        assert result["reason"].startswith("measured: every scheme ran"), result["reason"]


def test_lookback_sampling_stops_early_only_where_hopeless(tmp_path) -> None:
    """A permutation machine (paths never meet): 0% of 16 positions, where sampling stops.
    All the budgeted positions are measured where some guess was right (a reset machine, one
    byte in 16 resetting) and where none was but the wrong guesses met the true path soon."""
    rng = np.random.default_rng(53)
    hopeless = random_machine(rng, 90, 4, "permutation")
    data = rng.choice(np.frombuffer(b"abcXYZ0123 .,\n", dtype=np.uint8), INPUT_BYTES).tobytes()
    for result in assert_all_equal_reference(hopeless, data, tmp_path, CONFIGS, matches=False):
        assert "right at only 0.0% of 16 sampled positions (none right and no wrong guess met " \
               "the true path within 1024 bytes, where sampling stops)" in result["reason"], \
            result["reason"]
    machine = reset_machine(rng, 100)  # with matches: no SIMD rule
    other = int(np.flatnonzero(machine.byte_class != machine.byte_class[0])[0])
    data = rng.choice(np.array([0] + [other] * 15, dtype=np.uint8), INPUT_BYTES).tobytes()
    for result in assert_all_equal_reference(machine, data, tmp_path, CONFIGS):
        # its budget (fsm/auto/samples.hpp): 2^15 lookups, each position about 256 + 100 x 10
        sampled = int(re.search(r" of (\d+) sampled positions", result["reason"]).group(1))
        assert 16 < sampled < 64, result["reason"]
        assert "where sampling stops" not in result["reason"], result["reason"]
    machine, data = always_wrong_soon_met(rng)  # with matches: its SIMD and walk rates tie
    for result in assert_all_equal_reference(machine, data, tmp_path, CONFIGS):
        sampled = int(re.search(r"right at only 0\.0% of (\d+) sampled positions",
                                result["reason"]).group(1))
        assert sampled > 16 and "where sampling stops" not in result["reason"], result["reason"]


def always_wrong_soon_met(rng: np.random.Generator):
    """90 states: state 0 loops on itself and is never reached from the start (1); the
    others rotate among themselves; the class of byte 0 resets every state to 1. Over 8
    bytes without a reset the paths from all states end distinct, so lookback guesses the
    smallest, 0, never the true state; a reset 100 bytes after each of the first 16 sampled
    positions (none in a lookback window) makes every wrong guess meet the true path soon."""
    machine = random_machine(rng, 90, 4, "converging", max_fused_states=16)  # not complete
    rotate = np.concatenate([[0], np.arange(2, 90), [1]]).astype(np.int32)
    transitions = np.repeat(rotate[:, None], 4, axis=1)
    transitions[:, machine.byte_class[0]] = 1
    machine = dataclasses.replace(machine, transitions=transitions, start=1)
    other = int(np.flatnonzero(machine.byte_class != machine.byte_class[0])[0])
    data = np.full(INPUT_BYTES, other, dtype=np.uint8)
    lookback, spacing = machine.options.lookback, 256  # fsm/auto/samples.hpp's 64 positions
    for i in range(16):
        data[lookback + spacing * (i + 1) + 100] = 0
    return machine, data.tobytes()


def test_partial_fused_dfa_kept_where_walks_stay_inside(tmp_path) -> None:
    """perm12's fused DFA exceeds its bound (letters and digits generate every permutation),
    but over letters and spaces alone its walks only rotate: 12 fused states, all stored, so
    the rule keeps `fused` (with matches: no SIMD rule). A digit in each 64 bytes leaves the
    stored states (the walks permute further) and the rule must not hold."""
    perm12 = compile_file(SourceFile("perm12.fsm", permutation.permutation_source(12))).machines[0]
    rng = np.random.default_rng(52)
    letters = rng.choice(np.frombuffer(b"abcXYZ ", dtype=np.uint8), INPUT_BYTES)
    for result in assert_all_equal_reference(perm12, letters.tobytes(), tmp_path, CONFIGS):
        assert result["scheme"] == "fused", result["reason"]
        assert "stayed inside its" in result["reason"], result["reason"]
    with_digits = letters.copy()
    with_digits[::64] = ord("7")
    for result in assert_all_equal_reference(perm12, with_digits.tobytes(), tmp_path, CONFIGS):
        assert result["scheme"] != "fused" and "stayed inside" not in result["reason"], \
            result["reason"]
