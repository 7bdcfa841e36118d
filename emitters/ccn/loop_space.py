"""Where the elements of one loop come from: the index of every operand in the block of
the value a loop writes (`LoopSpace`), shared by the CPU loops and the CUDA kernels.

A loop runs over this rank's block of its result (`type`, block shape `local`), by flat
index `i`. An operand is read at `i` when it is held the same way, at `i` plus the
block's offset when the result is a block of a dimension the operand holds whole, and
at the broadcast position of a trailing-dims operand (coordinate 0 along its dims of
extent 1 that meet longer ones); coordinates are only computed when
an operand or a dropout mask needs them. A result element is stored with
`store_element`, which a vectorised space prints differently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.types import ValueType

from .cpp_expr import ExprContext, compute_type
from .plan import Buffer


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
    # read trailing-dims operands (a bias) by coordinates rather than at i % extent: the
    # CPU's loops then run by rows, and the inner loop's index reads them (vectorised)
    broadcast_by_coords: bool = False

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

    def _broadcast_dims(self, operand: ValueType) -> set[int]:
        """Operand dims of extent 1 that meet a longer result dim: read at coordinate 0."""
        k, d = len(operand.shape), self.rank
        return {j for j in range(k) if operand.shape[j] == 1 and self.type.shape[j + d - k] != 1}

    def index(self, buf: Buffer) -> str:
        operand = buf.type
        k, d = len(operand.shape), self.rank
        if k == 0:
            return "0"
        repeated = self._broadcast_dims(operand)
        offsets = [j for j in range(k) if self._dim_offset(operand, j) and j not in repeated]
        if not repeated:
            if k == d and not offsets:
                return "i"
            if k == d and offsets == [0]:
                offset = self.hoist(f"{self.local}.start[0] * pf::inner_count({buf.local}, 1)")
                return f"(i + {offset})"
            if k < d and not offsets and not self.broadcast_by_coords:
                return f"(i % {self.hoist(f'pf::inner_count({self.local}, {d - k})')})"
        self.needs_coords = True
        terms = []
        for j in range(k):
            dim = j + d - k
            coord = "0" if j in repeated else \
                f"(c{dim} + {self.local}.start[{dim}])" if j in offsets else f"c{dim}"
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

    def store_element(self, var: str, storage: str, value: str) -> str:
        """The statement storing `value` as element i of `var`."""
        return f"{var}[i] = pf::store_as<{storage}>({value});"


def expr_context(space: LoopSpace, precomputed: dict[int, str]) -> ExprContext:
    def rank_of(node: ir.Dropout) -> str:
        return "uint32_t(rank_)" if node.type.layout.kind == "local" else "0u"
    return ExprContext(read=space.read, precomputed=precomputed,
                       dropout_index=lambda node: space.logical_index(node.type),
                       dropout_rank=rank_of, store=space.store_element)


def walk_precomputable(expr: ir.Expr) -> list[ir.Expr]:
    """Reductions and row norms in `expr`, innermost first: they run before the loop."""
    found = []
    for child in ir.children(expr):
        found += walk_precomputable(child)
    if isinstance(expr, ir.PRECOMPUTED):
        found.append(expr)
    return found
