"""How both command-line tools report failures: one clear message, exit code 1.

A `CompileError` prints as `file:line:col: error: ...` with the source line and
carets; an error without a location prints as `PROG: error: ...`. So does a
mistake on the command line (`CommandLine`, the tools' click group: an unknown
option or command, a missing or malformed value). Anything else is a bug in
parafuse and says so (exit code 2) instead of showing a traceback.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import functools
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
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


# Python frames the front ends may nest: their parsers and checkers recurse once or twice
# per operand of a chain like `x + x + ... + x`, so Python's default of 1000 stopped at
# about 400 terms; this takes some 5000 (measured without exhausting the C stack).
DEEPEST_RECURSION = 20_000


def exit_status(done: subprocess.CompletedProcess) -> int:
    """The exit status a shell gives a process: a runner killed by a signal (SIGPIPE under
    `| head`) exits 128 + its number, not the 243 that sys.exit(-13) makes of it."""
    return 128 - done.returncode if done.returncode < 0 else done.returncode


def reports_errors(prog: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a click command so that user errors exit 1 and bugs exit 2, never a traceback."""

    def wrap(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> Any:
            sys.setrecursionlimit(max(sys.getrecursionlimit(), DEEPEST_RECURSION))
            try:
                return command(*args, **kwargs)
            except CompileError as error:
                report(prog, error)
                sys.exit(1)
            except BrokenPipeError:  # `... | head`: the reader left; stop quietly, as a C tool
                with contextlib.suppress(OSError):  # would die of SIGPIPE (exit 128 + 13)
                    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                sys.exit(128 + signal.SIGPIPE)
            except RecursionError:
                click.echo(f"{prog}: error: the input nests too deeply to compile (an "
                           "expression of thousands of operands?): split it into several "
                           "statements", err=True)
                sys.exit(1)
            except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt,
                    Terminated):
                raise
            except Exception as bug:  # noqa: BLE001 - the last line of defence
                click.echo(f"{prog}: internal error: {type(bug).__name__}: {bug}", err=True)
                click.echo("this is a bug in parafuse; please report it with the input file",
                           err=True)
                sys.exit(2)

        return run

    return wrap


def read_source(path: str, encoding: str) -> str:
    """Read an input file as its compiler does: `.fsm` files as Latin-1 (every byte stands
    for itself in regexes and quoted bytes), `.ccn` files as UTF-8, so that an error's
    snippet shows a comment's or a stray character's text as written (a byte that is not
    UTF-8 reads as U+FFFD, refused like any other character outside a comment). A UTF-8
    byte order mark that some editors write first is dropped (it read as an unexpected
    character at 1:1)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise UsageError(f"cannot read '{path}': {exc.strerror}") from None
    return data.removeprefix(codecs.BOM_UTF8).decode(encoding, errors="replace")


class CommandLine(click.Group):
    """A tool's click group whose usage errors are one line `PROG: error: ...`, exit code 1.

    click's own report (a `Usage:` block, exit code 2) is replaced in this one place for
    every subcommand and option. With no arguments at all, the tool prints its help and
    exits 0, as `--help` does.
    """

    def __init__(self, *args: Any, prog: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.prog = prog

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.exceptions.NoArgsIsHelpError as asked:
            click.echo(asked.ctx.get_help())
            raise click.exceptions.Exit(0) from None
        except click.UsageError as error:
            raise CommandLineError(self.prog, error) from None

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; Ctrl-C (SIGINT) or SIGTERM stops it, and what it started (a
        build, an mpirun job: toolchain/mpirun.py ends its session) with it, in one line
        and the shell's exit code for the signal, 130 or 143."""
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
        try:
            return super().invoke(ctx)
        except click.UsageError as error:
            raise CommandLineError(self.prog, error) from None
        except (KeyboardInterrupt, Terminated) as stop:
            number = signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT
            click.echo(f"{self.prog}: stopped by {signal.Signals(number).name}", err=True)
            raise click.exceptions.Exit(128 + number) from None
        finally:
            signal.signal(signal.SIGTERM, previous)


class Terminated(BaseException):
    """SIGTERM, raised where the command is, so that it unwinds as Ctrl-C does."""


def _raise_terminated(number: int, frame: Any) -> None:
    raise Terminated()


