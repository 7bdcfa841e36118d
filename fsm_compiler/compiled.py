"""The compiled form of one machine: what the analysis, the reference executor and
the emitters consume. Plain data, no behaviour beyond small derived views.

    next_state = transitions[state, byte_class[byte]]

After consuming byte i, every tag in `state_tags[next_state]` is reported at offset
i + 1 and every tag in `delayed_tags[next_state]` at offset i (a match that needed
to see the next byte, such as `a\\b`). When the input ends in state q, `end_reports[q]`
adds (tag, delta) reported at offset n + delta (delta 0, or -1 before a final '\\n').
Explicit machines, and pattern sets without assertions, leave both empty.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from parafuse.grammar.diagnostics import Location

from .options import MachineOptions


@dataclass(frozen=True, eq=False)
class CompiledMachine:
    name: str
    kind: str  # "explicit" or "patterns"
    state_names: tuple[str, ...]  # explicit: as written; patterns: "0", "1", ... (BFS order)
    start: int
    byte_class: np.ndarray  # (256,) uint8: byte -> class, classes numbered by smallest byte
    transitions: np.ndarray  # (states, classes) int32
    tag_names: tuple[str, ...]  # in order of first appearance in the file
    state_tags: tuple[tuple[int, ...], ...]  # per state: indices into tag_names, ascending
    options: MachineOptions
    location: Location
    delayed_tags: tuple[tuple[int, ...], ...] = ()  # per state, or () when none anywhere
    end_reports: tuple[tuple[tuple[int, int], ...], ...] = ()  # per state, or ()

    @property
    def state_count(self) -> int:
        return int(self.transitions.shape[0])

    @property
    def class_count(self) -> int:
        return int(self.transitions.shape[1])

    def byte_table(self) -> np.ndarray:
        """(states, 256) int32: the transition on every byte, without classes."""
        return self.transitions[:, self.byte_class]

    def reports(self, state: int) -> tuple[tuple[int, int], ...]:
        """(tag, delta) reported on every visit of `state` (delta 0 or -1), tags ascending."""
        delayed = self.delayed_tags[state] if self.delayed_tags else ()
        return tuple(sorted([(tag, 0) for tag in self.state_tags[state]]
                            + [(tag, -1) for tag in delayed]))

    def end_of(self, state: int) -> tuple[tuple[int, int], ...]:
        """(tag, delta) reported when the input ends in `state`."""
        return self.end_reports[state] if self.end_reports else ()

    def reporting_mask(self) -> np.ndarray:
        """(states,) bool: whether visiting each state reports anything."""
        return np.array([bool(self.reports(state)) for state in range(self.state_count)],
                        dtype=bool)

    def tag_matrix(self) -> np.ndarray:
        """(states, tags) int64: how many reports of each tag a visit of each state makes."""
        matrix = np.zeros((self.state_count, len(self.tag_names)), dtype=np.int64)
        for state in range(self.state_count):
            for tag, _ in self.reports(state):
                matrix[state, tag] += 1
        return matrix

    def final_state_label(self, state: int) -> str | int:
        """How results name a state: explicit machines by name, pattern sets by number."""
        return self.state_names[state] if self.kind == "explicit" else state

    def table_entry_bytes(self) -> int:
        """Bytes per transition-table entry: the narrowest unsigned type holding a state."""
        states = self.state_count
        return 1 if states <= 1 << 8 else 2 if states <= 1 << 16 else 4

    def table_bytes(self) -> int:
        """Size of the tables a backend stores: transitions plus the 256-entry class map."""
        return self.state_count * self.class_count * self.table_entry_bytes() + 256
