"""The typed IR of a .ccn program: frozen dataclasses, every node with a Location.

Expressions carry their `ValueType` (dtype, logical shape, layout). A program is
a sequence of named stages; collectives, `matmul` and `update` are stages of
their own kind, everything else is an element-wise stage over an expression tree.
"""

from __future__ import annotations

from dataclasses import dataclass

from parafuse.grammar.diagnostics import Location, SourceFile

from .types import REPLICATED, Dim, ValueType

# ---- expressions ----------------------------------------------------------------


@dataclass(frozen=True)
class Const:
    value: float | int
    type: ValueType
    location: Location


@dataclass(frozen=True)
class Ref:
    name: str
    type: ValueType
    location: Location


@dataclass(frozen=True)
class Unary:
    op: str  # neg
    operand: Expr
    type: ValueType
    location: Location


@dataclass(frozen=True)
class Binary:
    op: str  # + - * / < <= > >= == !=
    left: Expr
    right: Expr
    type: ValueType
    location: Location


@dataclass(frozen=True)
class Func:
    """sqrt rsqrt exp log tanh abs relu gelu sigmoid max min pow where."""

    name: str
    args: tuple[Expr, ...]
    type: ValueType
    location: Location


@dataclass(frozen=True)
class Cast:
    operand: Expr
    type: ValueType
    location: Location


@dataclass(frozen=True)
class Reduce:
    """sum / norm / amax to a scalar; `cross_rank` when the operand is sliced."""

    kind: str
    operand: Expr
    cross_rank: bool
    type: ValueType
    location: Location


@dataclass(frozen=True)
class Dropout:
    operand: Expr
    p: Expr
    site: int
    type: ValueType
    location: Location


@dataclass(frozen=True)
class RowFunction:
    """A function of each row along `dim` of its operand, computed in f32 (f64 for f64): the
    norms and softmax keep the operand's shape and work along the last dim; the row
    reductions (ROW_REDUCTIONS) along any dim, which they keep with extent 1."""

    kind: str  # layernorm | rmsnorm | softmax | sum | amax | mean
    operand: Expr
    eps: Expr | None  # the norms' epsilon; None for softmax
    type: ValueType
    location: Location
    dim: int  # normalised: 0 .. rank - 1


@dataclass(frozen=True)
class Transpose:
    """Its operand with two dims swapped (`dims`, ascending); a sliced dim moves with them."""

    operand: Expr
    dims: tuple[int, int]
    type: ValueType
    location: Location


@dataclass(frozen=True)
class Reshape:
    """Its operand's elements in the same row-major order, with another shape (`type`)."""

    operand: Expr
    type: ValueType
    location: Location


@dataclass(frozen=True)
class Slice:
    """Its operand's indices [start, start + type.shape[dim]) along `dim` (never sliced)."""

    operand: Expr
    dim: int  # normalised
    start: Dim
    type: ValueType
    location: Location


@dataclass(frozen=True)
class AsSliced:
    """Each rank's block along `dim` of its own value of the operand (`local` or
    `replicated`), as a `sliced(dim)` value: no data moves."""

    operand: Expr
    dim: int  # normalised
    type: ValueType
    location: Location


ROW_REDUCTIONS = ("sum", "amax", "mean")  # RowFunction kinds that reduce each row to one

Expr = (Const | Ref | Unary | Binary | Func | Cast | Reduce | Dropout | RowFunction | Transpose
        | Reshape | Slice | AsSliced)
# Nodes computed into a buffer of their own before the loop that reads them.
PRECOMPUTED = (Reduce, RowFunction, Transpose, Reshape, Slice, AsSliced)


# ---- stages ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ElementwiseStage:
    name: str
    expr: Expr
    type: ValueType
    location: Location


@dataclass(frozen=True)
class UpdateStage:
    """`name = update(state, expr)`: the state takes the value at the end of the step."""

    name: str
    state: str
    expr: Expr
    type: ValueType
    location: Location


@dataclass(frozen=True)
class MatmulStage:
    name: str
    a: Expr
    b: Expr
    type: ValueType
    location: Location

    @property
    def batched(self) -> bool:
        """a[..., M, K] x b[..., K, N] with batch dims, not a[..., K] x b[K, N]."""
        return len(self.b.type.shape) > 2


@dataclass(frozen=True)
class CollectiveStage:
    """allreduce / reducescatter / allgather / broadcast / send of one operand."""

    name: str
    op: str
    operand: Expr
    type: ValueType
    location: Location
    reduce_op: str | None = None  # sum prod max min avg
    group: str | None = None  # `in G`, or the group of `send`
    root: int | None = None  # broadcast
    shift: int | None = None  # send


@dataclass(frozen=True)
class FusedStage:
    """`fuse(...)`: member stages that backends lower as one kernel or one fused collective.

    The reference interpreter runs the parts in order; `chunks` comes from `tune`
    (None: the autotuner chooses).
    """

    name: str
    parts: tuple[Stage, ...]
    location: Location
    chunks: int | None = None


@dataclass(frozen=True)
class OverlapStage:
    """`overlap(P, C)`: producer and consumer chunked along dim 0 and pipelined."""

    name: str
    parts: tuple[Stage, Stage]
    location: Location
    chunks: int | None = None


@dataclass(frozen=True)
class MicroBatchStage:
    """`microbatch(FIRST, LAST)`: a run of stages executed on chunks of rows along dim 0
    (micro-batches), every stage of the run on micro-batch m before any on m + 1; the
    ranks of a pipeline stage work on m + 1 while the next stage's work on m."""

    name: str
    parts: tuple[Stage, ...]
    location: Location
    chunks: int | None = None


