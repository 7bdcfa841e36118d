"""Explicit machines (docs/fsm-language.md section 3), compiled as written.

States keep their names and their declaration order (results name them); states
unreachable from `start` are dropped with a warning. No minimisation.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from parafuse.grammar.diagnostics import CompileError, CompileWarning, Note
from parafuse.grammar.fsm_ast import ByteSet, ExplicitMachine, NameRef, StateDecl

from ..compiled import CompiledMachine
from ..options import MachineOptions
from .byte_classes import partition_by_columns

ALL_BYTES = (1 << 256) - 1


def describe_byte_ranges(mask: int) -> str:
    """`0x00..0x2f, 0x32..0xff` for the bytes in a 256-bit mask."""
    parts, byte = [], 0
    while byte < 256:
        if not (mask >> byte) & 1:
            byte += 1
            continue
        end = byte
        while end + 1 < 256 and (mask >> (end + 1)) & 1:
            end += 1
        parts.append(f"0x{byte:02x}" if end == byte else f"0x{byte:02x}..0x{end:02x}")
        byte = end + 1
    return ", ".join(parts)


def _set_mask(byte_set: ByteSet) -> int:
    mask = 0
    for byte_range in byte_set.ranges:
        mask |= ((1 << (byte_range.high + 1)) - 1) & ~((1 << byte_range.low) - 1)
    return mask


def _single(refs: tuple[NameRef, ...], what: str, machine: ExplicitMachine) -> NameRef | None:
    if len(refs) > 1:
        raise CompileError(f"machine '{machine.name.name}' gives '{what}' twice",
                           refs[1].location, notes=[Note("first given here", refs[0].location)])
    return refs[0] if refs else None


def _declared_states(machine: ExplicitMachine) -> dict[str, int]:
    index_of: dict[str, int] = {}
    for index, state in enumerate(machine.states):
        name = state.name
        if name.name in index_of:
            earlier = machine.states[index_of[name.name]].name.location
            raise CompileError(f"state '{name.name}' is declared twice", name.location,
                               notes=[Note("first declared here", earlier)])
        index_of[name.name] = index
    return index_of


def _resolver(index_of: dict[str, int]) -> Callable[[NameRef], int]:
    def resolve(ref: NameRef) -> int:
        if ref.name not in index_of:
            raise CompileError(f"state '{ref.name}' is not declared", ref.location,
                               hint=f"declare it with 'state {ref.name} {{ ... }}'")
        return index_of[ref.name]
    return resolve


def _state_row(state: StateDecl, resolve: Callable[[NameRef], int], default: int | None) -> list:
    """The 256 targets of one state, checking overlaps and coverage."""
    row: list[int | None] = [None] * 256
    owner: dict[int, ByteSet] = {}
    covered, rest = 0, None
    for transition in state.transitions:
        byte_set, target = transition.byte_set, resolve(transition.target)
        if byte_set.is_rest:
            if rest is not None:
                raise CompileError(f"state '{state.name.name}' uses '_' twice",
                                   byte_set.location, notes=[Note("first used here", rest[0])])
            rest = (byte_set.location, target)
            continue
        mask = _set_mask(byte_set)
        _check_disjoint(state, byte_set, mask & covered, owner)
        covered |= mask
        for byte in range(256):
            if (mask >> byte) & 1:
                row[byte], owner[byte] = target, byte_set
    fill = rest[1] if rest is not None else default
    if fill is None and covered != ALL_BYTES:
        raise CompileError(
            f"state '{state.name.name}' does not cover bytes "
            f"{describe_byte_ranges(ALL_BYTES & ~covered)} and the machine has no 'default'",
            state.name.location, hint="add '_ -> STATE' to the state or 'default -> STATE' "
                                      "to the machine")
    return [fill if target is None else target for target in row]


def _check_disjoint(state: StateDecl, byte_set: ByteSet, overlap: int, owner: dict) -> None:
    if overlap:
        first_byte = (overlap & -overlap).bit_length() - 1
        raise CompileError(
            f"bytes {describe_byte_ranges(overlap)} appear in two sets of state "
            f"'{state.name.name}'; the sets of one state must be disjoint",
            byte_set.location, notes=[Note("already listed here", owner[first_byte].location)])


def _tag_order(machine: ExplicitMachine) -> dict[str, int]:
    order: dict[str, int] = {}
    for state in machine.states:
        names = [tag.name for tag in state.tags]
        for tag in state.tags:
            if names.count(tag.name) > 1:
                raise CompileError(f"tag '{tag.name}' is listed twice on state "
                                   f"'{state.name.name}'", tag.location)
            order.setdefault(tag.name, len(order))
    return order


def _reachable(rows: list[list[int]], start: int) -> list[bool]:
    seen = [False] * len(rows)
    seen[start], stack = True, [start]
    while stack:
        for target in set(rows[stack.pop()]):
            if not seen[target]:
                seen[target] = True
                stack.append(target)
    return seen


def compile_explicit(
    machine: ExplicitMachine, options: MachineOptions, warnings: list[CompileWarning]
) -> CompiledMachine:
    """Check `machine` and build its table; unreachable states become warnings."""
    start_ref = _single(machine.starts, "start", machine)
    default_ref = _single(machine.defaults, "default", machine)
    resolve = _resolver(_declared_states(machine))
    if start_ref is None:
        raise CompileError(f"machine '{machine.name.name}' has no start state",
                           machine.name.location, hint="add 'start STATE' to the machine")
    start = resolve(start_ref)
    default = resolve(default_ref) if default_ref is not None else None
    rows = [_state_row(state, resolve, default) for state in machine.states]
    reachable = _reachable(rows, start)
    for state, keep in zip(machine.states, reachable):
        if not keep:
            warnings.append(CompileWarning(
                f"state '{state.name.name}' is unreachable from start state "
                f"'{start_ref.name}' and is dropped", state.name.location))
    return _build(machine, options, rows, reachable, start)


def _build(machine, options, rows, reachable, start) -> CompiledMachine:
    kept = [index for index, keep in enumerate(reachable) if keep]
    new_index = {old: new for new, old in enumerate(kept)}
    byte_table = np.array([[new_index[t] for t in rows[old]] for old in kept], dtype=np.int32)
    partition, class_table = partition_by_columns(byte_table)
    tag_order = _tag_order(machine)
    return CompiledMachine(
        name=machine.name.name,
        kind="explicit",
        state_names=tuple(machine.states[old].name.name for old in kept),
        start=new_index[start],
        byte_class=partition.byte_class,
        transitions=class_table.astype(np.int32),
        tag_names=tuple(tag_order),
        state_tags=tuple(tuple(sorted(tag_order[t.name] for t in machine.states[old].tags))
                         for old in kept),
        options=options,
        location=machine.location,
    )
