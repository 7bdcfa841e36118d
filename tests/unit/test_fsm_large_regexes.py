"""Regexes whose size a user controls (long counted repeats, thousands of alternatives,
multi-line regexes with many nodes) compile without an internal error: no walk over the
automaton may recurse once per position (Python's stack is ~1000 frames)."""

from __future__ import annotations

from parafuse.fsm_compiler.automata.nfa import build_position_automaton
from parafuse.fsm_compiler.engines.engines import EngineSet, engine_kind
from parafuse.fsm_compiler.engines.nfa_engine import (
    FOLLOW_TABLE_BUDGET,
    follow_blocks,
    longest_match,
)
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.fsm_compiler.reference_executor import run_reference
from parafuse.grammar.diagnostics import Location, SourceFile
from parafuse.grammar.regex_parser import parse_regex

HERE = Location("t.fsm", 1, 1)


def _automaton(regex: str):
    return build_position_automaton([(0, parse_regex(regex, "", HERE))])


def test_longest_match_of_a_path_longer_than_the_python_stack() -> None:
    assert longest_match(_automaton("[a-c]{5}.{1,2000}z")) == 2006
    assert longest_match(_automaton("x[ab]{3000}y|q")) == 3002
    assert longest_match(_automaton("x[ab]{3000}y+")) is None
    assert longest_match(_automaton("(?:ab|c)?d{2,4}")) == 6


def test_engine_set_with_a_long_nfa_pattern_compiles() -> None:
    """The NFA engine's bound (longest match) over ~1500 positions: a RecursionError once."""
    machine = compile_file(SourceFile("t.fsm", "patterns p {\n  a /abc/\n"
                                      "  u /[a-c]{2}.{1,1500}z/\n}\n")).machines[0]
    assert isinstance(machine, EngineSet)
    nfa = [engine for engine in machine.engines if engine_kind(engine) == "nfa"]
    assert [engine.max_length for engine in nfa] == [1503]


def test_ten_thousand_alternatives_compile() -> None:
    regex = "|".join(f"a{index}b" for index in range(10_000))
    machine = compile_file(SourceFile("t.fsm", f"patterns p {{\n  t /{regex}/\n}}\n")).machines[0]
    result = run_reference(machine, b"a10000b a9999b a0b a00b", True)
    assert result.matches == [(14, 0), (18, 0)]


def test_follow_tables_of_a_long_nfa_stay_within_their_budget() -> None:
    """Follow tables grow with the square of the positions: 256 unions a block of 8
    would take 9 MB for ~1500 positions, past the budget even in blocks of 4; blocks of
    2 take 1/16 of it, and the unions of each block are its positions' follow sets."""
    machine = compile_file(SourceFile("t.fsm", "patterns p {\n  a /abc/\n"
                                      "  u /[a-c]{2}.{1,1500}z/\n}\n")).machines[0]
    [nfa] = [engine for engine in machine.engines if engine_kind(engine) == "nfa"]
    assert nfa.block_width == 2
    widest = 256 * ((nfa.position_count + 7) // 8) * ((nfa.position_count + 63) // 64) * 8
    assert FOLLOW_TABLE_BUDGET < nfa.table_bytes() < widest / 12
    blocks = follow_blocks(nfa)
    assert len(blocks) == (nfa.position_count + 1) // 2 and len(blocks[0]) == 4
    for block, table in enumerate(blocks[:40]):
        first, second = nfa.follow[2 * block], nfa.follow[2 * block + 1]
        assert table == [0, first, second, first | second]
    small = compile_file(SourceFile("t.fsm", "patterns p {\n  a /abc/\n"
                                    "  u /[a-c]{2}.{1,20}z/\n}\n")).machines[0]
    assert [engine.block_width for engine in small.engines if engine_kind(engine) == "nfa"] \
        in ([], [8])
