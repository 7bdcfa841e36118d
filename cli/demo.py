"""`make demo`: run both compilers on the bundled samples and say what happened."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

CCN_SIZES = {
    "adam": ["N=1000003"],
    "lamb": ["N=1000003"],
    "sgd": ["N=1000003"],
    "megatron": ["B=129", "K=511", "H=257"],
    "pipeline": ["B=65", "H=127"],
}


def _run(args: list[str]) -> subprocess.CompletedProcess:
    print("$ " + " ".join(args), flush=True)
    return subprocess.run(args, cwd=REPO, text=True, capture_output=True)


def demo_coconetc(out_root: Path) -> bool:
    print("== coconetc: every .ccn sample on 2 ranks, reference interpreter, random inputs ==")
    ok = True
    for sample in sorted((REPO / "samples").glob("*.ccn")):
        sizes = [arg for s in CCN_SIZES.get(sample.stem, []) for arg in ("--size", s)]
        out = out_root / sample.stem
        args = [str(BIN / "coconetc"), "run", f"samples/{sample.name}", "-n", "2", *sizes,
                "--random", "--iters", "2", "--outputs", str(out), "--json"]
        result = _run(args)
        if result.returncode != 0:
            print(result.stderr, end="")
            ok = False
            continue
        summary = json.loads(result.stdout)
        manifest = json.loads((out / "manifest.json").read_text())
        outputs = ", ".join(f"{o['name']} {o['dtype']}{o['shape']} {o['layout']}"
                            for o in manifest["outputs"])
        print(f"   {summary['program']}: {summary['iters']} steps, median "
              f"{summary['median_ms']:.1f} ms/step, {summary['bytes_per_rank']} bytes sent per "
              f"rank per step; outputs: {outputs}")
    return ok


def demo_cpu_backend() -> bool:
    print("== coconetc: Adam through the CPU backend (C++/OpenMP + MPI), 2 ranks ==", flush=True)
    timings = {}
    for schedule in ("default", "fused"):
        args = [str(BIN / "coconetc"), "run", "samples/adam.ccn", "--backend", "cpu",
                "--schedule", schedule, "-n", "2", "--size", "N=4194304", "--random",
                "--warmup", "1", "--iters", "5", "--json"]
        result = _run(args)
        if result.returncode != 0:
            print(result.stderr, end="")
            return False
        timings[schedule] = json.loads(result.stdout)["median_ms"]
    print(f"   adam N=2^22 on 2 ranks: default {timings['default']:.2f} ms/step, fused "
          f"{timings['fused']:.2f} ms/step ({timings['default'] / timings['fused']:.2f}x)")
    return True


def demo_boostfsm(out_root: Path) -> bool:
    demo = REPO / "fsm_compiler" / "demo.py"
    if not demo.exists():
        return True
    print("== boostfsm: check, analyse and run every .fsm sample (reference executor) ==",
          flush=True)
    return subprocess.run([sys.executable, "-m", "parafuse.fsm_compiler.demo", str(out_root)],
                          cwd=REPO).returncode == 0


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="parafuse-demo-") as tmp:
        ok = demo_coconetc(Path(tmp) / "ccn")
        ok = demo_cpu_backend() and ok
        ok = demo_boostfsm(Path(tmp) / "fsm") and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
