"""One scheduled program -> the pieces of one CUDA schedule class.

The class holds this rank's blocks of every value in device memory (`v_<name>_`,
a pf::DeviceBuffer), their block shapes (`L_<name>_`, pf::DevLocal), host mirrors
(`h_<name>_`) of the values the runner reads and writes, the NCCL communicators of
the world, of each group and of each hierarchical allreduce, two streams, and a
`step` that starts by copying the members into locals (so that kernels capture
them by value), then runs the lowered stages and the states' next values.
"""

from __future__ import annotations

import re

from parafuse.ccn_compiler import ir
from parafuse.emitters.ccn.cpp_expr import COMPUTE, DTYPE_ENUM, STORAGE
from parafuse.emitters.ccn.cpu.loops import Buffer
from parafuse.emitters.ccn.cpu.program import (
    ScheduleClass,
    _buffers,
    _hierarchical,
    _sizes,
    _volume,
)
from parafuse.emitters.ccn.cpu.stages import local_expr
from parafuse.emitters.ccn.cuda.stages import CudaStageWriter, device_loop, device_store
from parafuse.emitters.ccn.cuda.vector import vector_loop
from parafuse.emitters.ccn.in_place import in_place_values


def _communicators(program: ir.Program) -> tuple[list[str], list[str], list[str]]:
    members = ["MPI_Comm comm_ = MPI_COMM_NULL;", "int rank_ = 0, ranks_ = 1;",
               "int parts_world_ = 1, index_world_ = 0;", "ncclComm_t nccl_ = nullptr;",
               "cublasHandle_t cublas_ = nullptr;", "pf::Streams streams_;",
               "pf::Scratch scratch_;", "bool host_newer_ = true;"]
    ctor = ["PF_MPI(MPI_Comm_dup(comm, &comm_));", "rank_ = pf::comm_rank(comm_);",
            "ranks_ = pf::comm_size(comm_);", "parts_world_ = ranks_;", "index_world_ = rank_;",
            "nccl_ = pf::nccl_comm(comm_);", "PF_CUBLAS(cublasCreate(&cublas_));"]
    dtor = []
    for group in program.groups:
        g = group.name
        members += [f"ncclComm_t nccl_{g}_ = nullptr;",
                    f"int blocks_{g}_ = {group.blocks}, parts_{g}_ = 1, index_{g}_ = 0;"]
        ctor += [f"parts_{g}_ = ranks_ / blocks_{g}_;", f"index_{g}_ = rank_ % parts_{g}_;",
                 f"nccl_{g}_ = pf::nccl_split(nccl_, rank_ / parts_{g}_, rank_);"]
        dtor.append(f"ncclCommDestroy(nccl_{g}_);")
    for stage in program.flat_stages():
        if _hierarchical(stage):
            inner = stage.operand.type.layout.group
            outer = f"rank_ / parts_{stage.group}_" if stage.group else "0"
            members.append(f"ncclComm_t ncross_{stage.name}_ = nullptr;")
            ctor.append(f"ncross_{stage.name}_ = pf::nccl_split(nccl_, ({outer}) * "
                        f"parts_{inner}_ + index_{inner}_, rank_);")
            dtor.append(f"ncclCommDestroy(ncross_{stage.name}_);")
    dtor += ["cublasDestroy(cublas_);", "ncclCommDestroy(nccl_);", "MPI_Comm_free(&comm_);"]
    return members, ctor, dtor


def _storage(program: ir.Program, buffers: dict[str, Buffer],
             mirrored: set[str]) -> tuple[list[str], list[str], list[str]]:
    """(members, constructor lines, step prologue) of every value's device block."""
    sizes = _sizes(program)
    members, ctor, prologue = [], [], ["const int rank_ = this->rank_; (void)rank_;"]
    declared: set[str] = set()
    for name, buf in buffers.items():
        if buf.is_param or buf.var in declared:  # a value taken in place is its state
            continue
        declared.add(buf.var)
        storage = STORAGE[buf.type.dtype]
        members += [f"pf::DevLocal {buf.local}_;", f"pf::DeviceBuffer<{storage}> {buf.var}_;"]
        ctor += [f"{buf.local}_ = pf::device_local({local_expr(buf.type, sizes)});",
                 f"{buf.var}_.resize({buf.local}_.count);"]
        if name in mirrored:
            members.append(f"std::vector<{storage}> h_{name}_;")
            ctor.append(f"h_{name}_.resize({buf.local}_.count);")
        prologue += [f"{storage}* const {buf.var} = {buf.var}_.data(); (void){buf.var};",
                     f"const pf::DevLocal {buf.local} = {buf.local}_; (void){buf.local};"]
    return members, ctor, prologue


def _slot(name: str, value: str, buf: Buffer, ordinal: int, mirror: str | None) -> str:
    """A pf::Slot on the host mirror `h_<mirror>_`, or on the device buffer (None)."""
    per_rank = "true" if buf.type.layout.kind == "local" else "false"
    data = f"h_{mirror}_.data()" if mirror else f"{buf.var}_.data()"
    return (f'{{"{name}", "{value}", {DTYPE_ENUM[buf.type.dtype]}, "{buf.type.layout}", '
            f"pf::host_local({buf.local}_), {per_rank}, {ordinal}, {data}}}")


