"""The constants the FSM runtime shares with the compiler have one source: the checked-in
cpp_runtime/fsm/core/shared_constants.hpp is what emitters/fsm/shared_constants.py generates
now, and the runtime uses its names where it used to repeat the values."""

from __future__ import annotations

import re

from parafuse.emitters.fsm.shared_constants import cpp_header
from parafuse.emitters.toolchain.runtime import CPP_RUNTIME


def test_checked_in_header_is_generated_from_python() -> None:
    checked_in = (CPP_RUNTIME / "fsm" / "core" / "shared_constants.hpp").read_text()
    assert checked_in == cpp_header(), (
        "cpp_runtime/fsm/core/shared_constants.hpp is stale: run `python -m "
        "parafuse.emitters.fsm.shared_constants > cpp_runtime/fsm/core/shared_constants.hpp`")


def test_the_runtime_repeats_no_scheme_list_or_threshold() -> None:
    repeated = re.compile(r'"auto\|seq|auto, seq, enum|>= 0\.99|>= 0\.5\b|<= 256\)|'
                          r"kMaxChunks = |kMostThreads = ")
    found = [f"{path.relative_to(CPP_RUNTIME)}:{number}: {line.strip()}"
             for path in sorted((CPP_RUNTIME / "fsm").rglob("*.hpp"))
             if path.name != "shared_constants.hpp"
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if repeated.search(line)]
    assert not found, "\n".join(found)


def test_the_runtime_names_schemes_by_their_enum() -> None:
    """Inside the runtime a scheme is a `Scheme` (shared_constants.hpp): its name is read
    once from a run's options (scheme_named) and written once into a result
    (scheme_name); no scheme name is spelled as a string or compared as one."""
    spelled = re.compile(r'"(seq|enum|fused|spec|hspec)"|scheme\w*\s*[!=]=\s*"')
    found = [f"{path.relative_to(CPP_RUNTIME)}:{number}: {line.strip()}"
             for path in sorted((CPP_RUNTIME / "fsm").rglob("*"))
             if path.suffix in (".hpp", ".cpp", ".inc") and path.name != "shared_constants.hpp"
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if spelled.search(line)]
    assert not found, "\n".join(found)
