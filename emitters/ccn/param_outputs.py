"""Outputs that name a param get a stage of their own before lowering.

A param is not a buffer in the generated code (it is a local of the step, rounded to its
dtype), so an output slot cannot point at it. The output gets a scalar stage that copies
the param; its file keeps the param's name.

Before::    param lr: f32 = 0.5 ... output y, lr
After::     param lr: f32 = 0.5 ... lr_as_output = lr   # f32 replicated
            output y, lr            # the file lr.rankR.npy holds lr_as_output

The reference interpreter and `show` never see the stage: only the backends' plans do.
"""

from __future__ import annotations

from dataclasses import replace

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.types import Layout, ValueType


def with_param_outputs_copied(program: ir.Program) -> tuple[ir.Program, dict[str, str]]:
    """`program` with each output of a param read from a copy of it (the program itself
    where no output names a param), and the param each copy holds, by the copy's name."""
    params = {p.name: p for p in program.params}
    if not any(value in params for _, value in program.outputs):
        return program, {}
    taken = (set(program.size_vars) | set(params) | {t.name for t in program.tensors}
             | {s.name for s in program.flat_stages()} | {g.name for g in program.groups})
    copies: dict[str, ir.ElementwiseStage] = {}
    outputs = []
    for file_name, value in program.outputs:
        if value in params and value not in copies:
            copies[value] = _copy_stage(params[value], _fresh(f"{value}_as_output", taken))
        outputs.append((file_name, copies[value].name if value in params else value))
    copied = replace(program, stages=program.stages + tuple(copies.values()),
                     outputs=tuple(outputs))
    return copied, {stage.name: param for param, stage in copies.items()}


def _copy_stage(param: ir.Param, name: str) -> ir.ElementwiseStage:
    scalar = ValueType(param.dtype, (), Layout("replicated"))
    return ir.ElementwiseStage(name, ir.Ref(param.name, scalar, param.location), scalar,
                               param.location)


def _fresh(name: str, taken: set[str]) -> str:
    candidate, k = name, 2
    while candidate in taken:
        candidate, k = f"{name}{k}", k + 1
    taken.add(candidate)
    return candidate
