"""Simple stages of the scheduled IR as C++ statements for the CPU backend.

Element-wise and update stages become one OpenMP loop (after the reductions and
row norms they contain, which run first: a local pass, then an MPI_Allreduce of
the partial for a sliced operand). allreduce, reducescatter and allgather along dim
0 go through a `pf::NodeCollective` member (node-shared memory when the ranks share
a node, MPI otherwise: MPI's waits poll); the other collectives call the `pf::` wrappers
of the runtime's MPI helpers; `matmul` the runtime's oneDNN call (gemm.py).
"""

from __future__ import annotations

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.types import Layout, ValueType
from parafuse.emitters.ccn.cpp_expr import STORAGE, compute_type, cpp_expr
from parafuse.emitters.ccn.plan import CommKind, Communicator, group_id, stage_id
from parafuse.emitters.ccn.stage_writer import (
    REDUCE_OPS,
    StageWriter,
    accumulator_type,
    local_expr,
    reduce_identity,
)
from parafuse.emitters.names import prefixed_stem

from .gemm import gemm_call, store_product
from .loops import element_loop, store_loop


def comm_name(comm: Communicator) -> str:
    """The MPI communicator member of `comm`."""
    if comm.kind is CommKind.CROSS:
        return f"cross_{prefixed_stem(comm.stage)}_"
    return group_comm(comm.group)


def group_comm(group: str | None) -> str:
    return f"comm_{group_id(group)}_" if group else "comm_"


