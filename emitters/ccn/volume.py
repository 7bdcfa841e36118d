"""bytes_per_rank of a schedule as C++: the ring formulas of ccn_compiler/comm_volume.py."""

from __future__ import annotations

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.types import ITEM_SIZE

from .plan import group_id, hierarchical, size_member


def volume_lines(program: ir.Program) -> list[str]:
    """bytes_per_rank by the ring formulas (the same as ccn_compiler/comm_volume.py)."""
    lines = ["double bytes = 0;"]
    for stage in program.flat_stages():
        if isinstance(stage, ir.CollectiveStage):
            operand = stage.operand.type
            elems = " * ".join(f"double(sizes_.{size_member(d)})" if isinstance(d, str)
                               else f"{d}.0" for d in operand.shape) or "1.0"
            total = f"({elems} * {ITEM_SIZE[operand.dtype]})"
            n = f"double(parts_{group_id(stage.group)}_)" if stage.group else "double(ranks_)"
            if hierarchical(stage):
                inner = group_id(operand.layout.group)
                outer = f"blocks_{group_id(stage.group)}_" if stage.group else "1"
                n = f"double(blocks_{inner}_ / {outer})"
            factor = {"allreduce": f"2 * ({n} - 1) / {n}", "reducescatter": f"({n} - 1) / {n}",
                      "allgather": f"({n} - 1) / {n}", "broadcast": f"({n} > 1 ? 1.0 : 0.0)"}
            if stage.op == "send":
                lines.append(f"if (({stage.shift}) % blocks_{group_id(stage.group)}_ != 0) "
                             f"bytes += {total};")
            else:
                lines.append(f"bytes += {factor[stage.op]} * {total};")
        for expr in ir.stage_exprs(stage):
            for node in ir.walk(expr):
                if isinstance(node, ir.Reduce) and node.cross_rank:
                    group = node.operand.type.layout.group
                    n = f"double(parts_{group_id(group)}_)" if group else "double(ranks_)"
                    acc = 8 if node.operand.type.dtype in ("f64", "i32", "i64") else 4
                    lines.append(f"bytes += 2 * ({n} - 1) / {n} * {acc};")
    return lines + ["return bytes;"]
