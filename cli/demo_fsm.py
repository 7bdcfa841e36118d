"""`make demo`, boostfsm part: check, analyse and run every .fsm sample on its input (the
reference executor), then run the lexer sample through the C++ backend with `seq` and
`auto` at 2 threads and compare.

Inputs come from samples/inputs.py (deterministic): 1 MiB a sample and 32 MiB for the
lexer, or 64 KiB and 1 MiB with --small. Commands go through the `boostfsm` CLI, as a
user types them.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

from parafuse.cli.demo_steps import BIN, REPO, DemoSteps

BOOSTFSM = str(BIN / "boostfsm")
INPUT_BYTES = (1 << 20, 64 << 10)  # each sample's input (demo, --small)
LEXER_BYTES = (32 << 20, 1 << 20)  # the lexer's input for the C++ backend
SHOWN_COUNTS = 8  # tags whose counts a summary line shows


def fsm_samples() -> list[Path]:
    return sorted((REPO / "samples").glob("*.fsm"))


def demo_sample(steps: DemoSteps, sample: Path, inputs: Path) -> None:
    relative, step = f"samples/{sample.name}", f"boostfsm {sample.name}"
    data = str(inputs / f"{sample.stem}.txt")
    if steps.run(step, [BOOSTFSM, "check", relative]) is None:
        return
    if (analysis := steps.run(step, [BOOSTFSM, "analyze", relative, "--input", data])) is None:
        return
    print(analysis.stdout, end="")
    run = steps.run(step, [BOOSTFSM, "run", relative, data, "--backend", "reference", "--json"])
    if run is None:
        return
    result = json.loads(run.stdout)
    print(f"   {result['machine']}: {result['bytes']} bytes in {result['seconds']:.2f} s, "
          f"final state {result['final_state']}; {counts_text(result['counts'])}")
    steps.done(step)


def counts_text(counts: dict[str, int]) -> str:
    """The first SHOWN_COUNTS tags' counts, and how many more there are."""
    shown = ", ".join(f"{tag} {count}" for tag, count in list(counts.items())[:SHOWN_COUNTS])
    more = len(counts) - SHOWN_COUNTS
    return shown + (f" and {more} more tag(s) (boostfsm run lists all)" if more > 0 else "")


def _sample_inputs() -> ModuleType:
    """samples/inputs.py (the sample inputs' generators), loaded from its file."""
    spec = importlib.util.spec_from_file_location("parafuse_sample_inputs",
                                                  REPO / "samples" / "inputs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def demo_lexer_cpp(steps: DemoSteps, out_root: Path, small: bool) -> None:
    """Run samples/clexer.fsm with seq and auto at 2 threads on the C++ backend (compiled on
    first use), check they agree, print the speedup."""
    step = "boostfsm run clexer.fsm (C++)"
    data = out_root / "clexer.txt"
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_bytes(_sample_inputs().clexer(LEXER_BYTES[1 if small else 0]))
    results = {}
    for scheme in ("seq", "auto"):
        run = steps.run(step, [BOOSTFSM, "run", "samples/clexer.fsm", str(data), "--scheme",
                               scheme, "--threads", "2", "--repeat", "5", "--json"])
        if run is None:
            return
        results[scheme] = json.loads(run.stdout)
    seq, auto = results["seq"], results["auto"]
    if (seq["final_state"], seq["counts"]) != (auto["final_state"], auto["counts"]):
        steps.fail(step, "auto and seq disagree: " + json.dumps([seq, auto]))
        return
    print(f"   clexer on {seq['bytes'] / (1 << 20):g} MiB at 2 threads: seq {seq['gbps']:.3f} "
          f"GB/s, auto ({auto['scheme']}) {auto['gbps']:.3f} GB/s: speedup "
          f"{seq['seconds'] / auto['seconds']:.2f}x, identical results")
    print(f"   auto's reason: {auto['reason']}")
    steps.done(step)


def demo_boostfsm(steps: DemoSteps, out_root: Path, small: bool) -> None:
    print("== boostfsm: check, analyse and run every .fsm sample (reference executor) ==",
          flush=True)
    inputs = out_root / "inputs"
    size = str(INPUT_BYTES[1 if small else 0])
    if steps.run("sample inputs", [sys.executable, "samples/inputs.py", str(inputs), "--size",
                                   size]) is None:
        return
    steps.done("sample inputs")
    for sample in fsm_samples():
        demo_sample(steps, sample, inputs)
    print("== boostfsm: the lexer sample through the C++ backend, seq against auto ==",
          flush=True)
    demo_lexer_cpp(steps, out_root, small)
