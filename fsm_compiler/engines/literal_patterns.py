"""Literal patterns of a prefiltered engine: a pattern whose matches are a few strings is
confirmed by comparing them at each factor end, not by sweeping its NFA (docs/fsm.md
"Prefiltered engines").

    literal_ends(regex, factors) -> tuple[tuple[Factor, int], ...] | None

Before: every end q of `(Win(?:dows NT |32NT\\/)6\\.4)`'s factor made a start range that
the pattern's NFA swept (uap-core: 118 such patterns, up to 640,000 factor ends each,
a quarter of its confirmation time).
After: at q, each of the pattern's strings s is compared ending at q + after(s), where
after(s) is how many bytes of s follow its window (required_literals.best_window); a
string found there is a match ending there.

Exact: the body holds no assertion and matches finitely many strings (the analysis's
`exact` set), so every match is one of them; each string's window is one of the
pattern's factors, so for every match of s ending at E the prefilter reports the
factor end q = E - after(s), where s is compared. A string found at q + after(s) is a
match whichever factor ended at q; one end found from two factor ends (a string that
ends another) is reported once.
"""

from __future__ import annotations

from parafuse.grammar.regex_ast import Assertion, Concat, Regex, RegexNode, Repeat

from .required_literals import Factor, Factors, best_window

LiteralEnds = tuple[tuple[Factor, int], ...]  # (string, bytes after its window), sorted
LITERAL_STRINGS = 16  # strings compared at each factor end at most (more: the NFA sweeps
# faster: `Win(?:dows)? ?(95|98|...|CE)`'s 40 strings took 2x its NFA's ranges and sweep)


def holds_assertion(node: RegexNode) -> bool:
    if isinstance(node, Assertion):
        return True
    if isinstance(node, Concat):
        return any(holds_assertion(item) for item in node.items)
    if isinstance(node, Repeat):
        return holds_assertion(node.item)
    return any(holds_assertion(alternative) for alternative in getattr(node, "alternatives", ()))


def literal_ends(regex: Regex, factors: Factors) -> LiteralEnds | None:
    """The pattern's strings with the bytes after their windows, or None when the
    pattern is not a literal one (see above)."""
    if holds_assertion(regex.body):
        return None
    strings = factors.exact
    if not strings or () in strings or len(strings) > LITERAL_STRINGS:
        return None
    ends = tuple(sorted((string, after) for string in strings
                        for window, after in [best_window(string)]))
    if any(best_window(string)[0] not in factors.factors for string, _ in ends):
        return None  # the factors come from part of the pattern
    return ends
