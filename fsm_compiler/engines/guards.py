r"""Guards of prefiltered patterns: a second literal that every match holds at a bounded
distance from the factor the prefilter found, checked before the factor's end makes a
start range (docs/fsm.md "Prefiltered engines").

    guard_for(regex, factors) -> Guard | None

Before: every end q of a pattern's factor started a range that its NFA swept, however
unlikely a match there (uap-core's `Mozilla.{1,200}Mobile.{1,100}...`: 463,617 ranges
over 32 MiB of user agents, each swept to its line's end).
After: q makes a range only where a guard string ends in [q + lo, q + hi] with nothing
but gap bytes between q and it (`Mobile` ending 7 to 306 bytes after `Mozilla`, no
newline between).

Sound: the factors are the windows of the strings of one run of the pattern's top-level
concatenation (items i..j, matched exactly: the runs `_concat` of required_literals.py
keeps in `Factors.runs`). In a
match that run is some string s ending at E, and the prefilter reports the end of s's
window, q = E - after(s). A second run (the guard, items k..l, its strings exact too)
after the first with gap items between of g_min..g_max bytes ends at E + gap + len(t)
for its string t; before the first, at E - len(s) - gap. Over every s and t these give
[lo, hi] relative to q, and the bytes of the gap are all in the gap items' byte set. So
every match's q passes, and a q that fails starts no match's range.

An unbounded gap (`add \s+ key`, `user [\ \t]* =`) has no window, but where no factor
ends in a byte of the gap the check runs from q over gap bytes to the first other byte
(the guard string starts there or before), and each byte of the input is run over from
one factor end of the pattern at most. Its hi (after) or lo (before) is UNBOUNDED_GAP.
The gap may hold RUN_GAP_BYTES bytes at most (whitespace, whose runs are short in text):
uap-core's 56 guards after runs of digits (`Collector/(\d+) CFNetwork`) cost more than
they saved (its ranges phase 163 -> 190 ms at one thread). The check being
one comparison after the run, the strings need only RUN_GUARD_BITS right after a gap
byte in the byte-pair model (byte_pairs.py).
Before: over 32 MiB of Python source, Nosey Parker's `user`, `add`, `if ... secret`
rules and the like made 138,039 start ranges; after: 106,016, and their confirmation
took 4.6 ms instead of 7.9 at one thread.

    split_guard(regex, factors) -> Guard | None

Where no run gives a guard (the factor inside a longer run, or the other literal inside
a group), the pattern is split in two at a top-level item (nested concatenations
flattened): left items L, right items R, every match l r. If R's required set is the
pattern's factors and L's required set B is short and selective (or the other way
round), B's strings are the guard, with no gap bytes (any byte between) and a window
from the lengths of L and the reaches of both sets (split_window).
Before: Nosey Parker's `\b(?:facebook|fb).?(?:api|app|...|key)` made a start range at
each of 57,067 `api`, `app` and `key` over 32 MiB of Python source, and its NFA swept
each; after: a range only where `fb` or `facebook` ends 3 to 18 bytes before the
factor's end (none there).

    rarer_side(regex, factors) -> Factors | None

Of a split-guarded pair, the side to scan for: the guard's strings where the byte-pair
model (byte_pairs.py) rates them rarer than the factors, which then become their guard.
Before: Salesforce's `00[a-zA-Z0-9]{13}![a-zA-Z0-9._]{96}` was prefiltered on `00` (16
bits to the hand-weighted model, `!` 8) and guarded by `!` 14 bytes on: over web logs
`00` ends 38,000 times a MiB, each end stored and then failed by its guard. After: the
prefilter scans for `!` (13.2 bits to the pair model, `00` 10.1) and checks `00` 14 bytes
before: the same two literals checked, the rarer one scanned for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from parafuse.grammar.regex_ast import ALL_BYTES, Assertion, Concat, Empty, Regex, RegexNode

from .byte_pairs import pair_bits, pair_bits_after
from .required_literals import (
    Factor,
    Factors,
    best_window,
    factor_bits,
    longest,
    node_mask,
    shifted,
    split_factors,
)

GUARD_BITS = 16.0  # the least selectivity worth a check per factor end
GUARD_STRINGS = 8  # strings a guard may hold
GUARD_WINDOW = 1024  # bytes of input a guard may search
SPLIT_BITS = 6.0  # a split guard's least selectivity beyond its window's positions
SPLIT_WINDOW = 32  # positions a split guard may check (more cost more than they save)
SPLIT_FACTOR_BITS = 20.0  # factors this common at most are split-guarded (rarer ones start
# few ranges; uap-core's product names, guarded, took 1.2x as long)
SWAP_BITS = 1.0  # a guard this much rarer than its factors (pair model) is scanned instead
UNBOUNDED_GAP = 1 << 40  # bytes: an unbounded gap's most
RUN_GAP_BYTES = 8  # bytes an unbounded gap may hold (`\s`: 6), so that its runs are short
RUN_GUARD_BITS = 6.0  # a guard's least selectivity right after an unbounded gap's bytes (the
# pair model: `=` after spaces 6.2 bits, `.` after digits 3.8), its check being short
GUARD_GAP = 32  # the gap's most bytes: a shorter one leaves the NFA's sweep short anyway
# Each guard string has a byte set of one byte, which the runtime finds with memchr
# (prefilter_tables.hpp Guard::holds); strings of wide sets alone (a 40-letter token
# after `aws`) would be compared at every end of the window, and cost Nosey Parker's
# scan of source 4 ms for nothing.


@dataclass(frozen=True)
class Guard:
    strings: tuple[Factor, ...]  # each a string of byte sets
    lo: int  # a guard string ends in [q + lo, q + hi] of the factor's end q
    hi: int
    gap: int  # the bytes between the factor and the guard (a byte set)
    after: bool  # the guard follows the factor (else precedes it)
    near: int  # from q + near on (after) or below it (before) only gap bytes precede the guard
    bits: float


def shortest(node: RegexNode) -> int:
    """Bytes in the shortest string `node` matches."""
    if isinstance(node, Empty | Assertion):
        return 0
    if isinstance(node, Concat):
        return sum(shortest(item) for item in node.items)
    if hasattr(node, "alternatives"):
        return min(shortest(item) for item in node.alternatives)
    if hasattr(node, "item"):
        return shortest(node.item) * node.min_count
    return 1  # a byte class


def _span(items: tuple[RegexNode, ...]) -> tuple[int, int, int] | None:
    """(fewest bytes, most bytes, byte set) of items in a row; None when unbounded."""
    most = 0
    for item in items:
        size = longest(item)
        if size is None:
            return None
        most += size
    return sum(shortest(item) for item in items), most, _mask(items)


def _factors_run(factors: Factors) -> tuple[int, int, frozenset] | None:
    """The run the factors are windows of: the one they were scored from, else one whose
    every string's window is a factor (a run of one item, `(?:MSIE|XBMC)`, whose item
    scored the same factors first)."""
    if factors.run >= 0:
        return factors.runs[factors.run]
    return next((run for run in factors.runs if run[2] and () not in run[2] and
                 all(best_window(s)[0] in factors.factors for s in run[2])), None)


def guard_for(regex: Regex, factors: Factors) -> Guard | None:
    """The most selective guard of the pattern (see above), or None."""
    body = regex.body
    if not isinstance(body, Concat):
        return None
    items = body.items
    found = _factors_run(factors)
    if found is None:  # the factors come from inside an item
        return None
    first, last, strings = found
    runs = [(i, j, run) for i, j, run in factors.runs if j > i and () not in run]
    ends = [(len(s), after) for s in strings for _, after in [best_window(s)]]
    last_bytes = 0  # of the factors: a factor end q follows one of them
    for factor in factors.factors:
        last_bytes |= factor[-1]
    best = None
    for i, j, others in runs:
        if (i < last and j > first) or len(others) > GUARD_STRINGS or \
                not all(any(mask & (mask - 1) == 0 for mask in t) for t in others):
            continue  # overlaps the factor's run, too many strings, or one without a byte
            # of its own to search for (the check would compare at every end in the window)
        bits = -math.log2(sum(2.0 ** -factor_bits(t) for t in others))
        follows = i >= last
        between = items[last:i] if follows else items[j:first]
        span = _span(between)
        if span is None:  # unbounded: a run of few gap bytes no factor ends in (see above)
            if _mask(between) & last_bytes or _mask(between).bit_count() > RUN_GAP_BYTES:
                continue
            span = sum(shortest(item) for item in between), UNBOUNDED_GAP, _mask(between)
        fewest, most, gap = span
        if (pair_bits_after(gap, others) < RUN_GUARD_BITS if most == UNBOUNDED_GAP
                else bits < GUARD_BITS):
            continue
        sizes = [len(t) for t in others]
        # `near`: from q + near on (after), or below it (before), every byte up to the
        # guard string is a gap byte, whichever string s of the run the match holds
        if follows:  # ends at q + after(s) + gap + len(t)
            lo = min(a for _, a in ends) + fewest + min(sizes)
            hi = max(a for _, a in ends) + most + max(sizes)
            near = max(a for _, a in ends)
        else:  # ends at q + after(s) - len(s) - gap
            lo = min(a - n for n, a in ends) - most
            hi = max(a - n for n, a in ends) - fewest
            near = min(a - n for n, a in ends)
        if (hi - lo > GUARD_WINDOW and most != UNBOUNDED_GAP) or most < GUARD_GAP:
            continue
        guard = Guard(tuple(sorted(others)), lo, hi, gap, follows, near, bits)
        if best is None or guard.bits > best.bits:
            best = guard
    return best


def _flat(items: tuple[RegexNode, ...]) -> list[RegexNode]:
    """The items of a concatenation with nested concatenations (groups) spliced in."""
    flat: list[RegexNode] = []
    for item in items:
        flat += _flat(item.items) if isinstance(item, Concat) else [item]
    return flat


def split_window(left: tuple[RegexNode, ...], factors: Factors, other: Factors,
                 after: bool) -> tuple[int, int] | None:
    """[lo, hi]: where one of `other` ends relative to the end q of a factor, over
    every match l r of the items `left` then the rest, the factors required in r
    (before: `other` in l) or in l (after: `other` in r); None where unbounded.
    Before: q - split is in [shortest A, reach of A in r], split - e in
    [max(0, shortest l - reach of B in l), longest l - shortest B]. After: split - q is
    in [max(0, shortest l - reach of A in l), longest l - shortest A], e - split in
    [shortest B, reach of B in r]."""
    span = _span(left)
    in_left, in_right = (factors, other) if after else (other, factors)
    if span is None or in_left.reach is None or in_right.reach is None:
        return None
    fewest_left, most_left, _ = span
    split_from_left = (max(0, fewest_left - in_left.reach), most_left - in_left.shortest)
    if after:  # e - q = (split - q) + (e - split)
        return (split_from_left[0] + other.shortest, split_from_left[1] + other.reach)
    # e - q = -(split - e) - (q - split)
    return (-split_from_left[1] - factors.reach, -split_from_left[0] - factors.shortest)


def split_guard(regex: Regex, factors: Factors) -> Guard | None:
    """The most selective guard from a split of the pattern in two (see above), or None."""
    if not isinstance(regex.body, Concat) or factors.bits > SPLIT_FACTOR_BITS:
        return None
    best = None
    for left, after, ours, other in _split_pairs(regex, factors):
        if len(other.factors) > GUARD_STRINGS:
            continue
        window = split_window(left, ours, other, after)
        if window is None or window[1] - window[0] >= SPLIT_WINDOW:
            continue
        beyond = other.bits - math.log2(window[1] - window[0] + 1)  # the window's positions
        if beyond < SPLIT_BITS:
            continue
        if best is None or beyond > best[0]:
            best = beyond, Guard(tuple(sorted(other.factors)), window[0], window[1], ALL_BYTES,
                                 after, 0, other.bits)
    return best[1] if best else None


def _split_pairs(regex: Regex, factors: Factors):
    """(left items, whether the other side follows, the factors' side's required set, the
    other side's) for each split of the pattern in two whose one side requires exactly
    `factors`."""
    items = _flat(regex.body.items)
    wanted = set(factors.factors)
    for k, sides in enumerate(split_factors(tuple(items)), start=1):
        for after in (False, True):
            ours, other = sides if after else sides[::-1]
            if ours is not None and other is not None and set(ours.factors) == wanted:
                yield tuple(items[:k]), after, ours, other


def rarer_side(regex: Regex, factors: Factors) -> Factors | None:
    """The guard's side of the pattern's split guard as its factors, where the pair model
    rates it SWAP_BITS rarer than `factors` and `factors` guard it in turn (see above)."""
    guard = split_guard(regex, factors)
    if guard is None or pair_bits(guard.strings) < pair_bits(factors.factors) + SWAP_BITS:
        return None
    for left, after, _, other in _split_pairs(regex, factors):
        if tuple(sorted(other.factors)) != guard.strings:
            continue
        span = _span(left)
        # as the whole pattern's factors: a right side's reach counts the left items
        found = shifted(other, span[1] if span else None, _mask(left)) if after else other
        swapped = Factors(found.factors, found.bits, found.reach, found.before,
                          runs=factors.runs, exact=factors.exact)
        back = split_guard(regex, swapped) if swapped.usable else None
        if back is not None and back.strings == tuple(sorted(factors.factors)):
            return swapped
    return None


def _mask(items: tuple[RegexNode, ...]) -> int:
    mask = 0
    for item in items:
        mask |= node_mask(item)
    return mask
