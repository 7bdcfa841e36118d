"""How `boostfsm analyze` and `boostfsm run` print their results (text and JSON)."""

from __future__ import annotations

import click

from parafuse.fsm_compiler.analysis.analysis import Convergence
from parafuse.fsm_compiler.pipeline import MachineAnalysis


def _convergence_json(item: Convergence) -> dict:
    return {"threshold": item.threshold, "median": item.median, "p90": item.p90,
            "never": item.never, "positions": item.positions, "horizon": item.horizon}


def analysis_json(analysis: MachineAnalysis, choice: tuple[str, str]) -> dict:
    """`choice`: the runner's `auto` (scheme, reason) on the sample."""
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
        "auto_scheme": choice[0],
        "auto_reason": choice[1],
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


def print_analysis(analysis: MachineAnalysis, choice: tuple[str, str]) -> None:
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
    click.echo(f"  auto picks:    {choice[0]} (the runtime, on this sample): {choice[1]}")


def print_run(payload: dict) -> None:
    click.echo(f"{payload['machine']}: {payload['bytes']} bytes, final state "
               f"{payload['final_state']} ({payload['seconds']:.3f} s, reference)")
    for tag, count in payload["counts"].items():
        click.echo(f"  {tag}: {count}")
    for offset, tag in payload.get("matches", []):
        click.echo(f"{offset} {tag}")
