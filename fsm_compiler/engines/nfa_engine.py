"""The bit-parallel NFA engine: patterns too big for a DFA run on their position automaton.

The state is the set of positions that matched the last byte, a bit vector. At each
boundary j (before byte j; j = n is the end) with categories (prev, next) of the
bytes around it (fsm_compiler/automata/assertions.py; the last byte, if '\\n', is
FINAL_NEWLINE), the engine

1. reports at offset j every tag with an accepting position in the state whose
   condition holds at (prev, next), and every tag that matches the empty string there;
2. steps on byte j: candidates = first | follow(state), each edge kept where its
   condition holds at (prev, next); state = candidates & byte_positions[byte j].

Edges without an assertion (ALWAYS) go through bit-parallel tables: follow(state) ORs
one precomputed union per non-zero block of the state (8 positions; 4 or 2 where a
table of 256 unions per 8 positions would pass FOLLOW_TABLE_BUDGET: such tables grow
with the square of the positions, and a few large patterns would otherwise take most of
a set's memory). The few conditional edges are listed and checked one by one. An engine
whose patterns all start at offset 0 (`starts_at_zero_only`) stops once no thread lives.
The C++ runtime does the same (cpp_runtime/fsm/sets/nfa_engine.hpp).

`max_length` is the longest match of the engine's patterns (None when unbounded): a
run that starts `max_length` bytes before a chunk with an empty state reports exactly
the chunk's matches, so every chunk of a bounded engine starts exactly, under every
scheme and thread count; an unbounded engine runs in one pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from parafuse.grammar.diagnostics import CompileError
from parafuse.grammar.fsm_ast import PatternDecl
from parafuse.grammar.regex_escapes import WORD

from ..automata.assertions import (
    ALWAYS,
    END,
    FINAL_NEWLINE,
    NEWLINE,
    OTHER,
    START,
    bit,
    only_at_start,
)
from ..automata.assertions import WORD as WORD_CATEGORY
from ..automata.nfa import PositionAutomaton

MAX_POSITIONS = 4096  # 64 words of state: a pattern past this is an error
ENGINE_POSITIONS = 512  # patterns are packed into NFA engines of at most this many
FOLLOW_TABLE_BUDGET = 128 << 10  # bytes of follow unions past which blocks get narrower
BLOCK_WIDTHS = (8, 4, 2)  # positions a follow block may span, widest first


@dataclass(frozen=True)
class NfaEngine:
    patterns: tuple[int, ...]  # tag indices of the patterns it runs
    byte_masks: tuple[int, ...]  # per position: 256-bit byte set
    follow: tuple[int, ...]  # per position: mask of the positions that follow it ALWAYS
    first: int  # mask: positions that may start a match at any boundary
    conditional_follow: tuple[tuple[int, int, int], ...]  # (from, to, condition)
    conditional_first: tuple[tuple[int, int], ...]  # (position, condition)
    accepting: tuple[tuple[int, int, int], ...]  # (position, tag, condition), by tag
    empty_accepts: tuple[tuple[int, int], ...]  # (tag, condition)
    max_length: int | None

    @property
    def position_count(self) -> int:
        return len(self.byte_masks)

    @property
    def block_width(self) -> int:
        """Positions per follow block: the widest whose table fits FOLLOW_TABLE_BUDGET."""
        return next((width for width in BLOCK_WIDTHS
                     if _follow_words(self.position_count, width) * 8 <= FOLLOW_TABLE_BUDGET),
                    BLOCK_WIDTHS[-1])

    @property
    def starts_at_zero_only(self) -> bool:
        """Every match starts at offset 0 (see PositionAutomaton.starts_at_zero_only)."""
        return not self.first and only_at_start(
            [c for _, c in self.conditional_first] + [c for _, c in self.empty_accepts])

    def table_bytes(self) -> int:
        """Bytes of the C++ tables: byte positions and follow tables in 64-bit words,
        plus the lists."""
        words = (self.position_count + 63) // 64
        lists = (len(self.conditional_follow) + len(self.conditional_first)
                 + len(self.accepting) + len(self.empty_accepts))
        follow = _follow_words(self.position_count, self.block_width)
        return 8 * (words * (256 + 1) + follow + 3 * lists)


def _follow_words(positions: int, width: int) -> int:
    """64-bit words of the follow tables: 2^width unions of a state's words per block."""
    blocks = (positions + width - 1) // width
    return blocks * (1 << width) * ((positions + 63) // 64)


def _mask(positions) -> int:
    mask = 0
    for position in positions:
        mask |= 1 << position
    return mask


def longest_match(automaton: PositionAutomaton) -> int | None:
    """Bytes in the longest match, conditions ignored (None when a cycle makes matches
    unbounded): the longest path from a first position to an accepting one.

    A depth-first, post-order walk with an explicit stack, so paths of any length work
    (one Python frame per position would raise RecursionError on `x[ab]{1500}y`)."""
    depth: dict[int, int] = {}  # longest path to an accepting position, in positions
    follow, accepting = automaton.follow, automaton.accepting
    for root in sorted(automaton.first):
        if root in depth:
            continue
        stack = [(root, iter(follow[root]))]
        on_path = {root}
        while stack:
            position, successors = stack[-1]
            for following in successors:
                if following in on_path:
                    return None  # a cycle
                if following not in depth:
                    on_path.add(following)
                    stack.append((following, iter(follow[following])))
                    break
            else:
                stack.pop()
                on_path.discard(position)
                tails = [depth[following] for following in follow[position]]
                best = 1 if accepting.get(position) else 0
                depth[position] = max([best] + [1 + tail for tail in tails if tail])
    return max((depth[position] for position in automaton.first), default=0)


def check_nfa_pattern(automaton: PositionAutomaton, pattern: PatternDecl) -> None:
    if automaton.position_count > MAX_POSITIONS:
        raise CompileError(
            f"pattern '{pattern.tag.name}' fits no DFA and has {automaton.position_count} "
            f"positions, more than the NFA engine's {MAX_POSITIONS}", pattern.location,
            hint="narrow the counted repetitions (x{1000} is 1000 positions)")


def nfa_engine(automaton: PositionAutomaton, patterns: tuple[int, ...]) -> NfaEngine:
    """The engine of `automaton`, which holds the patterns `patterns` (tag indices)."""
    follow, conditional_follow = [], []
    for source, edges in enumerate(automaton.follow):
        follow.append(_mask(q for q, condition in edges.items() if condition == ALWAYS))
        conditional_follow += [(source, q, c) for q, c in sorted(edges.items()) if c != ALWAYS]
    accepting = sorted((position, tag, condition)
                       for position, tags in automaton.accepting.items()
                       for tag, condition in tags.items() if condition)
    accepting.sort(key=lambda item: (item[1], item[0]))
    return NfaEngine(
        patterns, tuple(automaton.byte_masks), tuple(follow),
        _mask(q for q, c in automaton.first.items() if c == ALWAYS),
        tuple(conditional_follow),
        tuple((q, c) for q, c in sorted(automaton.first.items()) if c != ALWAYS),
        tuple(accepting), tuple(sorted((t, c) for t, c in automaton.empty_accepts.items() if c)),
        longest_match(automaton))


def byte_positions(engine: NfaEngine) -> list[int]:
    """Per byte value: the bit mask of the positions whose byte set holds it."""
    result = [0] * 256
    for position, mask in enumerate(engine.byte_masks):
        for byte in range(256):
            if mask >> byte & 1:
                result[byte] |= 1 << position
    return result


def follow_blocks(engine: NfaEngine) -> list[list[int]]:
    """Per block b of `block_width` positions, per value v of the block's bits: the union
    of the (unconditional) follow sets of the positions width * b + i for the bits i set
    in v."""
    blocks, width = [], engine.block_width
    for block in range(0, engine.position_count, width):
        table = [0] * (1 << width)
        for value in range(1, 1 << width):
            low = value & -value
            position = block + low.bit_length() - 1
            extra = engine.follow[position] if position < engine.position_count else 0
            table[value] = table[value ^ low] | extra
        blocks.append(table)
    return blocks


def category(byte: int) -> int:
    """The category of a byte (as prev, and as next unless it is a final '\\n')."""
    if byte == 0x0A:
        return NEWLINE
    return WORD_CATEGORY if (WORD >> byte) & 1 else OTHER


class NfaRunner:
    """Runs an NfaEngine in Python (the reference executor's oracle for it)."""

    def __init__(self, engine: NfaEngine) -> None:
        self.engine = engine
        self.byte_positions = byte_positions(engine)
        self.follow_blocks = follow_blocks(engine)
        self.block_width = engine.block_width
        self.starts_at_zero_only = engine.starts_at_zero_only

    def follow(self, state: int) -> int:
        result, block, width = 0, 0, self.block_width
        while state:
            result |= self.follow_blocks[block][state & ((1 << width) - 1)]
            state >>= width
            block += 1
        return result

    def reports(self, state: int, where: int) -> list[int]:
        """Tags reported at a boundary with condition bit `where`, sorted."""
        engine = self.engine
        tags = {tag for position, tag, c in engine.accepting
                if state >> position & 1 and c & where}
        tags |= {tag for tag, c in engine.empty_accepts if c & where}
        return sorted(tags)

    def step(self, state: int, byte: int, where: int, inject: bool = True) -> int:
        """The state after `byte`; new matches start there only when `inject`."""
        engine = self.engine
        candidates = self.follow(state)
        if inject:
            candidates |= engine.first
            for position, c in engine.conditional_first:
                if c & where:
                    candidates |= 1 << position
        for source, target, c in engine.conditional_follow:
            if state >> source & 1 and c & where:
                candidates |= 1 << target
        return candidates & self.byte_positions[byte]

    def matches(self, data: bytes, begin: int = 0, end: int | None = None
                ) -> list[tuple[int, int]]:
        """(offset, tag) of every match at offsets in [begin, end) (and at len(data) when
        end is len(data)), by offset then tag."""
        size = len(data)
        end = size if end is None else end
        engine = self.engine
        scan = 0 if engine.max_length is None else max(0, begin - engine.max_length)
        state, found = 0, []
        for offset in range(scan, end + 1 if end == size else end):
            where = boundary_condition(data, offset)
            if offset >= begin:
                found += [(offset, tag) for tag in self.reports(state, where)]
            if offset == size or (offset > 0 and state == 0 and self.starts_at_zero_only):
                break  # (no thread lives, and none can start past offset 0)
            state = self.step(state, data[offset], where)
        return found


def boundary_condition(data: bytes, offset: int) -> int:
    """The condition bit of the boundary before data[offset] (offset len(data): the end)."""
    size = len(data)
    prev = START if offset == 0 else category(data[offset - 1])
    if offset == size:
        following = END
    else:
        following = FINAL_NEWLINE if data[offset] == 0x0A and offset == size - 1 \
            else category(data[offset])
    return bit(prev, following)