def _state_updates(program: ir.Program, writer: CudaStageWriter) -> list[str]:
    lines = ["// states take their next values at the end of the step"]
    outputs = {value for _, value in program.outputs}
    for state, value in program.state_updates:
        target, source = writer.buffers[state], writer.buffers[value]
        if source.var == target.var:
            lines.append(f"// {state} took {value} in place")
        elif source.type.layout == target.type.layout and value not in outputs:
            lines.append(f"{target.var}_.swap({source.var}_);")
        elif source.type.layout == target.type.layout:
            lines.append(f"pf::copy({source.var}, {target.var}, {target.local}.count, "
                         "streams_.compute);")
        else:  # a replicated value stored sliced: this rank keeps its block
            space = writer.space(target.type, target.local)
            lines += device_store(space, target, ir.Ref(value, source.type, program.location), {})
    return lines


def _transfers(program: ir.Program, buffers: dict[str, Buffer]) -> dict[str, list[str]]:
    """Host <-> device copies of the runner's slots (inputs and states, results)."""
    tensors = [t.name for t in program.tensors]
    results = [v for _, v in program.outputs] + [s for s, _ in program.state_updates]
    def copy(names: list[str], direction: str) -> list[str]:
        if direction == "upload":
            return [f"pf::upload({buffers[n].var}_.data(), h_{n}_, streams_.compute);"
                    for n in names]
        return [f"pf::download(h_{n}_, {buffers[n].var}_.data(), streams_.compute);"
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


def lower_schedule(program: ir.Program, schedule: str) -> tuple[ScheduleClass, dict]:
    """The schedule class, and the host <-> device copies the library template calls."""
    buffers = _buffers(program, in_place_values(program))
    writer = CudaStageWriter(buffers, _sizes(program))
    comm_members, comm_ctor, dtor = _communicators(program)
    mirrored = {t.name for t in program.tensors} | {v for _, v in program.outputs} | {
        s for s, _ in program.state_updates}
    storage_members, storage_ctor, prologue = _storage(program, buffers, mirrored)
    step = prologue + ["const uint64_t seed_step = seed + step_index;", "(void)seed_step;"]
    for param in program.params:
        step.append(f"const {COMPUTE[param.dtype]} p_{param.name} = "
                    f"pf::round_to<{STORAGE[param.dtype]}>(params_->{param.name}); "
                    f"(void)p_{param.name};")
    for stage in program.stages:
        step += lower_stage(stage, writer)
    step += ["PF_HERE();"] + _state_updates(program, writer)
    inputs = [_slot(t.name, t.name, buffers[t.name], t.ordinal, t.name) for t in program.tensors]
    results = [_slot(n, v, buffers[v], -1, v) for n, v in program.outputs]
    results += [_slot(s, v, buffers[s], -1, s) for s, v in program.state_updates]
    states = [_slot(t.name, t.name, buffers[t.name], t.ordinal, t.name)
              for t in program.tensors if t.role == "state"]
    copies = _transfers(program, buffers)
    copies["device_inputs"] = [_slot(t.name, t.name, buffers[t.name], t.ordinal, None)
                               for t in program.tensors]
    copies["device_results"] = [_slot(n, v, buffers[v], -1, None) for n, v in program.outputs]
    copies["device_results"] += [_slot(s, v, buffers[s], -1, None)
                                 for s, v in program.state_updates]
    class_name = "Schedule_" + re.sub(r"\W", "_", schedule)
    cls = ScheduleClass(schedule, class_name, comm_members + storage_members,
                        comm_ctor + storage_ctor, step, inputs, results, states,
                        _volume(program), dtor)
    return cls, copies


def lower_stage(stage: ir.Stage, writer: CudaStageWriter) -> list[str]:
    if isinstance(stage, ir.FusedStage):
        from parafuse.emitters.ccn.cuda.fused import lower_fused
        return lower_fused(stage, writer)
    if isinstance(stage, ir.OverlapStage):
        from parafuse.emitters.ccn.cuda.overlap import lower_overlap
        return lower_overlap(stage, writer)
    return lower_simple(stage, writer)


def lower_simple(stage: ir.SimpleStage, writer: CudaStageWriter) -> list[str]:
    if isinstance(stage, ir.CollectiveStage):
        cross = f"ncross_{stage.name}_" if _hierarchical(stage) else None
        body = writer.collective(stage, cross)
    elif isinstance(stage, ir.MatmulStage):
        body = writer.matmul(stage)
    else:
        body = [f"// {stage.name}: one kernel"] + writer.elementwise(stage)
    return ["{", "  PF_HERE();"] + ["  " + line for line in body] + ["}"]


def fused_kernel(stages: list[ir.SimpleStage], writer: CudaStageWriter):
    """One kernel computing every stage per element (StageWriter.fused_body). Returns the
    lines that must run first (its reductions) and a function of the kernel's range."""
    pre, space, resolved, body = writer.fused_body(stages)

    def kernel(lo: str = "0", hi: str | None = None) -> list[str]:
        vectorised = vector_loop(space, body, resolved, lo, hi or f"{space.local}.count")
        space.registers.clear()
        return vectorised or device_loop(space, body, resolved, lo, hi)
    return pre, kernel