SimpleStage = ElementwiseStage | UpdateStage | MatmulStage | CollectiveStage
Stage = SimpleStage | FusedStage | OverlapStage | MicroBatchStage
GroupedStage = FusedStage | OverlapStage | MicroBatchStage
GROUPS = (FusedStage, OverlapStage, MicroBatchStage)  # for isinstance


# ---- declarations and the program ---------------------------------------------------


@dataclass(frozen=True)
class Param:
    name: str
    dtype: str
    default: float | int | None
    location: Location


@dataclass(frozen=True)
class Tensor:
    """An `input` or `state`; `ordinal` is its position among them (for `--random`)."""

    name: str
    role: str  # input | state
    type: ValueType
    ordinal: int
    location: Location


@dataclass(frozen=True)
class Group:
    name: str
    blocks: int
    location: Location


@dataclass(frozen=True)
class Placement:
    """Block `block` of group `group`: a pipeline stage (`on G[k] { ... }`). Only its ranks
    hold the values placed there and run the statements that compute them."""

    group: str
    block: int

    def __str__(self) -> str:
        return f"{self.group}[{self.block}]"


@dataclass(frozen=True)
class Program:
    name: str
    size_vars: tuple[str, ...]
    params: tuple[Param, ...]
    tensors: tuple[Tensor, ...]
    groups: tuple[Group, ...]
    stages: tuple[Stage, ...]
    outputs: tuple[tuple[str, str], ...]  # (name in the output files, value it holds)
    state_updates: tuple[tuple[str, str], ...]  # (state, value that becomes its next value)
    location: Location
    source: SourceFile | None = None
    # Tensors and stages written in `on G[k]` blocks; stages that schedules create are placed
    # where the values they read are (`placement`).
    placements: tuple[tuple[str, Placement], ...] = ()

    def flat_stages(self) -> tuple[SimpleStage, ...]:
        """Every simple stage in execution order, the parts of groups included."""
        flat: list[SimpleStage] = []
        for stage in self.stages:
            flat.extend(stage.parts if isinstance(stage, GROUPS) else (stage,))
        return tuple(flat)

    def stage(self, name: str) -> SimpleStage | None:
        return next((s for s in self.flat_stages() if s.name == name), None)

    def tensor(self, name: str) -> Tensor | None:
        return next((t for t in self.tensors if t.name == name), None)

    def group(self, name: str) -> Group | None:
        return next((g for g in self.groups if g.name == name), None)

    def placement(self, name: str) -> Placement | None:
        """Where a tensor or stage lives: one stage of a pipeline, or None (every rank)."""
        found = dict(self.placements).get(name)
        if found is not None:
            return found
        stage = self.stage(name)
        return None if stage is None else self.stage_placement(stage)

    def stage_placement(self, stage: Stage) -> Placement | None:
        """The block that runs a stage: its own placement, or (for a stage a schedule made)
        that of the values it reads; a send moves its operand's block by its shift."""
        if isinstance(stage, MicroBatchStage):  # one block's, or None across blocks
            places = {self.stage_placement(part) for part in stage.parts}
            return places.pop() if len(places) == 1 else None
        if isinstance(stage, GROUPS):
            return self.stage_placement(stage.parts[-1])
        found = dict(self.placements).get(stage.name)
        if found is not None:
            return found
        reads = [self.placement(node.name) for expr in stage_exprs(stage)
                 for node in walk(expr) if isinstance(node, Ref)]
        source = next((p for p in reads if p is not None), None)
        if source is not None and isinstance(stage, CollectiveStage) and stage.op == "send":
            blocks = self.group(source.group).blocks
            return Placement(source.group, (source.block + stage.shift) % blocks)
        return source

    def send_source(self, stage: CollectiveStage) -> Placement | None:
        """The block a send between stages reads from (None: a ring shift of every block)."""
        dest = self.stage_placement(stage)
        if dest is None:
            return None
        blocks = self.group(dest.group).blocks
        return Placement(dest.group, (dest.block - stage.shift) % blocks)

    def value_type(self, name: str) -> ValueType:
        """The type of a stage, tensor or param by name."""
        found = self.stage(name) or self.tensor(name)
        if found is not None:
            return found.type
        param = next(p for p in self.params if p.name == name)
        return ValueType(param.dtype, (), REPLICATED)

    def result_names(self) -> list[tuple[str, str]]:
        """(file name, value name) of everything a step returns: outputs, then updated states."""
        return list(self.outputs) + list(self.state_updates)

    def result_types(self) -> list[tuple[str, str, ValueType]]:
        """(file name, value name, type as written): updated states as they are stored."""
        return [(n, v, self.value_type(v)) for n, v in self.outputs] + \
            [(s, v, self.tensor(s).type) for s, v in self.state_updates]


def children(node: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of an expression node."""
    if isinstance(node, (Const, Ref)):
        return ()
    if isinstance(node, (Unary, Cast, Transpose, Reshape, Slice, AsSliced)):
        return (node.operand,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Func):
        return node.args
    if isinstance(node, Reduce):
        return (node.operand,)
    if isinstance(node, Dropout):
        return (node.operand, node.p)
    return (node.operand,) if node.eps is None else (node.operand, node.eps)


def walk(node: Expr):
    """Every node of an expression tree, parents first."""
    yield node
    for child in children(node):
        yield from walk(child)


def stage_exprs(stage: Stage) -> tuple[Expr, ...]:
    """The expressions a stage evaluates."""
    if isinstance(stage, MatmulStage):
        return (stage.a, stage.b)
    if isinstance(stage, CollectiveStage):
        return (stage.operand,)
    return (stage.expr,)
