"""The bit-parallel NFA engine: patterns too big for a DFA run on their position automaton.

The state is the set of positions that matched the last byte, a bit vector of
`positions` bits. One step on byte b:

    candidates = floating_first | follow(state)       (| anchored_first at offset 0)
    state      = candidates & byte_positions[b]

and every tag whose accepting positions meet `state` is reported. `follow(state)`
is the union of the follow sets of the state's bits, computed eight bits at a time
from tables of 256 precomputed unions (the C++ runtime does the same with 64-bit
words, cpp_runtime/fsm/nfa_engine.hpp).

`max_length` is the longest match any of the engine's patterns can have (None when
unbounded): a run that starts `max_length` bytes before a chunk with an empty state
reports exactly the chunk's matches, so every chunk of a bounded engine starts
exactly, under every scheme and thread count.
"""

from __future__ import annotations

from dataclasses import dataclass

from .nfa import PositionAutomaton


@dataclass(frozen=True)
class NfaEngine:
    patterns: tuple[int, ...]  # tag indices of the patterns it runs
    byte_masks: tuple[int, ...]  # per position: 256-bit byte set
    follow: tuple[int, ...]  # per position: bit mask of the positions that may follow
    anchored_first: int  # bit mask: candidates at offset 0 only
    floating_first: int  # bit mask: candidates after every byte
    accepting: tuple[tuple[int, int], ...]  # (tag index, bit mask of its accepting positions)
    max_length: int | None

    @property
    def position_count(self) -> int:
        return len(self.byte_masks)

    def table_bytes(self) -> int:
        """Bytes of the C++ tables: byte masks and follow tables in 64-bit words."""
        words = (self.position_count + 63) // 64
        blocks = (self.position_count + 7) // 8
        return 8 * words * (256 + 256 * blocks + 2 + len(self.accepting))


def _mask(positions) -> int:
    mask = 0
    for position in positions:
        mask |= 1 << position
    return mask


def longest_match(automaton: PositionAutomaton) -> int | None:
    """Bytes in the longest match (None when a cycle makes matches unbounded)."""
    starts = automaton.anchored_first | automaton.floating_first
    depth: dict[int, int] = {}  # longest path from a first position, in positions
    visiting: set[int] = set()

    def longest_from(position: int) -> int | None:  # longest path ending at an accepting one
        if position in depth:
            return depth[position]
        if position in visiting:
            return None
        visiting.add(position)
        best = 1 if position in automaton.accepting else 0
        for following in automaton.follow[position]:
            tail = longest_from(following)
            if tail is None:
                return None
            if tail:
                best = max(best, 1 + tail)
        visiting.discard(position)
        depth[position] = best
        return best

    longest = 0
    for position in sorted(starts):
        length = longest_from(position)
        if length is None:
            return None
        longest = max(longest, length)
    return longest


def nfa_engine(automaton: PositionAutomaton, patterns: tuple[int, ...]) -> NfaEngine:
    """The engine of `automaton`, which holds the patterns `patterns` (tag indices)."""
    accepting: dict[int, int] = {}
    for position, tags in automaton.accepting.items():
        for tag in tags:
            accepting[tag] = accepting.get(tag, 0) | 1 << position
    return NfaEngine(patterns, tuple(automaton.byte_masks),
                     tuple(_mask(follow) for follow in automaton.follow),
                     _mask(automaton.anchored_first), _mask(automaton.floating_first),
                     tuple(sorted(accepting.items())), longest_match(automaton))


def byte_positions(engine: NfaEngine) -> list[int]:
    """Per byte value: the bit mask of the positions whose byte set holds it."""
    result = [0] * 256
    for position, mask in enumerate(engine.byte_masks):
        for byte in range(256):
            if mask >> byte & 1:
                result[byte] |= 1 << position
    return result


def follow_blocks(engine: NfaEngine) -> list[list[int]]:
    """Per 8-position block b, per byte value v: the union of the follow sets of the
    positions 8b + i for the bits i set in v."""
    blocks = []
    for block in range(0, engine.position_count, 8):
        table = [0] * 256
        for value in range(1, 256):
            low = value & -value
            position = block + low.bit_length() - 1
            extra = engine.follow[position] if position < engine.position_count else 0
            table[value] = table[value ^ low] | extra
        blocks.append(table)
    return blocks


class NfaRunner:
    """Runs an NfaEngine in Python (the reference executor's oracle for it)."""

    def __init__(self, engine: NfaEngine) -> None:
        self.engine = engine
        self.byte_positions = byte_positions(engine)
        self.follow_blocks = follow_blocks(engine)

    def follow(self, state: int) -> int:
        result, block = 0, 0
        while state:
            result |= self.follow_blocks[block][state & 0xFF]
            state >>= 8
            block += 1
        return result

    def matches(self, data: bytes, begin: int = 0, end: int | None = None
                ) -> list[tuple[int, int]]:
        """(end offset, tag) of every match ending in (begin, end], by offset then tag."""
        end = len(data) if end is None else end
        engine = self.engine
        scan_from = 0 if engine.max_length is None else max(0, begin - engine.max_length)
        state, found = 0, []
        for offset in range(scan_from, end):
            candidates = engine.floating_first | self.follow(state)
            if offset == 0:
                candidates |= engine.anchored_first
            state = candidates & self.byte_positions[data[offset]]
            if state and offset >= begin:
                found.extend((offset + 1, tag) for tag, mask in engine.accepting
                             if state & mask)
        return found
