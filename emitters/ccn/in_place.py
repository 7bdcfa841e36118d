"""Which states can take their next value in place (CPU and CUDA backends).

Before: every state `S` and its next value `V` have a buffer each, and the step
ends with `std::swap(v_S, v_V)`, so an optimizer holds every state twice and its
update loop writes to memory it has not just read.

After: `V` is written straight into `S`'s buffer when that cannot change what any
stage reads: `V` is computed by an element-wise or update loop that reads `S`
(if at all) at the element it writes, and nothing runs after that loop reads `S`.
Loops read their operands before they store, reductions and row norms inside a
stage run before its loop, and members of a fused group run in order on the
same chunk, so the old value of every element is read before it is replaced. On a GPU
the element is read and written by the same thread, and every stage is ordered after the
streams of the stages before it (the emulated device's late-stream schedules check that).
"""

from __future__ import annotations

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.ir_edit import names_read


def in_place_values(program: ir.Program) -> dict[str, str]:
    """{next value: state} for the values that are written into their state's buffer."""
    order = list(program.flat_stages())
    position = {stage.name: k for k, stage in enumerate(order)}
    overlapped = {p.name for s in program.stages
                  if isinstance(s, ir.OverlapStage | ir.MicroBatchStage) for p in s.parts}
    outputs = {value for _, value in program.outputs}
    found: dict[str, str] = {}
    for state, value in program.state_updates:
        stage = program.stage(value)
        tensor = program.tensor(state)
        if not isinstance(stage, (ir.ElementwiseStage, ir.UpdateStage)) or tensor is None:
            continue
        if stage.type != tensor.type or value in outputs or state in outputs or \
                value in overlapped or value in found:
            continue
        readers = [s for s in order if state in names_read(s)]
        if any(position[r.name] > position[value] or r.name in overlapped for r in readers):
            continue
        found[value] = state
    return found
