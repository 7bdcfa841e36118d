"""The analysis results a generated project embeds (stage 4 of `boostfsm compile`).

The emitter prints these and decides nothing: `project_analysis` measures them once,
before any C++ is printed, and `ProjectAnalysis` carries them to the emitter.

    training hints   convergence and lookback accuracy on the training sample (or on
                     seeded random bytes), for the runtime's `auto` choice
    fused bound      max_fused_states, lowered by the analysis budgets and by the budget
                     of fused tables a project embeds
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..compiled import CompiledMachine
from .analysis import convergence, fused_bound, lookback_accuracy

UNKNOWN = (1 << 64) - 1  # a hint not measured (kUnknown in cpp_runtime/fsm/core/tables.hpp)
FUSED_BLOB_BUDGET = 16 << 20  # bytes of fused tables a generated project embeds
MIN_ROW = 8  # entries of a table row at least (kSlots in cpp_runtime/fsm/core/count.hpp)
TRAINING_BYTES = 1 << 16  # the seeded random sample used without --train


@dataclass(frozen=True)
class TrainingHints:
    """What the compile-time analysis measured, for `auto` (UNKNOWN where not measured)."""

    accuracy_ppm: int = UNKNOWN  # lookback accuracy on the training sample, parts per million
    converge2_p90: int = UNKNOWN  # bytes until <= 2 paths remain at 90% of positions
    converge4_median: int = UNKNOWN  # bytes until <= 4 paths remain at half the positions


@dataclass(frozen=True)
class ProjectAnalysis:
    """Everything the emitter needs from the analysis of one machine."""

    hints: TrainingHints
    fused_bound: int  # fused states the blob's fused DFA is explored to


def table_shift(classes: int) -> int:
    """log2 of a table row's length: classes rounded up to a power of two, at least MIN_ROW."""
    return max(MIN_ROW.bit_length() - 1, (classes - 1).bit_length())


def training_hints(machine: CompiledMachine, sample: bytes | None) -> TrainingHints:
    """Convergence and lookback accuracy on the training sample (random bytes without one)."""
    if sample is None:
        sample = np.random.default_rng(0).integers(0, 256, TRAINING_BYTES, dtype=np.uint8).tobytes()
    classes = machine.byte_class[np.frombuffer(sample, dtype=np.uint8)].astype(np.int64)
    steps = {item.threshold: item for item in convergence(machine, classes)}
    accuracy, _, _ = lookback_accuracy(machine, classes, None,
                                       machine.options.lookback)

    def known(value: int | None) -> int:
        return UNKNOWN if value is None else value

    return TrainingHints(
        accuracy_ppm=UNKNOWN if accuracy is None else round(accuracy * 1e6),
        converge2_p90=known(steps[2].p90) if 2 in steps else UNKNOWN,
        converge4_median=known(steps[4].median) if 4 in steps else UNKNOWN)


def emitted_fused_bound(machine: CompiledMachine, blob_budget: int = FUSED_BLOB_BUDGET) -> int:
    """max_fused_states, lowered by the analysis budgets and by the blob budget."""
    bound, _ = fused_bound(machine, machine.options.max_fused_states, 4)
    row_bytes = 4 * (machine.state_count + (1 << table_shift(machine.class_count)))
    return max(1, min(bound, blob_budget // row_bytes))


def project_analysis(machine: CompiledMachine, train_sample: bytes | None,
                     blob_budget: int = FUSED_BLOB_BUDGET) -> ProjectAnalysis:
    """The analysis of `machine` that its project embeds (`train_sample`: --train's bytes;
    `blob_budget`: bytes of fused tables, shared out among the engines of a set)."""
    return ProjectAnalysis(training_hints(machine, train_sample),
                           emitted_fused_bound(machine, blob_budget))


def untrained_analysis(machine: CompiledMachine) -> ProjectAnalysis:
    """No training hints (the table-driven driver's tests): only the fused bound."""
    return ProjectAnalysis(TrainingHints(), emitted_fused_bound(machine))
