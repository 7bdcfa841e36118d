"""One lowering plan -> the pieces of one C++ schedule class (CPU backend).

The class holds this rank's blocks of every value (`v_<name>`, a std::vector of
the storage type, or a pf::PlacedBuffer where the plan puts it in a fused
collective's node-shared segment; scalars hold one element), their `pf::Local`
block shapes (`L_<name>`), the communicators of the plan, and a `step` whose body
is the lowered stages in order, then the states' next values.
"""

from __future__ import annotations

from parafuse.ccn_compiler import ir
from parafuse.emitters.ccn.cpp_expr import COMPUTE, DTYPE_ENUM, STORAGE
from parafuse.emitters.ccn.loop_space import LoopSpace
from parafuse.emitters.ccn.placement_code import guarded, sized, slot_fields
from parafuse.emitters.ccn.plan import Buffer, CommKind, Communicator, LoweringPlan, Move, group_id
from parafuse.emitters.ccn.schedule_class import ScheduleClass
from parafuse.emitters.ccn.stage_writer import local_expr
from parafuse.emitters.ccn.volume import volume_lines
from parafuse.emitters.names import cpp_name

from .fused import lower_fused
from .loops import store_loop
from .microbatch import lower_microbatch
from .overlap import lower_overlap
from .stages import CpuStageWriter, comm_name, lower_simple


def _communicator_lines(comm: Communicator, program: ir.Program) -> tuple[list, list, list]:
    """(members, constructor lines, destructor lines) of one communicator of the plan."""
    if comm.kind is CommKind.WORLD:
        return (["MPI_Comm comm_ = MPI_COMM_NULL;", "int rank_ = 0, ranks_ = 1;",
                 "int parts_world_ = 1, index_world_ = 0;"],
                ["PF_MPI(MPI_Comm_dup(comm, &comm_));", "rank_ = pf::comm_rank(comm_);",
                 "ranks_ = pf::comm_size(comm_);", "parts_world_ = ranks_;",
                 "index_world_ = rank_;"],
                ["MPI_Comm_free(&comm_);"])
    name = comm_name(comm)
    if comm.kind is CommKind.GROUP:
        g = group_id(comm.group)
        blocks = program.group(comm.group).blocks
        return ([f"MPI_Comm {name} = MPI_COMM_NULL;",
                 f"int blocks_{g}_ = {blocks}, parts_{g}_ = 1, index_{g}_ = 0;"],
                [f"parts_{g}_ = ranks_ / blocks_{g}_;", f"index_{g}_ = rank_ % parts_{g}_;",
                 f"PF_MPI(MPI_Comm_split(comm_, rank_ / parts_{g}_, rank_, &{name}));"],
                [f"MPI_Comm_free(&{name});"])
    inner = group_id(comm.group)
    outer = f"rank_ / parts_{group_id(comm.outer)}_" if comm.outer else "0"
    return ([f"MPI_Comm {name} = MPI_COMM_NULL;"],
            [f"PF_MPI(MPI_Comm_split(comm_, ({outer}) * parts_{inner}_ + index_{inner}_,"
             f" rank_, &{name}));"],
            [f"MPI_Comm_free(&{name});"])


def _communicators(plan: LoweringPlan) -> tuple[list[str], list[str], list[str]]:
    members, ctor, dtor = [], [], []
    for comm in plan.communicators:
        m, c, d = _communicator_lines(comm, plan.program)
        members, ctor, dtor = members + m, ctor + c, dtor + d
    return members, ctor, dtor


def _storage_lines(plan: LoweringPlan, sizes: dict[str, str]) -> tuple[list, list]:
    members, ctor, declared = [], [], set()
    for name, buf in plan.buffers.items():
        if buf.is_param or buf.var in declared or name in plan.epilogues:
            continue  # a param; a value taken in place; a product no GEMM stores
        declared.add(buf.var)
        holder = "pf::PlacedBuffer" if name in plan.placements else "std::vector"
        members += [f"pf::Local {buf.local};", f"{holder}<{STORAGE[buf.type.dtype]}> {buf.var};"]
        count = sized(f"{buf.local}.count", plan.program.placement(name))
        ctor += [f"{buf.local} = {local_expr(buf.type, sizes)};", f"{buf.var}.resize({count});"]
    return members, ctor


