"""Bytes each rank sends per step, by the standard ring formulas (for `--json`).

For a block of n ranks and a tensor of B bytes: allreduce 2(n-1)/n B, reducescatter
and allgather (n-1)/n B, broadcast B (the pipelined chain, as nccl-tests' bus
bandwidth counts it), send B. A cross-rank scalar reduction is an allreduce of one
accumulator. The numbers depend on the program only, never on the backend.

The formulas are written once, here, as data: `volume_terms(program)` gives one
`VolumeTerm` per contribution, an expression (`Formula`) over the program's sizes
and the topology's rank and block counts. The reference interpreter evaluates them
(`bytes_per_rank`); the emitters print the same expressions as C++
(`emitters/ccn/volume.py`), so a generated runner reports the same number. For
`adam`'s `gsum = allreduce(sum, g)` with `g: f16[N]`, the term is::

    2 * (n - 1) / n * (N * 2)        n = RanksPerBlock(None), N = Extent("N")

and the interpreter adds it up in the order the C++ code does.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from dataclasses import dataclass

from . import ir
from .dims import Dim, DimPoly
from .ranks import Topology
from .types import ITEM_SIZE, ValueType

Number = int | float


class Formula:
    """An arithmetic expression over sizes and rank counts; operators build bigger ones."""

    def __add__(self, other: Formula | Number) -> Formula:
        return Binary("+", self, as_formula(other))

    def __sub__(self, other: Formula | Number) -> Formula:
        return Binary("-", self, as_formula(other))

    def __mul__(self, other: Formula | Number) -> Formula:
        return Binary("*", self, as_formula(other))

    def __rmul__(self, other: Number) -> Formula:
        return Binary("*", as_formula(other), self)

    def __truediv__(self, other: Formula | Number) -> Formula:
        return Binary("/", self, as_formula(other))

    def __mod__(self, other: Formula | Number) -> Formula:
        return Binary("%", self, as_formula(other))


@dataclass(frozen=True)
class Const(Formula):
    """A number written as it is (`2`, `1.0`)."""

    value: Number


@dataclass(frozen=True)
class Extent(Formula):
    """The extent of one dim: a size variable's value, or a literal extent (a float in C++)."""

    dim: str | int


@dataclass(frozen=True)
class RanksPerBlock(Formula):
    """Ranks in one block of `group` (all ranks when `group` is None)."""

    group: str | None


@dataclass(frozen=True)
class BlocksPerBlock(Formula):
    """Blocks of `inner` inside one block of `outer` (the world when `outer` is None)."""

    inner: str
    outer: str | None


@dataclass(frozen=True)
class Blocks(Formula):
    """The number of blocks of `group` (an integer)."""

    group: str


@dataclass(frozen=True)
class Binary(Formula):
    """`left op right`: one of + - * / % (true division) > !=."""

    op: str
    left: Formula
    right: Formula


@dataclass(frozen=True)
class Select(Formula):
    """`then` where `condition` holds, else `otherwise`."""

    condition: Formula
    then: Formula
    otherwise: Formula


@dataclass(frozen=True)
class Grouped(Formula):
    """A part the formula writes in parentheses, as one unit (a tensor's bytes, a shift)."""

    inner: Formula


@dataclass(frozen=True)
class VolumeTerm:
    """Bytes one stage sends (`sent`), counted only where `when` holds (None: always)."""

    sent: Formula
    when: Formula | None = None


def as_formula(value: Formula | Number) -> Formula:
    """`value` itself, or the constant it is."""
    return value if isinstance(value, Formula) else Const(value)


def greater(left: Formula, right: Formula | Number) -> Formula:
    """`left > right` (a truth value)."""
    return Binary(">", left, as_formula(right))


def not_equal(left: Formula, right: Formula | Number) -> Formula:
    """`left != right` (a truth value)."""
    return Binary("!=", left, as_formula(right))


def _extent(dim: Dim) -> Formula:
    """A dim's extent: the sum of its polynomial's terms, each a product of extents."""
    if not isinstance(dim, DimPoly):
        return Extent(dim)
    terms = [functools.reduce(operator.mul, [Extent(v) for v in monomial], Extent(c))
             for monomial, c in dim.terms]
    return Grouped(functools.reduce(operator.add, terms))


