"""How generated runners run OpenMP: the environment in which boostfsm starts one."""

from __future__ import annotations

import os


def runner_environment() -> dict[str, str]:
    """This process's environment, with OpenMP's waiting threads put to sleep at once
    (OMP_WAIT_POLICY=passive) unless the user chose a policy: a thread that spins at the
    end of a phase keeps a core from the thread it waits for whenever another process
    wants a core too (bench/results/fsm_busy.md: 2 threads at 0.52-0.86x of one thread
    with one core busy while spinning, 0.98-1.11x asleep; at rest 1.19-1.83x against
    0.51-1.03x)."""
    return {"OMP_WAIT_POLICY": "passive", **os.environ}
