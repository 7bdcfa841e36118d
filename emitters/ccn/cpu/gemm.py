"""How the CPU backend calls the runtime's `pf::matmul` (oneDNN, ccn/cpu/matmul.hpp) for a
matmul stage, whole, by chunks of rows, or (batched) once for each batch of its block.

The operands are emitters/ccn/gemm_operands.py's; a result the library cannot write in its
own dtype goes to a float (double) temporary, stored afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass

from parafuse.ccn_compiler import ir
from parafuse.emitters.ccn.cpp_expr import STORAGE
from parafuse.emitters.ccn.gemm_operands import gemm_comment, gemm_operands, gemm_target
from parafuse.emitters.ccn.stage_writer import StageWriter


@dataclass
class GemmCall:
    """Operands ready for `pf::matmul`: pointers to rows of A (its block shape `la`), B
    (`lb`), and where the product goes."""

    lines: list[str]
    a: str
    la: str
    b: str
    lb: str
    out: str  # a pointer to the result's elements, row 0
    store_after: str  # "" or the float temporary to store into the stage's buffer
    rank_a: int  # dims of A (its rows are every dim but the last)
    epilogue_args: str = ""  # the plan's epilogue, as pf::matmul's last arguments
    lout: str = ""  # the result's block shape, for a batched matmul (else "")
    rank_b: int = 2  # dims of B

    def call(self, lo: str = "0", hi: str | None = None) -> list[str]:
        """Rows of elements [lo, hi) of the result (all of them by default)."""
        if self.lout:
            return self.batched_call()
        n = f"{self.lb}.shape[1]"
        k = f"{self.la}.shape.back()"
        rows = f"pf::outer_count({self.la}, {self.rank_a - 1})" if hi is None \
            else f"(({hi}) - ({lo})) / {n}"
        a = self.a if hi is None else f"{self.a} + ({lo}) / {n} * {k}"
        out = self.out if hi is None else f"{self.out} + {lo}"
        return [f"pf::matmul({a}, {self.b}, {out}, {rows}, {k}, {n}{self.epilogue_args});"]

    def batched_call(self) -> list[str]:
        """One GEMM a batch, over the batches of the result's block (pf::batch_offsets)."""
        m, k, n = (f"{self.la}.shape[{self.rank_a - 2}]", f"{self.la}.shape[{self.rank_a - 1}]",
                   f"{self.lb}.shape[{self.rank_b - 1}]")
        return [f"for (const pf::BatchOffsets& at : pf::batch_offsets({self.lout}, {self.la}, "
                f"{self.lb}))",
                f"  pf::matmul({self.a} + at.a, {self.b} + at.b, {self.out} + at.out, {m}, {k}, "
                f"{n}{self.epilogue_args});"]


def gemm_call(stage: ir.MatmulStage, writer: StageWriter) -> GemmCall:
    ops = gemm_operands(stage, writer)
    lines = [gemm_comment(f"// {stage.name} = matmul(...): pf::matmul in {ops.in_dtype}",
                          stage, writer.plan)] + ops.lines
    target, epilogue_args = gemm_target(stage, writer)
    if ops.direct:
        out, store_after = f"{target.var}.data()", ""
    else:
        wide = "double" if ops.in_dtype == "f64" else "float"
        store_after = writer.fresh("mmout")
        lines.append(f"{wide}* const {store_after} = arena_.take<{wide}>({target.local}.count);")
        out = store_after
    return GemmCall(lines, ops.a, ops.la, ops.b, ops.lb, out, store_after,
                    len(stage.a.type.shape), epilogue_args,
                    target.local if stage.batched else "", len(stage.b.type.shape))


def store_product(call: GemmCall, stage: ir.MatmulStage, writer: StageWriter,
                  lo: str = "0", hi: str | None = None) -> list[str]:
    """Round a product held in a wider temporary into the stage's buffer (rows [lo, hi))."""
    if not call.store_after:
        return []
    target = writer.buffers[stage.name]
    end = hi if hi is not None else f"{target.local}.count"
    return [f"for (int64_t i = {lo}; i < {end}; ++i) {target.var}[i] = "
            f"pf::store_as<{STORAGE[stage.type.dtype]}>({call.store_after}[i]);"]
