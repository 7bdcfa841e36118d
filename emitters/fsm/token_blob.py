"""The tables of one token set as one binary blob, read by cpp_runtime/fsm/tokens/tables.hpp
(the layout is documented there). The token set's states are already in the runtime's
order (fsm_compiler/tokens/token_sets.py): dead state, live non-accepting, then accepting."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from parafuse.fsm_compiler.tokens.token_analysis import FallInStep, loop_states
from parafuse.fsm_compiler.tokens.token_sets import NO_RULE, CompiledTokenSet

MAGIC = int.from_bytes(b"PFSMTOK1", "little")
HEADER_SLOTS = 16
UNKNOWN = (1 << 64) - 1
SKIP_KIND = -2  # kSkipKind in fsm/tokens/tables.hpp


@dataclass(frozen=True)
class TokenHints:
    """What the compile-time analysis measured on the training sample, for `auto`."""

    fall: FallInStep | None = None


def _known(value: int | None) -> int:
    return UNKNOWN if value is None else value


def token_blob(token_set: CompiledTokenSet, hints: TokenHints) -> bytes:
    states, classes = token_set.state_count, token_set.class_count
    shift = max(0, (classes - 1).bit_length())
    accepting = token_set.accept_rule != NO_RULE
    floor = int(np.argmax(accepting)) if accepting.any() else states
    loops = loop_states(token_set)
    fall = hints.fall
    header = np.zeros(HEADER_SLOTS, dtype="<u8")
    header[:12] = [
        MAGIC, states, classes, shift, token_set.start,
        UNKNOWN if token_set.dead == NO_RULE else token_set.dead, floor,
        len(token_set.kind_names), int(loops.any()), token_set.options.lookback,
        _known(fall.median if fall else None), _known(fall.p90 if fall else None)]
    if fall is not None and fall.positions:
        header[12] = round(1e6 * fall.never / fall.positions)
        header[13] = fall.positions
    else:
        header[12] = UNKNOWN
    table = np.zeros((states, 1 << shift), dtype="<u4")
    table[:, :classes] = token_set.transitions.astype(np.uint32) << shift
    output = token_set.rule_output
    accept = np.array([NO_RULE if rule == NO_RULE else
                       SKIP_KIND if output[rule] == NO_RULE else output[rule]
                       for rule in token_set.accept_rule.tolist()], dtype="<i4")
    return b"".join([header.tobytes(), token_set.byte_class.astype(np.uint8).tobytes(),
                     table.tobytes(), accept.tobytes(), loops.astype(np.uint8).tobytes()])
