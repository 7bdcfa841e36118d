"""`make demo`, boostfsm part: check, analyse and run every .fsm sample on its input,
then compile the lexer sample to C++ and time `auto` against `seq` at 2 threads.

    python -m parafuse.fsm_compiler.demo OUT_ROOT

Inputs come from samples/inputs.py (1 MiB each for the reference executor, 32 MiB for
the lexer; deterministic). Commands go through the `boostfsm` CLI, as a user types them.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent
BOOSTFSM = str(Path(sys.executable).parent / "boostfsm")
INPUT_BYTES = 1 << 20
LEXER_BYTES = 32 << 20


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


def _runner_json(runner: Path, data: Path, scheme: str) -> dict | None:
    result = _run([str(runner), str(data), "--json", "--threads", "2", "--scheme", scheme,
                   "--repeat", "5"])
    return json.loads(result.stdout) if result.returncode == 0 else None


def _sample_inputs() -> ModuleType:
    """samples/inputs.py (the sample inputs' generators), loaded from its file."""
    spec = importlib.util.spec_from_file_location("parafuse_sample_inputs",
                                                  REPO / "samples" / "inputs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def demo_lexer_cpp(out_root: Path) -> bool:
    """Compile samples/clexer.fsm, run it with seq and auto at 2 threads, print the speedup."""
    data = out_root / "clexer-32MiB.txt"
    clexer = _sample_inputs().clexer
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_bytes(clexer(LEXER_BYTES))
    project = out_root / "clexer"
    if _run([BOOSTFSM, "compile", "samples/clexer.fsm", "-o", str(project)]).returncode != 0:
        return False
    runner = project / "build" / "clexer_run"
    seq, auto = _runner_json(runner, data, "seq"), _runner_json(runner, data, "auto")
    if seq is None or auto is None:
        return False
    if (seq["final_state"], seq["counts"]) != (auto["final_state"], auto["counts"]):
        print("   auto and seq disagree: " + json.dumps([seq, auto]))
        return False
    print(f"   clexer on {seq['bytes'] >> 20} MiB at 2 threads: seq {seq['gbps']:.3f} GB/s, "
          f"auto ({auto['scheme']}) {auto['gbps']:.3f} GB/s: speedup "
          f"{seq['seconds'] / auto['seconds']:.2f}x, identical results")
    print(f"   auto's reason: {auto['reason']}")
    return True


def main(out_root: Path) -> int:
    inputs = out_root / "fsm_inputs"
    made = _run([sys.executable, "samples/inputs.py", str(inputs), "--size", str(INPUT_BYTES)])
    if made.returncode != 0:
        return 1
    samples = sorted((REPO / "samples").glob("*.fsm"))
    ok = all([demo_sample(sample, inputs) for sample in samples])
    ok = demo_lexer_cpp(out_root) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("build/demo")))
