"""`auto`'s first rule (cpp_runtime/fsm/auto/rates.hpp): where SIMD enumeration counts a run
in one pass, it is timed against interleaved table walks on a window of the input, and
taken without further measurement where it is at least as fast per core. Checked against
the reference executor (whatever the timing decides), for consistency between the pick
and the rates the reason reports, and for when the rule must not run (matches, SIMD off,
too many groups). Also: a choice remembered in the process is keyed with --matches."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from parafuse.emitters.fsm.blob import machine_blob
from parafuse.emitters.fsm.project import table_driver
from parafuse.fsm_compiler.analysis.project_analysis import untrained_analysis
from parafuse.fsm_compiler.analysis.simd_fit import counts_in_one_pass, cpu_simd_paths
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import SourceFile
from tests.conftest import SAMPLES
from tests.property.fsm_cpp_driver import assert_all_equal_reference, random_machine
from tests.property.test_fsm_simd_enum import with_groups
from tests.required_tools import require_cxx

sys.path.insert(0, str(SAMPLES))
import permutation  # noqa: E402

RATES = re.compile(r"ran ([0-9.]+) GB/s per core and 4 interleaved table walks ([0-9.]+) GB/s")
INPUT_BYTES = 96 << 10  # over auto's 64 KiB floor below which it runs seq


@pytest.fixture(scope="module", autouse=True)
def compiler() -> None:
    require_cxx()


def fits(machine) -> bool:
    """Whether this CPU's SIMD enumeration counts the machine in one pass (simd_fit.py)."""
    groups = len({machine.reports(state) for state in range(machine.state_count)} - {()})
    return counts_in_one_pass(machine.state_count, groups, cpu_simd_paths()) is not None


def fitting_machines(rng: np.random.Generator) -> list:
    """Machines of up to 16 states with 1 to 5 groups: SIMD enumeration counts them in one
    pass on AVX2 (on SSSE3 up to 4 groups; without vector paths never)."""
    perm12 = compile_file(SourceFile("perm12.fsm", permutation.permutation_source(12))).machines[0]
    machines = [perm12, random_machine(rng, 10, 4, "converging")]
    for groups in (3, 5):
        machine = random_machine(rng, 14, 5, "permutation")
        machine = dataclasses.replace(machine, tag_names=("t0", "t1", "t2"))
        machines.append(with_groups(machine, rng, groups))
    return machines


def test_rates_rule_picks_consistently_and_exactly(tmp_path) -> None:
    rng = np.random.default_rng(31)
    configs = ["auto:1:0", "auto:2:0", "auto:3:11", "auto:2:64"]
    for machine in fitting_machines(rng):
        data = rng.choice(np.frombuffer(b"abcXYZ0123 .,\n", dtype=np.uint8), INPUT_BYTES).tobytes()
        results = assert_all_equal_reference(machine, data, tmp_path, configs, matches=False)
        for config, result in zip(configs, results, strict=True):
            rates = RATES.search(result["reason"])
            assert bool(rates) == fits(machine), (config, result["reason"])
            if not rates:
                continue
            simd, walks = float(rates[1]), float(rates[2])
            if "so not taken on that ground" in result["reason"]:
                # walks were faster: the other rules and the probes decided
                assert simd <= walks, result["reason"]
            else:
                assert result["reason"].startswith("measured rates: SIMD enumeration"), \
                    result["reason"]
                assert result["scheme"] == "enum" and simd >= walks, result["reason"]


def test_rates_rule_stays_out_where_it_does_not_apply(tmp_path) -> None:
    """With matches (enumeration walks again), with SIMD off, and past the groups the
    kernels count in one pass, the rule does not run."""
    rng = np.random.default_rng(32)
    perm12 = fitting_machines(rng)[0]
    lists = [(i,) for i in range(5)] + [(i, i + 1) for i in range(4)] + [(0, 4)]
    many = dataclasses.replace(  # 10 groups: beyond every kernel's counters
        random_machine(rng, 14, 5, "permutation"), tag_names=tuple(f"t{i}" for i in range(5)),
        state_tags=tuple(lists[s] if s < 10 else () for s in range(14)))
    data = rng.choice(np.frombuffer(b"abcXYZ0123 .,\n", dtype=np.uint8), INPUT_BYTES).tobytes()
    cases = [(perm12, True, None), (perm12, False, "none"), (many, False, None)]
    for machine, matches, simd in cases:
        env = dict(os.environ, PARAFUSE_FSM_SIMD=simd) if simd else None
        results = assert_all_equal_reference(machine, data, tmp_path, ["auto:2:0", "auto:1:7"],
                                             matches=matches, env=env)
        for result in results:
            assert not RATES.search(result["reason"]), result["reason"]


def test_remembered_choice_is_keyed_with_matches(tmp_path) -> None:
    """A choice measured without --matches is not reused by a run that lists matches (whose
    schemes pay a second walk), and the other way round; the same run again reuses it."""
    rng = np.random.default_rng(33)
    machine = random_machine(rng, 300, 4, "converging")  # no SIMD: the rules and probes decide
    data = rng.integers(0, 256, INPUT_BYTES, dtype=np.uint8).tobytes()
    blob, data_path = tmp_path / "m.blob", tmp_path / "m.input"
    blob.write_bytes(machine_blob(machine, untrained_analysis(machine)))
    data_path.write_bytes(data)
    env = dict(os.environ, PARAFUSE_FSM_PROBE_MIN_BYTES="1")
    done = subprocess.run([str(table_driver()), str(blob), str(data_path), "auto:2:7", "auto:2:7",
                           "--matches", "auto:2:7", "auto:2:7"],  # configs after it list matches
                          capture_output=True, text=True, env=env, timeout=300, check=True)
    results = [json.loads(line) for line in done.stdout.splitlines()]
    remembered = [r["reason"].startswith("as measured by an earlier run") for r in results]
    assert remembered == [False, True, False, True], [r["reason"][:80] for r in results]
    assert "matches" not in results[1] and isinstance(results[2]["matches"], list)
    assert len(results[2]["matches"]) > 0
    assert results[3]["matches"] == "as first"  # the table driver prints a repeated list once
