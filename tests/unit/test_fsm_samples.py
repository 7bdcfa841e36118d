"""Every .fsm sample: compiles without warnings, analyses, and computes what its
comment says on its generated input (checked against independent oracles)."""

from __future__ import annotations

import csv as csv_module
import io
import sys

import pytest

from parafuse.fsm_compiler.pipeline import analyse, compile_file
from parafuse.fsm_compiler.reference_executor import run_reference
from parafuse.grammar.diagnostics import SourceFile
from tests.conftest import SAMPLES
from tests.required_tools import require_module

sys.path.insert(0, str(SAMPLES))
import gen_huffman  # noqa: E402
import inputs  # noqa: E402

SIZE = 1 << 16
SAMPLE_NAMES = sorted(path.stem for path in SAMPLES.glob("*.fsm"))


def compiled(name: str):
    path = SAMPLES / f"{name}.fsm"
    return compile_file(SourceFile(str(path), path.read_text(encoding="latin-1")))


def test_every_sample_has_an_input_generator() -> None:
    assert set(SAMPLE_NAMES) == set(inputs.GENERATORS)


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_sample_compiles_cleanly_and_analyses(name: str) -> None:
    assert (SAMPLES / f"{name}.fsm").read_text().startswith("#")
    result = compiled(name)
    assert result.warnings == []
    data = inputs.GENERATORS[name](SIZE)
    assert data == inputs.GENERATORS[name](SIZE)  # deterministic
    for machine in result.machines:
        analysis = analyse(machine, data, name)
        assert analysis.fused.count >= 1 and analysis.sample_bytes == len(data)
        assert 0.0 <= analysis.lookback_accuracy <= 1.0
        assert [c.threshold for c in analysis.convergence] == [1, 2, 4]


def test_weblog_matches_hyperscan_on_its_input() -> None:
    require_module("hyperscan")
    from tests.property.fsm_regex_strategies import hyperscan_matches
    result = compiled("weblog")
    pattern_set, machine = result.fsm_file.machines[0], result.machines[0]
    patterns = [(p.text, p.flags) for p in pattern_set.patterns]
    data = inputs.weblog(SIZE)
    matches = run_reference(machine, data, True).matches
    assert matches == hyperscan_matches(patterns, data)
    assert len(matches) > 100


def test_csv_counts_agree_with_the_csv_module() -> None:
    data = inputs.csv(SIZE)
    rows = list(csv_module.reader(io.StringIO(data.decode(), newline="")))
    counts = dict(zip(("field", "record"),
                      run_reference(compiled("csv").machines[0], data, False).counts))
    assert counts == {"record": len(rows), "field": sum(len(row) - 1 for row in rows)}


def test_huffman_sample_is_generated_and_decodes() -> None:
    code = gen_huffman.huffman_code()
    assert (SAMPLES / "huffman.fsm").read_text() == gen_huffman.decoder_source(code).lstrip()
    text = "the quick brown fox jumps over the lazy dog\nsherlock holmes\n"
    text = "".join(char for char in text if char in {c for c, _ in
                                                      gen_huffman.FREQUENCIES.values()})
    bits = gen_huffman.encode(text, code)
    data = "\n".join(bits[i:i + 7] for i in range(0, len(bits), 7)).encode()
    machine = compiled("huffman").machines[0]
    result = run_reference(machine, data, True)
    symbol_of = {char: symbol for symbol, (char, _) in gen_huffman.FREQUENCIES.items()}
    assert [machine.tag_names[tag] for _, tag in result.matches] == [symbol_of[c] for c in text]


def test_clexer_tracks_comments_and_strings() -> None:
    code = b'int x = 1; /* ; { } */ s = "a;\\"{"; // ;;\nc = \';\'; { }\n'
    machine = compiled("clexer").machines[0]
    counts = dict(zip(machine.tag_names, run_reference(machine, code, False).counts))
    assert counts == {"statement_end": 3, "block_open": 1, "block_close": 1, "comment": 2,
                      "string": 1}
