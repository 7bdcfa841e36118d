"""The tables of one machine as one binary blob, read by cpp_runtime/fsm/tables.hpp.

Generated libraries embed the blob with the assembler's `.incbin`; the test driver
loads the same bytes from a file, so both run the same C++ on the same layout.

Layout: a header of 64 little-endian u64 slots, then sections aligned to 64 bytes.
Internally the states are renumbered so that reporting states come last (a state
reports when its pre-multiplied offset is >= `report_floor << shift`), and the
fused states likewise (a fused state whose vector holds a reporting state is last).
Rows are `1 << row_shift` entries long (the class count rounded up to a power of two,
at least MIN_ROW entries, so that the runtime's dense visit counters can use a row's
offset plus a slot 0..7 as their index). Offsets are in bytes, so that the runtime's
load needs no scaled index (one cycle less per byte on the machines measured):
`shift = row_shift + log2(entry bytes)`, the entry for (state, class) is at byte
`(state << shift) + class * entry bytes` and holds the next state's offset
`next << shift`, in the narrowest unsigned type that holds every offset. The fused
table likewise, with 4-byte entries and `fused_shift = row_shift + 2`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from parafuse.fsm_compiler.analysis import fused_bound
from parafuse.fsm_compiler.compiled import CompiledMachine
from parafuse.fsm_compiler.fused import MISSING, FusedDfa, build_fused_dfa

MAGIC = int.from_bytes(b"PFSMBLB1", "little")
HEADER_SLOTS = 64
SECTION_SLOT = 32  # header slots 32.. hold (offset, length) per section
SECTIONS = ("byte_class", "table", "external", "tag_begin", "tag_list", "fused_next",
            "fused_vectors")
FUSED_BLOB_BUDGET = 16 << 20  # bytes of fused tables a generated project embeds
UNKNOWN = (1 << 64) - 1
MIN_ROW = 8  # kSlots in cpp_runtime/fsm/walk.hpp
FUSED_MISSING = 0xFFFFFFFF


@dataclass(frozen=True)
class TrainingHints:
    """What the compile-time analysis measured, for `auto` (UNKNOWN where not measured)."""

    accuracy_ppm: int = UNKNOWN  # lookback accuracy on the training sample, parts per million
    converge2_p90: int = UNKNOWN  # bytes until <= 2 paths remain at 90% of positions
    converge4_median: int = UNKNOWN  # bytes until <= 4 paths remain at half the positions


@dataclass(frozen=True)
class InternalOrder:
    """Reporting states last: `internal[s]` is the internal number of state s."""

    internal: np.ndarray
    external: np.ndarray  # external[i]: the state numbered i internally
    report_floor: int


def internal_order(machine: CompiledMachine) -> InternalOrder:
    reporting = np.array([bool(tags) for tags in machine.state_tags], dtype=bool)
    external = np.concatenate([np.flatnonzero(~reporting), np.flatnonzero(reporting)])
    internal = np.empty_like(external)
    internal[external] = np.arange(len(external))
    return InternalOrder(internal, external, int((~reporting).sum()))


def entry_layout(states: int, row_shift: int) -> tuple[np.dtype, int]:
    """The narrowest entry type holding every byte offset, and the byte shift."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        shift = row_shift + np.dtype(dtype).itemsize.bit_length() - 1
        if (states - 1) << shift <= np.iinfo(dtype).max:
            return np.dtype(dtype), shift
    raise ValueError("table offsets exceed 32 bits")


