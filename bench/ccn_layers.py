"""LLM layers through the CPU backend against the same layers in PyTorch
(bench/torch_layers_peer.py), side by side: the Megatron MLP blocks (samples/mlp.ccn,
samples/mlp_sp.ccn; B=256, D=1024, F=4096), the transformer layer, tensor- and
sequence-parallel (samples/transformer.ccn, transformer_sp.ccn; T=256 tokens, D=1024, 16
heads of 64, F=4096), and the two-stage pipeline of MLP blocks (samples/pipeline.ccn;
B=1024, D=1024, F=G=4096: one rank a stage, its `gpipe` schedule against torch's whole
batch and its own 4 micro-batches).

bf16, 2 ranks with one OpenMP thread each (the cores of this machine). Each schedule is
timed by its runner (median step, max over ranks; warm-up 8 steps, so that an overlap
whose chunks `tune` left open has chosen them: it measures during its first 6 steps), in
rounds that alternate the schedules. The torch peer reduces the partial sums in bf16 and
in f32; the faster is the peer. Run alone with `python bench/ccn_layers.py [--quick]
[PROGRAM ...]` (writes bench/results/ccn_layers.md; --quick: 3 rounds of fewer steps);
`make bench-ccn` runs it with bench/ccn_cpu.py. The report names the machine and its
load average before and after the run: on a machine shared with other work, read the
ratios of one run (the schedules and the peer alternate, so that the load hits them
alike), not the times.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

from parafuse.ccn_compiler.frontend import check_source
from parafuse.emitters.ccn.cpu.project import build_cpu_project
from parafuse.emitters.toolchain.cmake import Toolchain
from parafuse.emitters.toolchain.mpirun import launch_environment, run_ranks

REPO = Path(__file__).resolve().parent.parent
RANKS = 2
SIZES = {"mlp": {"B": 256, "D": 1024, "F": 4096}, "mlp_sp": {"B": 256, "D": 1024, "F": 4096},
         "transformer": {"T": 256, "D": 1024, "H": 16, "E": 64, "F": 4096},
         "transformer_sp": {"T": 256, "D": 1024, "H": 16, "E": 64, "F": 4096},
         "pipeline": {"B": 1024, "D": 1024, "F": 4096, "G": 4096}}
PARAMS = {"transformer": {"scale": 0.125}, "transformer_sp": {"scale": 0.125}}  # 1 / sqrt(E)
RESULTS = REPO / "bench" / "results"


class Plan:
    """Rounds and steps of one run: the full run, or --quick."""

    def __init__(self, quick: bool = False) -> None:
        self.rounds, self.iters, self.peer_iters = (3, 9, 9) if quick else (5, 15, 15)


PLAN = Plan()


def runner_ms(project: Path, program: str, schedule: str) -> float:
    args = ["--schedule", schedule, "--random", "--warmup", "8", "--iters", str(PLAN.iters),
            "--json"]
    args += [a for name, n in SIZES[program].items() for a in ("--size", f"{name}={n}")]
    args += [a for name, v in PARAMS.get(program, {}).items() for a in ("--param", f"{name}={v}")]
    done = run_ranks(project, program, RANKS, args)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout)["median_ms"]


def torch_ms(program: str) -> dict[str, float] | None:
    """The peer's median ms per way of reducing, or None without torch."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return None
    command = [Toolchain.current().tool("mpirun"), "--oversubscribe", "-np", str(RANKS),
               sys.executable, str(REPO / "bench" / "torch_layers_peer.py"), program,
               *(str(n) for n in SIZES[program].values()), str(PLAN.peer_iters)]
    env = launch_environment(RANKS)
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29518")
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1200)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_layers(programs: tuple[str, ...] = tuple(SIZES)) -> list[dict]:
    """One row per program and schedule, and one for each program's torch peer."""
    rows = []
    for program in programs:
        path = REPO / "samples" / f"{program}.ccn"
        module = check_source(path.read_text(), f"samples/{program}.ccn")
        schedules = module.schedule_names(program)
        project = build_cpu_project(module, program, schedules, f"bench {program}")
        samples: dict[str, list[float]] = {s: [] for s in schedules}
        peer_samples: list[dict[str, float]] = []
        for _ in range(PLAN.rounds):
            for schedule in schedules:
                samples[schedule].append(runner_ms(project, program, schedule))
            peer = torch_ms(program)
            if peer:
                peer_samples.append(peer)
        for schedule in schedules:
            rows.append({"program": program, "schedule": schedule,
                         "ms": statistics.median(samples[schedule])})
        if peer_samples:
            ways = {way: statistics.median(p[way] for p in peer_samples)
                    for way in peer_samples[0]}
            best = min(ways, key=ways.get)
            rows.append({"program": program, "schedule": f"torch ({best})", "ms": ways[best],
                         "ways": ways})
    return rows


def load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines() if "model name" in line), "?")
    return f"{cpu}, {os.cpu_count()} cores, Linux {platform.release()}"


def report_lines(rows: list[dict]) -> list[str]:
    sizes = "; ".join(f"{p}: " + ", ".join(f"{n}={v}" for n, v in SIZES[p].items())
                      for p in dict.fromkeys(r["program"] for r in rows))
    lines = ["## LLM layers (bf16), against PyTorch", "",
             f"{sizes}; {RANKS} ranks, median step (max over ranks) of {PLAN.rounds} alternating "
             "rounds; torch: the same layer with gloo, its faster way of reducing (the "
             "pipeline: of running the batch) (bench/ccn_layers.py).", "",
             "| program | schedule | ms/step | vs default | vs torch |", "|---|---|---|---|---|"]
    for row in rows:
        same = [r for r in rows if r["program"] == row["program"]]
        default = next(r["ms"] for r in same if r["schedule"] == "default")
        torch_row = next((r for r in same if r["schedule"].startswith("torch")), None)
        versus = f"{torch_row['ms'] / row['ms']:.2f}x" if torch_row else "-"
        lines.append(f"| {row['program']} | {row['schedule']} | {row['ms']:.2f} | "
                     f"{default / row['ms']:.2f}x | {versus} |")
    for row in rows:
        if "ways" in row:
            ways = ", ".join(f"{way} {ms:.2f} ms" for way, ms in row["ways"].items())
            lines.append(f"\ntorch {row['program']}: {ways}.")
    return lines


def main() -> None:
    global PLAN
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds of fewer steps")
    parser.add_argument("--busy", action="store_true",
                        help="with one core held by another process (a Python busy loop) "
                             "for the whole run; writes ccn_layers_busy.md")
    parser.add_argument("programs", nargs="*", metavar="PROGRAM",
                        help=f"the layers to measure, of {', '.join(SIZES)} (default: all)")
    args = parser.parse_args()
    if unknown := set(args.programs) - set(SIZES):
        parser.error(f"unknown layers: {', '.join(sorted(unknown))}")
    PLAN = Plan(args.quick)
    before = load_average()
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy else None
    try:
        lines = report_lines(bench_layers(tuple(args.programs or SIZES)))
    finally:
        if busy:
            busy.kill()
    held = "; one core held by a busy loop throughout" if busy else ""
    lines += ["", f"Machine: {machine()}; load average {before} before the run, "
              f"{load_average()} after it{' (--quick)' if PLAN.rounds == 3 else ''}{held}."]
    RESULTS.mkdir(exist_ok=True)
    name = "ccn_layers_busy.md" if busy else "ccn_layers.md"
    (RESULTS / name).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
