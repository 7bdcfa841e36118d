"""Chunk counts are decided once, in the lowering plan (emitters/ccn/chunk_policy.py), and
every backend's printer follows the plan: change the plan, and the CPU and CUDA schedule
classes print what it says."""

from __future__ import annotations

import dataclasses

import pytest

from parafuse.ccn_compiler.frontend import check_source
from parafuse.emitters.ccn.chunk_policy import ChunkPolicy, ChunkRule, tuned
from parafuse.emitters.ccn.cpu.program import lower_schedule as cpu_schedule
from parafuse.emitters.ccn.cpu.project import CPU_CHUNKS
from parafuse.emitters.ccn.cuda.program import lower_schedule as cuda_schedule
from parafuse.emitters.ccn.cuda.project import CUDA_CHUNKS
from parafuse.emitters.ccn.plan import make_plan
from tests.conftest import SAMPLES

BACKENDS = {"cpu": (cpu_schedule, CPU_CHUNKS), "cuda": (cuda_schedule, CUDA_CHUNKS)}
# (sample, schedule): one with fused groups, one with an overlap whose chunks are open
CASES = [("adam", "fused"), ("mlp", "overlapped")]


def step_text(sample: str, schedule: str, backend: str, change=None) -> str:
    module = check_source((SAMPLES / f"{sample}.ccn").read_text(), f"samples/{sample}.ccn")
    lower, defaults = BACKENDS[backend]
    plan = make_plan(module.scheduled_program(sample, schedule), schedule, defaults)
    if change is not None:
        plan = dataclasses.replace(plan, chunks={name: change for name in plan.chunks})
    return "\n".join(lower(plan).step)


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("sample, schedule", CASES)
def test_every_backend_prints_the_chunks_the_plan_says(sample, schedule, backend) -> None:
    default = step_text(sample, schedule, backend)
    assert "const int chunks = 7;" not in default
    fixed = step_text(sample, schedule, backend, tuned(7))
    assert "const int chunks = 7;" in fixed
    for runtime_choice in ("auto_chunks(", "_.chunks()"):  # the latter: pf::OverlapChunks
        assert runtime_choice not in fixed


def test_each_backend_has_its_own_defaults() -> None:
    assert "_.chunks();" in step_text("mlp", "overlapped", "cpu")  # pf::OverlapChunks
    assert "const int chunks = 4;" in step_text("mlp", "overlapped", "cuda")
    assert "pf::fused_auto_chunks(" in step_text("adam", "fused", "cpu")
    assert "pf::auto_chunks(" in step_text("adam", "fused", "cuda")


def test_a_policy_a_backend_cannot_print_is_a_bug_it_names() -> None:
    measured = ChunkPolicy(ChunkRule.MEASURED, "timed")
    with pytest.raises(ValueError, match="the CUDA backend cannot print the chunks of an "
                                         "overlap measured"):
        step_text("mlp", "overlapped", "cuda", measured)
    with pytest.raises(ValueError, match="the CPU backend cannot print the chunks of a fused "
                                         "group measured"):
        step_text("adam", "fused", "cpu", measured)
