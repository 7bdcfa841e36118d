"""The ring formulas of `ccn_compiler/comm_volume.py`, printed as the C++ of `bytes_per_rank`.

The formulas are not written here: `volume_terms(program)` gives them as data and
this module only prints them, with C++ precedence deciding the parentheses, over
the members a generated schedule class holds (G, N: their C++ names, emitters/names.py)::

    RanksPerBlock(None)        -> double(ranks_)         RanksPerBlock("G") -> double(parts_G_)
    BlocksPerBlock("I", "O")   -> double(blocks_I_ / blocks_O_)   (integer division first)
    Blocks("G")                -> blocks_G_              Extent("N")        -> double(sizes_.N)
    Extent(7)                  -> 7.0

so that the runner reports exactly the number the reference interpreter computes.
"""

from __future__ import annotations

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.comm_volume import (
    Binary,
    Blocks,
    BlocksPerBlock,
    Const,
    Extent,
    Formula,
    Grouped,
    RanksPerBlock,
    Select,
    VolumeTerm,
    volume_terms,
)

from .plan import group_id, size_member

# C++ operator precedence, higher binds tighter; all of these associate to the left.
PRECEDENCE = {"?:": 1, "!=": 2, ">": 3, "+": 4, "-": 4, "*": 5, "/": 5, "%": 5}
ATOM = 9


def volume_lines(program: ir.Program) -> list[str]:
    """The body of the schedule class's `bytes_per_rank()`: one `bytes +=` line per term."""
    return ["double bytes = 0;"] + [term_line(t) for t in volume_terms(program)] + \
        ["return bytes;"]


def term_line(term: VolumeTerm) -> str:
    """`bytes += B;`, guarded by `if (...)` when the term counts only sometimes."""
    added = f"bytes += {cpp_formula(term.sent)};"
    return added if term.when is None else f"if ({cpp_formula(term.when)}) {added}"


def cpp_formula(formula: Formula) -> str:
    """The C++ expression computing `formula` as a double."""
    return _printed(formula)[0]


def _leaf(formula: Formula) -> str | None:
    match formula:
        case Const(value):
            return repr(value)
        case Extent(dim):
            return f"double(sizes_.{size_member(dim)})" if isinstance(dim, str) else f"{dim}.0"
        case RanksPerBlock(group):
            return f"double(parts_{group_id(group)}_)" if group else "double(ranks_)"
        case BlocksPerBlock(inner, outer):
            outer_blocks = f"blocks_{group_id(outer)}_" if outer else "1"
            return f"double(blocks_{group_id(inner)}_ / {outer_blocks})"
        case Blocks(group):
            return f"blocks_{group_id(group)}_"
    return None


def _printed(formula: Formula) -> tuple[str, int]:
    """The text of `formula` and the precedence of its outermost operator."""
    leaf = _leaf(formula)
    if leaf is not None:
        return leaf, ATOM
    match formula:
        case Grouped(inner):
            return f"({cpp_formula(inner)})", ATOM
        case Binary(op, left, right):
            level = PRECEDENCE[op]
            return f"{_operand(left, level, False)} {op} {_operand(right, level, True)}", level
        case Select(condition, then, otherwise):
            level = PRECEDENCE["?:"]
            return (f"{_operand(condition, level, True)} ? {cpp_formula(then)} : "
                    f"{_operand(otherwise, level - 1, False)}"), level
    raise TypeError(f"not a formula: {formula!r}")


def _operand(formula: Formula, level: int, right: bool) -> str:
    """An operand of an operator at `level`, in parentheses where C++ would regroup it."""
    text, inner = _printed(formula)
    return f"({text})" if inner < level or (right and inner == level) else text
