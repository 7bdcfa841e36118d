"""What `auto` picks from the measured properties, and why, in one sentence.

The rules of the runtime's `auto` (cpp_runtime/fsm/auto/choice.hpp), first match
wins, on the analysis sample instead of the input (docs/fsm.md explains the
thresholds):
0. the machine fits SIMD enumeration counted in one pass on this CPU (its path takes
   the states, and counts the groups of reporting states per lane)  -> enum, where the
   runtime finds it at least as fast per core as table walks (it times both on a
   small window of the input, fsm/auto/rates.hpp); else on to rule 1
1. lookback speculation is right almost always (>=99%)            -> spec
2. from every state, paths meet within the convergence horizon    -> enum
3. speculation is right at least half the time and every wrong
   guess meets the true path within 1 KiB                        -> hspec
4. the fused DFA fits its bound                                   -> fused
5. the vector shrinks to <=2 states quickly (p90 <= 256 bytes)    -> enum
6. speculation is right at least half the time                    -> hspec
7. the vector shrinks to <=4 states eventually (median known)     -> enum
8. otherwise                                                      -> seq
At one thread rules 3 and 6 pick `spec` instead of `hspec` (hspec's parallel rounds of
re-runs then run one after another: spec's work where every guess was right, more where a
chunk is re-run against a result corrected later; it never beats spec there), and the
probes leave `hspec` out. The analysis takes the runtime's default thread count (OpenMP's:
OMP_NUM_THREADS, else the CPUs this process may run on) unless told. Where rule 2 holds,
the runtime runs the merging scalar enumeration if SIMD enumeration was timed slower than
the walks or its plan is past 64 states (it times nothing here, so its reason does not say).
The runtime decides by rule 1 without timed probes on any input and machine, so where
rule 1 holds on the input, `analyze` and the runtime agree without them.
The runtime also keeps `fused` for a fused DFA past its bound when walks over
samples of the input stay inside its stored states (between rules 4 and 5); the
analysis does not walk a partial fused DFA, so it cannot say so. The runtime skips
rule 0 for runs that report matches (which SIMD enumeration walks again). The analysis
cannot time the two kernels, so where rule 0 applies it names enum and says what the
rules would pick were the walks faster. The SIMD rule comes first, for any machine
that fits, because SIMD enumeration can run 2.5x faster than the `spec` or `hspec`
that rules 1-4 pick.
"""

from __future__ import annotations

import os

from .analysis import RECOVERY_HORIZON, Convergence, FusedStates
from .simd_fit import counts_in_one_pass

# auto's thresholds, the runtime's too (generated into cpp_runtime/fsm/core/shared_constants.hpp
# by emitters/fsm/shared_constants.py)
SPEC_ACCURACY = 0.99
HSPEC_ACCURACY = 0.5
QUICK_CONVERGENCE_BYTES = 256


def _percent(fraction: float) -> str:
    return f"{100 * fraction:.1f}%"


def _by_threshold(convergence: list[Convergence], threshold: int) -> Convergence | None:
    return next((c for c in convergence if c.threshold == threshold), None)


def runtime_default_threads() -> int:
    """The thread count the runtime runs with when none is asked for (OpenMP's default)."""
    text = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if text.isdigit() and int(text) > 0:
        return int(text)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def choose_scheme(fused: FusedStates, convergence: list[Convergence], accuracy: float | None,
                  slow_misses: int, lookback: int,
                  simd: tuple[int, int, frozenset[str]] | None = None,
                  threads: int | None = None) -> tuple[str, str]:
    """(scheme, one-sentence reason) that `auto` would pick at `threads` threads (None: the
    runtime's default); `simd` is (states, groups of reporting states, the CPU's vector
    paths) of the machine, or None where unknown."""
    threads = runtime_default_threads() if threads is None else threads
    rest = _at_threads(_after_simd_rule(fused, convergence, accuracy, slow_misses, lookback),
                       threads)
    if simd is None or counts_in_one_pass(*simd) is None:
        return rest
    return "enum", (f"the machine fits SIMD enumeration counted in one pass on this CPU "
                    f"({simd[0]} states, {simd[1]} groups of reporting states), whose speed does "
                    "not depend on the input: at run time (without matches) auto times it "
                    "against table walks on the input and takes it where it is at least as "
                    f"fast per core; where walks are faster: {rest[0]}, as {rest[1]}")


def _at_threads(choice: tuple[str, str], threads: int) -> tuple[str, str]:
    """`hspec` becomes `spec` at one thread (the module's docstring)."""
    if choice[0] != "hspec" or threads > 1:
        return choice
    return "spec", (f"{choice[1]} (at one thread, spec: parallel rounds of re-runs cannot beat "
                    "one sequential validation)")


def _after_simd_rule(fused: FusedStates, convergence: list[Convergence], accuracy: float | None,
                     slow_misses: int, lookback: int) -> tuple[str, str]:
    """Rules 1-8 (the module's docstring)."""
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
