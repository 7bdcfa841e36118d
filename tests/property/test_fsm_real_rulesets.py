"""Real rule sets in one pattern set each, compiled to several engines: rebar's regexes
over the start of sherlock.txt (tests/data/rebar), and Nosey Parker's first rules over
text with their examples planted (tests/data/noseyparker), give Hyperscan's matches on
the reference executor and under every C++ scheme."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from parafuse.fsm_compiler.engines.engines import EngineSet, engine_kind
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import SourceFile
from tests.property.fsm_cpp_driver import SCHEMES, configurations
from tests.property.fsm_engine_set_checks import assert_engine_set_equal_reference
from tests.required_tools import require_cxx, require_module

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


@pytest.fixture(scope="module")
def nosey_set():
    entries = json.loads((DATA / "noseyparker" / "rules_head.json").read_text())
    rules = [sources.Rule(entry["tag"], entry["pattern"], "", tuple(entry["examples"]),
                          tuple(entry["negative_examples"])) for entry in entries]
    source = sources.fsm_source("nosey", rules)
    return rules, compile_file(SourceFile("nosey.fsm", source)).machines[0]


def test_noseyparker_rules_with_planted_examples_equal_hyperscan(nosey_set, tmp_path) -> None:
    """Nosey Parker's first 24 rules (all on a prefiltered engine, assertions included) over prose
    with every example and negative example planted, each between runs of NUL bytes that
    no rule crosses: Hyperscan's matches under every scheme; each example's rule matches
    inside it (or at the newline after it, which a trailing `(?:[^\\w-]|$)` consumes),
    and no negative example's rule does."""
    require_module("hyperscan")
    require_cxx()
    rules, machine = nosey_set
    assert isinstance(machine, EngineSet)
    assert {engine_kind(engine) for engine in machine.engines} == {"prefilter"}
    separator = b"\n" + b"\x00" * 48 + b"\n"
    data = bytearray((DATA / "rebar" / "sherlock_head.txt").read_bytes()[:3000])
    spans = []  # (rule index, is an example, begin, end)
    for index, rule in enumerate(rules):
        for text in rule.examples + rule.negative_examples:
            data += separator
            spans.append((index, text in rule.examples, len(data), len(data) + len(text.encode())))
            data += text.encode()
    data = bytes(data + separator)
    configs = [f"{scheme}:{threads}:{chunks}" for scheme in SCHEMES for threads in (1, 3)
               for chunks in (1, 7, 64)]
    _, _, matches = assert_engine_set_equal_reference(machine, data, tmp_path, configs)
    assert [tuple(match) for match in matches] == sources.hyperscan_matches(rules, data)
    for index, example, begin, end in spans:
        inside = any(tag == index and begin < offset <= end + 1 for offset, tag in matches)
        assert inside == example, (rules[index].tag, data[begin:end])
