"""One scheduled program -> the pieces of one C++ schedule class (CPU backend).

The class holds this rank's blocks of every value (`v_<name>`, a std::vector of
the storage type; scalars hold one element), their `pf::Local` block shapes
(`L_<name>`), the communicators of the world and of each group, and a `step`
whose body is the lowered stages in order, then the states' next values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.types import ITEM_SIZE, Layout, ValueType
from parafuse.emitters.ccn.cpp_expr import COMPUTE, DTYPE_ENUM, STORAGE
from parafuse.emitters.ccn.cpu.fused import lower_grouped
from parafuse.emitters.ccn.cpu.loops import Buffer, LoopSpace, store_loop
from parafuse.emitters.ccn.cpu.stages import StageWriter, local_expr
from parafuse.emitters.ccn.in_place import in_place_values


@dataclass(frozen=True)
class ScheduleClass:
    """Everything the template needs to write `class Schedule_<name>`."""

    name: str
    class_name: str
    members: list[str]
    constructor: list[str]
    step: list[str]
    inputs: list[str]
    results: list[str]
    states: list[str]
    volume: list[str]
    destructor: list[str]


def _sizes(program: ir.Program) -> dict[str, str]:
    return {name: f"sizes_.{name}" for name in program.size_vars}


def _buffers(program: ir.Program, in_place: dict[str, str] | None = None) -> dict[str, Buffer]:
    """Every value's buffer; a value written in place is its state's buffer."""
    in_place = in_place or {}
    buffers = {p.name: Buffer(f"p_{p.name}", ValueType(p.dtype, (), Layout("replicated")), "",
                              is_param=True) for p in program.params}
    for tensor in program.tensors:
        buffers[tensor.name] = Buffer(f"v_{tensor.name}", tensor.type, f"L_{tensor.name}")
    for stage in program.flat_stages():
        state = in_place.get(stage.name)
        buffers[stage.name] = buffers[state] if state else \
            Buffer(f"v_{stage.name}", stage.type, f"L_{stage.name}")
    return buffers


def _hierarchical(stage: ir.SimpleStage) -> bool:
    return isinstance(stage, ir.CollectiveStage) and stage.op == "allreduce" and \
        stage.operand.type.layout.kind == "replicated" and stage.operand.type.layout.group


def _communicators(program: ir.Program) -> tuple[list[str], list[str], list[str]]:
    """(members, constructor lines, destructor lines) for world, groups, cross comms."""
    members = ["MPI_Comm comm_ = MPI_COMM_NULL;", "int rank_ = 0, ranks_ = 1;",
               "int parts_world_ = 1, index_world_ = 0;"]
    ctor = ["PF_MPI(MPI_Comm_dup(comm, &comm_));", "rank_ = pf::comm_rank(comm_);",
            "ranks_ = pf::comm_size(comm_);", "parts_world_ = ranks_;", "index_world_ = rank_;"]
    dtor = ["MPI_Comm_free(&comm_);"]
    for group in program.groups:
        g = group.name
        members += [f"MPI_Comm comm_{g}_ = MPI_COMM_NULL;",
                    f"int blocks_{g}_ = {group.blocks}, parts_{g}_ = 1, index_{g}_ = 0;"]
        ctor += [f"parts_{g}_ = ranks_ / blocks_{g}_;", f"index_{g}_ = rank_ % parts_{g}_;",
                 f"PF_MPI(MPI_Comm_split(comm_, rank_ / parts_{g}_, rank_, &comm_{g}_));"]
        dtor.append(f"MPI_Comm_free(&comm_{g}_);")
    for stage in program.flat_stages():
        if _hierarchical(stage):
            inner = stage.operand.type.layout.group
            outer = f"rank_ / parts_{stage.group}_" if stage.group else "0"
            members.append(f"MPI_Comm cross_{stage.name}_ = MPI_COMM_NULL;")
            ctor.append(f"PF_MPI(MPI_Comm_split(comm_, ({outer}) * parts_{inner}_ + index_{inner}_,"
                        f" rank_, &cross_{stage.name}_));")
            dtor.append(f"MPI_Comm_free(&cross_{stage.name}_);")
    return members, ctor, dtor


def _storage_lines(program: ir.Program, buffers: dict[str, Buffer],
                   placed: set[str]) -> tuple[list, list]:
    sizes = _sizes(program)
    members, ctor, declared = [], [], set()
    for name, buf in buffers.items():
        if buf.is_param or buf.var in declared:
            continue
        declared.add(buf.var)
        holder = "pf::PlacedBuffer" if name in placed else "std::vector"
        members += [f"pf::Local {buf.local};", f"{holder}<{STORAGE[buf.type.dtype]}> {buf.var};"]
        ctor += [f"{buf.local} = {local_expr(buf.type, sizes)};",
                 f"{buf.var}.resize({buf.local}.count);"]
    return members, ctor


def _slot(name: str, value: str, buf: Buffer, ordinal: int) -> str:
    per_rank = "true" if buf.type.layout.kind == "local" else "false"
    return (f'{{"{name}", "{value}", {DTYPE_ENUM[buf.type.dtype]}, "{buf.type.layout}", '
            f"{buf.local}, {per_rank}, {ordinal}, {buf.var}.data()}}")


def _state_updates(program: ir.Program, writer: StageWriter) -> list[str]:
    """The states' next values, copied (or swapped) in at the end of the step."""
    lines = ["// states take their next values at the end of the step"]
    outputs = {value for _, value in program.outputs}
    for state, value in program.state_updates:
        target, source = writer.buffers[state], writer.buffers[value]
        if source.var == target.var:
            lines.append(f"// {state} took {value} in place")
        elif source.type.layout == target.type.layout and value not in outputs:
            lines.append(f"std::swap({target.var}, {source.var});")
        elif source.type.layout == target.type.layout:
            lines.append(f"std::copy({source.var}.begin(), {source.var}.end(), "
                         f"{target.var}.begin());")
        else:  # a replicated value stored sliced: this rank keeps its block
            space = LoopSpace(target.type, target.local, writer.buffers.__getitem__)
            lines += store_loop(space, target, ir.Ref(value, source.type, program.location), {})
    return lines


