"""What `auto` picks from the measured properties, and why, in one sentence.

Rules, first match wins (docs/fsm.md explains the thresholds):
1. lookback speculation is right almost always (>=99%) -> spec
2. the fused DFA fits its bound                        -> fused
3. the vector shrinks to <=2 states quickly (p90 <= 256 bytes) -> enum
4. speculation is right at least half the time         -> hspec
5. the vector shrinks to <=4 states eventually (median known) -> enum
6. otherwise                                           -> seq
"""

from __future__ import annotations

from .analysis import Convergence, FusedStates

SPEC_ACCURACY = 0.99
HSPEC_ACCURACY = 0.5
QUICK_CONVERGENCE_BYTES = 256


def _percent(fraction: float) -> str:
    return f"{100 * fraction:.1f}%"


def _by_threshold(convergence: list[Convergence], threshold: int) -> Convergence | None:
    return next((c for c in convergence if c.threshold == threshold), None)


def choose_scheme(
    fused: FusedStates, convergence: list[Convergence], accuracy: float | None, lookback: int
) -> tuple[str, str]:
    """(scheme, one-sentence reason) that `auto` would pick."""
    if accuracy is not None and accuracy >= SPEC_ACCURACY:
        return "spec", (f"speculation from {lookback} bytes of lookback predicts the state at "
                        f"{_percent(accuracy)} of positions, so chunks walk the small table "
                        "and validation is nearly free")
    if not fused.exceeded:
        return "fused", (f"the fused DFA has {fused.count} states (bound {fused.bound}), so each "
                         "chunk costs one table lookup per byte")
    two = _by_threshold(convergence, 2)
    if two is not None and two.p90 is not None and two.p90 <= QUICK_CONVERGENCE_BYTES:
        return "enum", (f"the fused DFA exceeds its bound but at 90% of positions at most 2 paths "
                        f"remain after {two.p90} bytes, so enumeration stays cheap")
    if accuracy is not None and accuracy >= HSPEC_ACCURACY:
        return "hspec", (f"speculation is right at {_percent(accuracy)} of positions, so "
                         "misspeculated chunks are best re-validated in parallel rounds")
    four = _by_threshold(convergence, 4)
    if four is not None and four.median is not None:
        return "enum", (f"speculation is unreliable but half the positions keep at most 4 paths "
                        f"after {four.median} bytes, so enumeration converges")
    return "seq", ("the fused DFA exceeds its bound, paths do not converge and speculation "
                   "fails, so no parallel scheme is expected to beat one sequential pass")
