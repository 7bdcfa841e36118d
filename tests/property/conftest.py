"""Fixtures of the property tests: real rule sets compiled once a module (rebar's regexes,
Nosey Parker's first rules), for the CPU's and the GPU's engine-set tests."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import SourceFile

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
sys.path.insert(0, str(REPO / "bench"))
import fsm_ruleset_sources as sources  # noqa: E402

REBAR_RULES = 53  # every regex Hyperscan accepts


@pytest.fixture(scope="module")
def rebar_set():
    rules = sources.parsable(sources.rebar_rules(DATA / "rebar"))
    assert len(rules) == REBAR_RULES
    machine = compile_file(SourceFile("rebar.fsm", sources.fsm_source("rebar", rules))).machines[0]
    return rules, machine


@pytest.fixture(scope="module")
def nosey_set():
    entries = json.loads((DATA / "noseyparker" / "rules_head.json").read_text())
    rules = [sources.Rule(entry["tag"], entry["pattern"], "", tuple(entry["examples"]),
                          tuple(entry["negative_examples"])) for entry in entries]
    source = sources.fsm_source("nosey", rules)
    return rules, compile_file(SourceFile("nosey.fsm", source)).machines[0]
