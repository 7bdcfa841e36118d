"""The boostfsm data path, one function per stage: parse -> NFA/DFA -> minimise -> analyse.

`analyse` reports on a machine (boostfsm analyse); `analyse_for_project` measures what
a generated project embeds (boostfsm compile and run), handed to the emitter as data.

The CLI calls these in order; no stage reaches back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from parafuse.grammar.diagnostics import CompileWarning, SourceFile
from parafuse.grammar.fsm_ast import ExplicitMachine, FsmFile, Machine, PatternSet, TokenSet
from parafuse.grammar.fsm_parser import parse_fsm

from .analysis.analysis import (
    SAMPLE_LIMIT,
    Convergence,
    FusedStates,
    convergence,
    fused_state_count,
    lookback_accuracy,
)
from .analysis.project_analysis import FUSED_BLOB_BUDGET, ProjectAnalysis, project_analysis
from .automata.dfa import SubsetDfa
from .automata.explicit import compile_explicit
from .automata.never_match import check_patterns_can_match
from .automata.pattern_sets import build_subset_dfa, minimal_machine
from .compiled import CompiledMachine
from .engines.engines import DfaEngine, EngineSet, compile_pattern_set
from .engines.nfa_engine import NfaEngine
from .engines.prefilter_engine import PrefilterEngine
from .options import MachineOptions, check_machine_names, machine_options
from .tokens.token_sets import CompiledTokenSet, compile_token_set

RANDOM_SAMPLE_BYTES = 1 << 16


def parse_file(source: SourceFile) -> FsmFile:
    """Stage 1: text -> AST (regexes parsed too), with unique machine names and no
    pattern that can never match."""
    fsm_file = parse_fsm(source)
    check_machine_names(fsm_file)
    for machine in fsm_file.machines:
        if isinstance(machine, PatternSet):
            check_patterns_can_match(machine)
    return fsm_file


def determinise(pattern_set: PatternSet, options: MachineOptions) -> SubsetDfa:
    """Stage 2 (pattern sets): regexes -> NFA -> DFA by subset construction."""
    return build_subset_dfa(pattern_set, options)


def minimise_dfa(
    pattern_set: PatternSet, dfa: SubsetDfa, options: MachineOptions
) -> CompiledMachine:
    """Stage 3 (pattern sets): minimal DFA, states in BFS order, final byte classes."""
    return minimal_machine(pattern_set, dfa, options)


def compile_machine(
    machine: Machine, options: MachineOptions, warnings: list[CompileWarning]
) -> CompiledMachine | EngineSet | CompiledTokenSet:
    """Stages 2-3 for one machine of any kind; a pattern set too big for one DFA becomes
    several engines (engines/engines.py)."""
    if isinstance(machine, ExplicitMachine):
        return compile_explicit(machine, options, warnings)
    if isinstance(machine, TokenSet):
        return compile_token_set(machine, options, warnings)
    return compile_pattern_set(machine, options)  # parse_file checked that each can match


@dataclass
class CompiledFile:
    fsm_file: FsmFile
    machines: list[CompiledMachine | EngineSet | CompiledTokenSet]
    warnings: list[CompileWarning] = field(default_factory=list)


def compile_file(
    source: SourceFile, overrides: dict | None = None, only: str | None = None
) -> CompiledFile:
    """Parse (stage 1) and compile (stages 2-3) every machine (or just `only`)."""
    return compile_machines(parse_file(source), overrides, only)


def compile_machines(
    fsm_file: FsmFile, overrides: dict | None = None, only: str | None = None
) -> CompiledFile:
    """Stages 2-3 for every machine of a parsed file (or just `only`); warnings are
    collected."""
    options = machine_options(fsm_file, overrides)
    result = CompiledFile(fsm_file, [])
    for machine in fsm_file.machines:
        if only is None or machine.name.name == only:
            result.machines.append(
                compile_machine(machine, options[machine.name.name], result.warnings))
    return result


@dataclass(frozen=True)
class MachineAnalysis:
    machine: CompiledMachine
    fused: FusedStates
    convergence: list[Convergence]
    lookback_accuracy: float | None
    lookback_positions: int
    sample: str  # what the sample was
    sample_bytes: int


def random_sample() -> bytes:
    """The sample used without --input: seeded uniform random bytes."""
    return np.random.default_rng(0).integers(0, 256, RANDOM_SAMPLE_BYTES, dtype=np.uint8).tobytes()


def analyse(machine: CompiledMachine, sample: bytes, sample_name: str) -> MachineAnalysis:
    """Stage 4: fused states, convergence and lookback accuracy on the sample (what `auto`
    picks is the runtime's to say: cli/fsm_runtime_choice.py asks the machine's runner)."""
    sample = sample[:SAMPLE_LIMIT]
    classes = np.frombuffer(bytes(sample), dtype=np.uint8)
    classes = machine.byte_class[classes].astype(np.int64)
    fused = fused_state_count(machine, machine.options.max_fused_states)
    steps = convergence(machine, classes)
    lookback = machine.options.lookback
    accuracy, tried, _ = lookback_accuracy(machine, classes, None, lookback)
    return MachineAnalysis(machine, fused, steps, accuracy, tried, sample_name, len(sample))


def analyse_for_project(
    machine: CompiledMachine | EngineSet, train_sample: bytes | None
) -> ProjectAnalysis | tuple[ProjectAnalysis | None, ...]:
    """Stage 4 for a C++ project: training hints (on --train's bytes, else seeded random
    bytes) and the fused bound the project's tables are explored to; per DFA engine for
    a set of several engines (None for the others)."""
    if isinstance(machine, EngineSet):  # the fused-table budget is shared among the DFAs
        dfas = [engine.machine if isinstance(engine, DfaEngine) else
                engine.literals if isinstance(engine, PrefilterEngine) else None
                for engine in machine.engines]
        budget = FUSED_BLOB_BUDGET // max(1, sum(dfa is not None for dfa in dfas))
        return tuple(None if dfa is None else project_analysis(dfa, train_sample, budget)
                     for dfa in dfas)
    return project_analysis(machine, train_sample)


@dataclass(frozen=True)
class EngineSetAnalysis:
    """`boostfsm analyze` of a set of several engines: each DFA engine analysed as a
    machine; NFA and prefiltered engines described (their scheme is fixed, or that of
    their literal DFA)."""

    engine_set: EngineSet
    engines: tuple[MachineAnalysis | NfaEngine | PrefilterEngine, ...]


def analyse_any(machine: CompiledMachine | EngineSet, sample: bytes, sample_name: str
                ) -> MachineAnalysis | EngineSetAnalysis:
    """Stage 4 for a machine, or for every engine of a set of several."""
    if isinstance(machine, CompiledMachine):
        return analyse(machine, sample, sample_name)
    return EngineSetAnalysis(machine, tuple(
        analyse(engine.machine, sample, sample_name) if isinstance(engine, DfaEngine)
        else engine for engine in machine.engines))
