"""The tables of a pattern set compiled to several engines, as one blob read by
cpp_runtime/fsm/sets/engine_set.hpp.

Layout: u64 magic "PFSMSET1", engine count, then per engine (kind: 0 DFA / 1 NFA /
2 prefiltered, byte offset, byte size); every engine's own blob starts 64-byte aligned.
A DFA engine's blob is the one machine blob of blob.py. A prefiltered engine's blob
(fsm_compiler/engines/prefilter_engine.py) is u64 slots: magic "PFSMPRE4", pattern count P,
the literal DFA's offset and size, then P x (tag, reach (all ones: unbounded),
shortest factor, NFA offset, NFA size, `before` as 4 words: the bytes a match may hold
up to its factor's end, longest factor, guards' offset and size, literals' offset and
size (size 0: none)), offsets from the engine blob's start; the literal DFA (a machine
blob) and each pattern's NFA blob, guards and literals follow, 64-byte aligned. Guards
(fsm_compiler/engines/guards.py, one per pattern confirmed) are u64 slots: a count, then
per guard its slot count and slots: lo, hi (signed), after (1: the guard follows the
factor), near (signed), the gap's byte set as 4 words, string count, then per string
its length L and L x 4 words. Literals (fsm_compiler/engines/literal_patterns.py) are u64
slots: a count, then per pattern confirmed its tag and string count, then per string its
length L, the bytes after its window and L x 4 words.
An NFA engine's blob (fsm_compiler/engines/nfa_engine.py) is u64 slots: magic "PFSMNFA2",
words, blocks, max_length (all ones: unbounded), then the counts of conditional follow
edges, conditional first positions, accepts and empty accepts, and the block width B (8, 4
or 2 positions); then u64 arrays: categories (256 bytes: each byte's category),
byte_positions[256][words], follow[blocks][2^B][words] (the union of the unconditional
follow sets of the positions set in each value of block b's B bits), first[words],
any_first[words] (first and conditional first positions), conditional_follow[][3] (from,
to, condition), conditional_first[][2] (position, condition), accepts[][3] (position, tag,
condition; by tag), empty_accepts[][2] (tag, condition).
"""

from __future__ import annotations

import numpy as np

from parafuse.emitters.fsm.blob import machine_blob
from parafuse.fsm_compiler.analysis.project_analysis import ProjectAnalysis
from parafuse.fsm_compiler.engines.engines import DfaEngine, EngineSet
from parafuse.fsm_compiler.engines.guards import Guard
from parafuse.fsm_compiler.engines.literal_patterns import LiteralEnds
from parafuse.fsm_compiler.engines.nfa_engine import (
    NfaEngine,
    byte_positions,
    category,
    follow_blocks,
)
from parafuse.fsm_compiler.engines.prefilter_engine import PrefilterEngine

SET_MAGIC = int.from_bytes(b"PFSMSET1", "little")
NFA_MAGIC = int.from_bytes(b"PFSMNFA2", "little")
PREFILTER_MAGIC = int.from_bytes(b"PFSMPRE4", "little")
UNBOUNDED = (1 << 64) - 1
CONFIRM_SLOTS = 14  # u64 slots per pattern of a prefiltered engine


