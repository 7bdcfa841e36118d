"""Random well-typed programs under random directive sequences: every sequence is either
rejected with a located error or gives the default schedule's results; enough of them are
accepted, and each directive is among the accepted often enough, for that to test it (the
examples are derandomized, so that these floors do not flake)."""

from __future__ import annotations

import re
from collections import Counter

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from parafuse.ccn_compiler.frontend import check_source
from parafuse.grammar.diagnostics import CompileError
from tests.property.ccn_random_programs import DIRECTIVE_ORDER, programs, ranks_for, schedules
from tests.schedule_compare import assert_same_results


@st.composite
def scheduled_programs(draw):
    text, builder = draw(programs())
    return text, draw(schedules(builder, tuple(DIRECTIVE_ORDER)))


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


DIRECTIVES = ("split", "reorder", "shard", "fuse", "overlap", "microbatch", "tune")
EXAMPLES = 600
# Floors on what the random schedules exercise, per EXAMPLES drawn: an accepted schedule
# is compared with the default one; a rejected one only shows that errors are located.
ACCEPTED_FLOOR = 0.45
DIRECTIVE_FLOOR = 0.04  # each directive in at least this share of the accepted schedules


def test_random_schedule_is_rejected_or_equivalent() -> None:
    tally: Counter[str] = Counter()

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(scheduled_programs(), st.integers(1, 4), st.integers(1, 13))
    def check(case, ranks: int, n: int) -> None:
        tally["drawn"] += 1
        if check_one(case, ranks, n):
            tally["accepted"] += 1
            tally.update(kind for kind in DIRECTIVES if f"{kind}(" in case[1])

    check()
    accepted = tally["accepted"]
    assert accepted >= ACCEPTED_FLOOR * tally["drawn"], dict(tally)
    for kind in DIRECTIVES:
        assert tally[kind] >= DIRECTIVE_FLOOR * accepted, (kind, dict(tally))


def check_one(case: tuple[str, str], ranks: int, n: int) -> bool:
    """Rejected with a located error (False), or the default schedule's results (True)."""
    program_text, schedule_text = case
    ranks = ranks_for(program_text, ranks)
    default = check_source(program_text, "rand.ccn").programs["rand"]  # must be well-typed
    try:
        module, schedule_text = _check_with_gather_names(program_text, schedule_text)
    except CompileError as error:
        assert error.location is not None and error.location.line > program_text.count("\n")
        event(f"rejected: {error.message.split(':')[0][:40]}")
        return False
    scheduled = module.scheduled[("rand", "random")]
    assert_same_results(default, scheduled, ranks, {"N": n}, iters=2,
                        what=f"\n{program_text}{schedule_text}")
    return True