def tensor_bytes(vt: ValueType) -> Formula:
    """B: the bytes of a whole tensor of type `vt` (its logical shape, not a rank's block)."""
    extents: list[Formula] = [_extent(dim) for dim in vt.shape] or [Const(1.0)]
    return Grouped(functools.reduce(operator.mul, extents) * ITEM_SIZE[vt.dtype])


RING_FACTORS: dict[str, Callable[[Formula], Formula]] = {
    "allreduce": lambda n: 2 * (n - 1) / n,
    "reducescatter": lambda n: (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "broadcast": lambda n: Select(greater(n, 1), Const(1.0), Const(0.0)),
}


def hierarchical_allreduce(stage: ir.SimpleStage) -> bool:
    """An allreduce whose operand is already reduced within the blocks of a group."""
    return isinstance(stage, ir.CollectiveStage) and stage.op == "allreduce" and \
        stage.operand.type.layout.kind == "replicated" and \
        stage.operand.type.layout.group is not None


def _collective_term(stage: ir.CollectiveStage) -> VolumeTerm:
    total = tensor_bytes(stage.operand.type)
    if stage.op == "send":  # a value sliced in the group: each rank sends its block
        if stage.operand.type.layout.kind == "sliced":
            total = total / RanksPerBlock(stage.group)
        return VolumeTerm(total, not_equal(Grouped(Const(stage.shift)) % Blocks(stage.group), 0))
    n: Formula = RanksPerBlock(stage.group)
    if hierarchical_allreduce(stage):
        n = BlocksPerBlock(stage.operand.type.layout.group, stage.group)
    return VolumeTerm(RING_FACTORS[stage.op](n) * total)


def _scalar_reduction_terms(stage: ir.Stage) -> list[VolumeTerm]:
    terms = []
    for expr in ir.stage_exprs(stage):
        for node in ir.walk(expr):
            if isinstance(node, ir.Reduce) and node.cross_rank:
                n = RanksPerBlock(node.operand.type.layout.group)
                accumulator = 8 if node.operand.type.dtype in ("f64", "i32", "i64") else 4
                terms.append(VolumeTerm(RING_FACTORS["allreduce"](n) * accumulator))
    return terms


def volume_terms(program: ir.Program) -> list[VolumeTerm]:
    """Every contribution to the bytes a rank sends per step, in program order."""
    terms = []
    for stage in program.flat_stages():
        if isinstance(stage, ir.CollectiveStage):
            terms.append(_collective_term(stage))
        terms += _scalar_reduction_terms(stage)
    return terms


OPERATORS: dict[str, Callable[[Number, Number], Number | bool]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "%": operator.mod, ">": operator.gt, "!=": operator.ne,
}


def evaluate(formula: Formula, topo: Topology, sizes: dict[str, int]) -> Number:
    """The formula's value for `topo` and `sizes`, computed as the C++ code computes it."""
    match formula:
        case Const(value):
            return value
        case Extent(dim):
            return sizes[dim] if isinstance(dim, str) else dim
        case RanksPerBlock(group):
            return topo.block_size(group)
        case BlocksPerBlock(inner, outer):
            return topo.group_blocks[inner] // (topo.group_blocks[outer] if outer else 1)
        case Blocks(group):
            return topo.group_blocks[group]
        case Binary(op, left, right):
            return OPERATORS[op](evaluate(left, topo, sizes), evaluate(right, topo, sizes))
        case Select(condition, then, otherwise):
            chosen = then if evaluate(condition, topo, sizes) else otherwise
            return evaluate(chosen, topo, sizes)
        case Grouped(inner):
            return evaluate(inner, topo, sizes)
    raise TypeError(f"not a formula: {formula!r}")


def bytes_per_rank_exact(program: ir.Program, topo: Topology, sizes: dict[str, int]) -> float:
    """The bytes a rank sends per step, before rounding (the C++ runner's `double`)."""
    volume = 0.0
    for term in volume_terms(program):
        if term.when is None or evaluate(term.when, topo, sizes):
            volume += evaluate(term.sent, topo, sizes)
    return volume


def bytes_per_rank(program: ir.Program, topo: Topology, sizes: dict[str, int]) -> int:
    """The bytes a rank sends per step, rounded to a whole byte."""
    return round(bytes_per_rank_exact(program, topo, sizes))

