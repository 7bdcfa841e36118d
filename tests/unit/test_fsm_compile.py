"""Compiling .fsm files: explicit machines as written, pattern sets in BFS order,
options, and the reference executor's results and JSON."""

from __future__ import annotations

import json

from click.testing import CliRunner

from parafuse.cli.boostfsm import main
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.fsm_compiler.reference_executor import run_reference
from parafuse.grammar.diagnostics import CompileError, SourceFile
from tests.conftest import SAMPLES

TWO_MACHINES = """
options { scheme spec  lookback 8 }
machine modes {
    default -> idle
    state idle { '"' -> quoted }
    state quoted report inside { '"' -> idle  '\\\\' -> escaped  _ -> quoted }
    state escaped report inside, escape { _ -> quoted }
    start idle
    state lost report never { _ -> idle }
}
options { lookback 32 }
patterns words {
    ab  /ab/
    any /[ab]/
}
"""


def compile_text(text: str, **overrides):
    return compile_file(SourceFile("t.fsm", text), overrides or None)


def test_div7_reports_multiples_of_seven() -> None:
    machine = compile_file(SourceFile("div7.fsm", (SAMPLES / "div7.fsm").read_text())).machines[0]
    for number in range(1, 300):
        result = run_reference(machine, format(number, "b").encode(), True)
        assert machine.state_names[result.final_state] == f"r{number % 7}"
        ends = {offset for offset, _ in result.matches}
        prefixes = {i for i in range(1, number.bit_length() + 1)
                    if int(format(number, "b")[:i], 2) % 7 == 0}
        assert ends == prefixes


def test_explicit_machine_keeps_names_and_drops_unreachable_states() -> None:
    compiled = compile_text(TWO_MACHINES)
    modes = compiled.machines[0]
    assert modes.state_names == ("idle", "quoted", "escaped")
    assert modes.tag_names == ("inside", "escape", "never")
    assert [w.message for w in compiled.warnings] == [
        "state 'lost' is unreachable from start state 'idle' and is dropped"]
    result = run_reference(modes, b'x"a\\"b"', True)
    assert modes.state_names[result.final_state] == "idle"
    assert result.matches == [(2, 0), (3, 0), (4, 0), (4, 1), (5, 0), (6, 0)]
    assert result.counts == (5, 1, 0)


def test_options_apply_to_later_machines_and_flags_override() -> None:
    modes, words = compile_text(TWO_MACHINES).machines
    assert (modes.options.scheme, modes.options.lookback) == ("spec", 8)
    assert (words.options.scheme, words.options.lookback) == ("spec", 32)
    overridden = compile_text(TWO_MACHINES, lookback=4).machines[1]
    assert overridden.options.lookback == 4


def test_pattern_set_states_are_breadth_first_and_tags_ordered() -> None:
    words = compile_text(TWO_MACHINES).machines[1]
    assert words.start == 0 and words.state_names[0] == "0"
    # start = idle (merged), after 'a', after another 'b', after 'ab'; 'a' < 'b' in BFS
    assert words.state_tags == ((), (1,), (1,), (0, 1))
    result = run_reference(words, b"xaab", True)
    assert result.matches == [(2, 1), (3, 1), (4, 0), (4, 1)]
    assert result.final_state == 3


def test_empty_input_reports_nothing() -> None:
    words = compile_text(TWO_MACHINES).machines[1]
    result = run_reference(words, b"", True)
    assert (result.final_state, result.counts, result.matches) == (0, (0, 0), [])


def test_run_prints_the_runner_json(tmp_path) -> None:
    source, data = tmp_path / "t.fsm", tmp_path / "in.txt"
    source.write_text(TWO_MACHINES)
    data.write_bytes(b"abab")
    result = CliRunner().invoke(main, ["run", str(source), str(data), "--backend", "reference",
                                       "--machine", "words", "--json", "--matches"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert list(payload) == ["machine", "bytes", "final_state", "counts", "matches", "scheme",
                             "requested_scheme", "reason", "threads", "seconds", "gbps"]
    assert payload["counts"] == {"ab": 2, "any": 4}
    assert payload["matches"] == [[1, "any"], [2, "ab"], [2, "any"], [3, "any"], [4, "ab"],
                                  [4, "any"]]
    assert (payload["scheme"], payload["threads"], payload["final_state"]) == ("reference", 1, 3)


def test_run_needs_machine_when_file_has_several(tmp_path) -> None:
    source = tmp_path / "t.fsm"
    source.write_text(TWO_MACHINES)
    result = CliRunner().invoke(main, ["run", str(source), str(source), "--backend",
                                       "reference"])
    assert result.exit_code == 1
    assert "choose one with --machine" in result.stderr


def test_error_snippet_is_the_right_line_with_latin1_bytes_and_crlf() -> None:
    text = ("# a comment with \x85 and \x0c\r\nmachine m {\r\n  start a\r\n"
            "  state a { 'a' -> b }\r\n}\r\n")
    try:
        compile_text(text)
    except CompileError as error:
        assert str(error.location) == "t.fsm:4:20"
        assert error.render().splitlines()[1] == "      state a { 'a' -> b }"
    else:
        raise AssertionError("expected an error")
