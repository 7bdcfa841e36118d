"""`boostfsm analyze` of a token set: the tokenizer DFA, where it may re-read, how fast a
wrong start falls in step on the sample, and what `auto` picks (text and JSON): the
runner's own choice on the sample (the same probe and rules, the same threads)."""

from __future__ import annotations

from dataclasses import dataclass

import click

from parafuse.fsm_compiler.tokens.token_analysis import (
    FallInStep,
    fall_in_step,
    loop_states,
)
from parafuse.fsm_compiler.tokens.token_sets import CompiledTokenSet


@dataclass(frozen=True)
class TokenSetAnalysis:
    token_set: CompiledTokenSet
    loop_states: int
    fall: FallInStep
    sample: str
    sample_bytes: int
    runner: tuple[str, str]  # the runner's (scheme, reason) on the sample


def analyse_token_set(token_set: CompiledTokenSet, sample: bytes, sample_name: str,
                      runner: tuple[str, str]) -> TokenSetAnalysis:
    fall = fall_in_step(token_set, sample)
    return TokenSetAnalysis(token_set, int(loop_states(token_set).sum()), fall, sample_name,
                            len(sample), runner)


def token_analysis_json(analysis: TokenSetAnalysis) -> dict:
    token_set, fall = analysis.token_set, analysis.fall
    return {
        "machine": token_set.name, "kind": "tokens", "states": token_set.state_count,
        "byte_classes": token_set.class_count, "kinds": list(token_set.kind_names),
        "skip_rules": [kind for kind, skip in zip(token_set.rule_kinds, token_set.rule_skip)
                       if skip],
        "loop_states": analysis.loop_states, "memo": analysis.loop_states > 0,
        "lookback": token_set.options.lookback,
        "fall_in_step": {"median": fall.median, "p90": fall.p90, "never": fall.never,
                         "positions": fall.positions},
        "sample": analysis.sample, "sample_bytes": analysis.sample_bytes,
        "auto_scheme": analysis.runner[0], "auto_reason": analysis.runner[1],
    }


def print_token_analysis(analysis: TokenSetAnalysis) -> None:
    token_set, fall = analysis.token_set, analysis.fall
    click.echo(f"{token_set.name} (token set)")
    click.echo(f"  states:        {token_set.state_count}")
    click.echo(f"  byte classes:  {token_set.class_count}")
    click.echo(f"  kinds:         {', '.join(token_set.kind_names)}")
    memo = ("Reps' memo (a scan may re-read without bound)" if analysis.loop_states
            else "none needed (back-ups are bounded)")
    click.echo(f"  loop states:   {analysis.loop_states}: {memo}")
    click.echo(f"  sample:        {analysis.sample} ({analysis.sample_bytes} bytes)")
    if fall.positions:
        def shown(value: int | None) -> str:
            return "never" if value is None else str(value)
        click.echo(f"  fall in step:  median {shown(fall.median)}, p90 {shown(fall.p90)}, "
                   f"never {fall.never}/{fall.positions} (bytes from a wrong start)")
    else:
        click.echo("  fall in step:  n/a (no wrong start in the sample)")
    click.echo(f"  auto picks:    {analysis.runner[0]} (the runner on this sample): "
               f"{analysis.runner[1]}")


def print_token_run(payload: dict) -> None:
    click.echo(f"{payload['machine']}: {payload['bytes']} bytes ({payload['seconds']:.3f} s, "
               "reference)")
    for kind, count in payload["counts"].items():
        click.echo(f"  {kind}: {count}")
    for start, end, kind in payload.get("tokens", []):
        click.echo(f"{start} {end} {kind}")
