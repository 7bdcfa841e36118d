"""`make demo`: run both compilers on the bundled samples and say what happened.

    python -m parafuse.cli.demo [--small]

Every .ccn sample runs on the reference interpreter, Adam through the CPU backend, and
every .fsm sample through boostfsm (cli/demo_fsm.py). It ends with one line, what ran and
what failed, and exits 1 where anything failed. `--small` runs the same steps on small
sizes and inputs (the test suite runs it so, tests/e2e/test_demo.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from parafuse.cli.demo_fsm import demo_boostfsm
from parafuse.cli.demo_steps import BIN, REPO, DemoSteps

# The sizes each .ccn sample runs at (the demo's, then --small's): a sample without an
# entry fails the demo, so that a new sample comes with its sizes.
CCN_SIZES: dict[str, tuple[dict[str, int], dict[str, int]]] = {
    "adam": ({"N": 1000003}, {"N": 1003}),
    "lamb": ({"N": 1000003}, {"N": 1003}),
    "sgd": ({"N": 1000003}, {"N": 1003}),
    "megatron": ({"B": 129, "K": 511, "H": 257}, {"B": 9, "K": 17, "H": 13}),
    "send_ring": ({"B": 65, "H": 127}, {"B": 9, "H": 13}),
    "pipeline": ({"B": 65, "D": 257, "F": 1025, "G": 513}, {"B": 9, "D": 17, "F": 33, "G": 21}),
    "mlp": ({"B": 129, "D": 257, "F": 1025}, {"B": 9, "D": 17, "F": 33}),
    "mlp_sp": ({"B": 129, "D": 257, "F": 1025}, {"B": 9, "D": 17, "F": 33}),
    "transformer": ({"T": 129, "D": 256, "H": 8, "E": 32, "F": 1024},
                    {"T": 9, "D": 17, "H": 3, "E": 4, "F": 33}),
    "transformer_sp": ({"T": 129, "D": 256, "H": 8, "E": 32, "F": 1024},
                       {"T": 9, "D": 17, "H": 3, "E": 4, "F": 33}),
}
ADAM_CPU_SIZE = (4194304, 1003)  # N of Adam through the CPU backend (demo, --small)


def ccn_samples() -> list[Path]:
    return sorted((REPO / "samples").glob("*.ccn"))


def demo_coconetc(steps: DemoSteps, out_root: Path, small: bool) -> None:
    print("== coconetc: every .ccn sample on 2 ranks, reference interpreter, random inputs ==")
    for sample in ccn_samples():
        step = f"coconetc run {sample.name}"
        if sample.stem not in CCN_SIZES:
            steps.fail(step, f"no demo sizes for samples/{sample.name} (CCN_SIZES in "
                             "parafuse/cli/demo.py)")
            continue
        sizes = CCN_SIZES[sample.stem][1 if small else 0]
        out = out_root / sample.stem
        args = [str(BIN / "coconetc"), "run", f"samples/{sample.name}", "-n", "2",
                *[arg for name, size in sizes.items() for arg in ("--size", f"{name}={size}")],
                "--random", "--iters", "2", "--outputs", str(out), "--json"]
        if (result := steps.run(step, args)) is None:
            continue
        summary = json.loads(result.stdout)
        manifest = json.loads((out / "manifest.json").read_text())
        outputs = ", ".join(f"{o['name']} {o['dtype']}{o['shape']} {o['layout']}"
                            for o in manifest["outputs"])
        print(f"   {summary['program']}: {summary['iters']} steps, median "
              f"{summary['median_ms']:.1f} ms/step, {summary['bytes_per_rank']} bytes sent per "
              f"rank per step; outputs: {outputs}")
        steps.done(step)


def demo_cpu_backend(steps: DemoSteps, small: bool) -> None:
    size = ADAM_CPU_SIZE[1 if small else 0]
    print("== coconetc: Adam through the CPU backend (C++/OpenMP + MPI), 2 ranks ==", flush=True)
    timings = {}
    for schedule in ("default", "fused"):
        step = f"coconetc run adam.ccn --backend cpu --schedule {schedule}"
        args = [str(BIN / "coconetc"), "run", "samples/adam.ccn", "--backend", "cpu",
                "--schedule", schedule, "-n", "2", "--size", f"N={size}", "--random",
                "--warmup", "1", "--iters", "5", "--json"]
        if (result := steps.run(step, args)) is not None:
            timings[schedule] = json.loads(result.stdout)["median_ms"]
            steps.done(step)
    if len(timings) == 2:
        print(f"   adam N={size} on 2 ranks: default {timings['default']:.2f} ms/step, fused "
              f"{timings['fused']:.2f} ms/step ({timings['default'] / timings['fused']:.2f}x)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m parafuse.cli.demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true",
                        help="the same steps on small sizes and inputs")
    small = parser.parse_args(argv).small
    steps = DemoSteps()
    with tempfile.TemporaryDirectory(prefix="parafuse-demo-") as tmp:
        demo_coconetc(steps, Path(tmp) / "ccn", small)
        demo_cpu_backend(steps, small)
        demo_boostfsm(steps, Path(tmp) / "fsm", small)
    print(steps.summary(), flush=True)
    return 1 if steps.failed else 0


if __name__ == "__main__":
    sys.exit(main())
