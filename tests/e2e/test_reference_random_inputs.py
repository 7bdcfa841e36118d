"""`coconetc run --random`: inputs drawn from Philox as docs/ccn-language.md section 10 says.

The oracle gets the same inputs from `spec_random.random_input`, written from the spec
apart from the package's Philox: the whole logical tensor with `rank_or_0 = 0` for
replicated and sliced values, one tensor per world rank for local ones, ordinals
counting `input` and `state` declarations in source order.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from numpy_oracles import Inputs
from reference_runner import ITERS, SEED, check_manifest, check_outputs, run_reference
from sample_cases import CASES, SampleCase
from spec_random import random_input


def random_inputs(case: SampleCase, ranks: int) -> Inputs:
    inputs: Inputs = {}
    for ordinal, declaration in enumerate(case.declarations):
        shape = declaration.shape(case.sizes)
        if declaration.layout == "local":
            inputs[declaration.name] = [random_input(shape, declaration.dtype, SEED, ordinal, r)
                                        for r in range(ranks)]
        else:
            inputs[declaration.name] = random_input(shape, declaration.dtype, SEED, ordinal, 0)
    return inputs


@pytest.mark.parametrize("sample, ranks", [("sgd", 3), ("megatron", 4), ("send_ring", 2)])
def test_random_inputs_match_philox(sample: str, ranks: int, tmp_path: Path) -> None:
    case = CASES[sample]
    result = run_reference(case, ranks, tmp_path, random=True)
    assert result.returncode == 0, f"coconetc run failed:\n{result.stdout}\n{result.stderr}"
    expected = case.oracle(random_inputs(case, ranks), ranks, case.params, SEED, ITERS)
    check_outputs(tmp_path / "out", case, ranks, expected)
    check_manifest(tmp_path / "out", case)
