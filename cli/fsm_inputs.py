"""The inputs boostfsm reads: a file, '-' (standard input), a FIFO or a shell's
`<(command)` (docs/fsm-language.md section 9): read once, checked before a build, handed
to a runner as they are."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterator

from parafuse.cli.errors import UsageError


def read_input(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise UsageError(f"cannot read input '{path}': {exc.strerror}") from None


def check_input_readable(path: str) -> None:
    """Fail now, before a build, where the compiled runner could not read `path`. Only a
    regular file is opened: opening a FIFO waits for its writer, and closing it unread
    would cut the writer off (SIGPIPE), so other files are checked by their status."""
    if path == "-":
        return
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if stat.S_ISREG(info.st_mode):
            with open(path, "rb"):
                pass
        elif not os.access(path, os.R_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    except OSError as exc:
        raise UsageError(f"cannot read input '{path}': {exc.strerror}") from None


def descriptors_named(path: str) -> tuple[int, ...]:
    """The open descriptor of this process that `path` names, as `/dev/fd/N` (what a
    shell's `<(command)` gives), for the runner to inherit: without it the runner finds
    no descriptor N of its own to read."""
    found = re.fullmatch(r"/(?:dev|proc/self)/fd/(\d+)", os.path.normpath(path))
    if found is None or int(found[1]) <= 2:  # 0-2 are inherited anyway
        return ()
    try:
        os.fstat(int(found[1]))
    except OSError:
        return ()
    return (int(found[1]),)


@contextlib.contextmanager
def sample_file(path: str | None, data: bytes) -> Iterator[str]:
    """A path the runner can read `data` (already read from `path`, or made: None) from
    again: `path` itself where it is a regular file, else a temporary copy (a FIFO or a pipe
    is read once)."""
    if path is not None and path != "-" and os.path.isfile(path):
        yield path
        return
    with tempfile.NamedTemporaryFile(prefix="boostfsm-sample-") as copy:
        copy.write(data)
        copy.flush()
        yield copy.name
