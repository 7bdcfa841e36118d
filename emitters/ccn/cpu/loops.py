"""Element loops of the CPU backend: one OpenMP loop over a value's local block.

The loop runs over the flat local index `i` of its iteration space (the block a
rank holds of the result). Each operand is read at the element that spec 3.3's
layout rules assign to `i`: the same element for a value held the same way, the
block offset for a replicated operand inside a sliced result, the trailing
coordinates for a broadcast operand. Coordinates are only computed when an
operand or a dropout mask needs them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.types import ValueType
from parafuse.emitters.ccn.cpp_expr import ExprContext, compute_type, cpp_expr


@dataclass(frozen=True)
class Buffer:
    """A value as the generated code holds it."""

    var: str  # std::vector of the storage type (scalars hold one element)
    type: ValueType
    local: str  # the pf::Local of this rank's block
    is_param: bool = False


@dataclass
class LoopSpace:
    """Reads operands for the elements of one iteration space (`type`, block `local`)."""

    type: ValueType
    local: str
    buffers: Callable[[str], Buffer]
    needs_coords: bool = False
    registers: dict[str, str] = field(default_factory=dict)  # values computed in this loop
    invariants: dict[str, str] = field(default_factory=dict)  # offset code -> its constant
    hoists: bool = True  # element_loop declares invariants; other loop writers keep them inline

    def hoist(self, code: str) -> str:
        """A constant declared before the loop, so that the loop body has no calls or
        inner loops (GCC vectorises only such loops)."""
        if not self.hoists:
            return code
        return self.invariants.setdefault(code, f"o{len(self.invariants)}")

    @property
    def rank(self) -> int:
        return len(self.type.shape)

    def _dim_offset(self, operand: ValueType, j: int) -> bool:
        """Does operand dim j (whole) meet a result dim held as a block?"""
        result_dim = j + self.rank - len(operand.shape)
        lay, olay = self.type.layout, operand.layout
        result_block = lay.kind == "sliced" and lay.dim == result_dim
        operand_block = olay.kind == "sliced" and olay.dim == j
        return result_block and not operand_block

    def index(self, buf: Buffer) -> str:
        operand = buf.type
        k, d = len(operand.shape), self.rank
        if k == 0:
            return "0"
        offsets = [j for j in range(k) if self._dim_offset(operand, j)]
        if k == d and not offsets:
            return "i"
        if k == d and offsets == [0]:
            offset = self.hoist(f"{self.local}.start[0] * pf::inner_count({buf.local}, 1)")
            return f"(i + {offset})"
        if k < d and not offsets:
            return f"(i % {self.hoist(f'pf::inner_count({self.local}, {d - k})')})"
        self.needs_coords = True
        terms = []
        for j in range(k):
            dim = j + d - k
            coord = f"(c{dim} + {self.local}.start[{dim}])" if j in offsets else f"c{dim}"
            terms.append((coord, j))
        code = terms[0][0]
        for coord, j in terms[1:]:
            code = f"({code} * {buf.local}.shape[{j}] + {coord})"
        return code

    def logical_index(self, node_type: ValueType) -> str:
        """Row-major index, in `node_type`'s logical shape, of the current element."""
        d, k = self.rank, len(node_type.shape)
        if k == 0:
            return "uint64_t(0)"
        lay = self.type.layout
        if k == d and (lay.kind != "sliced" or lay.dim == 0):
            start = self.hoist(f"{self.local}.start[0] * pf::inner_count({self.local}, 1)") \
                if lay.kind == "sliced" else "0"
            return f"uint64_t(i + {start})"
        self.needs_coords = True
        code = ""
        for dim in range(d - k, d):
            coord = f"(c{dim} + {self.local}.start[{dim}])"
            code = coord if not code else f"({code} * {self.local}.logical[{dim}] + {coord})"
        return f"uint64_t({code})"

    def read(self, ref: ir.Ref) -> str:
        if ref.name in self.registers:
            return self.registers[ref.name]
        buf = self.buffers(ref.name)
        ctype = compute_type(buf.type.dtype)
        if buf.is_param:
            return buf.var
        return f"static_cast<{ctype}>({buf.var}[{self.index(buf)}])"

    def coordinate_lines(self) -> list[str]:
        if not self.needs_coords:
            return []
        lines = ["int64_t rest = i;"]
        for dim in reversed(range(self.rank)):
            lines.append(f"const int64_t c{dim} = rest % {self.local}.shape[{dim}]; "
                         f"rest /= {self.local}.shape[{dim}];")
        lines.append("(void)rest;")
        return lines


def expr_context(space: LoopSpace, precomputed: dict[int, str]) -> ExprContext:
    def rank_of(node: ir.Dropout) -> str:
        return "uint32_t(rank_)" if node.type.layout.kind == "local" else "0u"
    return ExprContext(read=space.read, precomputed=precomputed,
                       dropout_index=lambda node: space.logical_index(node.type),
                       dropout_rank=rank_of)


def element_loop(space: LoopSpace, body: Callable[[ExprContext], list[str]],
                 precomputed: dict[int, str], lo: str = "0", hi: str | None = None,
                 reduction: str | None = None) -> list[str]:
    """`#pragma omp parallel for` over [lo, hi) of the space's local block."""
    hi = hi or f"{space.local}.count"
    inner = body(expr_context(space, precomputed))
    # `simd` asserts that iterations are independent (they are: every loop writes its own
    # buffer), so GCC vectorises without run-time alias checks; reductions keep their
    # element order within a thread.
    clause = f" reduction({reduction})" if reduction else " simd"
    pragma = [f"#pragma omp parallel for{clause} schedule(static)"] if space.rank else []
    lines = pragma + [f"for (int64_t i = {lo}; i < {hi}; ++i) {{"]
    lines += ["  " + line for line in space.coordinate_lines() + inner]
    lines.append("}")
    if not space.invariants:
        return lines
    constants = [f"const int64_t {name} = {code};" for code, name in space.invariants.items()]
    return ["{"] + ["  " + line for line in constants + lines] + ["}"]


def store_loop(space: LoopSpace, target: Buffer, expr: ir.Expr, precomputed: dict[int, str],
               lo: str = "0", hi: str | None = None) -> list[str]:
    """target[i] = expr rounded to the target's dtype, for i in [lo, hi)."""
    from parafuse.emitters.ccn.cpp_expr import STORAGE

    def body(ctx: ExprContext) -> list[str]:
        code, _ = cpp_expr(expr, ctx)
        return [f"{target.var}[i] = pf::store_as<{STORAGE[target.type.dtype]}>({code});"]
    return element_loop(space, body, precomputed, lo, hi)


def walk_precomputable(expr: ir.Expr) -> list[ir.Expr]:
    """Reductions and row norms in `expr`, innermost first: they run before the loop."""
    found = []
    for child in ir.children(expr):
        found += walk_precomputable(child)
    if isinstance(expr, (ir.Reduce, ir.RowNorm)):
        found.append(expr)
    return found
