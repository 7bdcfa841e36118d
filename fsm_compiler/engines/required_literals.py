"""Required factors of a regex: a small set of byte-set strings such that every match of
the regex contains one of them (the literal factors a keyword prefilter looks for,
docs/fsm.md "Prefiltered engines").

    required_factors(regex) -> Factors | None

A factor is a tuple of byte masks (one per byte; `(?i)a` is the mask {a, A}, `[0-9]`
the mask of the ten digits). The analysis walks the AST bottom-up keeping, per node,
`exact` (every string the node matches, as factors, while there are few) and `best`
(the most selective required set found inside it):
- a byte set is exact; `()` and assertions are the empty string;
- a concatenation multiplies adjacent exact items into runs; a run and every item's
  best set are candidates for the concatenation's best;
- an alternation needs a required set in every alternative (their union);
- a repeat with min >= 1 needs what its item needs; with min 0 it needs nothing.
Each candidate carries `reach`: the most bytes from a match's start to the end of the
factor in it (None: unbounded), and `before`: every byte that can occur in a match
before the end of its factor. A prefilter starts the pattern's run at most `reach`
bytes before each factor it finds, and not before a byte outside `before`; a
candidate needs one of the two bounds (`before` is all bytes only under `(?s).`).
Selectivity is information under a rough model of text and source code (BYTE_WEIGHTS:
lower-case letters and spaces common, upper case, digits and punctuation rarer, other
bytes rare): a byte set of probability p is -log2(p) bits; a set of factors scores
-log2 of the sum of its factors' probabilities (the chance that one occurs at a byte).
Long factors keep their most selective window of MAX_LENGTH bytes (a substring of a
required factor is required).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace

from parafuse.grammar.regex_ast import (
    ALL_BYTES,
    Alternation,
    Assertion,
    ByteClass,
    Concat,
    Empty,
    Regex,
    RegexNode,
    Repeat,
)

Factor = tuple[int, ...]
MAX_FACTORS = 64  # factors in one set
MAX_RUN = 64  # bytes in an exact string while runs are multiplied
MAX_LENGTH = 16  # bytes kept of a factor
NARROW_BITS = 4.0  # a byte set this selective at least may be part of a factor
UNBOUNDED_COST = 64  # bytes a run is expected to start before a factor when reach is unbounded
UNBOUNDED_PENALTY = 3.0  # bits: a factor with a bounded reach is preferred to this much


def enough_bits(reach: int) -> float:
    """The least selectivity worth a prefilter: each factor found costs about `reach` + 16
    steps of the pattern's NFA (~30 ns) where a DFA pass costs ~1 ns a byte, so factors
    must be rarer than one in 2^8 (reach + 16) bytes."""
    return 8.0 + math.log2(reach + 16)



def _byte_weight(byte: int) -> float:
    if byte in b"etaoinsr":
        return 40.0
    if ord("a") <= byte <= ord("z"):
        return 20.0
    if byte == ord(" "):
        return 120.0
    if byte == ord("\n"):
        return 30.0
    if 0x21 <= byte <= 0x7E:
        return 4.0
    return 0.2


BYTE_WEIGHTS = tuple(_byte_weight(byte) for byte in range(256))
_TOTAL_WEIGHT = sum(BYTE_WEIGHTS)


@dataclass(frozen=True)
class Factors:
    """Every match contains one of `factors`; `bits` is the set's selectivity."""

    factors: tuple[Factor, ...]
    bits: float
    reach: int | None = None  # bytes from a match's start to the end of its factor
    before: int = ALL_BYTES  # the bytes a match may hold before the end of its factor
    # of a whole regex whose body is a concatenation: its exact runs, (first item, item
    # after the last, strings), for guards.py
    runs: tuple[tuple[int, int, frozenset[Factor]], ...] = field(default=(), compare=False)
    run: int = field(default=-1, compare=False)  # which of them the factors are (-1: none)
    # of a whole regex: every string it matches (assertions as the empty string) while
    # they are few (at most MAX_FACTORS of at most MAX_RUN bytes), else None
    exact: frozenset[Factor] | None = field(default=None, compare=False)

    @property
    def usable(self) -> bool:
        return self.reach is not None or self.before != ALL_BYTES

    @property
    def shortest(self) -> int:
        return min(len(factor) for factor in self.factors)

    @property
    def longest(self) -> int:
        return max(len(factor) for factor in self.factors)


