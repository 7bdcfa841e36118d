"""What the analysis measures of a token set (boostfsm analyze, and the hints a project embeds).

    loop_states(token_set)         live non-accepting states on or between cycles: where a
                                   scan may read without bound past its last accept (the
                                   runtime keeps Reps' memo for these; none: no memo)
    fall_in_step(token_set, data)  bytes a tokenization started at a wrong position takes
                                   to share a token start with the true one (median, p90,
                                   never), over seeded random wrong starts of the sample
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .reference_tokenizer import LongestMatches, token_steps
from .token_sets import NO_RULE, CompiledTokenSet

FALL_STARTS = 256  # wrong starts measured per sample
FALL_SAMPLE_LIMIT = 1 << 16  # bytes of the sample analysed
FALL_TAIL = 1 << 10  # falling in step this close to the sample's end counts as never


def loop_states(token_set: CompiledTokenSet) -> np.ndarray:
    """(states,) bool: live non-accepting states that some cycle of such states reaches
    and leaves (pruning those without a predecessor or a successor among them)."""
    transitions = token_set.transitions
    alive = token_set.accept_rule == NO_RULE
    if token_set.dead != NO_RULE:
        alive[token_set.dead] = False
    while True:
        inside = alive[transitions] & alive[:, None]
        has_successor = inside.any(axis=1)
        has_predecessor = np.zeros_like(alive)
        sources, classes = np.nonzero(inside)
        has_predecessor[transitions[sources, classes]] = True
        kept = alive & has_successor & has_predecessor
        if (kept == alive).all():
            return kept
        alive = kept


@dataclass(frozen=True)
class FallInStep:
    median: int | None  # None: no start measured, or fewer than half fell in step
    p90: int | None
    never: int  # starts that did not fall in step before the sample's last KiB
    positions: int

    @property
    def never_fraction(self) -> float | None:
        return self.never / self.positions if self.positions else None


def fall_in_step(token_set: CompiledTokenSet, sample: bytes) -> FallInStep:
    """Bytes from each wrong start to the first token start shared with the true run."""
    sample = bytes(sample[:FALL_SAMPLE_LIMIT])
    matches = LongestMatches(token_set, sample)
    true_starts = {start for _, start, _ in token_steps(token_set, sample, 0, matches)}
    wrong = np.setdiff1d(np.arange(1, len(sample)), np.fromiter(true_starts, dtype=np.int64))
    wrong = wrong[wrong < len(sample) - FALL_TAIL]
    chosen = np.random.default_rng(0).choice(wrong, min(FALL_STARTS, len(wrong)), replace=False)
    starts = sorted(chosen.tolist())
    distances: list[int] = []
    for begin in starts:
        for _, start, end in token_steps(token_set, sample, begin, matches):
            if start in true_starts and start < len(sample) - FALL_TAIL:
                distances.append(start - begin)
                break
            if end >= len(sample) - FALL_TAIL:
                break
    never = len(starts) - len(distances)
    total = len(starts)
    return FallInStep(_quantile(distances, 0.5, total), _quantile(distances, 0.9, total),
                      never, total)


def _quantile(distances: list[int], q: float, total: int) -> int | None:
    """The q-quantile over all starts, counting those that never fell in step as infinite."""
    if not total:
        return None
    rank = int(np.ceil(q * total)) - 1
    ordered = sorted(distances)
    return ordered[rank] if rank < len(ordered) else None
