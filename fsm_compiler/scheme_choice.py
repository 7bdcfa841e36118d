"""What `auto` picks from the measured properties, and why, in one sentence.

The rules of the runtime's `auto` (cpp_runtime/fsm/auto_choice.hpp), first match
wins, on the analysis sample instead of the input (docs/fsm.md explains the
thresholds):
1. lookback speculation is right almost always (>=99%)            -> spec
2. from every state, paths meet within the convergence horizon    -> enum
3. speculation is right at least half the time and every wrong
   guess meets the true path within 1 KiB                        -> hspec
4. the fused DFA fits its bound                                   -> fused
5. the machine fits SIMD enumeration: at most 16 states and at
   most 4 groups of reporting states (states with the same tags)  -> enum
6. the vector shrinks to <=2 states quickly (p90 <= 256 bytes)    -> enum
7. speculation is right at least half the time                    -> hspec
8. the vector shrinks to <=4 states eventually (median known)     -> enum
9. otherwise                                                      -> seq
The runtime also keeps `fused` for a fused DFA past its bound when walks over
samples of the input stay inside its stored states (between rules 4 and 5); the
analysis does not walk a partial fused DFA, so it cannot say so. The runtime skips
rule 5 where the CPU has no SSSE3 and for runs that report matches (which SIMD
enumeration walks again). Before rule 5 existed, `auto` never chose SIMD enumeration
without probing a large input.
"""

from __future__ import annotations

from .analysis import RECOVERY_HORIZON, Convergence, FusedStates

SPEC_ACCURACY = 0.99
HSPEC_ACCURACY = 0.5
QUICK_CONVERGENCE_BYTES = 256
SIMD_FIT_STATES = 16  # cpp_runtime/fsm/auto_choice.hpp kSimdFitStates
SIMD_MAX_GROUPS = 4  # cpp_runtime/fsm/simd_plan.hpp kSimdMaxGroups


def _percent(fraction: float) -> str:
    return f"{100 * fraction:.1f}%"


def _by_threshold(convergence: list[Convergence], threshold: int) -> Convergence | None:
    return next((c for c in convergence if c.threshold == threshold), None)


def choose_scheme(fused: FusedStates, convergence: list[Convergence], accuracy: float | None,
                  slow_misses: int, lookback: int,
                  simd_groups: tuple[int, int] | None = None) -> tuple[str, str]:
    """(scheme, one-sentence reason) that `auto` would pick; `simd_groups` is (states,
    groups of reporting states) of the machine, or None where unknown."""
    if accuracy is not None and accuracy >= SPEC_ACCURACY:
        return "spec", (f"speculation from {lookback} bytes of lookback predicts the state at "
                        f"{_percent(accuracy)} of positions, so chunks walk the small table "
                        "and validation is nearly free")
    one = _by_threshold(convergence, 1)
    if one is not None and one.positions and one.never == 0:
        return "enum", (f"from every state, the paths met within {one.horizon} bytes at all "
                        f"{one.positions} sampled positions, so each chunk is enumerated only "
                        "until its paths meet, then walked once")
    if accuracy is not None and accuracy >= HSPEC_ACCURACY and slow_misses == 0:
        return "hspec", (f"speculation is right at {_percent(accuracy)} of positions and every "
                         f"wrong guess met the true path within {RECOVERY_HORIZON} bytes, so "
                         "misspeculated chunks are re-run briefly, in parallel rounds")
    if not fused.exceeded:
        return "fused", (f"the fused DFA has {fused.count} states (bound {fused.bound}), so each "
                         "chunk costs one table lookup per byte")
    if simd_groups is not None and simd_groups[0] <= SIMD_FIT_STATES \
            and simd_groups[1] <= SIMD_MAX_GROUPS:
        shown = "unmeasured" if accuracy is None else _percent(accuracy)
        return "enum", (f"the paths do not meet and speculation is right at {shown} of "
                        f"positions, but the machine fits SIMD enumeration ({simd_groups[0]} "
                        f"states, {simd_groups[1]} groups of reporting states): one shuffle per "
                        "byte advances every state's path and one pass counts from every start "
                        "state")
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
