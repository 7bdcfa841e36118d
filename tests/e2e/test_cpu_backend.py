"""Every sample and every schedule through the CPU backend (generated C++/OpenMP + MPI) at
R = 1..4 with sizes no R divides and 3 steps, against the reference interpreter."""

from __future__ import annotations

import functools

import pytest

from parafuse.ccn_compiler.frontend import check_source
from parafuse.emitters.ccn_cpu_project import build_cpu_project
from tests.backend_compare import assert_backend_matches_reference
from tests.conftest import SAMPLES

SIZES = {"N": 1021, "B": 7, "K": 13, "H": 11}
PROGRAMS = sorted(p.stem for p in SAMPLES.glob("*.ccn"))


@functools.cache
def module_of(sample: str):
    return check_source((SAMPLES / f"{sample}.ccn").read_text(), f"samples/{sample}.ccn")


@functools.cache
def project_of(sample: str):
    module = module_of(sample)
    return build_cpu_project(module, sample, module.schedule_names(sample), "test build")


@pytest.mark.parametrize("sample", PROGRAMS)
def test_every_schedule_matches_the_reference(sample: str, tmp_path) -> None:
    module = module_of(sample)
    default = module.programs[sample]
    project = project_of(sample)
    sizes = {n: SIZES[n] for n in default.size_vars}
    blocks = [g.blocks for g in default.groups]
    for schedule in module.schedule_names(sample):
        scheduled = module.scheduled_program(sample, schedule)
        for ranks in range(1, 5):
            if any(ranks % k for k in blocks):
                continue
            out = tmp_path / f"{schedule}-{ranks}"
            assert_backend_matches_reference(project, default, scheduled, schedule, ranks,
                                             sizes, out)
