"""One scheduled program -> the pieces of one CUDA schedule class.

The class holds this rank's blocks of every value in device memory (`v_<name>_`,
a pf::DeviceBuffer), their block shapes (`L_<name>_`, pf::DevLocal), host mirrors
(`h_<name>_`) of the values the runner reads and writes, the NCCL communicators of
the world, of each group and of each hierarchical allreduce, two streams, and a
`step` that starts by copying the members into locals (so that kernels capture
them by value), then runs the lowered stages and the states' next values.
"""

from __future__ import annotations

from parafuse.ccn_compiler import ir
from parafuse.emitters.ccn.cpp_expr import COMPUTE, DTYPE_ENUM, STORAGE
from parafuse.emitters.ccn.placement_code import guarded, sized, slot_fields
from parafuse.emitters.ccn.plan import Buffer, CommKind, Communicator, LoweringPlan, Move, group_id
from parafuse.emitters.ccn.schedule_class import ScheduleClass
from parafuse.emitters.ccn.stage_writer import local_expr
from parafuse.emitters.ccn.volume import volume_lines
from parafuse.emitters.names import cpp_name, prefixed_stem

from .fused import lower_fused
from .microbatch import lower_microbatch
from .overlap import lower_overlap
from .stages import CudaStageWriter, comm_name, device_store, lower_simple


def _communicator_lines(comm: Communicator, program: ir.Program) -> tuple[list, list, list]:
    """(members, constructor lines, destructor lines) of a group's or a cross communicator
    (the world's are the class's own, in _communicators)."""
    name = comm_name(comm)
    if comm.kind is CommKind.GROUP:
        g = group_id(comm.group)
        return ([f"ncclComm_t {name} = nullptr;",
                 f"int blocks_{g}_ = {program.group(comm.group).blocks}, parts_{g}_ = 1, "
                 f"index_{g}_ = 0;"],
                [f"parts_{g}_ = ranks_ / blocks_{g}_;", f"index_{g}_ = rank_ % parts_{g}_;",
                 f"{name} = pf::nccl_split(nccl_, rank_ / parts_{g}_, rank_);"],
                [f"ncclCommDestroy({name});"])
    inner = group_id(comm.group)
    outer = f"rank_ / parts_{group_id(comm.outer)}_" if comm.outer else "0"
    return ([f"ncclComm_t {name} = nullptr;"],
            [f"{name} = pf::nccl_split(nccl_, ({outer}) * parts_{inner}_ + index_{inner}_, "
             "rank_);"],
            [f"ncclCommDestroy({name});"])


def _communicators(plan: LoweringPlan) -> tuple[list[str], list[str], list[str]]:
    members = ["MPI_Comm comm_ = MPI_COMM_NULL;", "int rank_ = 0, ranks_ = 1;",
               "int parts_world_ = 1, index_world_ = 0;", "ncclComm_t nccl_ = nullptr;",
               "cublasHandle_t cublas_ = nullptr;", "pf::LtGemm lt_;", "pf::Streams streams_;",
               "pf::Scratch scratch_;", "pf::StepArena arena_;", "bool host_newer_ = true;"]
    ctor = ["PF_MPI(MPI_Comm_dup(comm, &comm_));", "rank_ = pf::comm_rank(comm_);",
            "ranks_ = pf::comm_size(comm_);", "parts_world_ = ranks_;", "index_world_ = rank_;",
            "nccl_ = pf::nccl_comm(comm_);", "PF_CUBLAS(cublasCreate(&cublas_));", "lt_.open();"]
    dtor = []
    for comm in plan.communicators:
        if comm.kind is not CommKind.WORLD:
            m, c, d = _communicator_lines(comm, plan.program)
            members, ctor, dtor = members + m, ctor + c, dtor + d
    dtor += ["lt_.close();", "cublasDestroy(cublas_);", "ncclCommDestroy(nccl_);",
             "MPI_Comm_free(&comm_);"]
    return members, ctor, dtor


