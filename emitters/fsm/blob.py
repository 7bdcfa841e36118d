"""The tables of one machine as one binary blob, read by cpp_runtime/fsm/core/tables.hpp.

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

Reports: `tag_list` holds each reporting state's (tag, delta) as `tag | DELAYED_BIT`
for delta -1; `end_list` likewise the reports when the input ends in a state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from parafuse.emitters.fsm.blob_slots import HEADER_SLOTS, BlobSection, BlobSlot, section_slots
from parafuse.fsm_compiler.analysis.fused import MISSING, FusedDfa, build_fused_dfa
from parafuse.fsm_compiler.analysis.project_analysis import ProjectAnalysis, table_shift
from parafuse.fsm_compiler.compiled import CompiledMachine

MAGIC = int.from_bytes(b"PFSMBLB1", "little")
FUSED_MISSING = 0xFFFFFFFF
DELAYED_BIT = 1 << 31  # a tag entry reported at offset - 1 (see fsm_compiler/compiled.py)


@dataclass(frozen=True)
class InternalOrder:
    """Reporting states last: `internal[s]` is the internal number of state s."""

    internal: np.ndarray
    external: np.ndarray  # external[i]: the state numbered i internally
    report_floor: int


def internal_order(machine: CompiledMachine) -> InternalOrder:
    reporting = machine.reporting_mask()
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


def entry_bytes(machine: CompiledMachine) -> int:
    """Bytes per entry of the machine's transition table in its blob (Tables::entry_bytes)."""
    return entry_layout(machine.state_count, table_shift(machine.class_count))[0].itemsize


def internal_fused(machine: CompiledMachine, order: InternalOrder, bound: int) -> FusedDfa:
    """The fused DFA over internal state numbers, explored up to `bound` fused states."""
    internal_transitions = order.internal[machine.transitions[order.external]]
    return build_fused_dfa(internal_transitions, bound)


Sections = dict[BlobSection, bytes]
Header = dict[BlobSlot, int]


def _fused_sections(fused: FusedDfa, order: InternalOrder, row_shift: int
                    ) -> tuple[Sections, Header]:
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
    sections = {BlobSection.FUSED_NEXT: rows.tobytes(),
                BlobSection.FUSED_VECTORS: fused.vectors[by_report].astype(np.uint32).tobytes()}
    header = {BlobSlot.FUSED_START: int(renumber[0]),
              BlobSlot.FUSED_FLOOR: int((~holds_report).sum()),
              BlobSlot.FUSED_COMPLETE: int(fused.complete), BlobSlot.FUSED_BOUND: fused.bound,
              BlobSlot.FUSED_COUNT: fused.count, BlobSlot.FUSED_SHIFT: shift}
    return sections, header


def machine_blob(machine: CompiledMachine, analysis: ProjectAnalysis) -> bytes:
    """The blob for `machine` (fused DFA explored up to the analysis's fused bound)."""
    order = internal_order(machine)
    classes = machine.class_count
    row_shift = table_shift(classes)
    dtype, shift = entry_layout(machine.state_count, row_shift)
    table = np.zeros((machine.state_count, 1 << row_shift), dtype=dtype)
    internal_next = order.internal[machine.transitions[order.external]].astype(np.int64)
    table[:, :classes] = internal_next << shift
    tag_begin, tag_list = _report_lists([machine.reports(s) for s in order.external])
    end_begin, end_list = _report_lists([machine.end_of(s) for s in order.external])
    sections = {
        BlobSection.BYTE_CLASS: machine.byte_class.astype(np.uint8).tobytes(),
        BlobSection.TABLE: table.tobytes(),
        BlobSection.EXTERNAL: order.external.astype(np.uint32).tobytes(),
        BlobSection.TAG_BEGIN: tag_begin.tobytes(),
        BlobSection.TAG_LIST: tag_list.tobytes(),
        BlobSection.END_BEGIN: end_begin.tobytes(),
        BlobSection.END_LIST: end_list.tobytes(),
    }
    fused = internal_fused(machine, order, analysis.fused_bound)
    fused_sections, header = _fused_sections(fused, order, row_shift)
    sections.update(fused_sections)
    hints = analysis.hints
    header.update({
        BlobSlot.MAGIC: MAGIC, BlobSlot.STATES: machine.state_count, BlobSlot.CLASSES: classes,
        BlobSlot.SHIFT: shift, BlobSlot.ENTRY_BYTES: dtype.itemsize,
        BlobSlot.START: int(order.internal[machine.start]),
        BlobSlot.REPORT_FLOOR: order.report_floor, BlobSlot.TAG_COUNT: len(machine.tag_names),
        BlobSlot.LOOKBACK: machine.options.lookback,
        BlobSlot.TRAIN_ACCURACY_PPM: hints.accuracy_ppm,
        BlobSlot.CONVERGE2_P90: hints.converge2_p90,
        BlobSlot.CONVERGE4_MEDIAN: hints.converge4_median, BlobSlot.TAG_ENTRIES: len(tag_list),
        BlobSlot.END_ENTRIES: len(end_list)})
    return _pack(header, sections)


def _report_lists(per_state: list[tuple[tuple[int, int], ...]]) -> tuple[np.ndarray, np.ndarray]:
    """(begin, entries) of per-state (tag, delta) lists; delta -1 sets DELAYED_BIT."""
    begin = np.cumsum([0] + [len(reports) for reports in per_state]).astype(np.uint32)
    entries = np.array([tag | (DELAYED_BIT if delta else 0)
                        for reports in per_state for tag, delta in reports], dtype=np.uint32)
    return begin, entries


def _pack(header: Header, sections: Sections) -> bytes:
    """Header slots, then each section 64-byte aligned, in BlobSection order."""
    slots = [0] * HEADER_SLOTS
    for slot, value in header.items():
        slots[slot] = value
    body = bytearray()
    position = HEADER_SLOTS * 8
    for section in BlobSection:
        padding = (-position) % 64
        body += bytes(padding)
        position += padding
        offset_slot, length_slot = section_slots(section)
        slots[offset_slot] = position
        slots[length_slot] = len(sections[section])
        body += sections[section]
        position += len(sections[section])
    return np.array(slots, dtype=np.uint64).tobytes() + bytes(body)
