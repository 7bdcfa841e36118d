"""`make bench-ccn`: Adam and LAMB through the CPU backend, every schedule side by side,
then the LLM layers against PyTorch (bench/ccn_layers.py).

For N = 2^20 and 2^24 on 2 ranks, each schedule of samples/adam.ccn and
samples/lamb.ccn is timed by its runner (median step, max over ranks), in
rounds that alternate the schedules so that noise hits them alike. Beside them:

- the peer a user would otherwise pick, in its fastest configuration:
  torch.distributed (gloo) all_reduce of the gradients (as f16, or converted to
  f32 first), then torch.optim.Adam (`foreach` or `fused`) on f32 master
  weights; each configuration is timed and the fastest is the peer;
- a bound per schedule: the bytes its element-wise work moves at the measured
  copy bandwidth, plus its collectives timed alone (a program of just them); for
  a fused group over node-shared memory, the bytes its reduction reads and its
  gather copies instead of the collectives' times;
- the fused schedule once more with PARAFUSE_FUSED_TRANSPORT=mpi (`fused/mpi`):
  the same generated pipeline over Open MPI's nonblocking collectives, so that
  the gain of fusion and the gain of the shared-memory transport are told apart.

Writes bench/results/ccn_cpu.md and bench/results/ccn_cpu.png.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from parafuse.bench.ccn_layers import bench_layers, report_lines
from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.frontend import check_source
from parafuse.emitters.ccn.cpu.project import build_cpu_project
from parafuse.emitters.toolchain.cmake import Toolchain
from parafuse.emitters.toolchain.mpirun import launch_environment, run_ranks

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
RANKS = 2
SIZES = [2**20, 2**24]
ROUNDS = 5
MPI_TRANSPORT = "/mpi"  # suffix of a schedule run with PARAFUSE_FUSED_TRANSPORT=mpi


def runner_time(project: Path, program: str, schedule: str, n: int, iters: int) -> float:
    name, _, transport = schedule.partition("/")
    args = ["--schedule", name, "--size", f"N={n}", "--random", "--warmup", "2",
            "--iters", str(iters), "--json"]
    saved = os.environ.pop("PARAFUSE_FUSED_TRANSPORT", None)
    if transport:
        os.environ["PARAFUSE_FUSED_TRANSPORT"] = transport
    try:
        done = run_ranks(project, program, RANKS, args)
    finally:
        os.environ.pop("PARAFUSE_FUSED_TRANSPORT", None)
        if saved is not None:
            os.environ["PARAFUSE_FUSED_TRANSPORT"] = saved
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout)["median_ms"]


def copy_bandwidth() -> float:
    """Bytes per second of a large copy on one core (read + write counted)."""
    src = np.ones(2**25, dtype=np.float32)
    dst = np.empty_like(src)
    times = []
    for _ in range(5):
        begin = time.perf_counter()
        np.copyto(dst, src)
        times.append(time.perf_counter() - begin)
    return 2 * src.nbytes / statistics.median(times)


def elementwise_bytes(program: ir.Program, n: int) -> float:
    """Bytes each rank's element-wise stages read and write (members of a fused group read
    each other from registers)."""
    total = 0.0
    fused = {p.name for s in program.stages if isinstance(s, ir.FusedStage) for p in s.parts}
    for stage in program.flat_stages():
        if not isinstance(stage, (ir.ElementwiseStage, ir.UpdateStage)) or not stage.type.shape:
            continue
        share = n / RANKS if stage.type.layout.kind == "sliced" else n
        reads = {node.name: node.type for node in ir.walk(stage.expr)
                 if isinstance(node, ir.Ref) and node.type.shape and
                 not (stage.name in fused and node.name in fused)}
        for vt in reads.values():
            total += share * _itemsize(vt.dtype)
        total += share * _itemsize(stage.type.dtype)
    return total


def _itemsize(dtype: str) -> int:
    return {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i32": 4, "i64": 8}[dtype]


def shared_collective_bytes(program: ir.Program, n: int) -> float:
    """Bytes a rank's fused collectives move over node-shared memory: the reduction reads
    every rank's copy of its block; a gather writes its block twice (its segment and its
    own whole copy: the bound assumes the block is produced in place) and copies the
    other ranks' blocks."""
    total = 0.0
    for group in program.stages:
        if not isinstance(group, ir.FusedStage):
            continue
        for stage in group.parts:
            if isinstance(stage, ir.CollectiveStage) and stage.op == "reducescatter":
                total += n * _itemsize(stage.type.dtype)
            elif isinstance(stage, ir.CollectiveStage) and stage.op == "allgather":
                total += (2 * n - n / RANKS) * _itemsize(stage.type.dtype)
    return total


def collective_bound_ms(times: dict[str, float], program: ir.Program, shared: bool) -> float:
    """Time of the schedule's collectives measured alone (allreduce, or rs + gathers); the
    collectives of fused groups are left out when they go over shared memory."""
    fused = {p.name for s in program.stages if isinstance(s, ir.FusedStage) for p in s.parts}
    ops = [s for s in program.flat_stages() if isinstance(s, ir.CollectiveStage)
           and not (shared and s.name in fused)]
    total = 0.0
    for stage in ops:
        if stage.op == "allreduce":
            total += times["allreduce"]
        elif stage.op == "reducescatter":
            total += times["reducescatter"]
        elif stage.op == "allgather":
            total += times["allgather"]
    return total


