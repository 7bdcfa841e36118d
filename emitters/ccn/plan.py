"""The lowering plan: every decision the CPU and CUDA backends share, made once, as data,
before any C++ is printed.

    plan = make_plan(scheduled_program, "fused", CPU_CHUNKS)  # the backend's chunk defaults
    plan.buffers["w1"].var      -> "v_w"      (w1 is written into its state w in place)
    plan.fused["fuse1"].phases  -> chunked and whole phases of the fused group
    plan.placements             -> {"g": "rs"}: g lives in rs's node-shared segment
    plan.chunks["fuse1"]        -> ChunkPolicy(BY_SIZE, ...): how many chunks, decided once
    plan.communicators          -> world, every group, every hierarchical allreduce

The backends' stage writers read the plan and print; nothing they print is read back.
C++ names come from `emitters/names.py`: a user's name is never printed raw.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.comm_volume import hierarchical_allreduce
from parafuse.ccn_compiler.ir_edit import names_read
from parafuse.ccn_compiler.types import Layout, ValueType
from parafuse.emitters.names import cpp_name, prefixed_stem, schedule_class

from .attention import Attention, attention_fusions
from .chunk_policy import ChunkDefaults, ChunkPolicy, ChunkVariant, chunk_policies
from .epilogues import Epilogue, EpilogueKind, gemm_epilogues
from .in_place import in_place_values
from .param_outputs import with_param_outputs_copied


@dataclass(frozen=True)
class Buffer:
    """A value as the generated code holds it."""

    var: str  # the buffer (scalars hold one element)
    type: ValueType
    local: str  # the block shape of this rank
    is_param: bool = False


class CommKind(Enum):
    WORLD = "world"
    GROUP = "group"  # a group's ranks
    CROSS = "cross"  # across the groups, of a hierarchical allreduce


@dataclass(frozen=True)
class Communicator:
    """A communicator of the schedule class: the world, a group's, or the cross-group one
    of a hierarchical allreduce (`stage`: that allreduce)."""

    kind: CommKind
    group: str | None = None  # the group (GROUP); the inner group (CROSS)
    stage: str | None = None  # the allreduce (CROSS)
    outer: str | None = None  # the group the allreduce runs in (CROSS), if any


class Move(Enum):
    """How a state takes its next value at the end of a step."""

    IN_PLACE = "in_place"  # written there
    SWAP = "swap"  # the buffers trade places
    COPY = "copy"  # the value is also an output, so it stays
    KEEP_BLOCK = "keep_block"  # a replicated value stored sliced: this rank keeps its block


@dataclass(frozen=True)
class StateMove:
    state: str
    value: str
    how: Move


class PhaseKind(Enum):
    CHUNKED = "chunked"  # chunk by chunk
    WHOLE = "whole"  # a scalar member, or a gather that reads nothing computed before it


@dataclass(frozen=True)
class Phase:
    """Members of a fused group that run together."""

    kind: PhaseKind
    stages: tuple[ir.SimpleStage, ...]


@dataclass(frozen=True)
class FusedGroup:
    stage: ir.FusedStage
    chunkable: bool  # members hold the same block, so their chunks line up
    phases: tuple[Phase, ...]


@dataclass(frozen=True)
class LoweringPlan:
    program: ir.Program
    schedule: str
    class_name: str
    buffers: dict[str, Buffer]
    in_place: dict[str, str]  # next value -> the state whose buffer it is written into
    pinned: frozenset[str]  # states and their next values: swapped, so never placed
    hierarchical: frozenset[str]  # allreduces of a grouped replicated value
    communicators: tuple[Communicator, ...]
    fused: dict[str, FusedGroup] = field(default_factory=dict)
    overlap_reasons: dict[str, str | None] = field(default_factory=dict)  # None: pipelined
    placements: dict[str, str] = field(default_factory=dict)  # value -> fused collective
    state_moves: tuple[StateMove, ...] = ()
    param_copies: dict[str, str] = field(default_factory=dict)  # output copy -> its param
    chunks: dict[str, ChunkPolicy] = field(default_factory=dict)  # fused or overlapped stage
    epilogues: dict[str, Epilogue] = field(default_factory=dict)  # matmul -> its GEMM's
    attentions: dict[str, Attention] = field(default_factory=dict)  # output matmul -> fused

    def value_shown(self, value: str) -> str:
        """The name of `value` in the manifest: a param's, for the copy that outputs it."""
        return self.param_copies.get(value, value)

    def epilogue_producer(self, value: str) -> str | None:
        """The matmul whose GEMM computes `value` in its epilogue, if one does."""
        return next((m for m, e in self.epilogues.items() if e.consumer == value), None)

    def attention_absorbing(self, value: str) -> str | None:
        """The matmul whose fused attention computes `value` without storing it, if one does."""
        return next((o for o, a in self.attentions.items() if value in a.absorbed), None)

    def collective_comm(self, stage: ir.CollectiveStage) -> Communicator:
        """The communicator `stage` runs on."""
        if stage.name in self.hierarchical:
            return next(c for c in self.communicators if c.stage == stage.name)
        return Communicator(CommKind.GROUP, stage.group) if stage.group \
            else Communicator(CommKind.WORLD)


