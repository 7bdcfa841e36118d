"""The permutation machines of the SIMD enumeration tests and benchmark, as .fsm text.

    python samples/permutation.py [STATES]   # prints the machine (default 12 states)

States p0..p(N-1): letters rotate the state (p_i -> p_i+1), digits swap p0 and p1,
other bytes stay. A rotation and a transposition generate every permutation of the
states, so paths from different states never merge, the fused DFA explodes and
lookback predicts the state rarely: the case SIMD enumeration is for.
"""

from __future__ import annotations

import sys


def permutation_source(states: int = 12) -> str:
    name = f"perm{states}"
    lines = [f"machine {name} {{", "    start p0"]
    for i in range(states):
        swap = {0: "p1", 1: "p0"}.get(i, f"p{i}")
        report = " report home" if i == 0 else ""
        lines.append(f"    state p{i}{report} {{ ['a'..'z', 'A'..'Z'] -> p{(i + 1) % states}"
                     f"  '0'..'9' -> {swap}  _ -> p{i} }}")
    return "\n".join(lines + ["}"]) + "\n"


if __name__ == "__main__":
    sys.stdout.write(permutation_source(int(sys.argv[1]) if len(sys.argv) > 1 else 12))
