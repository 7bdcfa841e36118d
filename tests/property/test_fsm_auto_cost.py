"""`auto`'s choosing, bounded and priced right (cpp_runtime/fsm/auto/: rates.hpp,
samples.hpp, probe.hpp, choice.hpp): the timed kernels stop after two rounds
where both say the same by 25% or more and time a single round on small inputs; `hspec`
is never picked at one thread (rules and probes); speculation's predictions are priced
as measured over the probes' sample (a phase of their own, per chunk), and at two
threads `spec` and `hspec` are probed from one run; a big machine whose paths merge has
its `enum` run as the merging
scalar enumeration, not SIMD enumeration of every state to each chunk's end. Results are
checked against the reference executor; the timed rules only where the two timings
differ by far (or tie), so that a busy core does not decide them."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from parafuse.fsm_compiler.analysis.simd_fit import cpu_simd_paths, simd_path
from parafuse.fsm_compiler.compiled import CompiledMachine
from parafuse.fsm_compiler.options import MachineOptions
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import Location, SourceFile
from tests.property.fsm_cpp_driver import assert_all_equal_reference, driver_results
from tests.property.test_fsm_auto_rates import INPUT_BYTES, fits, permutation
from tests.required_tools import require_cxx

PROBES_ON = dict(os.environ, PARAFUSE_FSM_PROBE_MIN_BYTES="1")  # probes on small inputs
ROUNDS = re.compile(r"fastest of (\d) rounds")


@pytest.fixture(scope="module", autouse=True)
def compiler() -> None:
    require_cxx()


def test_timed_rounds_fit_the_input(tmp_path) -> None:
    """perm12 over letters: SIMD enumeration and the table walks are timed in rounds; 2 MiB
    allow 2 to 4 rounds (two that agree decide), 96 KiB one. How many of the 4 a run takes,
    and which kernel wins, depend on the machine's speed and load (SIMD ran 1.8x the walks
    on a Zen 3 core, 3x on Zen 4, under a loaded test run below the decisive ratio in every
    run, and once 0.5x): the rule that stops at two decisive rounds is checked by
    tests/unit/test_fsm_rate_rounds.py, without timing."""
    perm12 = compile_file(SourceFile("perm12.fsm", permutation.permutation_source(12))).machines[0]
    if not fits(perm12):
        pytest.skip("this CPU has no SIMD path for 12 states")  # the rule does not run
    rng = np.random.default_rng(61)
    letters = rng.choice(np.frombuffer(b"abcXYZ0123 .,\n", dtype=np.uint8), 2 << 20).tobytes()
    results = driver_results(perm12, letters, ["auto:1:0"] * 3, tmp_path, matches=False)
    for result in results:  # a single pass where the walks won (the machine was busy)
        assert result["scheme"] in ("enum", "seq"), result["reason"]
    rounds = [ROUNDS.search(result["reason"]).group(1) for result in results]
    assert set(rounds) <= {"2", "3", "4"}, [r["reason"] for r in results]
    for result in assert_all_equal_reference(perm12, letters[:INPUT_BYTES], tmp_path,
                                             ["auto:1:0", "auto:2:0"], matches=False):
        assert ROUNDS.search(result["reason"]).group(1) == "1", result["reason"]


def two_rotations() -> CompiledMachine:
    """Two rotations of 3 states; class 0 resets each to its first state (one byte in 8):
    paths from all states never meet, lookback is right at 50-99% and every wrong guess
    meets the true path at the next reset (tests/unit/test_fsm_analysis.py). The reporting
    states are the last, so that the runtime's numbering (reporting states last) keeps the
    order in which lookback's votes break ties (towards the true rotation)."""
    rows = [[s - s % 3] + [s - s % 3 + (s % 3 + 1) % 3] * 7 for s in range(6)]
    return CompiledMachine(
        name="rotations", kind="explicit", state_names=tuple(f"s{i}" for i in range(6)),
        start=0, byte_class=(np.arange(256) % 8).astype(np.uint8),
        transitions=np.array(rows, dtype=np.int32), tag_names=("t",),
        state_tags=((), (), (0,), (0,), (0,), (0,)), options=MachineOptions(lookback=8),
        location=Location("rotations.fsm", 1, 1))


def test_hspec_is_never_picked_at_one_thread(tmp_path) -> None:
    """The rules pick `hspec` at two threads and `spec` at one; with probes on, one thread
    does not probe `hspec`. With matches: SIMD enumeration's rule does not run."""
    machine = two_rotations()
    data = np.random.default_rng(62).integers(0, 256, INPUT_BYTES, dtype=np.uint8).tobytes()
    ruled = assert_all_equal_reference(machine, data, tmp_path, ["auto:1:0", "auto:1:7",
                                                                  "auto:2:7"])
    for result, threads in zip(ruled, (1, 1, 2), strict=True):
        assert result["scheme"] == ("spec" if threads == 1 else "hspec"), result["reason"]
        assert ("at one thread, spec" in result["reason"]) == (threads == 1), result["reason"]
    for result in assert_all_equal_reference(machine, data, tmp_path, ["auto:1:7"] * 2,
                                             env=PROBES_ON):
        assert "measured: every scheme" in result["reason"], result["reason"]
        assert "(hspec not probed at one thread)" in result["reason"], result["reason"]
        assert " hspec " not in result["reason"].split("; the analysis rules")[0]
        assert result["scheme"] != "hspec"


