"""`make demo`, boostfsm part: check, analyse and run every .fsm sample on its input.

    python -m parafuse.fsm_compiler.demo OUT_ROOT

Inputs come from samples/inputs.py (1 MiB each, deterministic); the machines run on
the reference executor. Commands go through the `boostfsm` CLI, as a user types them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BOOSTFSM = str(Path(sys.executable).parent / "boostfsm")
INPUT_BYTES = 1 << 20


def _run(args: list[str]) -> subprocess.CompletedProcess:
    print("$ " + " ".join(args), flush=True)
    result = subprocess.run(args, cwd=REPO, text=True, capture_output=True)
    if result.returncode != 0:
        print(result.stdout + result.stderr, end="")
    return result


def demo_sample(sample: Path, inputs: Path) -> bool:
    relative = f"samples/{sample.name}"
    data = str(inputs / f"{sample.stem}.txt")
    if _run([BOOSTFSM, "check", relative]).returncode != 0:
        return False
    analysis = _run([BOOSTFSM, "analyze", relative, "--input", data])
    if analysis.returncode != 0:
        return False
    print(analysis.stdout, end="")
    run = _run([BOOSTFSM, "run", relative, data, "--backend", "reference", "--json"])
    if run.returncode != 0:
        return False
    result = json.loads(run.stdout)
    counts = ", ".join(f"{tag} {count}" for tag, count in list(result["counts"].items())[:8])
    print(f"   {result['machine']}: {result['bytes']} bytes in {result['seconds']:.2f} s, "
          f"final state {result['final_state']}; {counts}")
    return True


def main(out_root: Path) -> int:
    inputs = out_root / "fsm_inputs"
    made = _run([sys.executable, "samples/inputs.py", str(inputs), "--size", str(INPUT_BYTES)])
    if made.returncode != 0:
        return 1
    samples = sorted((REPO / "samples").glob("*.fsm"))
    ok = all([demo_sample(sample, inputs) for sample in samples])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("build/demo")))