def _volume(program: ir.Program) -> list[str]:
    """bytes_per_rank by the ring formulas (the same as ccn_compiler/comm_volume.py)."""
    lines = ["double bytes = 0;"]
    for stage in program.flat_stages():
        if isinstance(stage, ir.CollectiveStage):
            operand = stage.operand.type
            elems = " * ".join(f"double(sizes_.{d})" if isinstance(d, str) else f"{d}.0"
                               for d in operand.shape) or "1.0"
            total = f"({elems} * {ITEM_SIZE[operand.dtype]})"
            n = f"double(parts_{stage.group}_)" if stage.group else "double(ranks_)"
            if _hierarchical(stage):
                inner = operand.layout.group
                outer = f"blocks_{stage.group}_" if stage.group else "1"
                n = f"double(blocks_{inner}_ / {outer})"
            factor = {"allreduce": f"2 * ({n} - 1) / {n}", "reducescatter": f"({n} - 1) / {n}",
                      "allgather": f"({n} - 1) / {n}", "broadcast": f"({n} > 1 ? 1.0 : 0.0)"}
            if stage.op == "send":
                lines.append(f"if (({stage.shift}) % blocks_{stage.group}_ != 0) "
                             f"bytes += {total};")
            else:
                lines.append(f"bytes += {factor[stage.op]} * {total};")
        for expr in ir.stage_exprs(stage):
            for node in ir.walk(expr):
                if isinstance(node, ir.Reduce) and node.cross_rank:
                    group = node.operand.type.layout.group
                    n = f"double(parts_{group}_)" if group else "double(ranks_)"
                    acc = 8 if node.operand.type.dtype in ("f64", "i32", "i64") else 4
                    lines.append(f"bytes += 2 * ({n} - 1) / {n} * {acc};")
    return lines + ["return bytes;"]


def lower_schedule(program: ir.Program, schedule: str) -> ScheduleClass:
    buffers = _buffers(program, in_place_values(program))
    writer = StageWriter(buffers, _sizes(program))
    writer.pinned = {t.name for t in program.tensors if t.role == "state"} | \
        {value for _, value in program.state_updates}
    comm_members, comm_ctor, dtor = _communicators(program)
    step = ["const uint64_t seed_step = seed + step_index;", "(void)seed_step;"]
    for param in program.params:
        ctype = COMPUTE[param.dtype]
        step.append(f"const {ctype} p_{param.name} = pf::round_to<{STORAGE[param.dtype]}>"
                    f"(params_->{param.name}); (void)p_{param.name};")
    for stage in program.stages:
        step += lower_stage(stage, writer)
    step += _state_updates(program, writer)
    storage_members, storage_ctor = _storage_lines(program, buffers, writer.placed)
    inputs = [_slot(t.name, t.name, buffers[t.name], t.ordinal) for t in program.tensors]
    results = [_slot(n, v, buffers[v], -1) for n, v in program.outputs]
    results += [_slot(s, v, buffers[s], -1) for s, v in program.state_updates]
    states = [_slot(t.name, t.name, buffers[t.name], t.ordinal) for t in program.tensors
              if t.role == "state"]
    class_name = "Schedule_" + re.sub(r"\W", "_", schedule)
    members = comm_members + storage_members + writer.members
    constructor = comm_ctor + storage_ctor + writer.constructor
    return ScheduleClass(schedule, class_name, members, constructor, step, inputs, results,
                         states, _volume(program), dtor)


def lower_stage(stage: ir.Stage, writer: StageWriter) -> list[str]:
    if isinstance(stage, (ir.FusedStage, ir.OverlapStage)):
        return lower_grouped(stage, writer)
    return lower_simple(stage, writer)


def lower_simple(stage: ir.SimpleStage, writer: StageWriter) -> list[str]:
    if isinstance(stage, ir.CollectiveStage):
        return ["{"] + ["  " + line for line in writer.collective(
            stage, f"cross_{stage.name}_" if _hierarchical(stage) else None)] + ["}"]
    if isinstance(stage, ir.MatmulStage):
        return ["{"] + ["  " + line for line in writer.matmul(stage)] + ["}"]
    return [f"// {stage.name}", "{"] + ["  " + line for line in writer.elementwise(stage)] + ["}"]
