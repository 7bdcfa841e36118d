"""NFA -> DFA: subset construction over byte classes, with the `max_states` limit.

A DFA state is the set of positions that matched the last byte. Byte classes are
computed from the positions' byte sets first, so each DFA state has one transition
per class instead of 256.

With assertions (fsm_compiler/automata/assertions.py) a state also records the category of
the last byte (START in the start state), so conditions on the byte before a
boundary are decided when the state is built, and conditions on the byte after it
at the transition that consumes that byte (classes never mix categories). What a
state reports (`StateReports`):

- `now`: tags that match at the boundary the state is reached at, whatever comes next;
- `delayed`: tags that matched at the boundary *before* the last byte, now that the
  byte allowed it (reported at offset - 1);
- `at_end`: tags that match here if the input ends here (end-of-data, offset n);
- `at_end_delayed`: tags that matched before a final '\\n' (`$`, `\\Z`): reported at
  n - 1 when the input ends right after that '\\n'.

Each (offset, tag) is reported once: a tag already reported at a boundary is left
out of the later ways of reporting the same boundary. The start state reports nothing
`now` (it is never reported before the first byte): its matches at offset 0 are
`delayed` in the next state or `at_end` for an empty input.

A set without assertions reports every tag `now`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from parafuse.grammar.regex_escapes import WORD

from .assertions import END, FINAL_NEWLINE, NEWLINE, OTHER, ROW, START, next_row
from .assertions import WORD as WORD_CATEGORY
from .byte_classes import BytePartition, partition_by_masks
from .nfa import PositionAutomaton
from .subset_vectorised import HashCollision, VectorisedSubsets

_NEWLINE_MASK = 1 << 0x0A
_NONE: frozenset[int] = frozenset()


class StateLimitExceeded(Exception):
    """Subset construction met more than `limit` states (the caller names the patterns)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit} DFA states")
        self.limit = limit


@dataclass(frozen=True)
class StateReports:
    """What one DFA state reports (see the module docstring); tags are indices."""

    now: frozenset[int] = _NONE
    delayed: frozenset[int] = _NONE
    at_end: frozenset[int] = _NONE
    at_end_delayed: frozenset[int] = _NONE


REPORT_KINDS = 4  # StateReports' fields, in order


def report_mask(reports: StateReports) -> int:
    """The reports as one integer, bit `REPORT_KINDS * tag + kind`: the reports of a
    product of DFAs for distinct tags are the OR of their masks."""
    mask = 0
    for kind, tags in enumerate((reports.now, reports.delayed, reports.at_end,
                                 reports.at_end_delayed)):
        for tag in tags:
            mask |= 1 << (REPORT_KINDS * tag + kind)
    return mask


