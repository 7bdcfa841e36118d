"""The CUDA backend on a real GPU, where this machine has one: every sample and schedule,
and random programs (tests/e2e/random_bundle.py), built with nvcc against the wheels'
NCCL and cuBLAS and run against the reference interpreter at every rank count that has a
GPU per rank (NCCL wants one each). Elsewhere the emulated device runs the same code
(test_cuda_emulated.py, test_random_programs_backends.py) and these tests say they need a
GPU."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from parafuse.bench import gpu_check
from parafuse.emitters.ccn.cuda import project as cuda_project
from parafuse.emitters.toolchain.nvidia import find_nvcc, gpu_present
from tests.backend_compare import assert_backend_matches_reference, sample_module
from tests.conftest import SAMPLES
from tests.e2e.random_bundle import accepted_sources, build_bundle, covering, renamed
from tests.property.ccn_random_programs import ranks_for

pytestmark = pytest.mark.skipif(not gpu_present(), reason="needs an NVIDIA GPU")

PROGRAMS = sorted(p.stem for p in SAMPLES.glob("*.ccn"))


def gpu_count() -> int:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return 1
    listed = subprocess.run([smi, "-L"], capture_output=True, text=True).stdout
    return max(1, sum(line.startswith("GPU ") for line in listed.splitlines()))


def rank_counts(blocks: list[int]) -> list[int]:
    return [r for r in range(1, min(gpu_count(), 4) + 1) if not any(r % k for k in blocks)]


@pytest.mark.parametrize("sample", PROGRAMS)
def test_every_schedule_on_the_gpu(sample: str, tmp_path: Path) -> None:
    nvcc = find_nvcc()
    assert nvcc is not None, "a GPU without nvcc: install the CUDA toolkit"
    module = sample_module(sample)
    default = module.programs[sample]
    schedules = module.schedule_names(sample)
    project, built = cuda_project.build_cuda_project(module, sample, schedules,
                                                     f"gpu test {sample}")
    assert built
    sizes = gpu_check.SIZES[sample]
    counts = rank_counts([g.blocks for g in default.groups])
    if not counts:
        pytest.skip(f"{sample} needs more GPUs than the {gpu_count()} here")
    for schedule in schedules:
        for ranks in counts:
            assert_backend_matches_reference(project, default,
                                             module.scheduled_program(sample, schedule),
                                             schedule, ranks, sizes,
                                             tmp_path / f"{schedule}-{ranks}")


def test_random_programs_on_the_gpu(tmp_path: Path) -> None:
    nvcc = find_nvcc()
    assert nvcc is not None, "a GPU without nvcc: install the CUDA toolkit"
    chosen = covering(accepted_sources(300), 14)
    modules = [renamed(source, index) for index, source in enumerate(chosen)]

    def files(module, name):
        return cuda_project.project_files(module, name, ["default", "random"],
                                          f"random {name}")

    bundle = build_bundle("random-cuda", modules, files, cuda_project.cmake_arguments(nvcc))
    for index, (name, module) in enumerate(modules):
        ranks = ranks_for(chosen[index], 1 + index % min(gpu_count(), 4))
        if ranks > gpu_count():
            continue
        assert_backend_matches_reference(bundle, module.programs[name],
                                         module.scheduled_program(name, "random"), "random",
                                         ranks, {"N": 13}, tmp_path / name, iters=2)
