"""What `auto` runs for a token set on an input of 1 MiB or more, measured on the input
(cpp_runtime/fsm/tokens/auto.hpp): hspec where lookback guesses hold, enum where they fail
but the true boundary is always within enum's reach and wrong starts fall in step fast,
seq where wrong starts never fall in step. Each run also gives seq's exact tokens."""

from __future__ import annotations

from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import SourceFile
from tests.property.fsm_token_driver import auto_choices
from tests.required_tools import require_cxx

# Tokens of four `a`s; a `;` every 41 bytes resets their phase. A start one byte back
# (lookback 1) is in the wrong phase three times in four, falls in step at the next `;`,
# and the true boundary is never more than 3 bytes away: enum's case. 64 bytes back
# always crosses a `;`: the guess is right, hspec's case.
QUADS = "tokens quads {{ quad /aaaa/ semi /;/ }}\n"
QUAD_INPUT = (b"a" * 40 + b";") * 30_000
# Strings `"a"` between spaces: a start inside one reads `" "` as a string, and every later
# token with it (the parity never recovers): seq's case.
STRINGS = "tokens strings {{ skip space / / string /\"[^\"]*\"/ word /[a-z]+/ }}\n"
STRING_INPUT = b"\"a\"" + b" \"a\"" * 300_000


def token_set(text: str, lookback: int | None = None):
    options = f"options {{ lookback {lookback} }}\n" if lookback else ""
    return compile_file(SourceFile("auto.fsm", options + text.format())).machines[0]


def test_auto_picks_from_measurements_of_the_input(tmp_path) -> None:
    require_cxx()
    cases = [(token_set(QUADS), QUAD_INPUT), (token_set(QUADS, lookback=1), QUAD_INPUT),
             (token_set(STRINGS), STRING_INPUT)]
    choices = auto_choices(cases, tmp_path, ("auto:2:0", "auto:1:0"))
    (hspec, one), (enum, _), (seq, _) = choices
    assert hspec[1] == "hspec" and "lookback guesses wrong at 0/16" in hspec[2]
    assert one[1:] == ["seq", "one thread: tokenizing sequentially"]
    assert enum[1] == "enum" and "within 8 bytes at 16/16" in enum[2], enum
    assert seq[1] == "seq" and "re-run in order" in seq[2], seq
    for _, scheme, reason in (hspec, enum, seq):
        assert reason.startswith(f"{scheme}: measured at 16 positions of the input")