def reports_of_mask(mask: int) -> StateReports:
    """The inverse of `report_mask`."""
    kinds: list[set[int]] = [set() for _ in range(REPORT_KINDS)]
    bit_index = 0
    while mask:
        if mask & 1:
            kinds[bit_index % REPORT_KINDS].add(bit_index // REPORT_KINDS)
        mask >>= 1
        bit_index += 1
    return StateReports(*(frozenset(tags) for tags in kinds))


@dataclass(frozen=True)
class SubsetDfa:
    """A DFA straight from subset construction (not minimised); state 0 is the start."""

    partition: BytePartition
    transitions: np.ndarray  # (states, classes) int32
    state_reports: tuple[StateReports, ...]

    @property
    def state_count(self) -> int:
        return int(self.transitions.shape[0])


def _category(byte: int) -> int:
    if byte == 0x0A:
        return NEWLINE
    return WORD_CATEGORY if (WORD >> byte) & 1 else OTHER


def _classes(automaton: PositionAutomaton) -> tuple[BytePartition, list[int]]:
    """The byte classes of `automaton` and the category of each (OTHER without assertions)."""
    assertions = automaton.has_assertions
    extra = [WORD, _NEWLINE_MASK] if assertions else []
    partition = partition_by_masks([*automaton.byte_masks, *extra, (1 << 256) - 1])
    class_category = [_category(partition.representatives[c]) if assertions else OTHER
                      for c in range(partition.class_count)]
    return partition, class_category


NARROW_PROBE = 64  # states the construction state by state takes before judging the width
NARROW_WIDTH = 4  # states per breadth-first level past which numpy's rounds pay off


def subset_construction(automaton: PositionAutomaton, max_states: int) -> SubsetDfa:
    """Determinise `automaton`; raise StateLimitExceeded past `max_states` states.
    Numpy over position bitsets (fsm_compiler/automata/subset_vectorised.py), with the same states,
    numbers and reports as `subset_construction_by_state`, its fallback. A DFA whose
    breadth-first levels stay narrow (a long literal: one state a level) is built state by
    state: numpy expands one level a round, at ~100 us a round, where a state by itself
    takes ~16 us (a 5,000-byte literal: 0.53 s against 0.08 s)."""
    narrow = subset_construction_by_state(automaton, max_states, narrow_only=True)
    return narrow if narrow is not None else subset_construction_vectorised(automaton, max_states)


def subset_construction_vectorised(automaton: PositionAutomaton, max_states: int) -> SubsetDfa:
    """`subset_construction` by numpy's rounds alone (a hash collision under every seed
    falls back to the definition)."""
    partition, class_category = _classes(automaton)
    try:
        built = VectorisedSubsets(automaton, partition, class_category, max_states).run()
    except HashCollision:  # distinct keys hashed alike under every seed: never seen
        return subset_construction_by_state(automaton, max_states)
    if built is None:
        raise StateLimitExceeded(max_states)
    transitions, bits = built
    tags = _tags_of(automaton)
    decoded: dict[bytes, StateReports] = {}
    reports = []
    for state_bits in np.packbits(bits, axis=2, bitorder="little").reshape(len(bits), -1):
        key = state_bits.tobytes()
        found = decoded.get(key)
        if found is None:
            rows = np.unpackbits(state_bits.reshape(4, -1), axis=1, bitorder="little")
            found = decoded[key] = StateReports(*(
                frozenset(tags[t] for t in np.nonzero(row[:len(tags)])[0].tolist())
                for row in rows))
        reports.append(found)
    return SubsetDfa(partition, transitions, tuple(reports))


def _tags_of(automaton: PositionAutomaton) -> list[int]:
    return sorted({t for edges in automaton.accepting.values() for t in edges}
                  | set(automaton.empty_accepts))


def subset_construction_by_state(automaton: PositionAutomaton, max_states: int,
                                 narrow_only: bool = False) -> SubsetDfa | None:
    """The definition, one state and one class at a time (the tests' oracle for
    `subset_construction`); raise StateLimitExceeded past `max_states` states. With
    `narrow_only`, None once the breadth-first levels hold more than NARROW_WIDTH states
    on average (judged every NARROW_PROBE states)."""
    assertions = automaton.has_assertions
    partition, class_category = _classes(automaton)
    classes_of = [[[] for _ in range(5)] for _ in automaton.byte_masks]
    for position, mask in enumerate(automaton.byte_masks):
        for byte_class in partition.classes_in(mask):
            classes_of[position][class_category[byte_class]].append(byte_class)
    start_key = (START if assertions else OTHER, _NONE, _NONE, _NONE)
    index_of = {start_key: 0}
    keys = [start_key]
    rows: list[list[int]] = []
    reports: list[StateReports] = []
    class_count = partition.class_count
    plain = None if assertions else _PlainSets(automaton)
    level = [0]  # breadth-first level of each state
    for walked, key in enumerate(keys):  # `keys` grows while we walk it: breadth-first
        if narrow_only and walked and walked % NARROW_PROBE == 0 and \
                len(keys) > NARROW_WIDTH * (level[-1] + 1):
            return None
        prev, positions, delayed, pending = key
        buckets: list[list[int]] = [[] for _ in range(class_count)]
        if plain is not None:  # no assertions: every report is `now`, no conditions
            reports.append(StateReports(plain.tags(positions)))
            for position in plain.candidates(positions):
                for byte_class in classes_of[position][OTHER]:
                    buckets[byte_class].append(position)
            following = _NO_FOLLOWING
        else:
            tag_rows = _tag_rows(automaton, prev, positions)
            now = frozenset(tag for tag, row in tag_rows.items() if row == ROW and prev != START)
            at_end = frozenset(tag for tag, row in tag_rows.items()
                               if row >> END & 1 and tag not in now)
            reports.append(StateReports(now, delayed, at_end, pending))
            for position, condition in _candidates(automaton, positions).items():
                row = next_row(condition, prev)
                for category in (WORD_CATEGORY, NEWLINE, OTHER):
                    if row >> category & 1:
                        for byte_class in classes_of[position][category]:
                            buckets[byte_class].append(position)
            following = _following_reports(tag_rows, now)
        row_out = []
        emptied: dict[int, int] = {}  # category -> the state its classes without positions go to
        for byte_class, bucket in enumerate(buckets):
            category = class_category[byte_class]
            if not bucket and category in emptied:  # most classes of a literal's states
                row_out.append(emptied[category])
                continue
            target_key = (category, frozenset(bucket), *following[category])
            state = index_of.get(target_key)
            if state is None:
                if len(keys) >= max_states:
                    raise StateLimitExceeded(max_states)
                state = index_of[target_key] = len(keys)
                keys.append(target_key)
                level.append(level[walked] + 1)
            if not bucket:
                emptied[category] = state
            row_out.append(state)
        rows.append(row_out)
    transitions = np.array(rows, dtype=np.int32).reshape(len(keys), class_count)
    return SubsetDfa(partition, transitions, tuple(reports))


_NO_FOLLOWING = {OTHER: (_NONE, _NONE)}


class _PlainSets:
    """Follow and tag sets of an automaton without assertions (every condition ALWAYS)."""

    def __init__(self, automaton: PositionAutomaton) -> None:
        self.first = set(automaton.first)
        self.follow = [set(targets) for targets in automaton.follow]
        self.accepting = {position: set(tags) for position, tags in automaton.accepting.items()}

    def candidates(self, positions: frozenset[int]) -> set[int]:
        candidates = set(self.first)
        for position in positions:
            candidates |= self.follow[position]
        return candidates

    def tags(self, positions: frozenset[int]) -> frozenset[int]:
        tags: set[int] = set()
        for position in positions:
            tags |= self.accepting.get(position, _NONE)
        return frozenset(tags)


def _tag_rows(automaton: PositionAutomaton, prev: int, positions: frozenset[int]
              ) -> dict[int, int]:
    """Per tag that may match at this boundary: the next categories where it does."""
    conditions = dict(automaton.empty_accepts)
    accepting = automaton.accepting
    for position in positions:
        for tag, condition in accepting.get(position, {}).items():
            conditions[tag] = conditions.get(tag, 0) | condition
    tag_rows = {}
    for tag, condition in conditions.items():
        row = next_row(condition, prev)
        if row:
            tag_rows[tag] = row
    return tag_rows


def _following_reports(tag_rows: dict[int, int], now: frozenset[int]
                       ) -> dict[int, tuple[frozenset[int], frozenset[int]]]:
    """Per category of the next byte: the (delayed, at_end_delayed) of the next state."""
    result = {}
    for category in (WORD_CATEGORY, NEWLINE, OTHER):
        delayed = frozenset(tag for tag, row in tag_rows.items()
                            if row >> category & 1 and tag not in now)
        pending = _NONE
        if category == NEWLINE:
            pending = frozenset(tag for tag, row in tag_rows.items()
                                if row >> FINAL_NEWLINE & 1 and not row >> NEWLINE & 1
                                and tag not in now)
        result[category] = (delayed, pending)
    return result


def _candidates(automaton: PositionAutomaton, positions: frozenset[int]) -> dict[int, int]:
    """Positions that may match the next byte, with the condition at this boundary."""
    candidates = dict(automaton.first)
    follow = automaton.follow
    for position in positions:
        for target, condition in follow[position].items():
            candidates[target] = candidates.get(target, 0) | condition
    return candidates
