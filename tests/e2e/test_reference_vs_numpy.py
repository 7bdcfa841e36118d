"""`coconetc run --backend reference` against the hand-written numpy oracles, for every sample.

Each test writes random inputs as the runner contract stores them, runs the sample
for R ranks with `--iters 2` in a subprocess, and compares every file each rank
wrote (and the manifest) with the oracle at the tolerances of docs/ccn-language.md section 13.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numpy_oracles import megatron_dropped
from reference_runner import (
    ITERS,
    SEED,
    check_manifest,
    check_one_file,
    check_outputs,
    run_reference,
)
from sample_cases import CASES, SampleCase, make_inputs, write_inputs


def run_and_compare(case: SampleCase, ranks: int, tmp: Path, extra: tuple[str, ...] = ()) -> dict:
    inputs = make_inputs(case, ranks, np.random.default_rng(100 + ranks))
    write_inputs(inputs, tmp / "in")
    result = run_reference(case, ranks, tmp, extra=extra)
    assert result.returncode == 0, f"coconetc run failed:\n{result.stdout}\n{result.stderr}"
    expected = case.oracle(inputs, ranks, case.params, SEED, ITERS)
    check_outputs(tmp / "out", case, ranks, expected)
    check_manifest(tmp / "out", case)
    return inputs


CASE_RANKS = [(name, ranks) for name, case in sorted(CASES.items()) for ranks in case.rank_counts]


@pytest.mark.parametrize("sample, ranks", CASE_RANKS)
def test_reference_matches_numpy(sample: str, ranks: int, tmp_path: Path) -> None:
    run_and_compare(CASES[sample], ranks, tmp_path)


@pytest.mark.parametrize("ranks", [1, 3])
def test_megatron_dropout_mask_is_exact(ranks: int, tmp_path: Path) -> None:
    """Dropped elements leave the residual untouched, bit for bit (masks must be exact)."""
    case = CASES["megatron"]
    inputs = run_and_compare(case, ranks, tmp_path)
    dropped = megatron_dropped(inputs, case.params, SEED, ITERS)
    assert 0 < dropped.sum() < dropped.size
    for rank in range(ranks):
        out = np.load(tmp_path / "out" / f"out.rank{rank}.npy")
        np.testing.assert_array_equal(out[dropped], inputs["resid"][dropped])


def test_warmup_steps_leave_no_trace(tmp_path: Path) -> None:
    """`--warmup 2 --iters 2` gives the outputs of exactly two steps from the inputs."""
    run_and_compare(CASES["send_ring"], 4, tmp_path, extra=("--warmup", "2"))


def test_pipeline_at_three_ranks_is_one_error_and_writes_nothing(tmp_path: Path) -> None:
    case = CASES["send_ring"]
    write_inputs(make_inputs(case, 3, np.random.default_rng(0)), tmp_path / "in")
    result = run_reference(case, 3, tmp_path)
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert result.returncode == 1, f"exit code {result.returncode}: {lines}"
    assert len(lines) == 1 and "error" in lines[0], f"expected one error line, got {lines}"
    out = tmp_path / "out"
    assert not out.exists() or not any(out.iterdir()), f"wrote {list(out.iterdir())}"


def test_adam_a_million_elements(tmp_path: Path) -> None:
    """A size in the millions runs in seconds and still matches (R = 3, N not divisible)."""
    case = CASES["adam"]
    sizes = {"N": 1_000_003}
    inputs = make_inputs(case, 3, np.random.default_rng(5), sizes)
    write_inputs(inputs, tmp_path / "in")
    result = run_reference(case, 3, tmp_path, sizes)
    assert result.returncode == 0, f"coconetc run failed:\n{result.stdout}\n{result.stderr}"
    expected = case.oracle(inputs, 3, case.params, SEED, ITERS)
    for output in case.outputs:
        for rank in range(3):
            check_one_file(tmp_path / "out" / f"{output.name}.rank{rank}.npy", output,
                           expected[output.name][rank])
