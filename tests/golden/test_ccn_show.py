"""Golden `coconetc show` output for every .ccn sample (parser + inference + printer)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from parafuse.ccn_compiler.frontend import check_source
from parafuse.ccn_compiler.printer import format_program
from parafuse.cli.coconetc import main
from tests.conftest import SAMPLES

CASES = sorted(SAMPLES.glob("*.ccn"))


@pytest.mark.parametrize("sample", CASES, ids=[c.stem for c in CASES])
def test_show_sample(sample, golden) -> None:
    module = check_source(sample.read_text(), sample.name)
    for program in module.programs:
        args = ["show", f"samples/{sample.name}", "--program", program]
        result = CliRunner().invoke(main, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        golden.check(f"golden/ccn/{sample.stem}.{program}.show", "coconetc " + " ".join(args),
                     result.stdout)


@pytest.mark.parametrize("sample", CASES, ids=[c.stem for c in CASES])
def test_shown_program_parses_back_to_the_same_types(sample) -> None:
    """`show` prints valid .ccn: checking its output gives the same stage types."""
    module = check_source(sample.read_text(), sample.name)
    for program in module.programs.values():
        again = check_source(format_program(program), "shown.ccn").programs[program.name]
        assert [(s.name, s.type) for s in again.stages] == \
               [(s.name, s.type) for s in program.stages]
