"""Diagnostics shared by both compilers: source locations, errors, warnings, rendering.

Every AST/IR node carries a `Location`. A user-facing problem is a `CompileError`
(one primary message at one location, plus optional notes and a hint), rendered as

    file:line:col: error: message
        source line
        ^^^^^
    file:line:col: note: ...
    hint: ...
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SourceFile:
    """The text of one input file; locations point into it."""

    name: str
    text: str

    def line_text(self, line: int) -> str:
        # Split on "\n" only, as `position` counts lines (splitlines() would also split
        # on \x0c, \x85 and other Latin-1 bytes and misalign the snippet).
        lines = self.text.split("\n")
        return lines[line - 1].rstrip("\r") if 1 <= line <= len(lines) else ""

    def position(self, offset: int) -> tuple[int, int]:
        """(line, column), both 1-based, of a character offset."""
        offset = max(0, min(offset, len(self.text)))
        line = self.text.count("\n", 0, offset) + 1
        col = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        return line, col


@dataclass(frozen=True)
class Location:
    """A span in a source file: 1-based line and column, `end_column` exclusive."""

    file: str
    line: int
    column: int
    end_line: int = 0
    end_column: int = 0
    source: SourceFile | None = field(default=None, compare=False, repr=False, hash=False)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    @property
    def span(self) -> int:
        """Width of the caret run on the first line (at least 1)."""
        if self.end_line in (0, self.line) and self.end_column > self.column:
            return self.end_column - self.column
        if self.end_line > self.line and self.source is not None:
            return max(1, len(self.source.line_text(self.line)) - self.column + 1)
        return 1

    def shifted(self, columns: int, width: int = 1) -> Location:
        """A location `columns` further on the same line, `width` wide."""
        col = self.column + columns
        return Location(self.file, self.line, col, self.line, col + width, self.source)

    def through(self, other: Location) -> Location:
        """The span from the start of this location to the end of `other`."""
        end_line = other.end_line or other.line
        end_col = other.end_column or other.column + 1
        return Location(self.file, self.line, self.column, end_line, end_col, self.source)


def location_of_offsets(source: SourceFile, start: int, end: int) -> Location:
    line, col = source.position(start)
    end_line, end_col = source.position(max(end, start + 1))
    return Location(source.name, line, col, end_line, end_col, source)


@dataclass(frozen=True)
class Note:
    message: str
    location: Location | None = None


SNIPPET_WIDTH = 100  # characters of a long line shown around the caret


def _render_snippet(location: Location) -> list[str]:
    """The line under the message and a caret line; characters that would not print (the
    bytes of a binary file, say) escaped as `\\xNN`, a long line cut to SNIPPET_WIDTH
    around the caret."""
    if location.source is None:
        return []
    text = location.source.line_text(location.line).expandtabs(1)
    if not text.strip():
        return []
    shown = [c if c.isprintable() else ascii(c)[1:-1] for c in text]
    caret_col = max(1, location.column)
    width = max(1, min(location.span, len(text) - caret_col + 1))
    start = sum(map(len, shown[:caret_col - 1]))
    carets = sum(map(len, shown[caret_col - 1:caret_col - 1 + width]))
    line = "".join(shown)
    first = max(0, min(start - SNIPPET_WIDTH // 3, len(line) - SNIPPET_WIDTH))
    if first or len(line) > SNIPPET_WIDTH:
        head, tail = ("..." if first else ""), ("..." if first + SNIPPET_WIDTH < len(line) else "")
        line = head + line[first:first + SNIPPET_WIDTH] + tail
        start, carets = start - first + len(head), min(carets, SNIPPET_WIDTH - (start - first))
    return ["    " + line, "    " + " " * start + "^" * max(1, carets)]


def render(severity: str, message: str, location: Location | None) -> list[str]:
    head = f"{location}: {severity}: {message}" if location else f"{severity}: {message}"
    return [head] + (_render_snippet(location) if location else [])


class CompileError(Exception):
    """A located problem in user input; the CLI prints `render()` and exits with code 1."""

    def __init__(
        self,
        message: str,
        location: Location | None,
        notes: list[Note] | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        self.notes = list(notes or [])
        self.hint = hint

    def render(self) -> str:
        lines = render("error", self.message, self.location)
        for note in self.notes:
            lines += render("note", note.message, note.location)
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


class CompileErrors(CompileError):
    """Several located problems found in one pass (every regex of a file is parsed, each
    on its own): the first is the message; all of them are rendered, in file order."""

    def __init__(self, errors: list[CompileError]) -> None:
        first = errors[0]
        super().__init__(first.message, first.location, first.notes, first.hint)
        self.errors = list(errors)

    def render(self) -> str:
        return "\n".join(error.render() for error in self.errors)


def raise_all(errors: list[CompileError]) -> None:
    """Raise the errors found, one or several; nothing where there are none."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise CompileErrors(errors)


@dataclass(frozen=True)
class CompileWarning:
    """A non-fatal diagnostic (an unreachable state, say)."""

    message: str
    location: Location | None

    def render(self) -> str:
        return "\n".join(render("warning", self.message, self.location))