def group_id(group: str | None) -> str:
    """The C++ stem of a group's members (`parts_ID_`); "world" for all ranks."""
    return cpp_name(group) if group else "world"


def stage_id(stage: ir.Stage) -> str:
    """The C++ stem of a stage's own names (`x_ID_`, `r_ID`, `req_ID`, `cross_ID_`)."""
    return prefixed_stem(stage.name)


def size_member(size: str) -> str:
    return cpp_name(size)


def sizes_expressions(program: ir.Program) -> dict[str, str]:
    """Each size variable as the schedule class reads it."""
    return {name: f"sizes_.{size_member(name)}" for name in program.size_vars}


def _buffers(program: ir.Program, in_place: dict[str, str]) -> dict[str, Buffer]:
    """Every value's buffer; a value written in place is its state's buffer."""
    replicated = Layout("replicated")
    buffers = {p.name: Buffer(f"p_{prefixed_stem(p.name)}", ValueType(p.dtype, (), replicated), "",
                              is_param=True) for p in program.params}
    for tensor in program.tensors:
        stem = prefixed_stem(tensor.name)
        buffers[tensor.name] = Buffer(f"v_{stem}", tensor.type, f"L_{stem}")
    for stage in program.flat_stages():
        state = in_place.get(stage.name)
        stem = prefixed_stem(stage.name)
        buffers[stage.name] = buffers[state] if state else \
            Buffer(f"v_{stem}", stage.type, f"L_{stem}")
    return buffers


def _communicators(program: ir.Program) -> tuple[Communicator, ...]:
    found = [Communicator(CommKind.WORLD)] + [Communicator(CommKind.GROUP, g.name)
                                             for g in program.groups]
    for stage in program.flat_stages():
        if hierarchical_allreduce(stage):
            found.append(Communicator(CommKind.CROSS, stage.operand.type.layout.group, stage.name,
                                      stage.group))
    return tuple(found)


def _precomputes_read(stage: ir.SimpleStage, names: set[str]) -> bool:
    """Does a reduction or row norm of `stage` read one of `names`?"""
    for expr in ir.stage_exprs(stage):
        for node in ir.walk(expr):
            if isinstance(node, ir.PRECOMPUTED):
                if any(isinstance(n, ir.Ref) and n.name in names for n in ir.walk(node)):
                    return True
    return False


def fused_phases(parts: tuple[ir.SimpleStage, ...]) -> tuple[Phase, ...]:
    """A member that needs a scalar reduction of earlier members starts a new phase: the
    work before the reduction chunk by chunk, the cross-rank reduction, then the rest."""
    phases: list[Phase] = []
    current: list[ir.SimpleStage] = []
    for part in parts:
        scalar = not part.type.shape
        gather = isinstance(part, ir.CollectiveStage) and part.op == "allgather"
        names = {p.name for p in current}
        if scalar or (gather and not (names_read(part) & names)):
            if current:
                phases.append(Phase(PhaseKind.CHUNKED, tuple(current)))
                current = []
            phases.append(Phase(PhaseKind.WHOLE, (part,)))
        elif current and _precomputes_read(part, names):
            phases.append(Phase(PhaseKind.CHUNKED, tuple(current)))
            current = [part]
        else:
            current.append(part)
    if current:
        phases.append(Phase(PhaseKind.CHUNKED, tuple(current)))
    return tuple(phases)


def chunkable(group: ir.FusedStage) -> bool:
    """Members hold the same block (sliced along dim 0, or whole): chunks line up."""
    layouts = {p.type.layout for p in group.parts if p.type.shape and not (
        isinstance(p, ir.CollectiveStage) and p.op == "allgather")}
    if len(layouts) != 1:
        return False
    lay = layouts.pop()
    return lay.kind != "sliced" or lay.dim == 0