@dataclass(frozen=True)
class _Info:
    exact: frozenset[Factor] | None
    best: Factors | None


@functools.lru_cache(maxsize=4096)
def byte_bits(mask: int) -> float:
    weight = sum(BYTE_WEIGHTS[byte] for byte in range(256) if mask >> byte & 1)
    return math.log2(_TOTAL_WEIGHT / weight) if weight else 0.0


@functools.lru_cache(maxsize=65536)
def factor_bits(factor: Factor) -> float:
    return sum(byte_bits(mask) for mask in factor)


@functools.lru_cache(maxsize=65536)
def best_window(factor: Factor) -> tuple[Factor, int]:
    """The most selective substring of at most MAX_LENGTH bytes without a broad byte set
    (broad sets select little and multiply the prefilter DFA's states), and how many
    bytes of `factor` follow it."""
    best, best_end = (), len(factor)
    for begin in range(len(factor)):
        end = begin
        while end < len(factor) and end - begin < MAX_LENGTH \
                and byte_bits(factor[end]) >= NARROW_BITS:
            end += 1
        if factor_bits(factor[begin:end]) > factor_bits(best):
            best, best_end = factor[begin:end], end
    return best, len(factor) - best_end


def scored(factors: frozenset[Factor] | set[Factor], reach: int | None,
           before: int) -> Factors | None:
    """The set trimmed to windows and scored, or None when it is empty or too large.
    A window ends `after` bytes before its factor's end or more: `reach` less the least
    `after` bounds the windows' ends."""
    windows = [best_window(factor) for factor in factors]
    trimmed = sorted({window for window, _ in windows})
    if not trimmed or len(trimmed) > MAX_FACTORS:
        return None
    bits = -math.log2(sum(2.0 ** -factor_bits(factor) for factor in trimmed))
    if reach is not None:
        reach -= min(after for _, after in windows)
    return Factors(tuple(trimmed), bits, reach, before)


def _key(found: Factors) -> tuple[bool, float]:
    return (found.usable, found.bits - (0 if found.reach is not None else UNBOUNDED_PENALTY))


def _better(first: Factors | None, second: Factors | None) -> Factors | None:
    if first is None:
        return second
    if second is None:
        return first
    return second if _key(second) > _key(first) else first


def shifted(found: Factors | None, length: int | None, mask: int) -> Factors | None:
    """`found` inside a node that at most `length` bytes, all in `mask`, precede."""
    if found is None:
        return found
    reach = None if length is None or found.reach is None else length + found.reach
    return Factors(found.factors, found.bits, reach, found.before | mask)


def node_mask(node: RegexNode) -> int:
    """Every byte `node` may consume."""
    if isinstance(node, ByteClass):
        return node.byte_mask
    if isinstance(node, Empty | Assertion):
        return 0
    if isinstance(node, Concat | Alternation):
        mask = 0
        for item in node.items if isinstance(node, Concat) else node.alternatives:
            mask |= node_mask(item)
        return mask
    return node_mask(node.item)


def _exact_scored(exact: frozenset[Factor]) -> Factors | None:
    """An exact set as a candidate: a match is one of its strings."""
    mask = 0
    for factor in exact:
        for byte_mask in factor:
            mask |= byte_mask
    return scored(exact, max(len(factor) for factor in exact), mask)


def _times(left: frozenset[Factor], right: frozenset[Factor]) -> frozenset[Factor] | None:
    if len(left) * len(right) > MAX_FACTORS:
        return None
    joined = frozenset(a + b for a in left for b in right)
    return joined if all(len(factor) <= MAX_RUN for factor in joined) else None


def _concat(items: tuple[RegexNode, ...], runs: list | None = None,
            infos: tuple[_Info, ...] | None = None) -> _Info:
    """With `runs`, every exact run is appended to it: (first item, item after the last,
    strings); `infos`: the items' own analyses, where already known."""
    best: Factors | None = None
    run: frozenset[Factor] = frozenset({()})
    start = 0  # the run's first item
    exact_all = True
    before: int | None = 0  # longest bytes before the current item
    mask = 0  # the bytes of the items before the current one
    for index, item in enumerate(items):
        info = infos[index] if infos is not None else _analyse(item)
        best = _better(best, shifted(info.best, before, mask))
        joined = None if info.exact is None else _times(run, info.exact)
        if joined is None:  # the run ends where this item starts
            best = _better(best, _run_scored(run, before, mask, runs))
            exact_all = False
            if runs is not None:
                runs.append((start, index, run))
            run = info.exact if info.exact is not None else frozenset({()})
            start = index if info.exact is not None else index + 1
        else:
            run = joined
        size = longest(item)
        before = None if before is None or size is None else before + size
        mask |= node_mask(item)
    best = _better(best, _run_scored(run, before, mask, runs))
    if runs is not None:
        runs.append((start, len(items), run))
    return _Info(run if exact_all else None, best)


