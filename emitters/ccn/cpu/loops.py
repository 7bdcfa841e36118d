"""Element loops of the CPU backend: one OpenMP loop over a value's local block (the
index of every operand comes from the LoopSpace, emitters/ccn/loop_space.py)."""

from __future__ import annotations

from collections.abc import Callable

from parafuse.ccn_compiler import ir
from parafuse.emitters.ccn.cpp_expr import STORAGE, ExprContext, cpp_expr
from parafuse.emitters.ccn.loop_space import LoopSpace, expr_context
from parafuse.emitters.ccn.plan import Buffer


def element_loop(space: LoopSpace, body: Callable[[ExprContext], list[str]],
                 precomputed: dict[int, str], lo: str = "0", hi: str | None = None,
                 reduction: str | None = None) -> list[str]:
    """`#pragma omp parallel for` over [lo, hi) of the space's local block."""
    hi = hi or f"{space.local}.count"
    inner = body(expr_context(space, precomputed))
    if space.needs_coords and not reduction:
        return _by_rows(space, inner, lo, hi)
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


def _by_rows(space: LoopSpace, inner: list[str], lo: str, hi: str) -> list[str]:
    """Elements [lo, hi) as rows of the last dim: the coordinates of the other dims once
    per row, the last one the inner loop's index (a flat loop would divide i by every
    extent per element, which costs more than the arithmetic of most loops)."""
    last, local = space.rank - 1, space.local
    lines = [f"const int64_t width = {local}.shape[{last}];",
             f"const int64_t lo_ = {lo}, hi_ = {hi};",
             "if (width > 0 && hi_ > lo_) {",
             "  #pragma omp parallel for schedule(static)",
             "  for (int64_t row = lo_ / width; row < (hi_ + width - 1) / width; ++row) {",
             "    int64_t rest = row;"]
    for dim in reversed(range(last)):
        lines.append(f"    const int64_t c{dim} = rest % {local}.shape[{dim}]; "
                     f"rest /= {local}.shape[{dim}];")
    lines += ["    (void)rest;",
              "    const int64_t j0 = std::max<int64_t>(lo_ - row * width, 0);",
              "    const int64_t j1 = std::min<int64_t>(hi_ - row * width, width);",
              "    #pragma omp simd",
              f"    for (int64_t c{last} = j0; c{last} < j1; ++c{last}) {{",
              f"      const int64_t i = row * width + c{last};"]
    lines += ["      " + line for line in inner]
    lines += ["    }", "  }", "}"]
    constants = [f"const int64_t {name} = {code};" for code, name in space.invariants.items()]
    return ["{"] + ["  " + line for line in constants + lines] + ["}"]


def store_loop(space: LoopSpace, target: Buffer, expr: ir.Expr, precomputed: dict[int, str],
               lo: str = "0", hi: str | None = None) -> list[str]:
    """target[i] = expr rounded to the target's dtype, for i in [lo, hi)."""

    def body(ctx: ExprContext) -> list[str]:
        code, _ = cpp_expr(expr, ctx)
        return [ctx.store(target.var, STORAGE[target.type.dtype], code)]
    return element_loop(space, body, precomputed, lo, hi)
