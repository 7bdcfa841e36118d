"""Patterns that can never match, refused as Hyperscan refuses them ("Pattern can never match").

A pattern can match when some path of its position automaton (fsm_compiler/automata/nfa.py)
from the start to an accept has every condition satisfiable by the byte categories
of the positions around it: `a\\B-` cannot (a word byte then '-' is a boundary),
nor can `\\b\\B` or `\\p{Greek}` (no Latin-1 byte is Greek).
"""

from __future__ import annotations

from parafuse.grammar.diagnostics import CompileError
from parafuse.grammar.fsm_ast import PatternSet
from parafuse.grammar.regex_escapes import WORD as WORD_BYTES

from .assertions import (
    END,
    FINAL_NEWLINE,
    NEWLINE,
    NEXT_CATEGORIES,
    OTHER,
    PREV_CATEGORIES,
    WORD,
    holds,
)
from .nfa import PositionAutomaton, build_position_automaton

_FINAL = FINAL_NEWLINE  # a position's byte as a '\n' that ends the input


def _categories(mask: int) -> list[int]:
    """The categories a byte of `mask` can have as the next byte of a boundary (a '\n'
    also as the input's final byte)."""
    found = []
    if mask & WORD_BYTES:
        found.append(WORD)
    if mask >> 0x0A & 1:
        found += [NEWLINE, _FINAL]
    if mask & ~WORD_BYTES & ~(1 << 0x0A):
        found.append(OTHER)
    return found


def _prev(category: int) -> int:
    return NEWLINE if category == _FINAL else category


def can_match(automaton: PositionAutomaton) -> bool:
    """Whether some input has a match: a search over (position, category of the byte it
    matched), each boundary's condition checked at the categories on both sides. Exact:
    a condition reads only the categories of the two bytes around its boundary, and any
    byte before a match, after it, or in a position's set may be chosen.

    A position is paired with one category at a time, so a condition on the boundary
    before it narrows the byte it matched (`^\\b[^a]\\B$` has no match: the \\b makes
    [^a] a word byte, after which \\B$ fails).
    """
    if automaton.empty_accepts and any(automaton.empty_accepts.values()):
        return True
    categories = [_categories(mask) for mask in automaton.byte_masks]
    reached = [(q, c) for q, condition in automaton.first.items() for c in categories[q]
               if any(holds(condition, prev, c) for prev in PREV_CATEGORIES)]
    seen = set(reached)
    while reached:
        position, category = reached.pop()
        prev = _prev(category)
        nexts = (END,) if category == _FINAL else NEXT_CATEGORIES
        if any(holds(condition, prev, n) for condition in
               automaton.accepting.get(position, {}).values() for n in nexts):
            return True
        if category == _FINAL:
            continue
        for target, condition in automaton.follow[position].items():
            for following in categories[target]:
                if (target, following) not in seen and holds(condition, prev, following):
                    seen.add((target, following))
                    reached.append((target, following))
    return False


def check_patterns_can_match(pattern_set: PatternSet) -> None:
    """A located error at the first pattern that can never match."""
    for pattern in pattern_set.patterns:
        if not can_match(build_position_automaton([(0, pattern.regex)])):
            raise CompileError(f"pattern '{pattern.tag.name}' can never match (Hyperscan "
                               "refuses it)", pattern.location,
                               hint="check its assertions (such as a\\B- or \\b\\B) and its "
                                    "classes (\\p{Greek} holds no Latin-1 byte)")
