"""Every sample schedule gives the default schedule's results (spec section 6 tolerances)
at R = 1..5 with sizes that no R divides, over 3 steps."""

from __future__ import annotations

import pytest

from parafuse.ccn_compiler.frontend import check_source
from tests.conftest import SAMPLES
from tests.schedule_compare import assert_same_results

SIZES = {"N": 1021, "B": 7, "K": 13, "H": 11}


def _cases():
    for path in sorted(SAMPLES.glob("*.ccn")):
        module = check_source(path.read_text(), path.name)
        for (program, schedule) in module.scheduled:
            yield pytest.param(path, program, schedule, id=f"{path.stem}-{schedule}")


@pytest.mark.parametrize("path,program,schedule", list(_cases()))
def test_schedule_equals_default(path, program, schedule) -> None:
    module = check_source(path.read_text(), path.name)
    default = module.programs[program]
    scheduled = module.scheduled[(program, schedule)]
    sizes = {n: SIZES[n] for n in default.size_vars}
    blocks = [g.blocks for g in default.groups]
    for ranks in range(1, 6):
        if any(ranks % k for k in blocks):
            continue
        assert_same_results(default, scheduled, ranks, sizes, 3, f"{schedule} at R={ranks}")
