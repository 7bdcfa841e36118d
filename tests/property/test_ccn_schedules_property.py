"""Random well-typed programs under random directive sequences: every sequence is either
rejected with a located error or gives the default schedule's results."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from parafuse.ccn_compiler.frontend import check_source
from parafuse.grammar.diagnostics import CompileError
from tests.property.ccn_random_programs import programs, schedules
from tests.schedule_compare import assert_same_results


@st.composite
def scheduled_programs(draw):
    text, builder = draw(programs())
    return text, draw(schedules(builder))


WRONG_COUNT = re.compile(r"reorder binds \d+ names, but (\d+) of the listed")


def _check_with_gather_names(program_text: str, schedule_text: str):
    """Check the file; where only reorder's number of names is wrong, give it the right
    number (the error says how many) and check again."""
    for _ in range(6):
        try:
            return check_source(program_text + schedule_text, "rand.ccn"), schedule_text
        except CompileError as error:
            match = WRONG_COUNT.match(error.message)
            if not match:
                raise
            lines = schedule_text.split("\n")
            index = error.location.line - program_text.count("\n") - 1
            head, call = lines[index].split("reorder(", 1)
            kept = [n.strip() for n in head.replace("=", "").split(",") if n.strip()]
            needed = int(match.group(1))
            names = kept[:needed] + [f"g{index}_{i}" for i in range(needed - len(kept))]
            call = "reorder(" + call
            lines[index] = "    " + (f"{', '.join(names)} = " if names else "") + call
            schedule_text = "\n".join(lines)
    raise AssertionError("reorder name repair did not converge")


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(scheduled_programs(), st.integers(1, 4), st.integers(1, 13))
def test_random_schedule_is_rejected_or_equivalent(case, ranks: int, n: int) -> None:
    program_text, schedule_text = case
    default = check_source(program_text, "rand.ccn").programs["rand"]  # must be well-typed
    try:
        module, schedule_text = _check_with_gather_names(program_text, schedule_text)
    except CompileError as error:
        assert error.location is not None and error.location.line > program_text.count("\n")
        event(f"rejected: {error.message.split(':')[0][:40]}")
        return
    for kind in ("split", "reorder", "shard", "fuse", "overlap", "tune"):
        if f"{kind}(" in schedule_text:
            event(f"accepted with {kind}")
    scheduled = module.scheduled[("rand", "random")]
    assert_same_results(default, scheduled, ranks, {"N": n}, iters=2,
                        what=f"\n{program_text}{schedule_text}")