class CpuStageWriter(StageWriter):
    """StageWriter whose loops are OpenMP loops and whose collectives are MPI calls."""

    loop = staticmethod(element_loop)
    store = staticmethod(store_loop)
    broadcasts_by_coords = True  # loops with a broadcast operand run by rows (loops.py)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.step_locals: set[str] = set()

    def block(self, local: str, vt: ValueType) -> list[str]:
        """`local`: the shape of this rank's block of `vt`."""
        return [f"const pf::Local {local} = {local_expr(vt, self.sizes)};"]

    def temporary(self, var: str, local: str, ctype: str, vt: ValueType) -> list[str]:
        """A step-local buffer `var` (a pointer into the step's arena) of `vt`'s block, shape
        `local`."""
        self.step_locals.add(var)
        return self.block(local, vt) + [f"{ctype}* const {var} = arena_.take<{ctype}>("
                                        f"{local}.count);"]

    def pointer(self, var: str) -> str:
        """A temporary is a pointer already; a program buffer is a std::vector."""
        return var if var in self.step_locals else f"{var}.data()"

    def place(self, operand: ir.Expr, collective: ir.CollectiveStage) -> None:
        """Hold `operand` in `collective`'s node-shared segment where the plan says so."""
        if isinstance(operand, ir.Ref) and \
                self.plan.placements.get(operand.name) == collective.name:
            self.constructor.append(f"{self.buffers[operand.name].var}.place("
                                    f"x_{stage_id(collective)}_.segment());")

    def _reduce(self, node: ir.Reduce, done: dict[int, object]) -> tuple[str, list[str]]:
        operand = node.operand
        acc_type = accumulator_type(operand.type.dtype)
        name, local = self.fresh("red"), self.fresh("Lr")
        space = self.space(operand.type, local)
        lines = [f"// {node.kind}({'...' if not isinstance(operand, ir.Ref) else operand.name})"
                 f"{' across ranks' if node.cross_rank else ''}",
                 f"const pf::Local {local} = {local_expr(operand.type, self.sizes)};",
                 f"{acc_type} {name}_acc = {reduce_identity(node.kind, acc_type)};"]
        storage = STORAGE[operand.type.dtype]

        def body(ctx) -> list[str]:
            code, _ = cpp_expr(operand, ctx)
            value = f"static_cast<{acc_type}>(pf::round_to<{storage}>({code}))"
            if node.kind == "sum":
                return [f"{name}_acc += {value};"]
            if node.kind == "norm":
                return [f"const {acc_type} v = {value};", f"{name}_acc += v * v;"]
            return [f"{name}_acc = std::max({name}_acc, {value});"]
        op = "max" if node.kind == "amax" else "+"
        lines += element_loop(space, body, self.resolve(space, done), reduction=f"{op}:{name}_acc")
        if node.cross_rank:
            mpi_op = "MPI_MAX" if node.kind == "amax" else "MPI_SUM"
            lines.append(f"PF_MPI(MPI_Allreduce(MPI_IN_PLACE, &{name}_acc, 1, "
                         f"pf::mpi_type<{acc_type}>(), {mpi_op}, "
                         f"{group_comm(operand.type.layout.group)}));")
        total = f"std::sqrt({name}_acc)" if node.kind == "norm" else f"{name}_acc"
        ctype = compute_type(node.type.dtype)
        lines.append(f"const {ctype} {name} = pf::round_to<{STORAGE[node.type.dtype]}>({total});")
        return name, lines

    def collective(self, stage: ir.CollectiveStage) -> list[str]:
        src, lines = self.materialize(stage.operand)
        target = self.buffers[stage.name]
        out = f"{target.var}.data()"
        storage = STORAGE[stage.type.dtype]
        op_lay = stage.operand.type.layout
        operand_local = (self.buffers[stage.operand.name].local
                         if isinstance(stage.operand, ir.Ref) else None)
        count = f"{target.local}.count"
        comm = group_comm(stage.group)
        node = f"nc_{stage_id(stage)}_"
        if stage.op == "allreduce":
            self.node_collective(node, storage, comm_name(self.plan.collective_comm(stage)),
                                 count)
            lines.append(f"{node}.allreduce({src}, {out}, {count}, "
                         f"{REDUCE_OPS[stage.reduce_op]});")
        elif stage.op == "reducescatter":
            whole = operand_local or f"pf::local_block({target.local}.logical, -1, 1, 0)"
            self.node_collective(node, storage, comm, f"{target.local}.logical[0] * "
                                 f"pf::inner_count({whole}, 1)")
            lines.append(f"{node}.reduce_scatter({src}, {out}, {target.local}.logical[0], "
                         f"pf::inner_count({whole}, 1), {REDUCE_OPS[stage.reduce_op]});")
        elif stage.op == "allgather" and op_lay.dim == 0:
            self.node_collective(node, storage, comm, count)
            lines.append(f"{node}.allgather_rows({src}, {out}, {target.local}.logical[0], "
                         f"pf::inner_count({target.local}, 1));")
        elif stage.op == "allgather":
            lines.append(self._allgather(stage, src, out, op_lay, comm))
        elif stage.op == "broadcast":
            lines.append(f"pf::broadcast<{storage}>({src}, {out}, {count}, {stage.root}, {comm});")
        else:
            lines.append(f"pf::send_shift<{storage}>({src}, {out}, {count}, "
                         f"blocks_{group_id(stage.group)}_, {stage.shift}, comm_);")
        return [f"// {stage.name} = {stage.op}(...)"] + lines

    def send_between(self, stage: ir.CollectiveStage,
                     rows: tuple[str, str] | None = None) -> list[str]:
        """A send between pipeline stages over MPI (see send_between_code)."""
        target = self.buffers[stage.name]
        source, dest = self.send_blocks(stage)

        def transfer(data: str, offset: str, count: str) -> list[str]:
            return [f"pf::send_between<{STORAGE[stage.type.dtype]}>({data}, "
                    f"{target.var}.data(){offset}, {count}, blocks_{group_id(stage.group)}_, "
                    f"{source}, {dest}, comm_);"]
        return self.send_between_code(stage, transfer, rows)

    def node_collective(self, member: str, storage: str, comm: str, count: str) -> None:
        """A pf::NodeCollective member for one stage: node-shared memory on one node."""
        self.members.append(f"pf::NodeCollective<{storage}> {member};")
        self.constructor.append(f"{member}.setup({comm}, {count});")

    def _allgather(self, stage: ir.CollectiveStage, src: str, out: str, op_lay: Layout,
                   comm: str) -> str:
        """An allgather along a dim other than 0 (MPI_Allgatherv, then a relayout)."""
        storage = STORAGE[stage.type.dtype]
        target = self.buffers[stage.name]
        d = op_lay.dim
        return (f"pf::allgather_dim<{storage}>({src}, {out}, pf::outer_count({target.local}, {d}), "
                f"{target.local}.logical[{d}], pf::inner_count({target.local}, {d + 1}), {comm});")

    def matmul(self, stage: ir.MatmulStage) -> list[str]:
        call = gemm_call(stage, self)
        return call.lines + call.call() + store_product(call, stage, self)


def lower_simple(stage: ir.SimpleStage, writer: CpuStageWriter) -> list[str]:
    if writer.send_blocks(stage):
        return writer.send_between(stage)
    if isinstance(stage, ir.CollectiveStage):
        return ["{"] + ["  " + line for line in writer.collective(stage)] + ["}"]
    if isinstance(stage, ir.MatmulStage):
        return ["{"] + ["  " + line for line in writer.matmul(stage)] + ["}"]
    if writer.plan.epilogue_producer(stage.name):
        return [f"// {stage.name}: in the epilogue of "
                f"{writer.plan.epilogue_producer(stage.name)}'s GEMM"]
    return [f"// {stage.name}", "{"] + ["  " + line for line in writer.elementwise(stage)] + ["}"]
