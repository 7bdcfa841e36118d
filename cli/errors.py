"""How both command-line tools report failures: one clear message, exit code 1.

A `CompileError` prints as `file:line:col: error: ...` with the source line and
carets; an error without a location prints as `PROG: error: ...`. Anything else
is a bug in parafuse and says so (exit code 2) instead of showing a traceback.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import click

from parafuse.grammar.diagnostics import CompileError


class UsageError(CompileError):
    """A problem with the command line or the files it names (no source location)."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message, None, hint=hint)


def report(prog: str, error: CompileError) -> None:
    if error.location is None:  # one line, like the runners' `P_run: error: ...`
        hint = f" ({error.hint})" if error.hint else ""
        click.echo(f"{prog}: error: {error.message}{hint}", err=True)
    else:
        click.echo(error.render(), err=True)


def reports_errors(prog: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a click command so that user errors exit 1 and bugs exit 2, never a traceback."""

    def wrap(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return command(*args, **kwargs)
            except CompileError as error:
                report(prog, error)
                sys.exit(1)
            except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
                raise
            except Exception as bug:  # noqa: BLE001 - the last line of defence
                click.echo(f"{prog}: internal error: {type(bug).__name__}: {bug}", err=True)
                click.echo("this is a bug in parafuse; please report it with the input file",
                           err=True)
                sys.exit(2)

        return run

    return wrap


def read_source(path: str) -> str:
    """Read an input file as the compilers do (Latin-1 keeps every byte)."""
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("latin-1")
    except OSError as exc:
        raise UsageError(f"cannot read '{path}': {exc.strerror}") from None
