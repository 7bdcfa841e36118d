"""Fused groups on the GPU: the element-wise members of each phase as one kernel.

A group `fuse(rs, S..., ag...)` runs phase by phase (the CPU backend's phases: a
member that needs a scalar reduction of earlier members starts a new one): the
reduce-scatter on the communication stream, the element-wise members of the phase
as one generated kernel on the compute stream once an event says the scatter is
done, then the gathers. The chunked pipeline (chunk c+1 reduced while chunk c is
transformed) is not implemented for CUDA yet: each collective runs whole.
"""

from __future__ import annotations

from parafuse.ccn_compiler import ir

from .ccn_cpu_pipeline import _chunkable, _phases
from .ccn_cuda_program import fused_kernel, lower_simple
from .ccn_cuda_stages import CudaStageWriter


def _computed(stage: ir.SimpleStage) -> bool:
    return isinstance(stage, (ir.ElementwiseStage, ir.UpdateStage))


def lower_fused(stage: ir.FusedStage, writer: CudaStageWriter) -> list[str]:
    members = ", ".join(p.name for p in stage.parts)
    if not _chunkable(stage):
        return ([f"// {stage.name} = fuse({members}): members are held differently, so they "
                 "run one after another"]
                + [line for p in stage.parts for line in lower_simple(p, writer)])
    lines = [f"// {stage.name} = fuse({members}): one kernel per phase, collectives whole"]
    for kind, stages in _phases(stage.parts):
        if kind == "whole":
            lines += lower_simple(stages[0], writer)
            continue
        run = [s for s in stages if _computed(s)]
        for member in stages:
            if not _computed(member):
                lines += lower_simple(member, writer)
            elif member is run[0]:
                body = fused_kernel(run, writer)
                lines += ["{", f"  // {', '.join(s.name for s in run)}: one kernel"]
                lines += ["  " + line for line in body] + ["}"]
    return lines
