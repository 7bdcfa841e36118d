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
        for schedule in module.schedule_names(program):
            args = ["show", f"samples/{sample.name}", "--program", program,
                    "--schedule", schedule]
            result = CliRunner().invoke(main, args, catch_exceptions=False)
            assert result.exit_code == 0, result.output
            golden.check(f"golden/ccn/{sample.stem}.{program}.{schedule}.show",
                         "coconetc " + " ".join(args), result.stdout)


@pytest.mark.parametrize("sample", CASES, ids=[c.stem for c in CASES])
def test_shown_program_parses_back_to_the_same_types(sample) -> None:
    """`show` of an unscheduled program is valid .ccn that checks to the same types.

    (A scheduled program is printed in the same syntax, but its sliced updates of
    replicated states are only legal as the result of a reorder.)"""
    module = check_source(sample.read_text(), sample.name)
    for program in module.programs.values():
        again = check_source(format_program(program), "shown.ccn").programs[program.name]
        assert [(s.name, s.type) for s in again.flat_stages()] == \
               [(s.name, s.type) for s in program.flat_stages()]