def collectives_alone(n: int) -> dict[str, float]:
    """Each collective alone, from a program that computes nothing else."""
    results = {}
    for name, body in (("allreduce", "ar = allreduce(sum, g)"),
                       ("reducescatter", "rs = reducescatter(sum, g)"),
                       ("allgather", "ag = allgather(s)")):
        text = (f"program {name}_only(N) {{\n  input g: f16[N] local\n  input s: f32[N] sliced\n"
                f"  {body}\n}}\n")
        module = check_source(text, f"{name}_only.ccn")
        project = build_cpu_project(module, f"{name}_only", ["default"], "bench")
        results[name] = runner_time(project, f"{name}_only", "default", n, 10)
    return results


def torch_peer(n: int) -> tuple[str, float] | None:
    """The fastest configuration of gloo all_reduce + torch.optim.Adam and its median ms
    per step, or None without torch."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return None
    mpirun = Toolchain.current().tool("mpirun")
    command = [mpirun, "--oversubscribe", "-np", str(RANKS), sys.executable,
               str(REPO / "bench" / "torch_adam_peer.py"), str(n)]
    env = launch_environment(RANKS)
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29517")
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1200)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    configs = json.loads(done.stdout.strip().splitlines()[-1])
    best = min(configs, key=configs.get)
    return best, configs[best]


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines() if "model name" in line), "?")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"{cpu}, {os.cpu_count()} cores (load average {load} when the report was "
            f"written), Linux {platform.release()}, "
            f"Open MPI (wheel), {RANKS} ranks with OMP_NUM_THREADS="
            f"{launch_environment(RANKS)['OMP_NUM_THREADS']}")


def bench_program(name: str, n: int, bandwidth: float, alone: dict[str, float]) -> list[dict]:
    module = check_source((REPO / "samples" / f"{name}.ccn").read_text(), f"samples/{name}.ccn")
    built = module.schedule_names(name)
    project = build_cpu_project(module, name, built, f"bench {name}")
    schedules = built + ["fused" + MPI_TRANSPORT]
    iters = 20 if n <= 2**20 else 5
    samples: dict[str, list[float]] = {s: [] for s in schedules}
    for _ in range(ROUNDS):
        for schedule in schedules:
            samples[schedule].append(runner_time(project, name, schedule, n, iters))
    rows = []
    for schedule in schedules:
        program = module.scheduled_program(name, schedule.partition("/")[0])
        shared = not schedule.endswith(MPI_TRANSPORT)
        moved = elementwise_bytes(program, n) + (shared_collective_bytes(program, n)
                                                 if shared else 0.0)
        bound = moved / bandwidth * 1e3 + collective_bound_ms(alone, program, shared)
        rows.append({"program": name, "n": n, "schedule": schedule,
                     "ms": statistics.median(samples[schedule]), "bound_ms": bound})
    return rows


def write_report(rows: list[dict], peers: dict[int, tuple[str, float] | None], bandwidth: float,
                 mlp_rows: list[dict]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    lines = ["# coconetc CPU backend: Adam and LAMB, every schedule side by side", "",
             f"Machine: {machine()}. Measured copy bandwidth: {bandwidth / 1e9:.2f} GB/s.",
             f"Median step time (max over ranks) of {ROUNDS} alternating rounds; "
             "`bound` = element-wise bytes at the copy bandwidth + the schedule's collectives "
             "timed alone. Produced by `make bench-ccn` (bench/ccn_cpu.py).", "",
             "| program | N | schedule | ms/step | vs default | bound ms | vs torch |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        default = next(r["ms"] for r in rows if r["program"] == row["program"]
                       and r["n"] == row["n"] and r["schedule"] == "default")
        peer = peers.get(row["n"]) if row["program"] == "adam" else None
        versus = f"{peer[1] / row['ms']:.2f}x" if peer else "-"
        lines.append(f"| {row['program']} | 2^{int(np.log2(row['n']))} | {row['schedule']} | "
                     f"{row['ms']:.2f} | {default / row['ms']:.2f}x | {row['bound_ms']:.2f} | "
                     f"{versus} |")
    lines += ["", "torch peer (gloo all_reduce + torch.optim.Adam, f32 master weights; the "
              "fastest of f16 or f32 reduction and `foreach` or `fused` Adam), ms/step: " +
              ", ".join(f"2^{int(np.log2(n))}: {peer[1]:.2f} ({peer[0]})" if peer
                        else f"2^{int(np.log2(n))}: n/a" for n, peer in peers.items())]
    lines += [""] + report_lines(mlp_rows)
    (RESULTS / "ccn_cpu.md").write_text("\n".join(lines) + "\n")
    plot(rows)


def plot(rows: list[dict]) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for axis, n in zip(axes, SIZES):
        chosen = [r for r in rows if r["n"] == n]
        labels = [f"{r['program']}\n{r['schedule']}" for r in chosen]
        axis.bar(range(len(chosen)), [r["ms"] for r in chosen], label="measured")
        axis.scatter(range(len(chosen)), [r["bound_ms"] for r in chosen], color="k",
                     marker="_", s=200, label="bound")
        axis.set_xticks(range(len(chosen)), labels, rotation=90, fontsize=7)
        axis.set_title(f"N = 2^{int(np.log2(n))}, {RANKS} ranks")
        axis.set_ylabel("ms per step")
        axis.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "ccn_cpu.png", dpi=120)


def main() -> None:
    bandwidth = copy_bandwidth()
    rows, peers = [], {}
    for n in SIZES:
        alone = collectives_alone(n)
        for name in ("adam", "lamb"):
            rows += bench_program(name, n, bandwidth, alone)
        peers[n] = torch_peer(n)
    write_report(rows, peers, bandwidth, bench_layers())
    print((RESULTS / "ccn_cpu.md").read_text())


if __name__ == "__main__":
    main()