def _storage(buffers: dict[str, Buffer], sizes: dict[str, str], mirrored: set[str],
             program: ir.Program) -> tuple[list[str], list[str], list[str]]:
    """(members, constructor lines, step prologue) of every value's device block."""
    members, ctor = [], []
    prologue = ["const int rank_ = this->rank_; (void)rank_;",
                "arena_.restart();  // this step's temporaries: the buffers of the last one"]
    declared: set[str] = set()
    for name, buf in buffers.items():
        if buf.is_param or buf.var in declared:  # a value taken in place is its state
            continue
        declared.add(buf.var)
        storage = STORAGE[buf.type.dtype]
        members += [f"pf::DevLocal {buf.local}_;", f"pf::DeviceBuffer<{storage}> {buf.var}_;"]
        count = sized(f"{buf.local}_.count", program.placement(name))
        ctor += [f"{buf.local}_ = pf::device_local({local_expr(buf.type, sizes)});",
                 f"{buf.var}_.resize({count});"]
        if name in mirrored:
            members.append(f"std::vector<{storage}> {mirror(name)};")
            ctor.append(f"{mirror(name)}.resize({count});")
        prologue += [f"{storage}* const {buf.var} = {buf.var}_.data(); (void){buf.var};",
                     f"const pf::DevLocal {buf.local} = {buf.local}_; (void){buf.local};"]
    return members, ctor, prologue


def mirror(name: str) -> str:
    """The host copy of a value the runner reads or writes."""
    return f"h_{prefixed_stem(name)}_"


def _slot(name: str, value: str, buf: Buffer, ordinal: int, host: str | None,
          placement: ir.Placement | None) -> str:
    """A pf::Slot on the host mirror of `host`, or on the device buffer (None)."""
    per_rank = "true" if buf.type.layout.kind == "local" else "false"
    data = f"{mirror(host)}.data()" if host else f"{buf.var}_.data()"
    return (f'{{"{name}", "{value}", {DTYPE_ENUM[buf.type.dtype]}, "{buf.type.layout}", '
            f"pf::host_local({buf.local}_), {per_rank}, {ordinal}, {data}"
            f"{slot_fields(placement)}}}")


def _state_updates(plan: LoweringPlan, writer: CudaStageWriter) -> list[str]:
    """The states' next values, as the plan moves them at the end of the step."""
    lines = ["// states take their next values at the end of the step"]
    for move in plan.state_moves:
        target, source = plan.buffers[move.state], plan.buffers[move.value]
        if move.how is Move.IN_PLACE:
            lines.append(f"// {move.state} took {move.value} in place")
        elif move.how is Move.SWAP:
            lines.append(f"{target.var}_.swap({source.var}_);")
        elif move.how is Move.COPY:
            lines.append(f"pf::copy({source.var}, {target.var}, {target.local}.count, "
                         "streams_.compute);")
        else:
            space = writer.space(target.type, target.local)
            ref = ir.Ref(move.value, source.type, plan.program.location)
            lines += guarded(device_store(space, target, ref, {}),
                             plan.program.placement(move.state))
    return lines

def _transfers(program: ir.Program, buffers: dict[str, Buffer]) -> dict[str, list[str]]:
    """Host <-> device copies of the runner's slots (inputs and states, results)."""
    tensors = [t.name for t in program.tensors]
    results = [v for _, v in program.outputs] + [s for s, _ in program.state_updates]
    def copy(names: list[str], direction: str) -> list[str]:
        if direction == "upload":
            return [f"pf::upload({buffers[n].var}_.data(), {mirror(n)}, streams_.compute);"
                    for n in names]
        return [f"pf::download({mirror(n)}, {buffers[n].var}_.data(), streams_.compute);"
                for n in names] + ["PF_CUDA(cudaStreamSynchronize(streams_.compute));"]
    return {"upload": copy(tensors, "upload"), "download_inputs": copy(tensors, "download"),
            "download_results": copy(list(dict.fromkeys(results)), "download"),
            **_bindings(program, buffers)}


