"""Element-wise kernels with 16-byte loads and stores where alignment allows.

Each thread of the vector kernel takes W consecutive elements (W = 16 bytes over the
smallest item size it touches): operands read at the thread's own element (`i`) are
loaded as whole 16-byte words into registers, results stored the same way; operands
read elsewhere (broadcast, block offsets) stay scalar reads. The host checks that every
such pointer is aligned at the range's start (`pf::aligned16`); the remainder of the
range, or all of it when unaligned, runs the scalar kernel of the same body.
"""

from __future__ import annotations

from collections.abc import Callable

from parafuse.ccn_compiler import ir
from parafuse.emitters.ccn.cpp_expr import STORAGE, ExprContext, compute_type
from parafuse.emitters.ccn.loop_space import LoopSpace, expr_context

from .folded_reductions import PhaseSums

ITEM_BYTES = {"pf::f16": 2, "pf::bf16": 2, "float": 4, "double": 8, "int32_t": 4,
              "int64_t": 8, "uint8_t": 1}


class VectorSpace(LoopSpace):
    """A LoopSpace whose reads at the thread's own element come from loaded registers."""

    def __init__(self, space: LoopSpace) -> None:
        super().__init__(space.type, space.local, space.buffers, registers=space.registers,
                         hoists=space.hoists)
        self.needs_coords = space.needs_coords  # the precomputed values' reads may need them
        self.loads: dict[str, str] = {}  # pointer -> storage type
        self.stores: dict[str, str] = {}  # pointer -> storage type

    def read(self, ref: ir.Ref) -> str:
        if ref.name in self.registers:
            return self.registers[ref.name]
        buf = self.buffers(ref.name)
        if buf.is_param or self.index(buf) != "i":
            return super().read(ref)
        self.loads[buf.var] = STORAGE[buf.type.dtype]
        return f"static_cast<{compute_type(buf.type.dtype)}>(ld_{buf.var}.v[j])"

    def store_element(self, var: str, storage: str, value: str) -> str:
        """Element j of the thread's 16-byte word of `var`, stored once the word is full."""
        self.stores[var] = storage
        return f"st_{var}.v[j] = pf::store_as<{storage}>({value});"


def vector_loop(space: LoopSpace, body: Callable[[ExprContext], list[str]],
                precomputed: dict[int, str], lo: str, hi: str,
                sums: PhaseSums | None = None) -> list[str] | None:
    """The lines of a vectorised launch of `body` over [lo, hi), or None where no operand
    is read or stored at the thread's own element (nothing to gain); with `sums`, the body
    also adds into `sums[k]` (ccn/cuda/summing.cuh)."""
    if not space.type.shape:
        return None
    vec = VectorSpace(space)
    vec.registers.clear()
    inner = body(expr_context(vec, precomputed))
    stores = vec.stores
    if not vec.loads and not stores:
        return None
    width = 16 // min(ITEM_BYTES[s] for s in [*vec.loads.values(), *stores.values()])
    pointers = ", ".join(dict.fromkeys([*vec.loads, *stores]))
    aligned = f"pf::aligned16({lo}, {pointers})"
    if sums is None:
        lines = [f"pf::launch_vectorized<{width}>({lo}, {hi}, {aligned}, streams_.compute,",
                 "    [=] __device__(int64_t i0) {"]
        scalar_head = "    [=] __device__(int64_t i) {"
    else:
        lines = [f"pf::launch_vectorized_summing<{width}, {len(sums.sums)}>({lo}, {hi}, {aligned}, "
                 f"streams_.compute, {sums.var},",
                 f"    [=] __device__(int64_t i0, {sums.acc}* sums) {{"]
        scalar_head = f"    [=] __device__(int64_t i, {sums.acc}* sums) {{"
    lines += [f"      const auto ld_{v} = pf::load_vec<{width}>({v} + i0);" for v in vec.loads]
    lines += [f"      pf::Vec<{s}, {width}> st_{v};" for v, s in stores.items()]
    lines += ["#pragma unroll", f"      for (int j = 0; j < {width}; ++j) {{",
              "        const int64_t i = i0 + j; (void)i;"]
    lines += ["        " + line for line in vec.coordinate_lines() + inner] + ["      }"]
    lines += [f"      pf::store_vec<{width}>({v} + i0, st_{v});" for v in stores]
    space.registers.clear()
    scalar = body(expr_context(space, precomputed))
    lines += ["    },", scalar_head]
    return lines + ["      " + line for line in space.coordinate_lines() + scalar] + ["    });"]