def merging_machine(states: int = 200, lookback: int = 64) -> CompiledMachine:
    """A big machine whose paths merge at once: byte 'r' sends the first 140 states but
    state 1 to state 0 and the rest to 1 (fixed points of every other byte but 'z'), other
    bytes rotate states 2.. and fix 0 and 1, 'z' sends every state to 1 (the start). The
    true state is always 1; lookback's vote says 0 unless a 'z' lies in its window, and
    a wrong guess meets the truth at the next 'z'. Predictions from all states merge to 2
    paths at the first 'r': a few hundred lookups, not states x lookback (12800)."""
    rotate = [0, 1] + [2 + (s - 1) % (states - 2) for s in range(2, states)]
    reset = [0 if s < 140 and s != 1 else 1 for s in range(states)]
    transitions = np.array([[reset[s], rotate[s], 1] for s in range(states)], dtype=np.int32)
    byte_class = np.ones(256, dtype=np.uint8)
    byte_class[ord("r")], byte_class[ord("z")] = 0, 2
    tags = tuple((0,) if s in (1, 7) else () for s in range(states))
    return CompiledMachine(
        name="merging", kind="explicit", state_names=tuple(f"s{i}" for i in range(states)),
        start=1, byte_class=byte_class, transitions=transitions, tag_names=("hit",),
        state_tags=tags, options=MachineOptions(lookback=lookback, max_fused_states=64),
        location=Location("merging.fsm", 1, 1))


def merging_input(size: int, seed: int = 63) -> bytes:
    """'r' and 'q' at random, a 'z' every 100 bytes."""
    data = np.random.default_rng(seed).choice(np.frombuffer(b"rq", dtype=np.uint8), size)
    data[::100] = ord("z")
    return data.tobytes()


SPEC_LOOKUPS = re.compile(r"lookback \((\d+) lookups\)")
ESTIMATE = re.compile(r" (seq|enum|fused|spec|hspec) ([0-9.]+) GB/s")


def test_speculation_probed_with_predictions_measured(tmp_path) -> None:
    """Predictions are a phase of their own ("predict", before the walks), so the probes
    measure them as a cost per chunk instead of pricing them. At two threads `spec` and
    `hspec` are probed from one run (the same predictions and walks, two validations):
    both have an estimate, every probe runs beside the others, and the results, counted
    and listed, equal the reference's. A 200-state machine whose paths merge at once: its
    predictions take far fewer than states x lookback lookups."""
    machine, data = merging_machine(), merging_input(INPUT_BYTES)
    configs = ["auto:1:64", "auto:2:64", "spec:2:64", "hspec:2:64"]
    for matches in (False, True):
        results = assert_all_equal_reference(machine, data, tmp_path, configs, env=PROBES_ON,
                                             matches=matches, profile=True)
        lookups = int(SPEC_LOOKUPS.search(results[2]["reason"]).group(1)) / 63
        assert lookups * 20 < machine.state_count * machine.options.lookback
        for result in results[2:]:
            names = [phase["name"] for phase in result["phases"]]
            assert names.index("predict") + 1 == names.index("speculate"), names
        for result, threads in zip(results[:2], (1, 2), strict=True):
            reason = result["reason"]
            assert "predictions measured as a cost per chunk" in reason, reason
            estimates = dict(ESTIMATE.findall(reason.split("; the analysis rules")[0]))
            assert ("hspec" in estimates) == (threads == 2), reason
            assert "spec" in estimates, reason


def test_big_merging_machine_enumerates_by_merging(tmp_path) -> None:
    """Paths meet on the sample, so the rules pick `enum`; it runs as the merging scalar
    enumeration (walked once from where the paths meet), not SIMD enumeration of all 200
    states to each chunk's end (AVX-512 VBMI: 0.2 GB/s); with and without matches."""
    machine, data = merging_machine(), merging_input(INPUT_BYTES)
    # Where this CPU has a SIMD path for 200 states (AVX-512 VBMI), auto passes it over
    # and says so; elsewhere the run says why no SIMD path runs, never that one was asked.
    simd = simd_path(machine.state_count, cpu_simd_paths())
    for matches in (False, True):
        for result in assert_all_equal_reference(machine, data, tmp_path, ["auto:1:0", "auto:2:7"],
                                                 matches=matches):
            reason = result["reason"]
            assert result["scheme"] == "enum", reason
            assert "paths met" in reason, reason
            assert "chunks each ran from all" not in reason, reason  # SIMD enumeration's words
            assert "lookups per byte as paths merged" in reason, reason
            run_end = reason.rsplit("from their true start states (", 1)[-1]
            if simd is not None:
                assert run_end == "auto runs the merging scalar enumeration here)", reason
            assert "SIMD path none was asked for" not in run_end, reason  # nobody asked