def emitted_fused_bound(machine: CompiledMachine) -> int:
    """max_fused_states, lowered by the analysis budgets and by the blob budget."""
    bound, _ = fused_bound(machine, machine.options.max_fused_states, 4)
    row_bytes = 4 * (machine.state_count + (1 << table_shift(machine.class_count)))
    return max(1, min(bound, FUSED_BLOB_BUDGET // row_bytes))


def table_shift(classes: int) -> int:
    """log2 of the row length: classes rounded up to a power of two, at least MIN_ROW."""
    return max(MIN_ROW.bit_length() - 1, (classes - 1).bit_length())


def internal_fused(machine: CompiledMachine, order: InternalOrder) -> FusedDfa:
    internal_transitions = order.internal[machine.transitions[order.external]]
    return build_fused_dfa(internal_transitions, emitted_fused_bound(machine))


def _fused_sections(fused: FusedDfa, order: InternalOrder, row_shift: int) -> tuple[dict, dict]:
    """Fused tables with reporting fused states last; (sections, header values)."""
    shift = row_shift + 2  # byte offsets of 4-byte entries
    holds_report = (fused.vectors >= order.report_floor).any(axis=1)
    by_report = np.concatenate([np.flatnonzero(~holds_report), np.flatnonzero(holds_report)])
    renumber = np.empty_like(by_report)
    renumber[by_report] = np.arange(len(by_report))
    next_table = fused.next[by_report]
    offsets = np.where(next_table == MISSING, FUSED_MISSING,
                       renumber[np.maximum(next_table, 0)].astype(np.int64) << shift)
    rows = np.full((fused.count, 1 << row_shift), FUSED_MISSING, dtype=np.uint32)
    rows[:, :next_table.shape[1]] = offsets
    sections = {"fused_next": rows.tobytes(),
                "fused_vectors": fused.vectors[by_report].astype(np.uint32).tobytes()}
    header = {9: int(renumber[0]), 10: int((~holds_report).sum()), 11: int(fused.complete),
              12: fused.bound, 8: fused.count, 18: shift}
    return sections, header


def machine_blob(machine: CompiledMachine, hints: TrainingHints) -> bytes:
    """The blob for `machine` (fused DFA explored up to the emitted bound)."""
    order = internal_order(machine)
    classes = machine.class_count
    row_shift = table_shift(classes)
    dtype, shift = entry_layout(machine.state_count, row_shift)
    table = np.zeros((machine.state_count, 1 << row_shift), dtype=dtype)
    internal_next = order.internal[machine.transitions[order.external]].astype(np.int64)
    table[:, :classes] = internal_next << shift
    tag_lists = [machine.state_tags[state] for state in order.external]
    tag_begin = np.cumsum([0] + [len(tags) for tags in tag_lists]).astype(np.uint32)
    tag_list = np.array([tag for tags in tag_lists for tag in tags], dtype=np.uint32)
    sections = {
        "byte_class": machine.byte_class.astype(np.uint8).tobytes(),
        "table": table.tobytes(),
        "external": order.external.astype(np.uint32).tobytes(),
        "tag_begin": tag_begin.tobytes(),
        "tag_list": tag_list.tobytes(),
    }
    fused_sections, header = _fused_sections(internal_fused(machine, order), order, row_shift)
    sections.update(fused_sections)
    header.update({0: MAGIC, 1: machine.state_count, 2: classes, 3: shift, 4: dtype.itemsize,
                   5: int(order.internal[machine.start]), 6: order.report_floor,
                   7: len(machine.tag_names), 13: machine.options.lookback,
                   14: hints.accuracy_ppm, 15: hints.converge2_p90, 16: hints.converge4_median,
                   17: len(tag_list)})
    return _pack(header, sections)


def _pack(header: dict[int, int], sections: dict[str, bytes]) -> bytes:
    slots = [0] * HEADER_SLOTS
    for slot, value in header.items():
        slots[slot] = value
    body = bytearray()
    position = HEADER_SLOTS * 8
    for index, name in enumerate(SECTIONS):
        padding = (-position) % 64
        body += bytes(padding)
        position += padding
        slots[SECTION_SLOT + 2 * index] = position
        slots[SECTION_SLOT + 2 * index + 1] = len(sections[name])
        body += sections[name]
        position += len(sections[name])
    return np.array(slots, dtype=np.uint64).tobytes() + bytes(body)
