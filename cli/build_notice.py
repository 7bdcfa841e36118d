"""What both tools print while they wait for a C++ build: one line on stderr, "PROG:
compiling NAME (C++ with CMake and Ninja) ... done in T s" (toolchain/cmake.py's
BUILD_NOTICE). Standard output, which --json and the runners' reports use, hears nothing."""

from __future__ import annotations

import click

from parafuse.emitters.toolchain.cmake import BUILD_NOTICE


def announce_builds(prog: str) -> None:
    """For the command being run (tests run many in one process): its builds say so."""

    def notice(text: str, final: bool) -> None:
        click.echo(text if text.startswith(" ") else f"{prog}: {text}", nl=final, err=True)

    heard = BUILD_NOTICE.set(notice)
    click.get_current_context().call_on_close(lambda: BUILD_NOTICE.reset(heard))
