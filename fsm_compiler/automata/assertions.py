"""What assertions mean: conditions on the bytes around a boundary.

A boundary lies between the byte before it (`prev`) and the byte after it (`next`).
Each is known by its *category*:

    prev: START (no byte: offset 0), WORD (\\w), NEWLINE, OTHER
    next: END (no byte: end of input), WORD, NEWLINE, OTHER, FINAL_NEWLINE (a '\\n'
          that is the last byte of the input)

A *condition* is the set of (prev, next) pairs where it holds: a 20-bit mask, bit
`prev * 5 + next`. Assertions are conditions, a sequence of assertions at one
boundary is their intersection (&), alternatives are their union (|); ALWAYS holds
everywhere. `NEWLINE` means a '\\n' that is not the last byte: a condition that holds
there also holds at FINAL_NEWLINE (true of every assertion), so a DFA that has not
yet seen the end decides with NEWLINE and revisits only FINAL_NEWLINE at the end.
"""

from __future__ import annotations

START, WORD, NEWLINE, OTHER = 0, 1, 2, 3  # prev categories (and next: WORD, NEWLINE, OTHER)
END, FINAL_NEWLINE = 0, 4  # next categories without a prev counterpart
PREV_CATEGORIES = (START, WORD, NEWLINE, OTHER)
NEXT_CATEGORIES = (END, WORD, NEWLINE, OTHER, FINAL_NEWLINE)
ALWAYS = (1 << 20) - 1
NEVER = 0
ROW = 0b11111  # the 5 next-bits of one prev


def bit(prev: int, next_: int) -> int:
    return 1 << (prev * 5 + next_)


def condition_where(predicate) -> int:
    """The condition holding at the (prev, next) pairs where `predicate(prev, next)`."""
    return sum(bit(p, n) for p in PREV_CATEGORIES for n in NEXT_CATEGORIES if predicate(p, n))


def _is_word_prev(prev: int) -> bool:
    return prev == WORD


def _is_word_next(next_: int) -> bool:
    return next_ == WORD


_CONDITIONS = {
    ("^", False): condition_where(lambda p, n: p == START),
    ("^", True): condition_where(lambda p, n: p == START or (p == NEWLINE and n != END)),
    ("A", False): condition_where(lambda p, n: p == START),
    ("$", False): condition_where(lambda p, n: n in (END, FINAL_NEWLINE)),
    ("$", True): condition_where(lambda p, n: n in (END, NEWLINE, FINAL_NEWLINE)),
    ("Z", False): condition_where(lambda p, n: n in (END, FINAL_NEWLINE)),
    ("z", False): condition_where(lambda p, n: n == END),
    ("b", False): condition_where(lambda p, n: _is_word_prev(p) != _is_word_next(n)),
    ("B", False): condition_where(lambda p, n: _is_word_prev(p) == _is_word_next(n)),
}


def assertion_condition(kind: str, multiline: bool) -> int:
    """The condition of `^ $ A z Z b B` (only `^` and `$` depend on the m flag)."""
    return _CONDITIONS[(kind, multiline and kind in "^$")]


def next_row(condition: int, prev: int) -> int:
    """The 5 next-bits of `condition` for a known `prev`."""
    return (condition >> (prev * 5)) & ROW


def holds(condition: int, prev: int, next_: int) -> bool:
    return bool(condition & bit(prev, next_))


def only_at_start(conditions: list[int]) -> bool:
    """Whether there are conditions and each holds only where no byte precedes (offset 0):
    a pattern whose first positions and empty matches hold so starts only there."""
    at_start = ROW << (5 * START)
    return bool(conditions) and all(c & ~at_start == 0 for c in conditions)


def depends_on_prev(condition: int) -> bool:
    rows = {next_row(condition, prev) for prev in PREV_CATEGORIES}
    return len(rows) > 1
