"""Pattern sets split into several engines (small `max_states` forces DFA splits and
NFA engines): the reference executor equals Hyperscan, and every C++ scheme at 1-3
threads and many chunkings equals the reference."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from parafuse.fsm_compiler.engines import nfa_engine
from parafuse.fsm_compiler.engines.engines import EngineSet, engine_kind
from parafuse.fsm_compiler.engines.nfa_engine import BLOCK_WIDTHS
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import SourceFile
from tests.property.fsm_engine_set_checks import assert_engine_set_equal_reference
from tests.property.fsm_regex_strategies import (
    HAYSTACK_BYTES,
    hyperscan_matches,
    hyperscan_refusal,
    regexes,
)
from tests.required_tools import require_cxx, require_module

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
flags = st.sampled_from(["", "", "i", "s", "m"])
pattern_lists = st.lists(st.tuples(regexes, flags), min_size=2, max_size=6)


def compile_set(patterns: list[tuple[str, str]], max_states: int):
    lines = [f"    t{index} /{regex}/{flag}" for index, (regex, flag) in enumerate(patterns)]
    source = (f"options {{ max_states {max_states} }}\npatterns p {{\n" + "\n".join(lines)
              + "\n}\n")
    return compile_file(SourceFile("p.fsm", source)).machines[0]


def test_split_set_lists_every_engine_kind() -> None:
    """Packing in file order: four patterns share a DFA of 20 states, the fifth (24 states
    alone) would pass 40 with them; a window pattern fits no DFA of 40 states and runs on
    an NFA engine."""
    patterns = [("ab", ""), ("cd", ""), ("ef", ""), ("[a-f]{3}x", ""), ("[ab][^x]{3}y", ""),
                ("a.{3,9}b", "")]
    engine_set = compile_set(patterns, 40)
    assert isinstance(engine_set, EngineSet)
    kinds = [engine_kind(engine) for engine in engine_set.engines]
    assert kinds == ["dfa", "dfa", "nfa"], kinds
    assert [engine.patterns for engine in engine_set.engines] == [(0, 1, 2, 3), (4,), (5,)]
    assert engine_set.engines[-1].patterns == (5,) and engine_set.engines[-1].max_length == 11


@SETTINGS
@given(patterns=pattern_lists, data=st.lists(st.sampled_from(HAYSTACK_BYTES), max_size=300),
       max_states=st.sampled_from([3, 8, 30, 60]), block_width=st.sampled_from(BLOCK_WIDTHS))
def test_split_sets_equal_hyperscan_and_every_scheme(patterns, data, max_states, block_width,
                                                     tmp_path, monkeypatch) -> None:
    """NFA follow blocks of every width (8, 4 and 2 positions) step alike."""
    require_module("hyperscan")
    require_cxx()
    monkeypatch.setattr(nfa_engine, "BLOCK_WIDTHS", (block_width,))
    data = bytes(data)
    assume(hyperscan_refusal(patterns) is None)
    machine = compile_set(patterns, max_states)
    if not isinstance(machine, EngineSet):  # everything fit one DFA after all
        event("one DFA")
        return
    event("several engines")
    _, _, matches = assert_engine_set_equal_reference(machine, data, tmp_path)
    assert [tuple(match) for match in matches] == hyperscan_matches(patterns, data)
