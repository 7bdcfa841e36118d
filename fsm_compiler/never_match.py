"""Patterns that can never match, refused as Hyperscan refuses them ("Pattern can never match").

A pattern can match when some path of its position automaton (fsm_compiler/nfa.py)
from the start to an accept has every condition satisfiable by the byte categories
of the positions around it: `a\\B-` cannot (a word byte then '-' is a boundary),
nor can `\\b\\B` or `\\p{Greek}` (no Latin-1 byte is Greek).
"""

from __future__ import annotations

from parafuse.grammar.diagnostics import CompileError
from parafuse.grammar.fsm_ast import PatternSet
from parafuse.grammar.regex_escapes import WORD as WORD_BYTES

from .assertions import NEWLINE, NEXT_CATEGORIES, OTHER, PREV_CATEGORIES, WORD, bit
from .nfa import PositionAutomaton, build_position_automaton


def _categories(mask: int) -> set[int]:
    found = set()
    if mask & WORD_BYTES:
        found.add(WORD)
    if mask >> 0x0A & 1:
        found.add(NEWLINE)
    if mask & ~WORD_BYTES & ~(1 << 0x0A):
        found.add(OTHER)
    return found


def _satisfiable(condition: int, prevs, nexts) -> bool:
    return any(condition & bit(p, n) for p in prevs for n in nexts)


def can_match(automaton: PositionAutomaton) -> bool:
    if automaton.empty_accepts and any(automaton.empty_accepts.values()):
        return True
    categories = [_categories(mask) for mask in automaton.byte_masks]
    reached = [q for q, c in automaton.first.items() if _satisfiable(c, PREV_CATEGORIES,
                                                                     categories[q])]
    seen = set(reached)
    while reached:
        position = reached.pop()
        prevs = categories[position]
        if any(_satisfiable(c, prevs, NEXT_CATEGORIES)
               for c in automaton.accepting.get(position, {}).values()):
            return True
        for target, condition in automaton.follow[position].items():
            if target not in seen and _satisfiable(condition, prevs, categories[target]):
                seen.add(target)
                reached.append(target)
    return False


def check_patterns_can_match(pattern_set: PatternSet) -> None:
    """A located error at the first pattern that can never match."""
    for pattern in pattern_set.patterns:
        if not can_match(build_position_automaton([(0, pattern.regex)])):
            raise CompileError(f"pattern '{pattern.tag.name}' can never match (Hyperscan "
                               "refuses it)", pattern.location,
                               hint="check its assertions (such as a\\B- or \\b\\B) and its "
                                    "classes (\\p{Greek} holds no Latin-1 byte)")
