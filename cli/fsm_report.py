"""How `boostfsm analyze` and `boostfsm run` print their results (text and JSON)."""

from __future__ import annotations

import click

from parafuse.fsm_compiler.analysis.analysis import Convergence
from parafuse.fsm_compiler.pipeline import MachineAnalysis


def _convergence_json(item: Convergence) -> dict:
    return {"threshold": item.threshold, "median": item.median, "p90": item.p90,
            "never": item.never, "positions": item.positions, "horizon": item.horizon}


def analysis_json(analysis: MachineAnalysis, measured: tuple[str, str] | None = None) -> dict:
    """`measured`: the runner's (scheme, reason) on the --input file, which `auto_scheme`
    then reports; `rules_scheme` is what the analysis rules alone pick on the sample."""
    machine = analysis.machine
    return {
        "machine": machine.name,
        "kind": machine.kind,
        "states": machine.state_count,
        "byte_classes": machine.class_count,
        "table_bytes": machine.table_bytes(),
        "fused_states": analysis.fused.count,
        "fused_bound": analysis.fused.bound,
        "fused_exceeds_bound": analysis.fused.exceeded,
        "fused_bound_reason": analysis.fused.bound_reason,
        "convergence": [_convergence_json(item) for item in analysis.convergence],
        "lookback": machine.options.lookback,
        "lookback_accuracy": analysis.lookback_accuracy,
        "lookback_positions": analysis.lookback_positions,
        "sample": analysis.sample,
        "sample_bytes": analysis.sample_bytes,
        "auto_scheme": measured[0] if measured else analysis.scheme,
        "auto_reason": measured[1] if measured else analysis.reason,
        "auto_measured_by_runtime": measured is not None,
        "rules_scheme": analysis.scheme,
        "rules_reason": analysis.reason,
    }


def _steps(value: int | None) -> str:
    return "never" if value is None else str(value)


def _fused_line(analysis: MachineAnalysis) -> str:
    fused = analysis.fused
    lowered = "" if fused.bound_reason == "max_fused_states" else (
        f", lowered from max_fused_states by the analysis {fused.bound_reason} budget")
    if fused.exceeded:
        return f"more than {fused.bound} (exceeds the bound{lowered})"
    return f"{fused.count} (bound {fused.bound})"


def print_analysis(analysis: MachineAnalysis, measured: tuple[str, str] | None = None) -> None:
    machine = analysis.machine
    kind = "pattern set" if machine.kind == "patterns" else "explicit machine"
    click.echo(f"{machine.name} ({kind})")
    click.echo(f"  states:        {machine.state_count}")
    click.echo(f"  byte classes:  {machine.class_count}")
    click.echo(f"  table bytes:   {machine.table_bytes()}")
    click.echo(f"  fused states:  {_fused_line(analysis)}")
    click.echo(f"  sample:        {analysis.sample} ({analysis.sample_bytes} bytes)")
    if not analysis.convergence:
        click.echo("  convergence:   n/a (empty sample)")
    for item in analysis.convergence:
        click.echo(f"  converge <={item.threshold}:  median {_steps(item.median)}, "
                   f"p90 {_steps(item.p90)}, never {item.never}/{item.positions} "
                   f"(steps, horizon {item.horizon})")
    if analysis.lookback_accuracy is None:
        click.echo(f"  lookback {machine.options.lookback}:   n/a (sample too short)")
    else:
        click.echo(f"  lookback {machine.options.lookback}:   "
                   f"{100 * analysis.lookback_accuracy:.1f}% right over "
                   f"{analysis.lookback_positions} positions")
    if measured is None:
        click.echo(f"  auto picks:    {analysis.scheme}: {analysis.reason}")
        click.echo("  at run time:   SIMD enumeration is timed against table walks on the "
                   "input where it fits, and lookback right at 99% or more decides spec; "
                   "what those leave open on inputs of 16 MiB or more per thread, timed "
                   "probes of the schemes decide; at one thread, spec where the rules say "
                   "hspec (--input asks the runtime)")
    else:
        click.echo(f"  rules pick:    {analysis.scheme}: {analysis.reason}")
        click.echo(f"  auto picks:    {measured[0]} (the runtime, on this input): {measured[1]}")


def print_run(payload: dict) -> None:
    click.echo(f"{payload['machine']}: {payload['bytes']} bytes, final state "
               f"{payload['final_state']} ({payload['seconds']:.3f} s, reference)")
    for tag, count in payload["counts"].items():
        click.echo(f"  {tag}: {count}")
    for offset, tag in payload.get("matches", []):
        click.echo(f"{offset} {tag}")