def _run_scored(run: frozenset[Factor], before: int | None, mask: int,
                runs: list | None) -> Factors | None:
    """A run's factors, marked as the next of `runs` where they are kept."""
    found = scored(run, before, mask)
    return found if found is None or runs is None else replace(found, run=len(runs))


def _alternation(alternatives: tuple[RegexNode, ...]) -> _Info:
    infos = [_analyse(alternative) for alternative in alternatives]
    exact = None
    if all(info.exact is not None for info in infos):
        union = frozenset().union(*(info.exact for info in infos))
        exact = union if len(union) <= MAX_FACTORS else None
    best = None
    if all(info.best is not None for info in infos):
        reaches = [info.best.reach for info in infos]
        masks = 0
        for info in infos:
            masks |= info.best.before
        best = scored(frozenset().union(*(info.best.factors for info in infos)),
                      None if None in reaches else max(reaches), masks)
    if exact is not None:
        best = _better(best, _exact_scored(exact))
    return _Info(exact, best)


def _repeat(node: Repeat) -> _Info:
    item = _analyse(node.item)
    exact = None
    if item.exact is not None and node.max_count is not None:
        power: frozenset[Factor] | None = frozenset({()})
        union: set[Factor] = set()
        for count in range(node.max_count + 1):
            if count >= node.min_count:
                union |= power
            if count == node.max_count:
                break
            power = _times(power, item.exact)
            if power is None or len(union) > MAX_FACTORS:
                break
        complete = power is not None and len(union) <= MAX_FACTORS
        exact = frozenset(union) if complete else None
    best = item.best if node.min_count >= 1 else None  # the first copy holds a factor
    if exact is not None:
        best = _better(best, _exact_scored(exact))
    return _Info(exact, best)


def _analyse(node: RegexNode) -> _Info:
    if isinstance(node, ByteClass):
        exact = frozenset({(node.byte_mask,)})
        return _Info(exact, scored(exact, 1, node.byte_mask))
    if isinstance(node, Empty | Assertion):
        return _Info(frozenset({()}), None)
    if isinstance(node, Concat):
        return _concat(node.items)
    if isinstance(node, Alternation):
        return _alternation(node.alternatives)
    return _repeat(node)


def required_factors(regex: Regex) -> Factors | None:
    """The most selective required set of the regex that a prefilter can use, if it is
    selective enough."""
    runs: list = []
    body = regex.body
    info = _concat(body.items, runs) if isinstance(body, Concat) else _analyse(body)
    best = info.best
    if best is None or not best.usable:
        return None
    cost = best.reach if best.reach is not None else UNBOUNDED_COST
    return replace(best, runs=tuple(runs), exact=info.exact) \
        if best.bits >= enough_bits(cost) else None


def split_factors(items: tuple[RegexNode, ...]) -> list[tuple[Factors | None, Factors | None]]:
    """For each split of the items in a row into left and right (at item k, 1 <= k < len),
    the most selective required set of each side, with no floor on its selectivity
    (guards.py weighs it against its own check)."""
    infos = tuple(_analyse(item) for item in items)
    return [(_concat(items[:k], infos=infos[:k]).best, _concat(items[k:], infos=infos[k:]).best)
            for k in range(1, len(items))]


def longest(node: RegexNode) -> int | None:
    """Bytes in the longest string `node` matches (None: unbounded)."""
    if isinstance(node, ByteClass):
        return 1
    if isinstance(node, Empty | Assertion):
        return 0
    if isinstance(node, Concat | Alternation):
        parts = [longest(item) for item in
                 (node.items if isinstance(node, Concat) else node.alternatives)]
        if any(part is None for part in parts):
            return None
        return sum(parts) if isinstance(node, Concat) else max(parts)
    item = longest(node.item)
    if item == 0:
        return 0
    return None if item is None or node.max_count is None else item * node.max_count
