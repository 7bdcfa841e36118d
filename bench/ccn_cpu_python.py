"""`make bench-ccn` (second part): the CPU backend's Python module against its own runner.

Adam (samples/adam.ccn) at N = 2^22 on 2 ranks, `default` and `fused`: the median step of
the runner (`--json`) and of the `--python` module's `step` on numpy blocks
(bench/ccn_python_step.py), in alternating rounds. The difference is what the module
adds: copying the blocks in and the states back into the arrays.

Writes bench/results/ccn_cpu_python.md.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ccn_cpu import RANKS, REPO, RESULTS, machine, runner_time  # noqa: E402

from parafuse.ccn_compiler.frontend import check_source  # noqa: E402
from parafuse.emitters.ccn.cpu.project import build_cpu_project  # noqa: E402
from parafuse.emitters.toolchain.cmake import Toolchain  # noqa: E402
from parafuse.emitters.toolchain.mpirun import launch_environment  # noqa: E402

N = 2**22
ROUNDS = 3
STEPS = 10
SCHEDULES = ("default", "fused")


def module_time(project: Path, schedule: str) -> float:
    command = [Toolchain.current().tool("mpirun"), "--oversubscribe", "-np", str(RANKS),
               sys.executable, str(REPO / "bench" / "ccn_python_step.py"),
               str(project / "build"), schedule, str(N), str(STEPS)]
    done = subprocess.run(command, capture_output=True, text=True,
                          env=launch_environment(RANKS))
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    module = check_source((REPO / "samples" / "adam.ccn").read_text(), "samples/adam.ccn")
    project = build_cpu_project(module, "adam", list(SCHEDULES), "bench: adam --python",
                                python=True)
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(ROUNDS):
        for schedule in SCHEDULES:
            times.setdefault(("runner", schedule), []).append(
                runner_time(project, "adam", schedule, N, STEPS))
            times.setdefault(("module", schedule), []).append(module_time(project, schedule))
    lines = ["# The CPU backend's Python module against its runner", "",
             f"Machine: {machine()}.", "",
             f"Adam, N = 2^22, {RANKS} ranks, median step in ms (median of {ROUNDS} "
             f"alternating rounds of {STEPS} steps each).", "",
             "| schedule | runner | module step | module / runner |", "|---|---|---|---|"]
    for schedule in SCHEDULES:
        runner = statistics.median(times[("runner", schedule)])
        step = statistics.median(times[("module", schedule)])
        lines.append(f"| {schedule} | {runner:.1f} | {step:.1f} | {step / runner:.2f}x |")
    (RESULTS / "ccn_cpu_python.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