def _bindings(program: ir.Program, buffers: dict[str, Buffer]) -> dict[str, list[str]]:
    """Program::bind of every input and state, the copy of a bound state's next value to
    the caller's memory where it is not there already, and unbind (every value buffer:
    swaps at the end of a step may have moved a borrowed pointer)."""
    bind, write_back = [], []
    for tensor in program.tensors:
        buf = buffers[tensor.name]
        storage = STORAGE[buf.type.dtype]
        bind.append(f'if (name == "{tensor.name}") {{ {buf.var}_.borrow(static_cast<{storage}*>'
                    f'(data)); bound_["{tensor.name}"] = data; return; }}')
    for state, _ in program.state_updates:
        buf = buffers[state]
        storage = STORAGE[buf.type.dtype]
        write_back.append(
            f'if (bound_.count("{state}") && {buf.var}_.data() != bound_["{state}"]) '
            f'pf::copy({buf.var}_.data(), static_cast<{storage}*>(bound_["{state}"]), '
            f"{buf.local}_.count, streams_.compute);")
    owners = dict.fromkeys(b.var for b in buffers.values() if not b.is_param)
    return {"bind": bind, "write_back": write_back,
            "unbind": [f"{var}_.restore();" for var in owners]}


def lower_schedule(plan: LoweringPlan) -> ScheduleClass:
    """The schedule class, with the host <-> device copies the library template calls."""
    program, buffers = plan.program, plan.buffers
    writer = CudaStageWriter(plan)
    comm_members, comm_ctor, dtor = _communicators(plan)
    mirrored = {t.name for t in program.tensors} | {v for _, v in program.outputs} | {
        s for s, _ in program.state_updates}
    unstored = set(plan.epilogues) | {name for a in plan.attentions.values() for name in a.absorbed}
    stored = {name: buf for name, buf in buffers.items() if name not in unstored}
    storage_members, storage_ctor, prologue = _storage(stored, writer.sizes, mirrored, program)
    step = prologue + ["const uint64_t seed_step = seed + step_index;", "(void)seed_step;"]
    for param in program.params:
        var = buffers[param.name].var
        step.append(f"const {COMPUTE[param.dtype]} {var} = "
                    f"pf::round_to<{STORAGE[param.dtype]}>(params_->{cpp_name(param.name)}); "
                    f"(void){var};")
    for stage in program.stages:
        step += lower_stage(stage, writer)
    step += ["PF_HERE();"] + _state_updates(plan, writer)
    at = program.placement
    inputs = [_slot(t.name, t.name, buffers[t.name], t.ordinal, t.name, at(t.name))
              for t in program.tensors]
    results = [_slot(n, plan.value_shown(v), buffers[v], -1, v, at(v)) for n, v in program.outputs]
    results += [_slot(s, v, buffers[s], -1, s, at(s)) for s, v in program.state_updates]
    states = [_slot(t.name, t.name, buffers[t.name], t.ordinal, t.name, at(t.name))
              for t in program.tensors if t.role == "state"]
    copies = _transfers(program, stored)
    copies["device_inputs"] = [_slot(t.name, t.name, buffers[t.name], t.ordinal, None, at(t.name))
                               for t in program.tensors]
    copies["device_results"] = [_slot(n, plan.value_shown(v), buffers[v], -1, None, at(v))
                                for n, v in program.outputs]
    copies["device_results"] += [_slot(s, v, buffers[s], -1, None, at(s))
                                 for s, v in program.state_updates]
    return ScheduleClass(plan.schedule, plan.class_name, comm_members + storage_members,
                         comm_ctor + storage_ctor, step, inputs, results, states,
                         volume_lines(program), dtor, device=copies)


def lower_stage(stage: ir.Stage, writer: CudaStageWriter) -> list[str]:
    """A stage's code, queued by the ranks of its pipeline stage (a send between stages: by
    the ranks it moves a value between)."""
    if isinstance(stage, ir.FusedStage):
        lines = lower_fused(stage, writer)
    elif isinstance(stage, ir.OverlapStage):
        lines = lower_overlap(stage, writer)
    elif isinstance(stage, ir.MicroBatchStage):  # guards each part
        return lower_microbatch(stage, writer)
    elif writer.send_blocks(stage):
        return lower_simple(stage, writer)
    else:
        lines = lower_simple(stage, writer)
    return guarded(lines, writer.plan.program.stage_placement(stage))