class CommandLineError(click.ClickException):
    """A click usage error, shown as one line; click's standalone `main` exits with 1."""

    exit_code = 1

    def __init__(self, prog: str, error: click.UsageError) -> None:
        super().__init__(_one_line(error))
        self.prog = prog

    def show(self, file: Any = None) -> None:
        click.echo(f"{self.prog}: error: {self.message}", err=True)


def _one_line(error: click.UsageError) -> str:
    """click's message in the house style: lower case, no full stop, one line, a hint."""
    text = " ".join(error.format_message().split())
    text = text[:1].lower() + text[1:]
    text = re.sub(r"^(invalid value for '[^']*': )([A-Z])(?=[a-z])",
                  lambda m: m[1] + m[2].lower(), text)
    text, _, suggestion = re.sub(r"\.? \(?(Did you mean .*?)\)?$", r"\n\1", text).partition("\n")
    text = text.rstrip(".")
    ctx = error.ctx
    if text.startswith("no such command") and ctx is not None and isinstance(ctx.command,
                                                                              click.Group):
        hint = "commands: " + ", ".join(ctx.command.list_commands(ctx))
    elif ctx is not None:
        root = ctx.find_root()
        prog = root.command.prog if isinstance(root.command, CommandLine) else root.info_name
        path = [prog] + [c.info_name or "" for c in _chain(ctx)[1:]]
        hint = f"see '{' '.join(path)} --help'"
    else:
        hint = ""
    hints = "; ".join(h for h in (suggestion[:1].lower() + suggestion[1:], hint) if h)
    return f"{text} ({hints})" if hints else text


def _chain(ctx: click.Context) -> list[click.Context]:
    chain = [ctx]
    while chain[-1].parent is not None:
        chain.append(chain[-1].parent)
    return chain[::-1]


def folder_problem(folder: Path) -> str | None:
    """Why `folder` cannot be created or replaced, found before anything is written."""
    for part in [*reversed(folder.parents), folder]:
        if not part.exists():
            break
        if not part.is_dir():
            return f"{os.strerror(errno.ENOTDIR)} ('{part}' is a file)"
    try:
        existing = next(p for p in folder.resolve().parents if p.exists())
    except (OSError, RuntimeError):  # a symbolic link loop: left for the OS to report
        return None
    if not os.access(existing, os.W_OK | os.X_OK):
        if os.statvfs(existing).f_flag & os.ST_RDONLY:
            return f"{os.strerror(errno.EROFS)} ('{existing}' is on one)"
        return f"{os.strerror(errno.EACCES)} ('{existing}' is not writable)"
    return None


def _what(folder: Path, option: str | None) -> str:
    return (f"{option} {folder}: cannot write the output folder" if option
            else f"cannot write the output folder '{folder}'")


def check_output_folder(folder: Path, option: str | None) -> None:
    """One `UsageError` if `folder` (given by `option`, if any) cannot be created or replaced."""
    problem = folder_problem(folder)
    if problem:
        raise UsageError(f"{_what(folder, option)}: {problem}")


@contextlib.contextmanager
def writing_folder(folder: Path, option: str | None) -> Iterator[None]:
    """Create or replace the output folder `folder`: a problem with it, found before anything
    is written or raised by the OS on the way (an OSError naming a path in or above it), is
    one `UsageError` naming the folder (and the option that gave it) and the OS's reason."""
    check_output_folder(folder, option)
    try:
        yield
    except OSError as exc:
        if not _concerns(exc, folder):
            raise
        where = f" ('{exc.filename}')" if exc.filename else ""
        raise UsageError(f"{_what(folder, option)}: {exc.strerror or exc}{where}") from None


def _concerns(exc: OSError, folder: Path) -> bool:
    """Whether the failing path of `exc` is `folder`, inside it, one of its parents, or the
    temporary sibling `.NAME.*` that `write_tree` fills before renaming it to `folder`."""
    try:
        root = folder.resolve()
        paths = [Path(os.fsdecode(name)).resolve() for name in (exc.filename, exc.filename2)
                 if isinstance(name, str | bytes | os.PathLike)]
    except (OSError, RuntimeError):
        return False
    for path in paths:
        staging = path.parent == root.parent and path.name.startswith(f".{root.name}.")
        if path == root or root in path.parents or path in root.parents or staging:
            return True
    return False
