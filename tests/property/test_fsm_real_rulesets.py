"""Real rule sets in one pattern set each, compiled to several engines: rebar's regexes
over the start of sherlock.txt (tests/data/rebar) give Hyperscan's matches on the
reference executor and under every C++ scheme at 1 and 2 threads."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from parafuse.fsm_compiler.engines import EngineSet
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import SourceFile
from tests.property.fsm_cpp_driver import configurations
from tests.property.fsm_engine_set_checks import assert_engine_set_equal_reference
from tests.required_tools import require_cxx, require_module

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
sys.path.insert(0, str(REPO / "bench"))
import fsm_ruleset_sources as sources  # noqa: E402

REBAR_PARSED_TODAY = 46  # of 53: \b, inline flags and \p{..} come with the version 2 syntax


@pytest.fixture(scope="module")
def rebar_set():
    rules = sources.parsable(sources.rebar_rules(DATA / "rebar"))
    assert len(rules) >= REBAR_PARSED_TODAY
    machine = compile_file(SourceFile("rebar.fsm", sources.fsm_source("rebar", rules))).machines[0]
    return rules, machine


def test_rebar_set_equals_hyperscan_under_every_scheme(rebar_set, tmp_path) -> None:
    require_module("hyperscan")
    require_cxx()
    rules, machine = rebar_set
    assert isinstance(machine, EngineSet) and len(machine.engines) > 2
    data = (DATA / "rebar" / "sherlock_head.txt").read_bytes()[:24_000]
    configs = [config for config in configurations(len(data), threads=(1, 2))
               if config.split(":")[2] in ("1", "7", "64")]
    _, counts, matches = assert_engine_set_equal_reference(machine, data, tmp_path, configs,
                                                           train=data)
    expected = sources.hyperscan_matches(rules, data)
    assert [tuple(match) for match in matches] == expected
    assert sum(counts) == len(expected) > 10_000