def _slot(name: str, value: str, buf: Buffer, ordinal: int, program: ir.Program) -> str:
    per_rank = "true" if buf.type.layout.kind == "local" else "false"
    return (f'{{"{name}", "{value}", {DTYPE_ENUM[buf.type.dtype]}, "{buf.type.layout}", '
            f"{buf.local}, {per_rank}, {ordinal}, {buf.var}.data()"
            f"{slot_fields(program.placement(value))}}}")


def _state_updates(plan: LoweringPlan) -> list[str]:
    """The states' next values, as the plan moves them at the end of the step."""
    lines = ["// states take their next values at the end of the step"]
    for move in plan.state_moves:
        target, source = plan.buffers[move.state], plan.buffers[move.value]
        if move.how is Move.IN_PLACE:
            lines.append(f"// {move.state} took {move.value} in place")
        elif move.how is Move.SWAP:
            lines.append(f"std::swap({target.var}, {source.var});")
        elif move.how is Move.COPY:
            lines.append(f"std::copy({source.var}.begin(), {source.var}.end(), "
                         f"{target.var}.begin());")
        else:
            space = LoopSpace(target.type, target.local, plan.buffers.__getitem__)
            ref = ir.Ref(move.value, source.type, plan.program.location)
            lines += guarded(store_loop(space, target, ref, {}),
                             plan.program.placement(move.state))
    return lines


def param_lines(program: ir.Program, buffers: dict[str, Buffer]) -> list[str]:
    """Each param, rounded to its dtype, as a local of the step."""
    lines = []
    for param in program.params:
        var = buffers[param.name].var
        lines.append(f"const {COMPUTE[param.dtype]} {var} = pf::round_to<{STORAGE[param.dtype]}>"
                     f"(params_->{cpp_name(param.name)}); (void){var};")
    return lines


def lower_schedule(plan: LoweringPlan) -> ScheduleClass:
    program = plan.program
    writer = CpuStageWriter(plan)
    comm_members, comm_ctor, dtor = _communicators(plan)
    step = ["const uint64_t seed_step = seed + step_index;", "(void)seed_step;",
            "arena_.restart();  // this step's temporaries: the buffers of the last one"]
    step += param_lines(program, plan.buffers)
    for stage in program.stages:
        step += lower_stage(stage, writer)
    step += _state_updates(plan)
    storage_members, storage_ctor = _storage_lines(plan, writer.sizes)
    buffers = plan.buffers
    inputs = [_slot(t.name, t.name, buffers[t.name], t.ordinal, program)
              for t in program.tensors]
    results = [_slot(n, plan.value_shown(v), buffers[v], -1, program) for n, v in program.outputs]
    results += [_slot(s, v, buffers[s], -1, program) for s, v in program.state_updates]
    states = [_slot(t.name, t.name, buffers[t.name], t.ordinal, program) for t in program.tensors
              if t.role == "state"]
    members = comm_members + storage_members + ["pf::HostStepArena arena_;"] + writer.members
    return ScheduleClass(plan.schedule, plan.class_name, members,
                         comm_ctor + storage_ctor + writer.constructor, step,
                         inputs, results, states, volume_lines(program), dtor)


def lower_stage(stage: ir.Stage, writer: CpuStageWriter) -> list[str]:
    """A stage's code, run by the ranks of its pipeline stage (a send between stages: by
    the ranks it moves a value between)."""
    if isinstance(stage, ir.FusedStage):
        lines = lower_fused(stage, writer)
    elif isinstance(stage, ir.OverlapStage):
        lines = lower_overlap(stage, writer)
    elif isinstance(stage, ir.MicroBatchStage):  # guards each part
        return lower_microbatch(stage, writer)
    elif isinstance(stage, ir.CollectiveStage) and writer.send_blocks(stage):
        return lower_simple(stage, writer)
    else:
        lines = lower_simple(stage, writer)
    return guarded(lines, writer.plan.program.stage_placement(stage))
