"""How `boostfsm analyze` prints a pattern set compiled to several engines: the list of
engines (kind, patterns, states, positions or literals, table bytes), then each DFA
engine's analysis."""

from __future__ import annotations

import click

from parafuse.cli.fsm_report import analysis_json, print_analysis
from parafuse.fsm_compiler.engines.nfa_engine import NfaEngine
from parafuse.fsm_compiler.engines.prefilter_engine import PrefilterEngine
from parafuse.fsm_compiler.pipeline import EngineSetAnalysis


def _nfa_note(engine: NfaEngine) -> str:
    if engine.max_length is None:
        return "matches unbounded: runs in one sequential pass under every scheme"
    return (f"matches at most {engine.max_length} bytes: every chunk starts exactly from "
            f"{engine.max_length} bytes of lookback, under every scheme")


def _checked_patterns(engine: PrefilterEngine) -> tuple[int, int]:
    """(patterns whose factor ends a guard checks first, patterns compared in place)."""
    guarded = sum(len(confirm.tags) for confirm in engine.confirms if confirm.guards)
    literal = sum(len(confirm.tags) for confirm in engine.confirms if confirm.literals)
    return guarded, literal


def _prefilter_note(engine: PrefilterEngine) -> str:
    bounded = [confirm.reach for confirm in engine.confirms if confirm.reach is not None]
    unbounded = len(engine.confirms) - len(bounded)
    lookback = max(confirm.factors.longest for confirm in engine.confirms) - 1
    guarded, literal = _checked_patterns(engine)
    return (f"a literal DFA of {engine.literals.state_count} states finds the "
            f"{engine.factor_count} required factors (under `auto` in chunks exact from "
            f"{lookback} bytes of lookback, its longest factor less one); each "
            f"pattern's NFA confirms the matches that start near a factor: "
            f"{len(bounded)} patterns at most {max(bounded, default=0)} bytes before it, "
            f"{unbounded} back to a byte their matches cannot hold there; patterns that "
            f"first check a second literal near each factor end (a guard): {guarded}; "
            f"patterns compared at the factor ends instead of by an NFA: {literal}")


def engine_rows(analysis: EngineSetAnalysis, choices: list[tuple[str, str]]) -> list[dict]:
    """`choices`: the set runner's `auto` (scheme, reason) per engine on the sample; the
    DFA engines' rows report it (an NFA or prefiltered engine runs one fixed way, which
    its row describes)."""
    tags = analysis.engine_set.tag_names
    rows = []
    for number, item in enumerate(analysis.engines):
        if isinstance(item, PrefilterEngine):
            guarded, literal = _checked_patterns(item)
            rows.append({"engine": number, "kind": "prefilter",
                         "patterns": [tags[index] for index in item.patterns],
                         "states": item.literals.state_count, "literals": item.factor_count,
                         "guarded_patterns": guarded, "literal_patterns": literal,
                         "table_bytes": item.table_bytes(), "auto_scheme": "prefilter",
                         "auto_reason": _prefilter_note(item)})
        elif isinstance(item, NfaEngine):
            rows.append({"engine": number, "kind": "nfa",
                         "patterns": [tags[index] for index in item.patterns],
                         "states": None, "positions": item.position_count,
                         "table_bytes": item.table_bytes(), "max_match_bytes": item.max_length,
                         "auto_scheme": "nfa", "auto_reason": _nfa_note(item)})
        else:
            machine = item.machine
            patterns = [tags[index] for index in analysis.engine_set.engines[number].patterns]
            rows.append({"engine": number, "kind": "dfa", "patterns": patterns,
                         "states": machine.state_count, "table_bytes": machine.table_bytes(),
                         **{key: value
                            for key, value in analysis_json(item, choices[number]).items()
                            if key not in ("machine", "kind", "states", "table_bytes")}})
    return rows


def engine_set_json(analysis: EngineSetAnalysis, choices: list[tuple[str, str]]) -> dict:
    rows = engine_rows(analysis, choices)
    return {"machine": analysis.engine_set.name, "kind": "patterns",
            "engines": rows, "table_bytes": sum(row["table_bytes"] for row in rows)}


def print_engine_set_analysis(analysis: EngineSetAnalysis,
                              choices: list[tuple[str, str]]) -> None:
    rows = engine_rows(analysis, choices)
    total = sum(row["table_bytes"] for row in rows)
    click.echo(f"{analysis.engine_set.name} (pattern set, {len(rows)} engines, "
               f"{total} table bytes)")
    for row, item in zip(rows, analysis.engines, strict=True):
        size = (f"{row['positions']} positions" if row["kind"] == "nfa"
                else f"{row['literals']} literals, a literal DFA of {row['states']} states"
                if row["kind"] == "prefilter" else f"{row['states']} states")
        click.echo(f"engine {row['engine']}: {row['kind']}, {len(row['patterns'])} patterns "
                   f"({', '.join(row['patterns'])}), {size}, {row['table_bytes']} table bytes")
        if isinstance(item, NfaEngine | PrefilterEngine):
            click.echo(f"  auto picks:    {row['auto_scheme']}: {row['auto_reason']}")
        else:
            print_analysis(item, choices[row["engine"]])
