"""The reference executor of a pattern set compiled to several engines: each engine runs
over the whole input (DFA engines with reference_executor.py, NFA engines with
nfa_engine.NfaRunner, prefiltered engines with prefilter_engine.run_prefilter); counts
add up per tag, matches merge by offset, then tag order.
"""

from __future__ import annotations

from ..compiled import CompiledMachine
from ..reference_executor import RunResult, run_reference
from .engines import DfaEngine, EngineSet
from .nfa_engine import NfaEngine, NfaRunner
from .prefilter_engine import PrefilterEngine, run_prefilter

_RUNNERS: dict[int, tuple[NfaEngine, NfaRunner]] = {}  # by id(engine); the engine kept alive


def _runner(engine: NfaEngine) -> NfaRunner:
    """The engine's runner, its tables built once per engine."""
    cached = _RUNNERS.get(id(engine))
    if cached is None or cached[0] is not engine:
        cached = _RUNNERS[id(engine)] = (engine, NfaRunner(engine))
    return cached[1]


def run_engine_set(engine_set: EngineSet, data: bytes, with_matches: bool) -> RunResult:
    """Final states (None for an engine without numbered states), counts, sorted matches."""
    counts = [0] * len(engine_set.tag_names)
    matches: list[tuple[int, int]] = []
    final_states: list[int | None] = []
    for engine in engine_set.engines:
        if isinstance(engine, DfaEngine):
            result = run_reference(engine.machine, data, with_matches)
            final_states.append(result.final_state)
            for tag, count in enumerate(result.counts):
                counts[tag] += count
            matches.extend(result.matches or [])
        else:
            if isinstance(engine, PrefilterEngine):
                runners = [_runner(confirm.nfa) for confirm in engine.confirms]
                found = run_prefilter(engine, runners, bytes(data))
            else:
                found = _runner(engine).matches(bytes(data))
            final_states.append(None)
            for _, tag in found:
                counts[tag] += 1
            if with_matches:
                matches.extend(found)
    return RunResult(final_states, tuple(counts), sorted(matches) if with_matches else None)


def run_any_reference(machine: CompiledMachine | EngineSet, data: bytes,
                      with_matches: bool) -> RunResult:
    """The reference run of a machine or of a set of several engines."""
    if isinstance(machine, EngineSet):
        return run_engine_set(machine, data, with_matches)
    return run_reference(machine, data, with_matches)
