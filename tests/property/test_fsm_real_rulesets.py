"""Real rule sets in one pattern set each, compiled to several engines: rebar's regexes
over the start of sherlock.txt (tests/data/rebar), and Nosey Parker's first rules over
text with their examples planted (tests/data/noseyparker), give Hyperscan's matches on
the reference executor and under every C++ scheme (the sets: tests/property/conftest.py)."""

from __future__ import annotations

from parafuse.fsm_compiler.engines.engines import EngineSet, engine_kind
from tests.property.conftest import DATA, sources
from tests.property.fsm_cpp_driver import SCHEMES, configurations
from tests.property.fsm_engine_set_checks import assert_engine_set_equal_reference
from tests.required_tools import require_cxx, require_module


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


def planted_examples(rules, spans: list | None = None) -> bytes:
    """Prose with every rule's examples and negative examples planted, each between runs of
    NUL bytes that no rule crosses; `spans` gets (rule index, is an example, begin, end)."""
    separator = b"\n" + b"\x00" * 48 + b"\n"
    data = bytearray((DATA / "rebar" / "sherlock_head.txt").read_bytes()[:3000])
    for index, rule in enumerate(rules):
        for text in rule.examples + rule.negative_examples:
            data += separator
            if spans is not None:
                spans.append((index, text in rule.examples, len(data),
                              len(data) + len(text.encode())))
            data += text.encode()
    return bytes(data + separator)


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
    spans: list[tuple[int, bool, int, int]] = []
    data = planted_examples(rules, spans)
    configs = [f"{scheme}:{threads}:{chunks}" for scheme in SCHEMES for threads in (1, 3)
               for chunks in (1, 7, 64)]
    _, _, matches = assert_engine_set_equal_reference(machine, data, tmp_path, configs)
    assert [tuple(match) for match in matches] == sources.hyperscan_matches(rules, data)
    for index, example, begin, end in spans:
        inside = any(tag == index and begin < offset <= end + 1 for offset, tag in matches)
        assert inside == example, (rules[index].tag, data[begin:end])