def overlap_reason(stage: ir.OverlapStage) -> str | None:
    """Why `overlap(P, C)` cannot be chunked, or None."""
    p, c = stage.parts
    if isinstance(p, ir.MatmulStage) and len(p.a.type.shape) < 2:
        return "a matmul with a 1-dim left operand has no rows to chunk"
    if isinstance(c, ir.CollectiveStage) and not (isinstance(c.operand, ir.Ref)
                                                  and c.operand.name == p.name):
        return "the collective reads an expression of the producer, not the producer itself"
    if isinstance(p, ir.CollectiveStage) and not isinstance(p.operand, ir.Ref):
        return "the producer collective reads an expression"
    return None


def chunk_collectives(stages: tuple[ir.SimpleStage, ...]
                      ) -> tuple[ir.CollectiveStage | None, list[ir.CollectiveStage]]:
    """The reduce-scatter (the first one) and the gathers of a chunked phase."""
    scatter = next((s for s in stages if isinstance(s, ir.CollectiveStage)
                    and s.op == "reducescatter"), None)
    gathers = [s for s in stages if isinstance(s, ir.CollectiveStage) and s.op == "allgather"]
    return scatter, gathers


def _placements(fused: dict[str, FusedGroup], buffers: dict[str, Buffer],
                pinned: frozenset[str]) -> dict[str, str]:
    """The values that live in a fused collective's node-shared segment (CPU): the input of
    each chunked reduce-scatter and the operand of each chunked gather, when it is a value
    of its own that no state swap moves, in the order the groups set them up."""
    placed: dict[str, str] = {}
    for group in fused.values():
        phases = group.phases if group.chunkable else ()
        for phase in (p for p in phases if p.kind is PhaseKind.CHUNKED):
            scatter, gathers = chunk_collectives(phase.stages)
            for stage in ([scatter] if scatter else []) + gathers:
                operand = stage.operand
                if isinstance(operand, ir.Ref) and operand.name not in pinned and \
                        operand.name not in placed and not buffers[operand.name].is_param:
                    placed[operand.name] = stage.name
    return placed


def _state_moves(program: ir.Program, buffers: dict[str, Buffer]) -> tuple[StateMove, ...]:
    outputs = {value for _, value in program.outputs}
    moves = []
    for state, value in program.state_updates:
        target, source = buffers[state], buffers[value]
        if source.var == target.var:
            how = Move.IN_PLACE
        elif source.type.layout != target.type.layout:
            how = Move.KEEP_BLOCK
        else:
            how = Move.COPY if value in outputs else Move.SWAP
        moves.append(StateMove(state, value, how))
    return tuple(moves)


def make_plan(program: ir.Program, schedule: str, chunks: ChunkDefaults,
              variant: ChunkVariant | None = None,
              epilogues: frozenset[EpilogueKind] = frozenset(),
              attention: bool = False) -> LoweringPlan:
    """The plan of one scheduled program; `chunks`: the backend's chunk policies; a
    `variant` of the schedule fixes the counts `tune` left open, under its own names;
    `epilogues`: the kinds the backend's GEMM applies; `attention`: whether the backend
    fuses attention into one kernel (emitters/ccn/attention.py)."""
    program, param_copies = with_param_outputs_copied(program)
    in_place = in_place_values(program)
    buffers = _buffers(program, in_place)
    pinned = frozenset({t.name for t in program.tensors if t.role == "state"} |
                       {value for _, value in program.state_updates})
    fused = {s.name: FusedGroup(s, chunkable(s), fused_phases(s.parts))
             for s in program.stages if isinstance(s, ir.FusedStage)}
    overlaps = {s.name: overlap_reason(s) for s in program.stages
                if isinstance(s, ir.OverlapStage)}
    return LoweringPlan(
        program=program, schedule=variant.name if variant else schedule,
        class_name=variant.class_name if variant else schedule_class(schedule),
        buffers=buffers, in_place=in_place, pinned=pinned,
        hierarchical=frozenset(s.name for s in program.flat_stages() if hierarchical_allreduce(s)),
        communicators=_communicators(program), fused=fused, overlap_reasons=overlaps,
        placements=_placements(fused, buffers, pinned),
        state_moves=_state_moves(program, buffers), param_copies=param_copies,
        chunks=chunk_policies(program, chunks, variant.chunks if variant else None),
        epilogues=gemm_epilogues(program, epilogues, in_place),
        attentions=attention_fusions(program, in_place) if attention else {})