def nfa_words(positions: int) -> int:
    """64-bit words per state vector: 1, 2 or 4 (the runtime's unrolled cases), else exact."""
    words = max(1, (positions + 63) // 64)
    return next((size for size in (1, 2, 4) if words <= size), words)


def _vectors(masks: list[int], words: int) -> np.ndarray:
    """(len(masks), words) uint64: each mask's bits, low word first."""
    out = np.zeros((len(masks), words), dtype=np.uint64)
    for row, mask in enumerate(masks):
        for word in range(words):
            out[row, word] = (mask >> (64 * word)) & ((1 << 64) - 1)
    return out


def nfa_blob(engine: NfaEngine) -> bytes:
    words = nfa_words(engine.position_count)
    width = engine.block_width
    blocks = (engine.position_count + width - 1) // width
    follow = [union for table in follow_blocks(engine) for union in table]
    any_first = engine.first | _bits(position for position, _ in engine.conditional_first)
    header = np.array([NFA_MAGIC, words, blocks,
                       UNBOUNDED if engine.max_length is None else engine.max_length,
                       len(engine.conditional_follow), len(engine.conditional_first),
                       len(engine.accepting), len(engine.empty_accepts), width],
                      dtype=np.uint64)
    categories = np.array([category(byte) for byte in range(256)], dtype=np.uint8)

    def rows(items) -> np.ndarray:
        return np.array([value for item in items for value in item], dtype=np.uint64)

    parts = [header, categories, _vectors(byte_positions(engine), words),
             _vectors(follow, words), _vectors([engine.first, any_first], words),
             rows(engine.conditional_follow), rows(engine.conditional_first),
             rows(engine.accepting), rows(engine.empty_accepts)]
    return b"".join(part.tobytes() for part in parts)


def _bits(positions) -> int:
    mask = 0
    for position in positions:
        mask |= 1 << position
    return mask


def _padded(blob: bytes) -> bytes:
    return blob + bytes((-len(blob)) % 64)


def _words(mask: int) -> list[int]:
    return [(mask >> (64 * word)) & UNBOUNDED for word in range(4)]


def _guard_slots(guard: Guard) -> list[int]:
    slots = [guard.lo & UNBOUNDED, guard.hi & UNBOUNDED, int(guard.after),
             guard.near & UNBOUNDED, *_words(guard.gap), len(guard.strings)]
    for string in guard.strings:
        slots += [len(string)] + [word for mask in string for word in _words(mask)]
    return slots


def guards_blob(guards: tuple[Guard, ...]) -> bytes:
    slots = [len(guards)]
    for guard in guards:
        own = _guard_slots(guard)
        slots += [len(own), *own]
    return np.array(slots, dtype=np.uint64).tobytes()


def literals_blob(tags: tuple[int, ...], literals: tuple[LiteralEnds, ...]) -> bytes:
    slots = [len(literals)]
    for tag, ends in zip(tags, literals, strict=True):
        slots += [tag, len(ends)]
        for string, after in ends:
            slots += [len(string), after] + [word for mask in string for word in _words(mask)]
    return np.array(slots, dtype=np.uint64).tobytes()


def prefilter_blob(engine: PrefilterEngine, analysis: ProjectAnalysis) -> bytes:
    parts = [machine_blob(engine.literals, analysis)]
    for confirm in engine.confirms:
        parts += [nfa_blob(confirm.nfa), guards_blob(confirm.guards) if confirm.guards else b"",
                  literals_blob(confirm.tags, confirm.literals) if confirm.literals else b""]
    head_bytes = 8 * (4 + CONFIRM_SLOTS * len(engine.confirms))
    position = head_bytes + (-head_bytes) % 64
    places = []
    for part in parts:
        places.append((position, len(part)))
        position += len(_padded(part))
    slots = [PREFILTER_MAGIC, len(engine.confirms), *places[0]]
    for k, confirm in enumerate(engine.confirms):
        before = confirm.factors.before
        slots += [confirm.tag, UNBOUNDED if confirm.reach is None else confirm.reach,
                  confirm.factors.shortest, *places[1 + 3 * k], *_words(before),
                  confirm.factors.longest, *places[2 + 3 * k], *places[3 + 3 * k]]
    head = np.array(slots, dtype=np.uint64).tobytes()
    return _padded(head) + b"".join(_padded(part) for part in parts)


def _engine_blob(engine, analysis: ProjectAnalysis | None) -> tuple[int, bytes]:
    if isinstance(engine, DfaEngine):
        return 0, machine_blob(engine.machine, analysis)
    if isinstance(engine, PrefilterEngine):
        return 2, prefilter_blob(engine, analysis)
    return 1, nfa_blob(engine)


def engine_set_blob(engine_set: EngineSet,
                    analyses: tuple[ProjectAnalysis | None, ...]) -> bytes:
    """The container blob: every engine's blob (DFA engines and the literal DFAs of
    prefiltered engines with their analysis)."""
    blobs = [_engine_blob(engine, analysis)
             for engine, analysis in zip(engine_set.engines, analyses, strict=True)]
    directory_bytes = 16 + 24 * len(blobs)
    position = directory_bytes + (-directory_bytes) % 64
    directory, body = [SET_MAGIC, len(blobs)], bytearray()
    for kind, blob in blobs:
        directory += [kind, position, len(blob)]
        padded = _padded(blob)
        body += padded
        position += len(padded)
    head = np.array(directory, dtype=np.uint64).tobytes()
    return _padded(head) + bytes(body)
